"""`ModesAgent`: the ACP agent, one engine per session, built by the runtime.

    initialize          protocol version 1; loadSession, embedded context, MCP over stdio/http
    session/new         the pack's modes plus `auto` (and `off`) as session modes, current =
                        the pack's setting; the same list as a `mode` config option
    session/load        a saved session (the store `/resume` reads), its turns replayed
    session/prompt      one routed turn (`AcpSession.run`); its stop reason
    session/set_mode    forces a mode for this session's next turns (`auto` routes again)
    session/cancel      stops the running turn (stop reason `cancelled`)

Anything else is the SDK's "method not found". Problems a client can fix (an unknown session,
an unknown mode, a prompt too large) are JSON-RPC "invalid params" errors naming what and
why; the agent keeps serving.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp import PROTOCOL_VERSION, RequestError
from acp.helpers import update_current_mode
from acp.schema import (
    AgentCapabilities,
    ConfigOptionUpdate,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionConfigOptionBoolean,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
)

from modes_tui import __version__
from modes_tui.acp.editor_servers import editor_servers, offer_to_modes
from modes_tui.acp.permissions import PermissionAsker
from modes_tui.acp.prompt_text import prompt_text
from modes_tui.acp.session import AUTO_MODE, AcpSession
from modes_tui.acp.updates import NO_MODE
from modes_tui.core.errors import ModesError

if TYPE_CHECKING:
    from acp.interfaces import Client

    from modes_tui.runtime import Runtime
    from modes_tui.store.resume import Resumption

__all__ = ["MODE_OPTION", "ModesAgent"]

log = logging.getLogger("modes_tui.acp")

MODE_OPTION = "mode"
"""The id of the session config option that chooses the mode (the same as set_mode)."""


class ModesAgent:
    """Serves the runtime's pack and settings to one editor connection."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        """Settings, pack and options of this run (sessions add their own parts)."""
        self.sessions: dict[str, AcpSession] = {}
        self.client: Client | None = None
        self.closing = False
        """The editor is gone: updates are dropped, turns are being stopped."""

    def on_connect(self, conn: Client) -> None:
        self.client = conn

    # ------------------------------------------------------------------ the methods

    async def initialize(self, protocol_version: int, **_: Any) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(
                    image=False, audio=False, embedded_context=True
                ),
                mcp_capabilities=McpCapabilities(http=True, sse=False),
            ),
            agent_info=Implementation(name="modes-tui", title="modes-tui", version=__version__),
        )

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> NewSessionResponse:
        from modes_tui.store.sessions import new_session_id

        session = self._open(new_session_id(), cwd, mcp_servers or [])
        return NewSessionResponse(
            session_id=session.id, modes=self._modes(session), config_options=self._options(session)
        )

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> LoadSessionResponse:
        resumed = self._saved(session_id)
        old = self.sessions.pop(session_id, None)
        if old is not None:
            await old.close()
        session = self._open(session_id, cwd, mcp_servers or [], resumed)
        await session.replay(resumed.replay, lambda update: self._send(session.id, update))
        return LoadSessionResponse(
            modes=self._modes(session), config_options=self._options(session)
        )

    async def set_session_mode(
        self, mode_id: str, session_id: str, **_: Any
    ) -> SetSessionModeResponse:
        session = self._session(session_id)
        self._set_mode(session, mode_id)
        # the same setting as a config option: keep the editor's other control in step
        update = ConfigOptionUpdate(
            session_update="config_option_update", config_options=self._options(session)
        )
        await self._send(session.id, update)
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **_: Any
    ) -> SetSessionConfigOptionResponse:
        session = self._session(session_id)
        if config_id != MODE_OPTION or not isinstance(value, str):
            raise RequestError.invalid_params(
                {
                    "details": f"unknown config option {config_id!r}; the one option is {MODE_OPTION!r}"
                }
            )
        self._set_mode(session, value)
        await self._send(session.id, update_current_mode(session.setting))
        return SetSessionConfigOptionResponse(config_options=self._options(session))

    async def prompt(self, prompt: list[Any], session_id: str, **_: Any) -> PromptResponse:
        session = self._session(session_id)
        text = prompt_text(prompt)
        stop = await session.run(text, lambda update: self._send(session.id, update))
        return PromptResponse(stop_reason=stop)  # type: ignore[arg-type]

    async def cancel(self, session_id: str, **_: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            session.cancel()

    # ------------------------------------------------------------------ the end

    async def shutdown(self) -> None:
        """The editor closed the connection: stop every turn, keep what they said, close."""
        self.closing = True
        sessions, self.sessions = list(self.sessions.values()), {}
        await asyncio.gather(*(session.close() for session in sessions), return_exceptions=True)

    # ------------------------------------------------------------------ parts

    async def _send(self, session_id: str, update: Any) -> None:
        if self.closing or self.client is None:
            return
        try:
            await self.client.session_update(session_id=session_id, update=update)
        except (ConnectionError, OSError):
            self.closing = True  # the editor is gone; the turn still ends and is logged

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params(
                {
                    "details": f"no session {session_id!r} in this agent; "
                    "create one with session/new or load a saved one with session/load"
                }
            )
        return session

    def _set_mode(self, session: AcpSession, mode_id: str) -> None:
        try:
            session.set_mode(mode_id)
        except ModesError as error:
            raise RequestError.invalid_params({"details": str(error)}) from None

    def _saved(self, session_id: str) -> Resumption:
        from modes_tui.store.resume import prepare_resume

        try:
            resumed = prepare_resume(session_id, self.runtime.dirs)
        except ModesError as error:
            raise RequestError.invalid_params({"details": str(error)}) from None
        if resumed.id != session_id:  # a prefix, `latest` or a path: not a session id
            raise RequestError.invalid_params(
                {"details": f"no saved session {session_id!r} (give its whole id)"}
            )
        return resumed

    def _open(
        self, session_id: str, cwd: str, mcp: list[Any], resumed: Resumption | None = None
    ) -> AcpSession:
        """Build a session's engine through the runtime: its cwd, log, setting, servers."""
        from modes_tui.store.control import ControlFile, RunOnlySetting

        folder = Path(cwd)
        if not folder.is_absolute() or not folder.is_dir():
            raise RequestError.invalid_params(
                {"details": f"cwd {cwd!r} is not an absolute path to a folder"}
            )
        runtime = self.runtime
        configured = dict(runtime.settings.mcp_servers)
        given, notes = editor_servers(mcp, folder, configured)
        pack = offer_to_modes(runtime.pack, list(given))
        servers = _servers({**configured, **given}, runtime)
        control = RunOnlySetting(
            ControlFile(runtime.dirs.control_file, modes=lambda: pack.names, pack=pack.name)
        )
        writer = _writer(runtime, session_id, pack.name, str(folder))
        if resumed is not None:
            writer.attach(resumed)
            if (note := resumed.pack_note(pack.name)) is not None:
                notes.append(note)
        holder: list[AcpSession] = []
        asker = PermissionAsker(
            session_id,
            self._ask,
            lambda: holder[0].mode if holder else None,
            folder,
            self._send,
        )
        session_runtime = dataclasses.replace(
            runtime,
            pack=pack,
            cwd=folder,
            control=control,
            session=writer,
            servers=servers,
            resumed=resumed,
        )
        try:
            engine = session_runtime.engine(asker)
        except ModesError as error:  # a model name or a classifier the settings cannot give
            writer.close()
            raise RequestError.internal_error({"details": str(error)}) from None
        except BaseException:
            writer.close()
            raise
        session = AcpSession(session_id, pack, engine, control, writer, asker, servers, notes=notes)
        if resumed is not None:
            session.mode = resumed.mode
        holder.append(session)
        self.sessions[session_id] = session
        return session

    async def _ask(self, session_id: str, tool_call: Any, options: list[Any]) -> Any:
        if self.client is None or self.closing:
            raise ConnectionError("no editor to ask")
        return await self.client.request_permission(
            session_id=session_id, tool_call=tool_call, options=options
        )

    def _modes(self, session: AcpSession) -> SessionModeState:
        return SessionModeState(
            current_mode_id=session.setting, available_modes=_session_modes(session)
        )

    def _options(
        self, session: AcpSession
    ) -> list[SessionConfigOptionSelect | SessionConfigOptionBoolean]:
        choices = [
            SessionConfigSelectOption(value=mode.id, name=mode.name, description=mode.description)
            for mode in _session_modes(session)
        ]
        return [
            SessionConfigOptionSelect(
                id=MODE_OPTION,
                name="Mode",
                description="auto: the router picks each turn's mode; a mode: every turn goes there",
                category="mode",
                type="select",
                current_value=session.setting,
                options=choices,
            )
        ]


def _session_modes(session: AcpSession) -> list[SessionMode]:
    """`auto`, every mode of the pack (id, name, first sentence of its description), `off`."""
    modes = [
        SessionMode(id=AUTO_MODE, name="auto", description="The router picks each turn's mode")
    ]
    for profile in session.pack.profiles:
        about = profile.description.strip().split(". ")[0].rstrip(".")
        modes.append(SessionMode(id=profile.name, name=profile.name, description=about))
    modes.append(
        SessionMode(
            id=NO_MODE, name="off", description="No mode: the base prompt and default model"
        )
    )
    return modes


def _servers(servers: dict[str, Any], runtime: Runtime) -> Any:
    if not servers:
        return None
    from modes_tui.mcp.servers import McpServers

    return McpServers(servers, log_dir=runtime.dirs.state / "mcp")


def _writer(runtime: Runtime, session_id: str, pack: str, cwd: str) -> Any:
    """The session log of one ACP session: created at its first record, under `session_id`."""
    from modes_tui.store.resume import CurrentSession
    from modes_tui.store.session_log import SessionLog

    dirs, fsync = runtime.dirs, runtime.settings.sessions_fsync

    def create(**extra: Any) -> SessionLog:
        return SessionLog.create(
            dirs,
            pack=pack,
            model=runtime.model_id,
            cwd=cwd,
            app_version=__version__,
            fsync=fsync,
            session_id=session_id,
            client="acp",
            **extra,
        )

    return CurrentSession(create, dirs=dirs, fsync=fsync)

"""Running MCP servers through the official `mcp` SDK, and their tools as core `Tool`s.

`McpServers` implements the core's `ToolServers`: the engine asks it for the tools of the
servers a mode lists when a turn of that mode is set up. A server starts then, on first use,
never before; later turns reuse it. Each server runs in its own asyncio task
(`_Connection._run`), which holds the SDK's transport and session open until `close()`:
the SDK's anyio contexts must be entered and left by one task, and a turn that is cancelled
while a server starts must not take the server down with it.

What can go wrong, and what the user sees (a note on the turn; the turn goes on without
that server's tools):
- the server cannot start (no such command, it exits, it never answers): the note says why,
  with the last line of its stderr (kept in `<log_dir>/mcp-<name>.log`); the next turn
  that needs it tries again;
- a running server dies: a call in flight gets a tool error the model reads; the next turn
  that needs the server finds it gone (a ping), says so, and starts it again.

Tool names are `<server>__<tool>`, cleaned to the `[A-Za-z0-9_-]{1,64}` that OpenAI-style
APIs accept. Tools of a server without `trust: true` need the user's confirmation.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import importlib
import json
import logging
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from modes_tui.core.config.variables import expand_secret_values
from modes_tui.core.errors import ModesError, ToolError
from modes_tui.core.files import open_append, open_regular, private_folder
from modes_tui.core.tools.ports import ServerTools
from modes_tui.core.tools.registry import Tool
from modes_tui.mcp.config import McpServer

if TYPE_CHECKING:
    from mcp import ClientSession

log = logging.getLogger("modes_tui.mcp")

SEPARATOR = "__"
MAX_TOOL_NAME = 64
PING_TIMEOUT = 5.0
"""Seconds a running server has to answer the ping that checks it is still there."""
STOP_TIMEOUT = 10.0
"""Seconds to wait for a server to stop (the SDK's own escalation takes up to ~6 s)."""
_TAIL_BYTES = 64 * 1024
"""How much of the end of a server's log is read for its last line."""
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def tool_name(server: str, name: str) -> str:
    """The name the model calls an MCP tool by: `<server>__<tool>`, provider-safe."""
    full = f"{server}{SEPARATOR}{_UNSAFE.sub('_', name)}"
    if len(full) <= MAX_TOOL_NAME:
        return full
    digest = hashlib.sha1(name.encode()).hexdigest()[:8]
    return f"{full[: MAX_TOOL_NAME - 9]}_{digest}"


class McpServers:
    """The configured MCP servers: started on first use, stopped by `close()`."""

    def __init__(
        self,
        servers: Mapping[str, McpServer],
        *,
        log_dir: Path | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.servers = dict(servers)
        """Configuration by name."""
        self.log_dir = log_dir
        """Where each stdio server's stderr goes (`mcp-<name>.log`); None discards it."""
        self.environ = environ
        """Where `${NAME}` in env and headers is looked up (None: the process environment)."""
        self._connections: dict[str, _Connection] = {}
        self._closed = False

    def names(self) -> frozenset[str]:
        """Every configured server name."""
        return frozenset(self.servers)

    def running(self) -> dict[str, bool]:
        """Name -> whether its task is alive, for every server started so far."""
        return {name: c.alive for name, c in self._connections.items()}

    async def tools(self, servers: Sequence[str]) -> ServerTools:
        """The tools of `servers` (started if need be, in parallel), and what went wrong."""
        if self._closed:
            return ServerTools(problems=("MCP servers are shut down",))
        wanted = [name for name in dict.fromkeys(servers) if name in self.servers]
        connections = [self._connection(name) for name in wanted]
        answers = await asyncio.gather(*(c.ready_tools() for c in connections))
        tools: list[Tool] = []
        problems: list[str] = []
        for found, notes in answers:
            tools.extend(found)
            problems.extend(notes)
        return ServerTools(tuple(tools), tuple(problems))

    async def close(self) -> None:
        """Stop every started server and wait until its process is gone (idempotent)."""
        self._closed = True
        await asyncio.gather(*(c.stop() for c in self._connections.values()))

    def _connection(self, name: str) -> _Connection:
        connection = self._connections.get(name)
        if connection is None:
            environ = os.environ if self.environ is None else self.environ
            connection = _Connection(self.servers[name], self.log_dir, environ)
            self._connections[name] = connection
        return connection


class _Connection:
    """One server: its task, its session while it runs, and its tools."""

    def __init__(self, config: McpServer, log_dir: Path | None, environ: Mapping[str, str]):
        self.config = config
        self.log_dir = log_dir
        self.environ = environ
        self.task: asyncio.Task[None] | None = None
        self.ready: asyncio.Future[None] | None = None
        self.stopping: asyncio.Event | None = None
        self.session: ClientSession | None = None
        self.tools: tuple[Tool, ...] = ()
        self.failure: str | None = None
        """Why the last start failed."""
        self.lost: str | None = None
        """Why a started server is gone (its connection closed, it crashed)."""
        self._log_start = 0
        self._http_error = ""
        """The last HTTP error status the server answered with (the SDK does not say)."""

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def alive(self) -> bool:
        return self.task is not None and not self.task.done()

    # ------------------------------------------------------------------ lifecycle

    async def ready_tools(self) -> tuple[tuple[Tool, ...], list[str]]:
        """Its tools, starting (or restarting) it first; never raises."""
        notes: list[str] = []
        if self.session is not None and self.lost is None:
            lost = await self._ping()
            if lost is None:
                return self.tools, notes
            self.lost = lost
        if self.lost is not None:
            notes.append(f"MCP server {self.name!r} had stopped ({self.lost}); starting it again")
            await self.stop()
        if not self.alive:  # never started, failed to start, or stopped
            self._start()
        assert self.ready is not None  # else it is still starting: wait for it
        try:
            await asyncio.wait_for(asyncio.shield(self.ready), self.config.start_timeout)
        except TimeoutError:
            self.failure = f"it did not start within {self.config.start_timeout:g} seconds"
            await self.stop()
        if self.session is None:
            why = self.failure or self.lost or "it stopped while starting"
            notes.append(
                f"MCP server {self.name!r} could not start: {why}; this turn runs without its tools"
            )
            return (), notes
        return self.tools, notes

    def _start(self) -> None:
        loop = asyncio.get_running_loop()
        self.ready = loop.create_future()
        self.stopping = asyncio.Event()
        self.session = None
        self.failure = self.lost = None
        self.tools = ()
        self._http_error = ""
        self.task = asyncio.create_task(self._run(), name=f"mcp server {self.name}")

    async def stop(self) -> None:
        """Ask its task to leave the session and the transport (which stops the process)."""
        task = self.task
        if task is None or task.done():
            return
        assert self.stopping is not None
        self.stopping.set()
        done, _ = await asyncio.wait({task}, timeout=STOP_TIMEOUT)
        if not done:  # should not happen: every wait in the SDK's shutdown is bounded
            log.error(
                "MCP server %s did not stop within %s s; cancelling it", self.name, STOP_TIMEOUT
            )
            task.cancel()
            await asyncio.wait({task}, timeout=STOP_TIMEOUT)

    async def _run(self) -> None:
        """The server's life: connect, list tools, serve calls until told to stop."""
        assert self.ready is not None and self.stopping is not None
        ready, stopping = self.ready, self.stopping
        errlog: TextIO | None = None
        try:
            # importing the SDK takes 1-2 s: off the loop, so the screen stays responsive
            await asyncio.to_thread(importlib.import_module, "mcp.client.streamable_http")
            import anyio

            errlog = self._open_log()
            async with anyio.create_task_group() as group:

                async def stop_when_asked() -> None:
                    await stopping.wait()
                    group.cancel_scope.cancel()

                group.start_soon(stop_when_asked)
                await self._serve(errlog, ready)
                group.cancel_scope.cancel()
        except Exception as error:
            reason = self._reason(error)
            # the user reads `reason` in the turn's notes; the traceback is for the log only
            log.info("MCP server %s: %s", self.name, reason, exc_info=error)
            if ready.done():
                self.lost = reason
            else:
                self.failure = reason
        finally:
            self.session = None
            if not ready.done():
                ready.set_result(None)
            if errlog is not None:
                errlog.close()

    async def _serve(self, errlog: TextIO, ready: asyncio.Future[None]) -> None:
        import anyio
        from mcp import ClientSession
        from mcp_types import PaginatedRequestParams

        async with contextlib.AsyncExitStack() as stack:
            read, write = await stack.enter_async_context(await self._transport(stack, errlog))
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            listed: list[Any] = []
            cursor: str | None = None
            while True:
                params = PaginatedRequestParams(cursor=cursor) if cursor else None
                page = await session.list_tools(params=params)
                listed.extend(page.tools)
                cursor = page.next_cursor
                if not cursor:
                    break
            self.tools = self._wrap(listed)
            self.session = session
            ready.set_result(None)
            log.info("MCP server %s started with %d tools", self.name, len(self.tools))
            await anyio.sleep_forever()  # until the stop watcher cancels the group

    async def _transport(self, stack: contextlib.AsyncExitStack, errlog: TextIO) -> Any:
        config = self.config
        if config.transport == "http":
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            headers = expand_secret_values(
                config.headers, self.environ, where=f"mcp_servers.{self.name}.headers"
            )

            async def remember_errors(response: httpx2.Response) -> None:
                # POSTs carry the messages; the optional GET stream may be refused (405)
                if response.status_code >= 400 and response.request.method == "POST":
                    self._http_error = f"HTTP {response.status_code} {response.reason_phrase}"

            client = await stack.enter_async_context(
                httpx2.AsyncClient(
                    headers=headers,
                    timeout=httpx2.Timeout(30.0, read=300.0),
                    event_hooks={"response": [remember_errors]},
                )
            )
            return streamable_http_client(config.url, http_client=client)
        from mcp.client.stdio import StdioServerParameters, stdio_client

        env = expand_secret_values(config.env, self.environ, where=f"mcp_servers.{self.name}.env")
        parameters = StdioServerParameters(
            command=config.command, args=list(config.args), env=env or None, cwd=config.cwd
        )
        return stdio_client(parameters, errlog=errlog)

    def _open_log(self) -> TextIO:
        if self.log_dir is None:
            return open(os.devnull, "w", encoding="utf-8")
        # 0600 in a 0700 folder: a server's stderr may echo its arguments, tokens included
        private_folder(self.log_dir)
        path = self.log_dir / f"mcp-{self.name}.log"
        handle = os.fdopen(open_append(path), "a", encoding="utf-8")
        self._log_start = handle.tell()
        return handle

    def _log_tail(self) -> str:
        """The last line the server wrote to stderr since this start, if any."""
        if self.log_dir is None:
            return ""
        path = self.log_dir / f"mcp-{self.name}.log"
        try:
            with os.fdopen(open_regular(path), "rb") as handle:
                # the last line is all we want: never read more than its neighbourhood
                end = handle.seek(0, os.SEEK_END)
                handle.seek(max(self._log_start, end - _TAIL_BYTES))
                text = handle.read(_TAIL_BYTES).decode("utf-8", errors="replace")
        except OSError:
            return ""
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        return lines[-1][:300] if lines else ""

    def _reason(self, error: BaseException) -> str:
        """A short, readable cause of `error` (the SDK raises exception groups)."""
        while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
            error = error.exceptions[0]
        if isinstance(error, FileNotFoundError) and self.config.transport == "stdio":
            text = f"command {self.config.command!r} not found"
        elif isinstance(error, PermissionError) and self.config.transport == "stdio":
            text = f"command {self.config.command!r} cannot be run (permission denied)"
        elif isinstance(error, ModesError):
            text = error.message
        else:
            detail = str(error).strip().splitlines()[0] if str(error).strip() else ""
            text = f"{type(error).__name__}: {detail}" if detail else type(error).__name__
        if self._http_error:
            text = f"{text} ({self._http_error} from {self.config.url})"
        tail = self._log_tail()
        return f"{text} (its stderr: {tail})" if tail else text

    # ------------------------------------------------------------------ tools

    async def _ping(self) -> str | None:
        """None while the server answers; else why it does not."""
        session = self.session
        if session is None or not self.alive:
            return self.lost or "it is not running"
        try:
            await asyncio.wait_for(session.send_ping(), PING_TIMEOUT)
        except TimeoutError:
            return f"no answer to a ping within {PING_TIMEOUT:g} seconds"
        except Exception as error:
            log.debug("MCP server %s did not answer a ping", self.name, exc_info=True)
            return self._reason(error)
        return None

    def _wrap(self, listed: Sequence[Any]) -> tuple[Tool, ...]:
        tools: dict[str, Tool] = {}
        for item in listed:
            name = tool_name(self.name, item.name)
            if name in tools:
                log.warning(
                    "MCP server %s: two tools are both called %s; keeping the first",
                    self.name,
                    name,
                )
                continue
            schema = dict(item.input_schema or {})
            schema.setdefault("type", "object")
            schema.setdefault("properties", {})
            tools[name] = Tool(
                name=name,
                description=(item.description or item.title or item.name).strip(),
                parameters=schema,
                function=self._caller(item.name),
                needs_confirmation=not self.config.trust,
                source=f"mcp:{self.name}",
            )
        return tuple(tools.values())

    def _caller(self, remote: str) -> Any:
        async def call(**arguments: Any) -> str:
            return await self.call(remote, arguments)

        call.__name__ = remote
        return call

    async def call(self, remote: str, arguments: Mapping[str, Any]) -> str:
        """Call tool `remote` on the server; what it said as text, or a ToolError."""
        session = self.session
        if session is None or self.lost is not None:
            why = self.lost or "it is not running"
            raise ToolError(
                f"the MCP server {self.name!r} is not available ({why}); its tools cannot be "
                "used in this turn"
            )
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED

        try:
            result = await session.call_tool(remote, dict(arguments))
        except MCPError as error:
            if error.code == CONNECTION_CLOSED:
                tail = self._log_tail()
                self.lost = "its connection closed" + (f" (its stderr: {tail})" if tail else "")
                raise ToolError(
                    f"the MCP server {self.name!r} stopped ({self.lost}); {remote} did not "
                    "finish and its tools cannot be used in this turn"
                ) from None
            raise ToolError(f"the MCP server {self.name!r} refused {remote}: {error}") from None
        except Exception as error:  # a transport failure is the server's problem, not ours
            raise ToolError(
                f"the MCP server {self.name!r} failed on {remote}: {self._reason(error)}"
            ) from error
        return result_text(result)


def result_text(result: Any) -> str:
    """What the model reads of a tools/call result; a ToolError when the tool reported one."""
    parts: list[str] = []
    for block in result.content:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind in {"image", "audio"}:
            parts.append(f"[{kind} ({block.mime_type}) returned by the tool; not shown here]")
        elif kind == "resource_link":
            parts.append(f"[resource {block.uri}]")
        elif kind == "resource":
            inner = block.resource
            text = getattr(inner, "text", None)
            parts.append(text if isinstance(text, str) else f"[binary resource {inner.uri}]")
        else:
            parts.append(f"[{kind or type(block).__name__} content not shown]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, default=str))
    text = "\n".join(parts)
    if result.is_error:
        raise ToolError(text or "the tool reported an error without saying which")
    return text

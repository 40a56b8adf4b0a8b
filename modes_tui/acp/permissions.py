"""The engine's questions, asked through `session/request_permission`.

`PermissionAsker` is the engine's `Confirmer` (tool calls: commands, edits with their diff,
MCP tools, hand-offs), its `Asker` (entering an `auto_enter: confirm` mode, the budget) and
its `Chooser` (the router is unsure which mode answers: the app's doubt dialog). The mode's
policy has decided already that the user must be asked; this only asks.

Every question offers allow once / allow always / reject once / reject always. "Always"
lasts for the ACP session and is kept per tool and mode (a question that is not a tool
call: per kind of question and mode), so "allow always" for `run_command` in shell does not
allow it in another mode, and is forgotten when the agent stops. A client that cannot
answer (the prompt was cancelled, the connection is gone, an answer we do not know) is a no.

A mode choice offers the modes instead, the router's pick first and the runner-up second
(for a pick just under the fallback threshold: the fallback first, then that pick), each as
"allow once" with its option id `mode:NAME`; anything but one of them runs the first.

A question that is not a tool call (a mode choice, entering a mode, the budget) has no tool
call of the engine's to finish it, so once answered its card is settled here: a
`tool_call_update` that completes it with the answer (or fails it when nobody answered), so
the editor does not show it waiting for ever.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from acp import RequestError
from acp.helpers import text_block, tool_content, tool_diff_content, update_tool_call
from acp.schema import (
    AllowedOutcome,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallLocation,
    ToolCallUpdate,
)

from modes_tui.core.values.numbers import two_places

if TYPE_CHECKING:
    from modes_tui.core.edits.editor import Change
    from modes_tui.core.engine.questions import ModeChoice, Question
    from modes_tui.core.model.wire import ToolCall
    from modes_tui.core.tools.registry import Tool

__all__ = [
    "ALLOW_ALWAYS",
    "ALLOW_ONCE",
    "MODE_OPTION",
    "OPTIONS",
    "REJECT_ALWAYS",
    "REJECT_ONCE",
    "PermissionAsker",
]

log = logging.getLogger("modes_tui.acp")

MODE_OPTION = "mode:"
"""The option id of a mode in a mode choice is this and the mode's name."""

ALLOW_ONCE = "allow-once"
ALLOW_ALWAYS = "allow-always"
REJECT_ONCE = "reject-once"
REJECT_ALWAYS = "reject-always"
OPTIONS = (
    PermissionOption(option_id=ALLOW_ONCE, name="Allow once", kind="allow_once"),
    PermissionOption(
        option_id=ALLOW_ALWAYS, name="Allow always (this tool in this mode)", kind="allow_always"
    ),
    PermissionOption(option_id=REJECT_ONCE, name="Reject once", kind="reject_once"),
    PermissionOption(
        option_id=REJECT_ALWAYS, name="Reject always (this tool in this mode)", kind="reject_always"
    ),
)
"""What every question offers, in the order the editor shows them."""

Ask = Callable[[str, ToolCallUpdate, list[PermissionOption]], Awaitable[RequestPermissionResponse]]
"""`request_permission(session_id, tool_call, options)` of the agent's connection."""
Send = Callable[[str, Any], Awaitable[None]]
"""`session_update(session_id, update)` of the agent's connection."""
Kind = Literal["execute", "edit", "switch_mode", "other", "fetch", "read", "search"]


class PermissionAsker:
    """Asks the editor; remembers "always" answers per (tool, mode) for this session."""

    def __init__(
        self,
        session_id: str,
        ask: Ask,
        mode: Callable[[], str | None],
        root: Path,
        send: Send | None = None,
    ) -> None:
        self.session_id = session_id
        self._send = send
        """Where a question's card is settled once answered (None: not settled)."""
        self.root = root
        """The working folder: ACP wants absolute paths, the engine's are relative to it."""
        self._ask = ask
        self._mode = mode
        """The mode the turn is in now (the remembered answers are per mode)."""
        self.always: dict[tuple[str, str | None], bool] = {}
        """(tool or question kind, mode) -> the standing answer."""
        self._questions = 0

    async def confirm(self, call: ToolCall, tool: Tool, preview: Change | None = None) -> bool:
        """A tool call the policy asks about; an edit carries its change as an ACP diff."""
        update = ToolCallUpdate(
            tool_call_id=call.id,
            title=call_title(call, preview),
            kind=tool_kind(call.name),
            status="pending",
            raw_input=dict(call.arguments),
            content=[self._diff(preview)] if preview is not None else [_text(arguments_text(call))],
            locations=[ToolCallLocation(path=self._path(preview))] if preview is not None else None,
        )
        return await self._decide(call.name, update)

    async def ask(self, question: Question) -> bool:
        """A question about the turn (entering a mode, the budget, an overwrite)."""
        self._questions += 1
        update = ToolCallUpdate(
            tool_call_id=f"question-{self._questions}",
            title=question.title,
            kind="switch_mode" if question.kind == "enter_mode" else "other",
            status="pending",
            content=[_text(question.text)],
        )
        return await self._decide(f"question:{question.kind}", update, settle=True)

    async def choose(self, choice: ModeChoice) -> str | None:
        """The router is unsure: the mode the user takes (None: the first offered runs)."""
        self._questions += 1
        unsure = choice.unsure
        first, second = unsure.roles()
        names = {
            unsure.pick: f"{_named(unsure.pick, unsure.pick_confidence)} ({first})",
            unsure.runner_up: f"{_named(unsure.runner_up, unsure.runner_up_confidence)} ({second})",
        }
        offered = dict.fromkeys((unsure.pick, unsure.runner_up, *choice.modes))
        options = [
            PermissionOption(
                option_id=MODE_OPTION + mode, name=names.get(mode, mode), kind="allow_once"
            )
            for mode in offered
            if mode in choice.modes or mode == unsure.pick
        ]
        text = (
            f"“{' '.join(choice.message.split())[:160]}”\n{unsure.line()}\n"
            "Taking another mode than the first is recorded as a correction: the router learns."
        )
        update = ToolCallUpdate(
            tool_call_id=f"question-{self._questions}",
            title="The router is unsure: which mode answers?",
            kind="switch_mode",
            status="pending",
            content=[_text(text)],
        )
        response = await self._request(update, options, "the router's pick runs", settle=True)
        outcome = response.outcome if response is not None else None
        chosen: str | None = None
        if isinstance(outcome, AllowedOutcome) and outcome.option_id.startswith(MODE_OPTION):
            taken = outcome.option_id.removeprefix(MODE_OPTION)
            chosen = taken if taken in choice.modes else None
        answered = isinstance(outcome, AllowedOutcome)
        await self._settle(
            update, f"{chosen or _first_mode(options)} answers" if answered else None
        )
        return chosen

    def _path(self, change: Change) -> str:
        return str(self.root / change.path)

    def _diff(self, change: Change) -> Any:
        return tool_diff_content(self._path(change), change.after, change.state.content)

    async def _request(
        self, update: ToolCallUpdate, options: list[PermissionOption], failed: str, *, settle: bool
    ) -> RequestPermissionResponse | None:
        """The editor's response, or None when it cannot answer. A turn cancelled while the
        question is open settles the question's card (with `settle`), then stops."""
        try:
            return await self._ask(self.session_id, update, options)
        except asyncio.CancelledError:
            if settle:
                await self._settle(update, None)
            raise
        except (RequestError, ConnectionError, OSError, ValueError) as error:
            log.warning("request_permission failed (%s); %s", error, failed)
            return None

    async def _settle(self, asked: ToolCallUpdate, answer: str | None) -> None:
        """Complete a question's card with its answer below the question, or fail it when
        nobody answered (a tool_call_update's content replaces the card's, so the question
        is sent again with the answer)."""
        if self._send is None:
            return
        content = [*(asked.content or []), _text(answer or "No answer")]
        status: Literal["completed", "failed"] = "failed" if answer is None else "completed"
        update = update_tool_call(asked.tool_call_id, status=status, content=content)
        await self._send(self.session_id, update)

    async def _decide(self, subject: str, update: ToolCallUpdate, *, settle: bool = False) -> bool:
        """Ask (unless a standing "always" answers); with `settle`, settle the card after."""
        key = (subject, self._mode())
        standing = self.always.get(key)
        if standing is not None:
            return standing
        response = await self._request(update, list(OPTIONS), "treated as rejected", settle=settle)
        outcome = response.outcome if response is not None else None
        if not isinstance(outcome, AllowedOutcome):  # cancelled, or no answer: no
            if settle:
                await self._settle(update, None)
            return False
        chosen = outcome.option_id
        if chosen in (ALLOW_ALWAYS, REJECT_ALWAYS):
            self.always[key] = chosen == ALLOW_ALWAYS
        allowed = chosen in (ALLOW_ONCE, ALLOW_ALWAYS)
        if settle:
            await self._settle(update, "Yes" if allowed else "No")
        return allowed


def _first_mode(options: list[PermissionOption]) -> str:
    """The mode of a mode choice's first option (the router's pick is always offered): the
    one that runs when none is taken."""
    return options[0].option_id.removeprefix(MODE_OPTION)


def _named(mode: str, confidence: float | None) -> str:
    return mode if confidence is None else f"{mode} {two_places(confidence)}"


def tool_kind(name: str) -> Kind:
    """The ACP kind of a tool, for the editor's icon."""
    if name == "run_command":
        return "execute"
    if name in ("write_file", "edit_file"):
        return "edit"
    if name == "switch_mode":
        return "switch_mode"
    if name == "read_file":
        return "read"
    if name in ("list_files", "search_files"):
        return "search"
    return "other"


def call_title(call: ToolCall, preview: Change | None = None) -> str:
    """What the editor shows as the call's title: the command, the change, or the tool."""
    if preview is not None:
        return preview.summary
    arguments = call.arguments
    if call.name == "run_command" and isinstance(arguments.get("command"), str):
        return f"Run `{arguments['command']}`"
    if call.name == "switch_mode" and isinstance(arguments.get("mode"), str):
        return f"Hand the turn to {arguments['mode']}"
    if isinstance(arguments.get("path"), str):
        return f"{call.name} {arguments['path']}"
    return call.name


def arguments_text(call: ToolCall) -> str:
    """The call as the user should read it before saying yes: name and arguments."""
    return f"{call.name}({json.dumps(dict(call.arguments), ensure_ascii=False)})"


def _text(text: str) -> Any:
    return tool_content(text_block(text))

"""The front-end layer the TUI and the REPL share (`modes_tui.frontend`): every command has
a handler in each front end, a typed line is read once, and the session actions and
corrections make their checks once and return outcomes (they never print)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from modes_tui.core.errors import ModesError
from modes_tui.core.history.events import TurnEvent
from modes_tui.frontend import corrections, sessions
from modes_tui.frontend.commands import (
    COMMANDS,
    Command,
    CommandError,
    CommandSpec,
    OneShot,
    Surface,
)
from modes_tui.frontend.dispatch import dispatch, missing_handlers
from modes_tui.frontend.lines import Read, Send, read_line
from modes_tui.frontend.sessions import Refused, Renamed, Switched
from modes_tui.repl.commands import HANDLERS
from tests.support.tui_support import ScriptEngine, services

MODES = ("chat", "code")


def test_every_repl_command_has_a_handler_and_no_handler_is_stray() -> None:
    assert missing_handlers("repl", HANDLERS) == []
    assert set(HANDLERS) == {spec.name for spec in COMMANDS if "repl" in spec.where}


def test_every_app_command_has_a_handler() -> None:
    from modes_tui.tui.app import ModesApp

    handlers = ModesApp(services()).conversation.command_handlers()
    assert missing_handlers("app", handlers) == []
    assert set(handlers) == {spec.name for spec in COMMANDS if "app" in spec.where}


def test_a_command_added_to_the_table_is_missing_until_it_has_a_handler(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import modes_tui.frontend.commands as table

    added = CommandSpec("/redo", "/redo", "redo the last undone edit")
    monkeypatch.setattr(table, "COMMANDS", (*table.COMMANDS, added))
    assert missing_handlers("repl", HANDLERS) == ["/redo"]

    async def redo(argument: str) -> str:
        return f"redid {argument or 'the last edit'}"

    async def unknown(name: str) -> str:
        return f"unknown {name}"

    handlers = {**{name: unknown for name in HANDLERS}, "/redo": redo}
    assert missing_handlers("repl", handlers) == []
    assert asyncio.run(dispatch("/redo", "", handlers, unknown)) == "redid the last edit"
    assert asyncio.run(dispatch("/nope", "x", handlers, unknown)) == "unknown /nope"


@pytest.mark.parametrize(
    ("line", "read"),
    [
        ("hello /code", Send("hello /code")),
        ("//code why", Send("/code why")),
        ("/code why is\nthis slow", OneShot("code", "why is\nthis slow")),
        ("/exit", Command("/quit")),
        ("/mode  code ", Command("/mode", "code")),
        ("/help", Command("/help")),  # a command wins over a mode `help`
        ("/fork 2", Command("/fork", "2")),
        ("/resume", Command("/resume", "latest")),
        ("/undo 2", Command("/undo", "2")),  # issue 23's command, through the same reader
    ],
)
@pytest.mark.parametrize("surface", ["app", "repl"])
def test_a_line_is_a_message_a_one_shot_or_a_checked_command(
    line: str, read: Read, surface: Surface
) -> None:
    assert read_line(line, (*MODES, "help"), surface) == read


@pytest.mark.parametrize(
    ("line", "surface", "said", "kind"),
    [
        ("/mdoe code", "repl", "unknown command /mdoe; did you mean /mode?", "unknown"),
        ("/exit now", "repl", "/quit takes no argument (got 'now')", "error"),
        ("/help me", "app", "/help takes no argument (got 'me')", "error"),
        # each front end keeps its words; the check is the same one
        ("/mode", "app", "/mode needs a value: chat | code | auto | off", "error"),
        ("/mode", "repl", "usage: /mode NAME | auto | off", "usage"),
        ("/mode x", "repl", "unknown mode 'x'; available modes: auto, off, chat, code", "error"),
        ("/fork 0", "app", "/fork takes a turn number from 1 (got '0')", "error"),
        ("/fork x", "repl", "/fork takes a turn number, not 'x'", "error"),
        ("/rename", "repl", "usage: /rename TITLE", "usage"),
        ("/undo x", "app", "usage: /undo [N]", "usage"),
        ("/undo 0", "repl", "usage: /undo [N]", "usage"),
        ("/export", "repl", "unknown command /export; /help lists the commands", "unknown"),
    ],
)
def test_a_bad_command_is_refused_once_in_the_words_of_its_front_end(
    line: str, surface: Surface, said: str, kind: str
) -> None:
    with pytest.raises(CommandError) as caught:
        read_line(line, MODES, surface)
    assert said in str(caught.value) and caught.value.kind == kind


def test_the_repl_leaves_a_wrong_mode_to_the_engine_which_names_the_turn() -> None:
    assert read_line("/wrong nope", MODES, "repl") == Command("/wrong", "nope")
    with pytest.raises(CommandError, match="/wrong takes a mode or undo, not 'nope'"):
        read_line("/wrong nope", MODES, "app")


def test_a_one_shot_without_a_message_is_refused_not_forced() -> None:
    with pytest.raises(CommandError, match="type a message after /code"):
        read_line("/code   ", MODES, "app")


# --------------------------------------------------------------------------- sessions


@dataclass
class FakeSession:
    """A `CurrentSession` stand-in: records what the actions asked of it."""

    id: str | None = "s1"
    calls: list[str] = field(default_factory=list)
    prepared: threading.Event = field(default_factory=threading.Event)
    release: threading.Event | None = None

    def prepare(self, ref: str) -> Any:
        self.calls.append(f"prepare {ref}")
        self.prepared.set()
        if self.release is not None:
            self.release.wait(5)
        if ref == "nope":
            raise ModesError(f"no session {ref!r}")
        return FakeResumption(ref)

    def attach(self, resumption: Any) -> None:
        self.calls.append(f"attach {resumption.id}")

    def fork(self, turn: int | None) -> Any:
        self.calls.append(f"fork {turn}")
        return FakeResumption("s2", turn=turn or 3)

    def rename(self, title: str) -> str:
        self.calls.append(f"rename {title}")
        return title.strip()


@dataclass
class FakeResumption:
    id: str
    turn: int = 3
    restored: list[object] = field(default_factory=list)

    def restore_into(self, engine: object) -> None:
        self.restored.append(engine)


@dataclass
class Host:
    current_session: Any = field(default_factory=FakeSession)
    turn_running: bool = False
    turn_engine: Any = field(default_factory=ScriptEngine)


def test_resume_switches_and_restores_the_engine() -> None:
    host = Host()
    told: list[str] = []
    outcome = asyncio.run(sessions.resume(host, "", loading=told.append))
    assert isinstance(outcome, Switched) and outcome.parent is None
    assert outcome.resumption.id == "latest" and outcome.resumption.restored == [host.turn_engine]
    assert host.current_session.calls == ["prepare latest", "attach latest"]
    assert told == ["latest"]


def test_resume_is_refused_when_a_turn_starts_while_the_session_is_read() -> None:
    session = FakeSession(release=threading.Event())
    host = Host(current_session=session)

    async def race() -> object:
        task = asyncio.create_task(sessions.resume(host, "s9"))
        await asyncio.to_thread(session.prepared.wait, 5)
        host.turn_running = True  # a queued message started while the file was read
        session.release.set()  # type: ignore[union-attr]
        return await task

    outcome = asyncio.run(race())
    assert outcome == Refused("resume", "a turn is running: Esc cancels it, then /resume s9 again")
    assert session.calls == ["prepare s9"]  # read, never attached


@pytest.mark.parametrize(
    ("host", "reason", "kind"),
    [
        (Host(current_session=None), sessions.NOT_RECORDED, "no-sessions"),
        (Host(turn_running=True), "a turn is running: Esc cancels it, then /fork again", "refused"),
        (Host(turn_engine=None), "the model is still loading; /fork again in a moment", "refused"),
    ],
)
def test_fork_says_why_it_cannot_switch_now(host: Host, reason: str, kind: str) -> None:
    assert sessions.fork(host, "2") == Refused("fork", reason, kind)  # type: ignore[arg-type]


def test_fork_reads_its_turn_and_names_the_parent() -> None:
    host = Host()
    assert sessions.fork(host, "x") == Refused("fork", "/fork takes a turn number, not 'x'")
    outcome = sessions.fork(host, "2")
    assert isinstance(outcome, Switched) and outcome.parent == "s1"
    assert host.current_session.calls == ["fork 2"]


def test_a_failed_resume_says_why_and_keeps_the_session() -> None:
    host = Host()
    assert asyncio.run(sessions.resume(host, "nope")) == Refused("resume", "no session 'nope'")
    assert host.current_session.calls == ["prepare nope"]


def test_rename_needs_a_title_and_runs_while_a_turn_runs() -> None:
    assert sessions.rename(Host(), "") == Refused("rename", "usage: /rename TITLE", "usage")
    assert sessions.rename(Host(turn_running=True), " parser ") == Renamed("s1", "parser")
    refused = sessions.rename(Host(current_session=None), "x")
    assert refused == Refused("rename", sessions.NOT_RECORDED, "no-sessions")


# --------------------------------------------------------------------------- corrections


def test_wrong_reads_a_mode_undo_or_nothing() -> None:
    assert corrections.read_wrong("") == corrections.PickMode()
    assert corrections.read_wrong("undo") == corrections.Undo()
    assert corrections.read_wrong("code") == corrections.CorrectTo("code")


class RefusingEngine(ScriptEngine):
    def correct(
        self, mode: str, *, turn: int | None = None, rerun: bool = True
    ) -> AsyncIterator[TurnEvent]:
        raise ModesError("no turn to correct yet")

    def undo_correction(self) -> Any:
        raise ModesError("no correction to undo in this session")


def test_a_refused_correction_or_undo_is_an_outcome_not_an_exception() -> None:
    engine = RefusingEngine()
    refused = corrections.correct(engine, "code")
    assert refused == corrections.CorrectionRefused("no turn to correct yet")
    undone = corrections.undo(engine)
    assert undone == corrections.CorrectionRefused("no correction to undo in this session")


def test_the_front_ends_import_the_engine_ports_from_core_not_a_re_export() -> None:
    import modes_tui.mcp.config as mcp_config
    import modes_tui.tui.services as app_services

    assert not {"TurnEngine", "Confirmer"} & set(app_services.__all__)
    assert not hasattr(mcp_config, "expand_variables")

"""Test doubles for the app: an engine that plays recorded event scripts, an in-memory
control file, and event builders with fixed timestamps (snapshots must not change).
"""

from __future__ import annotations

import asyncio
import io
import json
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from textual import events
from textual.pilot import Pilot

from modes_tui.core.control_setting import AUTO, OFF, ControlReading
from modes_tui.core.engine.engine import Engine
from modes_tui.core.engine.ports import Confirmer
from modes_tui.core.engine.questions import ANSWER_ARMING_SECONDS
from modes_tui.core.errors import UnknownMode
from modes_tui.core.history.conversation import Conversation, Message
from modes_tui.core.history.events import (
    ModeChanged,
    ReasoningDelta,
    RequestBuilt,
    RouteDecided,
    TextDelta,
    ToolCallFinished,
    ToolCallRequested,
    TurnCancelled,
    TurnEvent,
    TurnFinished,
    Usage,
)
from modes_tui.core.model.wire import ModelRequest, ToolCall, ToolSpec
from modes_tui.core.packs.profiles import Pack, load_pack
from modes_tui.core.paths import app_dirs
from modes_tui.core.routing.classifiers.keyword import KeywordClassifier
from modes_tui.core.routing.router import Router
from modes_tui.core.values.route import ClassifierInfo, Decision, Route
from modes_tui.llm.fake import ScriptedModel
from modes_tui.runtime import Runtime, build_engine
from modes_tui.store.control import ControlFile
from modes_tui.store.session_log import SessionLog
from modes_tui.store.settings import Settings
from modes_tui.tui.app import ModesApp
from modes_tui.tui.services import AppServices
from modes_tui.tui.sessions import StoreSessions
from tests.support.engine_support import engine_config

FIXED_AT = "2026-03-14T09:26:53.000+00:00"


def route(
    mode: str,
    by: str = "classifier",
    confidence: float | None = 0.8,
    probabilities: dict[str, float] | None = None,
    reason: str | None = "keywords: segfault",
    **extra: Any,
) -> Route:
    """A route with a fixed time."""
    if by == "caller":
        return Route(mode, "caller", "Mode requested by caller", at=FIXED_AT, **extra)
    decision = Decision(mode, confidence, reason, probabilities)
    ranked = decision.ranked()
    runner_up = next((n for n, _ in ranked if n != mode), None)
    return Route(
        mode,
        by,  # type: ignore[arg-type]
        reason,
        decision=decision,
        duration_ms=0.42,
        classifier=ClassifierInfo("keyword"),
        runner_up=runner_up,
        at=FIXED_AT,
        **extra,
    )


def request(
    mode: str | None,
    text: str,
    *,
    model: str = "scripted/demo",
    tools: Sequence[str] = (),
    history: Sequence[dict[str, Any]] = (),
    round: int = 1,
) -> RequestBuilt:
    """A request as the engine would build it."""
    system = "You are modes-tui, a helpful assistant in a terminal."
    if mode:
        system += f"\n\n## Mode: {mode}\nAnswer as the {mode} mode would."
    specs = tuple(
        ToolSpec(
            name,
            f"The {name} tool.",
            {"type": "object", "properties": {"path": {"type": "string"}}},
        )
        for name in tools
    )
    messages = ({"role": "system", "content": system}, *history, {"role": "user", "content": text})
    return RequestBuilt(
        ModelRequest(model, messages, specs, temperature=0.2), mode, round, notes=()
    )


def answer_events(
    text: str,
    mode: str,
    user: str,
    *,
    chunk: int = 16,
    the_route: Route | None = None,
    model: str = "scripted/demo",
) -> list[TurnEvent]:
    """A whole plain turn."""
    events: list[TurnEvent] = [RouteDecided(the_route or route(mode)), request(mode, user)]
    events += [TextDelta(text[i : i + chunk]) for i in range(0, len(text), chunk)]
    events.append(Usage(model, 120, max(1, len(text) // 4), None))
    events.append(TurnFinished(Message("assistant", text, mode=mode, model=model)))
    return events


Script = Callable[[str], list[TurnEvent]] | list[TurnEvent]


@dataclass
class ScriptEngine:
    """Plays one event script per turn; honours cancel and asks the confirmer for tools."""

    scripts: deque[Script] = field(default_factory=deque)
    delay: float = 0.0
    confirmer: Confirmer | None = None
    conversation: Conversation = field(default_factory=Conversation)
    steps: asyncio.Semaphore | None = None
    """When set, each text delta takes one permit (tests release them one by one)."""
    texts: list[str] = field(default_factory=list)
    resent: list[str] = field(default_factory=list)
    prepared: list[str] = field(default_factory=list)
    """Drafts the prompt handed over to prepare their route, in order."""
    cleared: int = 0
    _cancelled: bool = False
    _last: Script | None = None
    _last_text: str = ""

    def script(self, *scripts: Script) -> ScriptEngine:
        self.scripts.extend(scripts)
        return self

    async def run_turn(self, text: str, *, force: str | None = None) -> AsyncIterator[TurnEvent]:
        self.texts.append(text)
        self._last_text = text
        self.conversation.append(Message("user", text))
        self._last = self.scripts.popleft() if self.scripts else answer_events("ok", "chat", text)
        async for event in self._play(self._last, text):
            yield event

    def prepare(self, draft: str) -> None:
        self.prepared.append(draft)

    async def resend(self, text: str, *, force: str | None = None) -> AsyncIterator[TurnEvent]:
        """Drop the last user turn and run `text` in its place."""
        self.resent.append(text)
        messages = self.conversation.messages
        last = max((i for i, m in enumerate(messages) if m.role == "user"), default=None)
        if last is not None:
            del messages[last:]
        async for event in self.run_turn(text, force=force):
            yield event

    async def retry(self) -> AsyncIterator[TurnEvent]:
        script = self.scripts.popleft() if self.scripts else self._last
        assert script is not None
        async for event in self._play(script, self._last_text):
            yield event

    async def _play(self, script: Script, text: str) -> AsyncIterator[TurnEvent]:
        self._cancelled = False
        events = script(text) if callable(script) else script
        partial = ""
        for event in events:
            if self._cancelled:
                yield TurnCancelled(partial)
                return
            if isinstance(event, TextDelta):
                if self.steps is not None:
                    await self.steps.acquire()
                if self.delay:
                    await asyncio.sleep(self.delay)
                partial += event.text
            if self._cancelled:
                yield TurnCancelled(partial)
                return
            yield event
            if isinstance(event, ToolCallRequested) and event.needs_confirmation:
                assert self.confirmer is not None
                allowed = await self.confirmer.confirm(event.call, None)
                if not allowed:
                    yield ToolCallFinished(
                        event.call, "cancelled", '{"cancelled": true, "reason": "refused"}'
                    )
                    yield TextDelta("You refused the command, so I did not run it.")
                    yield TurnFinished(
                        Message("assistant", "You refused the command, so I did not run it.")
                    )
                    return
            if isinstance(event, TurnFinished):
                self.conversation.append(event.message)
        await asyncio.sleep(0)

    def cancel(self) -> None:
        self._cancelled = True

    def clear(self) -> None:
        self.cleared += 1
        self.conversation.clear()


@dataclass
class MemoryControl:
    """A control file in memory; `external(mode)` plays another process writing it."""

    modes: Sequence[str]
    value: str = AUTO
    warning: str | None = None
    writes: list[str] = field(default_factory=list)
    _changed: asyncio.Event = field(default_factory=asyncio.Event)

    def read(self) -> ControlReading:
        return ControlReading(self.value, self.warning)

    def write(self, mode: str) -> ControlReading:
        if mode not in (AUTO, OFF, *self.modes):
            raise UnknownMode(mode, [AUTO, OFF, *self.modes])
        self.value, self.warning = mode, None
        self.writes.append(mode)
        return self.read()

    def external(self, mode: str, warning: str | None = None) -> None:
        self.value, self.warning = mode, warning
        self._changed.set()

    async def watch(self) -> AsyncIterator[ControlReading]:
        while True:
            await self._changed.wait()
            self._changed.clear()
            yield self.read()


def default_pack() -> Pack:
    return load_pack("default")


def services(
    engine: ScriptEngine | None = None,
    *,
    pack: Pack | None = None,
    model: str = "scripted/demo",
    keymap: dict[str, str] | None = None,
    **extra: Any,
) -> AppServices:
    """Services around a script engine; the engine gets the app's confirmer."""
    pack = pack or default_pack()
    engine = engine or ScriptEngine()

    def build(confirmer: Confirmer) -> ScriptEngine:
        engine.confirmer = confirmer
        return engine

    runtime = Runtime(
        app_dirs(),
        Settings(default_model=model),
        pack,
        control=MemoryControl([p.name for p in pack.available()]),
    )
    return runtime.app_services(build, keymap=keymap or {}, **extra)


def real_services(
    pack: Pack,
    *,
    cwd: Path,
    control: ControlFile,
    log: SessionLog | None = None,
    model_id: str = "scripted/demo",
    sessions: StoreSessions | None = None,
    on_confirm: Callable[[Confirmer], object] | None = None,
    **engine_parts: Any,
) -> AppServices:
    """Services around the real engine as `modes-tui` builds it (keyword classifier, offline,
    tools in `cwd`); `engine_parts` go to `build_engine` (`model=`, `servers=`,
    `local_model_path=`). `on_confirm` sees the app's confirmer before each engine is built."""
    dirs = app_dirs()

    def engine(confirm: Confirmer) -> Engine:
        if on_confirm is not None:
            on_confirm(confirm)
        return build_engine(
            engine_config(default_model=model_id, cwd=cwd),
            pack=pack,
            classifier="keyword",
            session=log,
            control=control,
            confirm=confirm,
            dirs=dirs,
            offline=True,
            **engine_parts,
        )

    return AppServices(
        pack=pack,
        model=model_id,
        control=control,
        build_engine=engine,
        sessions=sessions,
        session_id=(lambda: log.id) if log is not None else (lambda: None),
    )


@dataclass
class RealApp:
    """The parts of an app over the real engine, kept for assertions; close `log` when done."""

    services: AppServices
    model: ScriptedModel
    control: ControlFile
    log: SessionLog


def real_app(
    pack: Pack,
    cwd: Path,
    *,
    per_pack: bool = False,
    sessions: bool = False,
    on_confirm: Callable[[Confirmer], object] | None = None,
) -> RealApp:
    """An app's services over the real engine with a scripted model, the control file and a
    session log in MODES_TUI_HOME. `per_pack`: the control file is the pack's own setting
    (`--pack NAME`); `sessions`: the store's sessions, exporting to `cwd`."""
    dirs = app_dirs()
    control = ControlFile(
        dirs.control_file, modes=lambda: pack.names, pack=pack.name if per_pack else None
    )
    model = ScriptedModel()
    log = SessionLog.create(dirs, pack=pack.name, model="scripted/demo")
    catalog = (
        StoreSessions(dirs, lambda: Router(pack, KeywordClassifier()), export_dir=cwd)
        if sessions
        else None
    )
    services = real_services(
        pack,
        cwd=cwd,
        control=control,
        log=log,
        sessions=catalog,
        on_confirm=on_confirm,
        model=model,
    )
    return RealApp(services, model, control, log)


def tool_call(name: str = "run_command", **arguments: Any) -> ToolCall:
    return ToolCall("call_1", name, arguments or {"command": "ls"})


def plain(widget: Any) -> str:
    """The text a Static (or a Markdown widget) shows, without styles."""
    source = getattr(widget, "source", None)
    if isinstance(source, str):
        return source
    console = Console(width=200, file=io.StringIO(), color_system=None)
    with console.capture() as captured:
        console.print(widget.content)
    return captured.get()


def all_text(widgets: Iterable[Any]) -> str:
    """The plain text the user sees in a set of widgets."""
    return "\n".join(plain(widget) for widget in widgets)


HERE = Path(__file__).parent


def demo_scripts() -> list[list[TurnEvent]]:
    """Three turns of different kinds, as in the README screenshots."""
    from modes_tui.core.errors import RoutingDecisionError

    chat = answer_events(
        "Lisbon in two days: **Alfama** at sunrise, a tram 28 ride, pastéis in Belém, "
        "and the sunset from *Miradouro da Senhora do Monte*.",
        "chat",
        "recommend a weekend in Lisbon",
        the_route=route(
            "chat",
            confidence=0.67,
            probabilities={"chat": 0.67, "write": 0.33},
            reason="keywords: recommend",
        ),
    )
    call = ToolCall("call_1", "read_file", {"path": "src/parse.py"})
    code_answer = (
        "The loop never advances `i` when the line is blank:\n\n"
        "```python\nwhile i < len(lines):\n    if not lines[i].strip():\n"
        "        i += 1  # was missing\n        continue\n```\n\n"
        "- add the increment\n- add a test for blank lines\n"
    )
    code = [
        RouteDecided(
            route(
                "code",
                confidence=0.75,
                probabilities={"code": 0.75, "shell": 0.25},
                reason="keywords: python, bug",
            )
        ),
        ModeChanged("chat", "code"),
        request(
            "code",
            "why does my python parser loop forever? bug in src/parse.py",
            tools=["read_file", "list_files", "search_files"],
        ),
        ReasoningDelta("The user mentions a loop; read the file first."),
        ToolCallRequested(call),
        ToolCallFinished(call, "ok", '{"content": "while i < len(lines): ..."}', 3.2),
        request("code", "why does my python parser loop forever? bug in src/parse.py", round=2),
        *[TextDelta(code_answer[i : i + 24]) for i in range(0, len(code_answer), 24)],
        Usage("scripted/demo", 812, 96, None),
        TurnFinished(Message("assistant", code_answer, mode="code", model="scripted/demo")),
    ]
    error = RoutingDecisionError(
        "the routing answer is not JSON", stage="json-parse", raw_output="mode: reason (sure!)"
    )
    fallback = Route(
        "chat",
        "fallback",
        "Classifier failed: RoutingDecisionError: the routing answer is not JSON",
        duration_ms=212.0,
        classifier=ClassifierInfo("chat", "scripted/router"),
        error=error,
        at=FIXED_AT,
    )
    reason = answer_events(
        "At least two sixes in five rolls: 1 − P(0) − P(1) = 1 − (5/6)^5 − 5·(1/6)(5/6)^4 ≈ **0.196**.",
        "chat",
        "probability of at least two sixes in five dice rolls",
        the_route=fallback,
    )
    return [chat, code, reason]


def tool_card_script() -> list[TurnEvent]:
    """A command with a long output that failed, then the answer (screenshots, snapshots)."""
    call = ToolCall("call_1", "run_command", {"command": "ls tests && pytest -q tests/test_cli.py"})
    listing = [f"test_{name}.py" for name in ("app", "cli", "engine", "export", "panel", "repl")]
    output = "\n".join(
        [*listing, "F.. [100%]", "FAILED tests/test_cli.py::test_version", "1 failed"]
    )
    answer = "One test fails: `test_version` expects the old version string."
    return [
        RouteDecided(route("shell", confidence=0.81, reason="keywords: tests")),
        request("shell", "which tests are there?", tools=["run_command"]),
        ToolCallRequested(call),
        ToolCallFinished(call, "ok", json.dumps({"exit_code": 1, "output": output}), 840.0),
        request("shell", "which tests are there?", round=2),
        TextDelta(answer),
        Usage("scripted/demo", 640, 22, None),
        TurnFinished(Message("assistant", answer, mode="shell", model="scripted/demo")),
    ]


DEMO_MESSAGES = [
    "recommend a weekend in Lisbon",
    "why does my python parser loop forever? bug in src/parse.py",
    "probability of at least two sixes in five dice rolls",
]


async def editor_in(pilot: Pilot[None]) -> None:
    """Wait for the prompt's editor, mounted right after the first frame in the early
    prompt's place (`tui.early_prompt`): a test that reaches for `conversation.prompt` at
    once waits for it, as a user's keys wait in the early prompt."""
    app = pilot.app
    await until(
        pilot, lambda: bool(getattr(app, "conversation", None) and app.conversation.editor_in)
    )  # type: ignore[attr-defined]


async def until(pilot: Pilot[None], check: Callable[[], bool], timeout: float = 15.0) -> None:
    """Let the app run until `check()` holds; fail with a clear message after `timeout` s
    (generous: a wait that holds returns at once, and CI runs three workers on two cores)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not check():
        if loop.time() > deadline:
            raise AssertionError("timed out waiting for the screen to change")
        await pilot.pause(0.02)


@dataclass
class FakeClock:
    """Seconds that pass only when the test says so: a dialog on it arms when the test says
    (`pass_arming`), however slowly a loaded machine runs the app."""

    now: float = 1000.0

    def __call__(self) -> float:
        return self.now

    def pass_arming(self) -> None:
        self.now += ANSWER_ARMING_SECONDS


TYPIST_GAP = 0.08
"""Seconds between two keys of a word, as a typist presses them (0.1-0.3 s is usual)."""

KEY_NAMES = {" ": "space", ",": "comma"}


async def type_word(pilot: Pilot[None], word: str, done: Callable[[], bool]) -> None:
    """Type `word` as a terminal delivers a typist's keys, then let the app handle them until
    `done()` holds.

    Each key is posted from the driver's own thread, and stamped as Textual stamps a key it
    reads, `TYPIST_GAP` after the one before: the stamps are the typist's, not the test
    thread's, so a loaded machine that wakes the thread late (CI: a 0.08 s sleep taking more
    than the dialogs' arming time) still types a word, not keys a pause apart.
    """
    app = pilot.app

    def typist() -> None:
        first: float | None = None
        for index, char in enumerate(word):
            key = events.Key(KEY_NAMES.get(char, char), char)
            first = key.time if first is None else first
            key.time = first + index * TYPIST_GAP
            app.post_message(key)
            time.sleep(TYPIST_GAP)

    await asyncio.to_thread(typist)
    await until(pilot, done, timeout=30.0)


async def started(pilot: Pilot[None]) -> ModesApp:
    """The app under the pilot, once its engine is built."""
    app = pilot.app
    assert isinstance(app, ModesApp)
    await until(pilot, lambda: app.conversation.engine is not None)
    return app


async def answer_dialog(pilot: Pilot[None], key: str) -> None:
    """Press `key` in the dialog on screen once it takes answers: a confirmation ignores
    keys for a moment after it opens (`modes_tui.tui.arming`)."""
    app = pilot.app
    await until(pilot, lambda: bool(getattr(app.screen, "armed", False)))
    await pilot.press(key)


async def rerouted(pilot: Pilot[None]) -> None:
    """Wait until the replay screen shows today's re-route: its title and the turns it marks
    as changed (the re-route runs in a thread after the first paint)."""
    from modes_tui.tui.chat import ChatLog
    from modes_tui.tui.replay import ReplayScreen

    app = pilot.app
    await until(pilot, lambda: isinstance(app.screen, ReplayScreen))
    screen = app.screen
    await until(pilot, lambda: "re-route:" in plain(screen.query_one("#replay-title")))
    chat = screen.query_one(ChatLog)
    await until(pilot, lambda: "(was " in all_text(chat.query("Static")))
    await pilot.pause(0.1)


async def palette_lists(pilot: Pilot[None], wanted: str) -> None:
    """Wait until the command palette shows its list with a command holding `wanted` on top
    and highlighted: Enter picks nothing while the palette's search is still running."""
    from textual.command import CommandList, CommandPalette

    app = pilot.app

    def on_top() -> bool:
        screen = app.screen
        if not isinstance(screen, CommandPalette):
            return False
        commands = screen.query_one(CommandList)
        if not commands.has_class("--visible") or commands.highlighted != 0:
            return False
        return wanted.lower() in str(commands.get_option_at_index(0).prompt).lower()

    await until(pilot, on_top)

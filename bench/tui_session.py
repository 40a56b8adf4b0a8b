"""Opening a recorded 1,000-turn session in the app: time to interactive, memory, key round trip.

Writes a session log with the store (as the engine does: user, route, request, assistant
records), then, in the real app (headless), types `/replay ID` and measures:
- time to interactive: Enter pressed -> the replay screen painted and taking keys;
- memory growth: resident set size after opening minus before;
- key round trip: a key press -> the screen repainted, median of 10-20 presses,
  with the CPU time the event loop's thread spent in it (steadier than the wall time when
  other work loads the machine).
A 10-turn session is measured the same way in the same run as the baseline.

Targets (issue 6): interactive <= 1 s, memory growth <= 60 MB, key round trip <= 100 ms.
Issue 14: panel toggle <= 100 ms on the 1,000-turn session; key round trip p50 <= 1.5x that
of a bare Textual app listing the same route cards, measured the same way in the same run.
Never asserts. Run: `PYTHONPATH=. python bench/tui_session.py [--turns 1000]`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ["MODES_TUI_HOME"] = tempfile.mkdtemp(prefix="modes-bench-")

from textual import events
from textual.screen import Screen

from modes_tui.core.config.models import EMBEDDED_MODEL
from modes_tui.core.control_setting import AUTO, ControlReading
from modes_tui.core.engine.ports import Confirmer
from modes_tui.core.history.conversation import Conversation, Message
from modes_tui.core.history.events import TurnEvent
from modes_tui.core.model.wire import ModelRequest
from modes_tui.core.packs.profiles import load_pack
from modes_tui.core.paths import app_dirs
from modes_tui.core.values.route import ClassifierInfo, Decision, Route
from modes_tui.runtime import RunOptions, Runtime
from modes_tui.store.session_log import SessionLog
from modes_tui.store.settings import Settings
from modes_tui.tui.app import ModesApp, build_app
from modes_tui.tui.chat import ChatLog
from modes_tui.tui.panel import PAGE, RoutePanel
from modes_tui.tui.replay import ReplayScreen
from modes_tui.tui.sessions import StoreSessions

MODES = ("chat", "code", "shell", "write", "reason")
QUESTIONS = {
    "chat": "recommend a good film for tonight",
    "code": "why does my python function return None",
    "shell": "how do I undo my last git commit",
    "write": "proofread this paragraph for me",
    "reason": "what is the probability of two sixes",
}


def answer(mode: str, turn: int) -> str:
    return (
        f"Turn {turn}, answered in **{mode}**.\n\n"
        "- first, check the obvious cause\n- then look at the edge cases\n\n"
        "```python\ndef example():\n    return 42\n```\n\n"
        "That should cover it; ask again if anything is unclear. " * 2
    )


def write_session(turns: int) -> str:
    """A session log like the engine writes; returns its id."""
    log = SessionLog.create(app_dirs(), pack="default", model=EMBEDDED_MODEL)
    history: list[dict[str, str]] = []
    system = {"role": "system", "content": "You are modes-tui. " * 20}
    for turn in range(1, turns + 1):
        mode = MODES[turn % len(MODES)]
        text = f"{QUESTIONS[mode]} (#{turn})"
        log.record("user", turn, content=text)
        probabilities = {m: (0.6 if m == mode else 0.1) for m in MODES}
        route = Route(
            mode,
            "classifier",
            f"keywords: {mode}",
            Decision(mode, 0.6, f"keywords: {mode}", probabilities),
            duration_ms=0.3,
            classifier=ClassifierInfo("keyword"),
            runner_up="chat" if mode != "chat" else "code",
        )
        log.record("route", turn, route=route.to_dict(), setting=AUTO, warnings=[])
        messages = (system, *history[-6:], {"role": "user", "content": text})
        request = ModelRequest(EMBEDDED_MODEL, messages, temperature=0.2)
        log.record("request", turn, request=request.to_dict(), mode=mode, round=1, notes=[])
        reply = answer(mode, turn)
        message = Message("assistant", reply, mode=mode, model=EMBEDDED_MODEL)
        usage = {"prompt_tokens": 300, "completion_tokens": 80, "cost": None}
        log.record("assistant", turn, message=message.to_dict(), usage=usage)
        history += [{"role": "user", "content": text}, {"role": "assistant", "content": reply}]
    log.close()
    return log.id


def rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        pages = int(handle.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 1e6


@dataclass
class IdleEngine:
    conversation: Conversation = field(default_factory=Conversation)

    async def run_turn(self, text: str, *, force: str | None = None) -> AsyncIterator[TurnEvent]:
        if False:  # pragma: no cover - the bench sends no message
            yield

    async def retry(self) -> AsyncIterator[TurnEvent]:
        if False:  # pragma: no cover
            yield

    def cancel(self) -> None:
        pass

    def clear(self) -> None:
        pass


class StaticControl:
    def read(self) -> ControlReading:
        return ControlReading(AUTO)

    def write(self, mode: str) -> None:
        pass

    async def watch(self) -> AsyncIterator[ControlReading]:
        await asyncio.Event().wait()
        yield ControlReading(AUTO)


@dataclass
class Result:
    turns: int
    interactive_ms: float
    memory_mb: float
    key_ms: dict[str, list[float]]
    key_cpu_ms: dict[str, list[float]]
    reroute_ms: float
    toggle_frame_ms: list[float]
    """ctrl+b: key posted -> the first frame laid out with the panel toggled."""
    frames_final: tuple[int, int]
    """Toggles whose first frame already showed the settled screen, of those checked."""


async def measure(session_id: str, turns: int) -> Result:
    app = _bench_app()
    async with app.run_test(size=(140, 45)) as pilot:
        while app.conversation.engine is None:
            await pilot.pause(0.01)
        await pilot.pause(0.2)
        before = rss_mb()
        interactive, rerouted = await _open_replay(app, session_id, turns)
        await pilot.pause(0.3)
        memory = rss_mb() - before
        clock = _KeyClock(app)
        screen = app.screen
        await _time_moves(clock, screen.query_one(RoutePanel), screen.query_one(ChatLog))
        first_frames = await _time_toggles(clock, screen)
        checks = 4
        final = await _first_frames_final(app, checks)
    return Result(
        turns, interactive, memory, clock.keys, clock.cpu, rerouted, first_frames, (final, checks)
    )


def _bench_app() -> ModesApp:
    """The app as a first run has it (the embedded model, keyword routing), on an idle engine."""
    runtime = Runtime(
        app_dirs(),
        Settings(),  # the embedded model, as a first run has it
        load_pack("default"),
        RunOptions(classifier="keyword"),
        control=StaticControl(),
    )

    def build(confirmer: Confirmer) -> IdleEngine:
        return IdleEngine()

    services = runtime.app_services(
        build, sessions=StoreSessions(runtime.dirs, runtime.router), tune_gc=True
    )
    return build_app(services)


async def _open_replay(app: ModesApp, session_id: str, turns: int) -> tuple[float, float]:
    """`/replay ID`: ms until the replay screen is interactive, and until it has re-routed."""
    app.conversation.prompt.value = f"/replay {session_id}"
    started = time.perf_counter()
    # Keys are posted as the terminal driver would; Pilot.press also waits for the whole
    # process to go idle, which is not what a user waits for.
    app.post_message(events.Key("enter", "\r"))
    while not isinstance(app.screen, ReplayScreen) or not app.screen.records:
        await asyncio.sleep(0.002)
    screen = app.screen
    while not screen.query("RoutePanel OptionList") or (
        screen.query_one(RoutePanel).shown < min(turns, PAGE)
    ):
        await asyncio.sleep(0.002)
    painted = asyncio.Event()
    app.call_after_refresh(painted.set)
    await painted.wait()
    interactive = (time.perf_counter() - started) * 1000
    deadline = time.perf_counter() + 120
    while "turns agree" not in str(screen.session.summary) and time.perf_counter() < deadline:
        await asyncio.sleep(0.01)
    return interactive, (time.perf_counter() - started) * 1000


class _KeyClock:
    """Key round trips: the key posted, the change seen, the next frame painted."""

    def __init__(self, app: ModesApp) -> None:
        self.app = app
        self.keys: dict[str, list[float]] = {"down": [], "pageup": [], "ctrl+b": []}
        self.cpu: dict[str, list[float]] = {key: [] for key in self.keys}

    async def round_trip(self, key: str, changed: Callable[[], bool]) -> float:
        began, began_cpu = time.perf_counter(), time.thread_time()
        self.app.post_message(events.Key(key, None))
        while not changed():
            await asyncio.sleep(0.0005)
        painted = asyncio.Event()
        self.app.call_after_refresh(painted.set)
        await painted.wait()
        elapsed = (time.perf_counter() - began) * 1000
        self.cpu[key].append((time.thread_time() - began_cpu) * 1000)
        await asyncio.sleep(0.05)  # let the screen settle, off the clock (as for the bare app)
        return elapsed

    async def time(self, key: str, changed: Callable[[], bool]) -> None:
        self.keys[key].append(await self.round_trip(key, changed))


async def _time_moves(clock: _KeyClock, panel: RoutePanel, log: ChatLog) -> None:
    """down in the route panel's list, pageup in the chat log."""
    panel.options.focus()
    panel.options.highlighted = 0
    for _ in range(20):
        before = panel.options.highlighted
        await clock.time("down", lambda before=before: panel.options.highlighted != before)
    log.focus()
    for _ in range(10):
        y = log.scroll_y
        if y <= 0:
            log.scroll_end(animate=False, immediate=True)
            await asyncio.sleep(0.2)
            y = log.scroll_y
        await clock.time("pageup", lambda y=y: log.scroll_y != y)


async def _time_toggles(clock: _KeyClock, screen: Screen[object]) -> list[float]:
    """The toggle, timed two ways. "Settled" is the round trip: the key, then a refresh after
    the panel's display changed, which often is Textual's second layout pass (widgets whose
    size changed in the first pass ask for another one). "First frame" (returned) stops at the
    first layout frame drawn with the panel toggled: what the user sees. Both for every
    toggle; `_first_frames_final` shows the first frame is the final one."""
    panel = screen.query_one(RoutePanel)
    first_frames: list[float] = []
    frame_at: list[float] = []

    def on_layout_frame(_screen: object) -> None:
        if not frame_at:
            frame_at.append(time.perf_counter())

    screen.screen_layout_refresh_signal.subscribe(screen, on_layout_frame, immediate=True)
    for _ in range(20):
        shown = panel.display
        frame_at.clear()
        began = time.perf_counter()
        await clock.time("ctrl+b", lambda shown=shown: panel.display != shown)
        first_frames.append((frame_at[0] - began) * 1000)
    return first_frames


async def _first_frames_final(app: ModesApp, checks: int) -> int:
    """Of `checks` toggles, how many drew the settled screen in their first frame."""
    screen = app.screen
    panel = screen.query_one(RoutePanel)
    final = 0
    for _ in range(checks):
        shown = panel.display
        seen: list[str] = []

        def snapshot(_screen: object, seen: list[str] = seen) -> None:
            if not seen:
                seen.append(app.export_screenshot())

        screen.screen_layout_refresh_signal.subscribe(screen, snapshot, immediate=True)
        app.post_message(events.Key("ctrl+b", None))
        while panel.display == shown or not seen:
            await asyncio.sleep(0.001)
        screen.screen_layout_refresh_signal.unsubscribe(screen)
        await asyncio.sleep(0.5)
        final += seen[0] == app.export_screenshot()
    return final


async def measure_bare(session_id: str, count: int = 20) -> tuple[list[float], list[float]]:
    """The baseline: a bare Textual app listing the same route cards (the newest PAGE
    decisions of the same session) in an OptionList; same key, same clock. What is left
    between the two is ours: handlers, bindings and the other widgets of the screen."""
    from textual.app import App, ComposeResult
    from textual.widgets import OptionList
    from textual.widgets.option_list import Option

    from modes_tui.tui.render import route_card
    from modes_tui.tui.replay import records_from_turns

    runtime = Runtime.load(RunOptions(classifier="keyword"), settings=Settings())
    catalog = StoreSessions(runtime.dirs, runtime.router)
    records = records_from_turns(catalog.load(session_id).turns)
    cards = [Option(route_card(r)) for r in reversed(records[-PAGE:])]

    class Bare(App[None]):
        def compose(self) -> ComposeResult:
            yield OptionList(*cards)

    app = Bare()
    times: list[float] = []
    cpu: list[float] = []
    async with app.run_test(size=(140, 45)) as pilot:
        options = app.query_one(OptionList)
        options.focus()
        options.highlighted = 0
        await pilot.pause(0.2)
        for _ in range(count):
            before = options.highlighted
            began, began_cpu = time.perf_counter(), time.thread_time()
            app.post_message(events.Key("down", None))
            while options.highlighted == before:
                await asyncio.sleep(0.0005)
            painted = asyncio.Event()
            app.call_after_refresh(painted.set)
            await painted.wait()
            times.append((time.perf_counter() - began) * 1000)
            cpu.append((time.thread_time() - began_cpu) * 1000)
            await asyncio.sleep(0.05)
    return times, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=1000)
    args = parser.parse_args()
    small_id = write_session(10)
    big_id = write_session(args.turns)
    size = (app_dirs().sessions / f"{big_id}.jsonl").stat().st_size / 1e6
    bare, bare_cpu = asyncio.run(measure_bare(big_id))
    results = [asyncio.run(measure(small_id, 10)), asyncio.run(measure(big_id, args.turns))]
    print(f"Opening a recorded session with /replay ({size:.1f} MB log for {args.turns} turns)")
    print()
    print(
        f"{'session':<12}{'interactive (ms)':>18}{'memory growth (MB)':>20}"
        f"{'all re-routed (ms)':>20}"
    )
    for result in results:
        print(
            f"{f'{result.turns} turns':<12}{result.interactive_ms:>18.0f}{result.memory_mb:>20.1f}"
            f"{result.reroute_ms:>20.0f}"
        )
    print(f"{'target':<12}{'<= 1000':>18}{'<= 60':>20}")
    print()
    print("key round trip (ms), key posted -> screen repainted; target <= 100")
    print(f"{'session':<12}{'key':<34}{'p50':>8}{'max':>8}{'CPU p50':>9}")
    what = {
        "down": "down (next decision in the panel)",
        "pageup": "pageup (scroll the chat)",
        "ctrl+b": "ctrl+b (hide/show panel: relayout)",
    }
    for result in results:
        for key, times in result.key_ms.items():
            print(
                f"{f'{result.turns} turns':<12}{what[key]:<34}"
                f"{statistics.median(times):>8.1f}{max(times):>8.1f}"
                f"{statistics.median(result.key_cpu_ms[key]):>9.1f}"
            )
    small, big = results
    bare_p50 = statistics.median(bare)
    ours = statistics.median(big.key_ms["down"])
    bare_cpu_p50 = statistics.median(bare_cpu)
    ours_cpu = statistics.median(big.key_cpu_ms["down"])
    print(
        f"{'bare app':<12}{'down (same route cards, bare list)':<34}{bare_p50:>8.1f}{max(bare):>8.1f}"
        f"{bare_cpu_p50:>9.1f}"
    )
    print(
        f"key round trip ratio, {big.turns} turns / bare (down): {ours / bare_p50:.2f}x "
        f"(target <= 1.5x); CPU time: {ours_cpu / bare_cpu_p50:.2f}x"
    )
    toggle = statistics.median(big.key_ms["ctrl+b"])
    toggle_cpu = statistics.median(big.key_cpu_ms["ctrl+b"])
    print()
    print("panel toggle (ctrl+b), key posted -> (ms); target <= 100 on the 1,000-turn session")
    print(
        f"{'session':<12}{'first frame p50':>16}{'max':>8}{'settled p50':>13}{'max':>8}"
        f"{'CPU p50':>9}{'first frame final':>19}"
    )
    for result in results:
        frames = result.toggle_frame_ms
        settled = result.key_ms["ctrl+b"]
        final, checked = result.frames_final
        print(
            f"{f'{result.turns} turns':<12}{statistics.median(frames):>16.0f}{max(frames):>8.0f}"
            f"{statistics.median(settled):>13.0f}{max(settled):>8.0f}"
            f"{statistics.median(result.key_cpu_ms['ctrl+b']):>9.0f}"
            f"{f'{final} of {checked}':>19}"
        )
    print(
        f"panel toggle, {big.turns} turns: first frame "
        f"{statistics.median(big.toggle_frame_ms):.0f} ms, settled {toggle:.0f} ms "
        f"(target <= 100 ms), CPU {toggle_cpu:.0f} ms"
    )
    print(f"load average at the end: {os.getloadavg()[0]:.1f} (2 cores here)")
    print()
    print(f"ratio 1000/10 turns: interactive x{big.interactive_ms / small.interactive_ms:.1f}")


if __name__ == "__main__":
    main()

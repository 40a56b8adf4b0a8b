"""Streaming a 4,000-character Markdown answer at 100 chunks/s through the real chat widgets.

Prints, for an idle app (the baseline, same run) and for the app while it streams:
- event-loop lag: how late a 10 ms ticker wakes up (p50, p95, max);
- when the last chunk is on screen, measured from the start of the stream, against the
  stream's own duration (the overhead in % of that duration).

Targets (issue 6): p95 lag <= 50 ms; last chunk on screen within 10% of the stream's duration.
Never asserts. Run: `PYTHONPATH=. python bench/tui_streaming.py [--repeat 3]`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("MODES_TUI_HOME", tempfile.mkdtemp(prefix="modes-bench-"))

from modes_tui.core.control_setting import AUTO, ControlReading
from modes_tui.core.engine.ports import Confirmer
from modes_tui.core.history.conversation import Conversation, Message
from modes_tui.core.history.events import (
    RequestBuilt,
    RouteDecided,
    TextDelta,
    TurnEvent,
    TurnFinished,
)
from modes_tui.core.model.wire import ModelRequest
from modes_tui.core.packs.profiles import load_pack
from modes_tui.core.paths import app_dirs
from modes_tui.core.values.route import Route
from modes_tui.runtime import Runtime
from modes_tui.store.settings import Settings
from modes_tui.tui.app import ModesApp, build_app
from modes_tui.tui.turn_view import AnswerSegment

CHUNKS_PER_SECOND = 100
TICK = 0.010


def markdown_answer(size: int = 4000) -> str:
    """About `size` characters of realistic Markdown: headings, lists, code fences, prose."""
    parts: list[str] = []
    section = 0
    while sum(len(p) for p in parts) < size:
        section += 1
        parts.append(f"## Step {section}\n\n")
        parts.append(
            "The parser keeps a cursor into the list of lines and **must** advance it on "
            "every path, or the loop never ends. Here is what to check:\n\n"
        )
        parts.append("- the blank-line branch\n- the comment branch\n- the `continue` paths\n\n")
        parts.append(
            "```python\n"
            f"def parse_{section}(lines):\n"
            "    i = 0\n"
            "    while i < len(lines):\n"
            "        if not lines[i].strip():\n"
            "            i += 1\n"
            "            continue\n"
            "        yield lines[i]\n"
            "        i += 1\n"
            "```\n\n"
        )
    return "".join(parts)[:size]


@dataclass
class PacedEngine:
    """Yields one answer in fixed-size chunks at a fixed rate, and notes when each left."""

    text: str
    chunk: int
    conversation: Conversation = field(default_factory=Conversation)
    started: float = 0.0
    last_sent: float = 0.0

    async def run_turn(self, text: str, *, force: str | None = None) -> AsyncIterator[TurnEvent]:
        yield RouteDecided(Route("code", "caller", "Mode requested by caller"))
        yield RequestBuilt(
            ModelRequest("bench/paced", ({"role": "user", "content": text},)), "code"
        )
        pieces = [self.text[i : i + self.chunk] for i in range(0, len(self.text), self.chunk)]
        self.started = time.perf_counter()
        for index, piece in enumerate(pieces):
            due = self.started + index / CHUNKS_PER_SECOND
            delay = due - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            yield TextDelta(piece)
        self.last_sent = time.perf_counter()
        yield TurnFinished(Message("assistant", self.text, mode="code", model="bench/paced"))

    async def retry(self) -> AsyncIterator[TurnEvent]:
        if False:  # pragma: no cover - never retried here
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


async def ticker(lags: list[float], stop: asyncio.Event) -> None:
    while not stop.is_set():
        before = time.perf_counter()
        await asyncio.sleep(TICK)
        lags.append((time.perf_counter() - before - TICK) * 1000)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


async def bare_run(text: str, chunk: int) -> tuple[list[float], float, float]:
    """The same stream into a bare Textual app: one Markdown in an anchored VerticalScroll."""
    from textual.app import App, ComposeResult
    from textual.containers import VerticalScroll
    from textual.widgets import Input, Markdown

    class Bare(App[None]):
        def compose(self) -> ComposeResult:
            with VerticalScroll(id="log"):
                yield Markdown(id="answer")
            yield Input()

    app = Bare()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(0.2)
        app.query_one("#log").anchor()
        markdown = app.query_one("#answer", Markdown)
        lags: list[float] = []
        stop = asyncio.Event()
        task = asyncio.create_task(ticker(lags, stop))
        stream = Markdown.get_stream(markdown)
        pieces = [text[i : i + chunk] for i in range(0, len(text), chunk)]
        started = time.perf_counter()
        for index, piece in enumerate(pieces):
            delay = started + index / CHUNKS_PER_SECOND - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            await stream.write(piece)
        last_sent = time.perf_counter()
        await stream.stop()
        painted = asyncio.Event()
        app.call_after_refresh(painted.set)
        await painted.wait()
        on_screen = time.perf_counter()
        stop.set()
        await task
    return lags, (last_sent - started) * 1000, (on_screen - started) * 1000


@dataclass
class Run:
    idle_lags: list[float]
    stream_lags: list[float]
    duration_ms: float
    on_screen_ms: float


async def one_run(text: str, chunk: int) -> Run:
    engine = PacedEngine(text, chunk)

    def build(confirmer: Confirmer) -> PacedEngine:
        return engine

    runtime = Runtime(
        app_dirs(),
        Settings(default_model="bench/paced"),
        load_pack("default"),
        control=StaticControl(),
    )
    services = runtime.app_services(build, tune_gc=True)  # tune_gc as `modes-tui` runs it
    app: ModesApp = build_app(services)
    async with app.run_test(size=(120, 40)) as pilot:
        while app.conversation.engine is None:
            await pilot.pause(0.01)
        await pilot.pause(0.2)
        idle_lags: list[float] = []
        stop = asyncio.Event()
        task = asyncio.create_task(ticker(idle_lags, stop))
        await asyncio.sleep(1.0)
        stop.set()
        await task

        stream_lags: list[float] = []
        stop = asyncio.Event()
        task = asyncio.create_task(ticker(stream_lags, stop))
        app.conversation.prompt.value = "explain the parser loop"
        await pilot.press("enter")
        tail = text[-chunk:]
        on_screen = 0.0
        while True:
            segments = app.conversation.chat.query(AnswerSegment)
            if engine.last_sent and segments:
                segment = segments.last()
                if segment.source.endswith(tail) and not segment.lock.is_locked:
                    painted = asyncio.Event()
                    app.call_after_refresh(painted.set)
                    await painted.wait()
                    on_screen = time.perf_counter()
                    break
            await asyncio.sleep(0.002)
        stop.set()
        await task
        while app.conversation.turns.running:
            await pilot.pause(0.01)
    return Run(
        idle_lags,
        stream_lags,
        (engine.last_sent - engine.started) * 1000,
        (on_screen - engine.started) * 1000,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--chunk", type=int, default=10, help="characters per chunk")
    args = parser.parse_args()
    text = markdown_answer()
    runs = []
    bare = []
    for _ in range(args.repeat):
        bare.append(asyncio.run(bare_run(text, args.chunk)))
        runs.append(asyncio.run(one_run(text, args.chunk)))
    chunks = -(-len(text) // args.chunk)
    print(
        f"Streaming {len(text)} characters of Markdown in {chunks} chunks at "
        f"{CHUNKS_PER_SECOND} chunks/s ({args.repeat} runs, textual {_textual_version()})"
    )
    print()
    print(f"{'event-loop lag (ms)':<28}{'p50':>8}{'p95':>8}{'max':>8}")
    idle = [lag for run in runs for lag in run.idle_lags]
    busy = [lag for run in runs for lag in run.stream_lags]
    bare_lags = [lag for lags, _, _ in bare for lag in lags]
    for name, lags in (
        ("modes-tui idle", idle),
        ("bare Textual, streaming", bare_lags),
        ("modes-tui, streaming", busy),
    ):
        print(
            f"{name:<28}{percentile(lags, 0.5):>8.1f}{percentile(lags, 0.95):>8.1f}"
            f"{max(lags):>8.1f}"
        )
    print(f"{'target: p95 while streaming':<28}{'':>8}{'<= 50':>8}")
    print()
    print(f"{'run':<6}{'stream (ms)':>13}{'last chunk on screen (ms)':>28}{'overhead':>10}")
    for index, run in enumerate(runs, 1):
        over = (run.on_screen_ms - run.duration_ms) / run.duration_ms * 100
        print(f"{index:<6}{run.duration_ms:>13.0f}{run.on_screen_ms:>28.0f}{over:>9.1f}%")
    median_over = statistics.median(
        (r.on_screen_ms - r.duration_ms) / r.duration_ms * 100 for r in runs
    )
    print(f"{'median':<6}{'':>13}{'':>28}{median_over:>9.1f}%   (target <= 10%)")
    bare_over = statistics.median((shown - sent) / sent * 100 for _, sent, shown in bare)
    print(f"{'bare':<6}{'':>13}{'':>28}{bare_over:>9.1f}%   (bare Textual, same stream)")


def _textual_version() -> str:
    from importlib.metadata import version

    return version("textual")


if __name__ == "__main__":
    main()

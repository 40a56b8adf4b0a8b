"""Engine overhead over a bare litellm streaming call, measured as a ratio in one run.

Both sides stream the same scripted answer (~50 chunks) from the same fake litellm custom
provider (`tests/support/fake_provider.py`) with the same messages, interleaved turn by turn so drift
hits both alike. The bare side reads each chunk's text (`choices[0].delta.content`), the
least any caller of a stream does. The engine side is a whole turn as the TUI runs it: control reading,
keyword routing, request building, the litellm adapter, events, and session records
serialised to JSON (kept in memory, not written to disk). The provider sends chunks with no
delay, so the percentage is the worst case: a real provider's network time only adds to
the stream time. Routing is timed on its own as well. Prints a table; never asserts.

    .venv/bin/python bench/engine_overhead.py [--turns 300] [--chunks 50]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "True")

from modes_tui.core.control_setting import ControlReading  # noqa: E402
from modes_tui.core.history.conversation import Message  # noqa: E402
from modes_tui.core.history.events import RequestBuilt, TurnFinished  # noqa: E402
from modes_tui.core.packs.profiles import load_pack  # noqa: E402
from modes_tui.core.paths import app_dirs  # noqa: E402
from modes_tui.llm.litellm_import import import_litellm  # noqa: E402
from modes_tui.runtime import RunOptions, Runtime  # noqa: E402
from modes_tui.store.settings import Settings  # noqa: E402
from tests.support.fake_provider import FakeProvider, Reply, install  # noqa: E402

TEXT = "hello, what is a good name for a cat?"


class JsonSession:
    """Serialises every record like the JSONL writer does, into memory."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def record(self, type: str, turn: int, **fields: Any) -> None:
        self.lines.append(json.dumps({"v": 1, "type": type, "turn": turn, **fields}))


class Auto:
    def read(self) -> ControlReading:
        return ControlReading("auto")


def reply(chunks: int) -> Reply:
    words = ["Whiskers ", "is ", "a ", "classic, ", "but ", "Miso ", "is ", "cuter. "]
    return Reply(text=[words[i % len(words)] for i in range(chunks)], usage=(60, chunks))


async def main(turns: int, chunks: int, warmup: int) -> None:
    litellm = import_litellm(offline=True)
    provider = FakeProvider()
    install(provider)
    pack = load_pack("default")
    workdir = Path(tempfile.mkdtemp(prefix="modes-bench-"))
    runtime = Runtime(
        app_dirs(),
        Settings(default_model="fake/plain"),
        pack,
        RunOptions(classifier="keyword"),
        cwd=workdir,
        control=Auto(),  # type: ignore[arg-type]  # the engine only reads the setting
        session=JsonSession(),
    )
    engine = runtime.engine()

    async def engine_turn() -> list[Any]:
        engine.clear()  # the same request every turn: system prompt + one user message
        provider.script(reply(chunks))
        return [event async for event in engine.run_turn(TEXT)]

    first = await engine_turn()
    assert isinstance(first[-1], TurnFinished), first[-1]
    request = next(e for e in first if isinstance(e, RequestBuilt)).request
    params = request.params()
    params.update(stream=True, stream_options={"include_usage": True}, timeout=120.0)

    async def bare_turn() -> int:
        provider.script(reply(chunks))
        response = await litellm.acompletion(**params)
        text = []
        async for chunk in response:  # read the text, as any caller of a stream must
            if chunk.choices and chunk.choices[0].delta.content:
                text.append(chunk.choices[0].delta.content)
        return len(text)

    async def route_only() -> None:
        await engine.router.route([Message("user", TEXT)])

    steps = {"bare": bare_turn, "engine": engine_turn, "routing": route_only}
    wall, cpu = await interleaved(steps, turns, warmup)
    print(
        f"engine overhead over a bare litellm streaming call "
        f"(fake provider, {chunks} chunks, {turns} turns after {warmup} warm-up, interleaved)"
    )
    report(wall, cpu, events=len(first))


Times = dict[str, list[float]]
"""Step name -> milliseconds per turn."""


async def interleaved(steps: dict[str, Any], turns: int, warmup: int) -> tuple[Times, Times]:
    """Wall and CPU times of each step per turn, bare and engine in alternating order."""
    wall: Times = {"bare": [], "engine": [], "routing": []}
    cpu: Times = {"bare": [], "engine": [], "routing": []}
    for index in range(warmup + turns):
        order = ["bare", "engine"] if index % 2 == 0 else ["engine", "bare"]
        for name in [*order, "routing"]:
            started, started_cpu = time.perf_counter(), time.thread_time()
            await steps[name]()
            if index >= warmup:
                wall[name].append((time.perf_counter() - started) * 1000)
                cpu[name].append((time.thread_time() - started_cpu) * 1000)
        if index % 50 == 0:
            gc.collect()
    return wall, cpu


def report(wall: Times, cpu: Times, *, events: int) -> None:
    """The table: each side, the paired overhead, its share of the stream, routing apart."""
    print(f"{'':36}{'wall median':>12}{'wall mean':>11}{'CPU median':>12}")

    def cell(values: list[float]) -> str:
        return f"{statistics.median(values):>10.2f}ms"

    def row(label: str, name: str, note: str = "") -> None:
        print(
            f"{label:36}{cell(wall[name])}{statistics.fmean(wall[name]):>9.2f}ms"
            f"{cell(cpu[name])}  {note}"
        )

    for source in (wall, cpu):
        source["overhead"] = [e - b for e, b in zip(source["engine"], source["bare"], strict=True)]
    row("bare litellm.acompletion(stream)", "bare")
    row("engine.run_turn (whole turn)", "engine", f"{events} events per turn")
    row("overhead per turn (paired)", "overhead", "target <= 5 ms")

    def share(source: Times, mean: bool = False) -> float:
        pick = statistics.fmean if mean else statistics.median
        return 100 * pick(source["overhead"]) / pick(source["bare"])

    print(
        f"{'overhead / stream time':36}{share(wall):>11.1f}%{share(wall, True):>10.1f}%"
        f"{share(cpu):>11.1f}%  target <= 5%"
    )
    row("  of which routing (keyword)", "routing", "timed separately")
    for source in (wall, cpu):
        routing = statistics.median(source["routing"])
        source["without routing"] = [value - routing for value in source["overhead"]]
    row("overhead without routing", "without routing")
    print(
        f"{'  / stream time':36}"
        f"{100 * statistics.median(wall['without routing']) / statistics.median(wall['bare']):>11.1f}%"
        f"{'':10}"
        f"{100 * statistics.median(cpu['without routing']) / statistics.median(cpu['bare']):>12.1f}%"
    )
    print(
        "wall: elapsed time; CPU: time.thread_time() of the loop's thread, which other "
        "processes and litellm's logging threads do not inflate"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--chunks", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=20)
    args = parser.parse_args()
    asyncio.run(main(args.turns, args.chunks, args.warmup))

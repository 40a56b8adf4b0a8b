"""Session log size of a streaming answer: what the checkpoints write, against the answer itself.

    python bench/checkpoints.py [--sizes 58000,9000000] [--seconds 60,410] [--chunk 40]

The engine streams one scripted answer of each size through a real `SessionLog` (the same
turn loop as the app, checkpointing every 2 s). The model's time is simulated: the answer
takes `--seconds` of model time (defaults chosen so the checkpoint counts match the issue's
probes, a 58 KB answer at ~1 KB/s and a 9 MB answer at ~22 KB/s), so the run is quick and
the numbers do not depend on the machine. The baseline is the answer's own size in the same
run; the table prints the log size and its ratio to it. It never asserts.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from modes_tui.core.engine import rounds
from modes_tui.core.engine.config import EngineConfig
from modes_tui.core.engine.engine import Engine
from modes_tui.core.model.wire import TextChunk
from modes_tui.core.packs.profiles import load_pack
from modes_tui.core.paths import app_dirs
from modes_tui.core.routing.classifiers.keyword import KeywordClassifier
from modes_tui.core.routing.router import Router
from modes_tui.llm.fake import ScriptedModel, ScriptedReply
from modes_tui.store.session_log import SessionLog
from modes_tui.store.session_reader import load_session


class ModelClock:
    """time.monotonic for the turn loop: advanced by the model as its text arrives."""

    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now


class TimedModel:
    """The scripted model, each chunk taking its share of the answer's model time."""

    def __init__(self, inner: ScriptedModel, clock: ModelClock, per_char: float) -> None:
        self.inner, self.clock, self.per_char = inner, clock, per_char

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def stream(self, request: Any) -> AsyncIterator[Any]:
        async for event in self.inner.stream(request):
            if isinstance(event, TextChunk):
                self.clock.now += len(event.text) * self.per_char
            yield event


async def one(size: int, seconds: float, chunk: int) -> tuple[int, int, int, bool]:
    """(answer bytes, checkpoints, log bytes, loads back whole) for one answer."""
    text = ("All work and no play makes Jack a dull boy. " * (size // 44 + 1))[:size]
    clock = ModelClock()
    rounds.time = clock  # type: ignore[assignment]  # only the rounds' checkpoint clock
    log = SessionLog.create(app_dirs(), pack="default", model="scripted/plain")
    pack = load_pack("default")
    engine = Engine(
        config=EngineConfig(default_model="scripted/plain", cwd=Path.cwd()),
        pack=pack,
        router=Router(pack, KeywordClassifier()),
        model=TimedModel(
            ScriptedModel().script(ScriptedReply(text, chunk_size=chunk)), clock, seconds / size
        ),
        session=log,
    )
    async for _ in engine.run_turn("tell me a long story"):
        pass
    log.close()
    rounds.time = time  # type: ignore[assignment]
    data = log.path.read_bytes()
    checkpoints = data.count(b'"partial":true')
    # a crash before the final record: what the checkpoints alone give back
    cut = data[: data.rindex(b'{"v":1,"type":"assistant"')]
    crashed = log.path.with_suffix(".crashed.jsonl")
    crashed.write_bytes(cut)
    joined = [r for r in load_session(crashed).records if r.get("partial")]
    whole = bool(joined) and text.startswith(joined[-1]["message"]["content"])
    return len(text.encode()), checkpoints, len(data), whole


async def main(sizes: list[int], seconds: list[float], chunk: int) -> None:
    home = tempfile.mkdtemp(prefix="modes-bench-checkpoints-")
    os.environ["MODES_TUI_HOME"] = home
    print(
        f"session log of one streamed answer (checkpoint every 2 s of model time, {chunk}-char chunks)"
    )
    print(
        f"{'answer':>12}{'model time':>12}{'checkpoints':>13}{'log':>15}{'log / answer':>14}  crash-load"
    )
    for size, secs in zip(sizes, seconds, strict=True):
        answer, checkpoints, written, whole = await one(size, secs, chunk)
        print(
            f"{answer:>12,}{secs:>11.0f}s{checkpoints:>13}{written:>15,}"
            f"{written / answer:>13.2f}x  {'prefix of the answer' if whole else 'WRONG'}"
        )
    print(f"(logs in {home})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="58000,9000000")
    parser.add_argument("--seconds", default="60,410")
    parser.add_argument("--chunk", type=int, default=40)
    args = parser.parse_args()
    asyncio.run(
        main(
            [int(s) for s in args.sizes.split(",")],
            [float(s) for s in args.seconds.split(",")],
            args.chunk,
        )
    )

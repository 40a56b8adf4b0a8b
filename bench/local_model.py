"""Benchmark the embedded local model (`local/gemma-3-270m`): in its own process vs in-process.

    python bench/local_model.py [--runs 5] [--tokens 128]

The app runs llama.cpp in a child process (modes_tui/llm/model_process.py) so that a native
crash costs a turn, not the app. This measures what that costs, in the same run: the same
model file loaded both ways, the same requests, interleaved (child, in-process, child, ...)
so drift in machine load hits both sides alike. Baseline: `LlamaRunner` in this process,
the runner the child itself uses. Prints one table and never asserts a time; warm figures
are medians, and each warm run asks a different question (the shared transcript head is
cached, as in a chat). Memory: the resident set of this process (the app's side) before and
after each load, and of the child. The load average is printed because llama.cpp slows down
sharply when its threads share cores with other busy processes.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

QUESTIONS = [
    "What is the capital of France?",
    "What is the capital of Spain?",
    "How many legs does a spider have?",
    "What colour is the sky?",
    "Who wrote Romeo and Juliet?",
    "What is 2 + 2?",
    "What is the largest planet?",
    "What do bees make?",
]
STORY = [{"role": "user", "content": "Tell me a long story about a dragon and a knight."}]
HEADER = ("measurement", "child process", "in-process [baseline]", "child / in-process")


def ask(run: int) -> list[dict[str, str]]:
    return [{"role": "user", "content": QUESTIONS[run % len(QUESTIONS)]}]


def ms(value: float) -> str:
    return f"{value * 1000:.0f} ms"


def rss_mb(pid: int | str = "self", field: str = "VmRSS") -> float:
    """A process's resident set (VmRSS) or its peak (VmHWM), in MB, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def first_token(pieces: Iterator[object]) -> float:
    started = time.perf_counter()
    try:
        for piece in pieces:
            if getattr(piece, "text", ""):
                return time.perf_counter() - started
    finally:
        pieces.close()  # type: ignore[attr-defined]
    return float("nan")


def tokens_per_second(pieces: Iterator[object]) -> float:
    started = time.perf_counter()
    last = list(pieces)[-1]
    return getattr(last, "completion_tokens", 0) / (time.perf_counter() - started)


def interleaved(
    runs: int, child: Callable[[int], float], inproc: Callable[[int], float]
) -> tuple[list[float], list[float]]:
    ours: list[float] = []
    base: list[float] = []
    for run in range(runs):
        # who goes first alternates, so neither side always follows the other's cache misses
        if run % 2:
            base.append(inproc(run))
            ours.append(child(run))
        else:
            ours.append(child(run))
            base.append(inproc(run))
    return ours, base


def main() -> None:
    parser = argparse.ArgumentParser(description="Benchmark the embedded local model.")
    parser.add_argument("--runs", type=int, default=5, help="runs per warm measurement")
    parser.add_argument("--tokens", type=int, default=128, help="tokens for throughput")
    args = parser.parse_args()
    runs: int = args.runs

    from modes_tui.llm import gguf, llama_runner, model_process

    rows: list[tuple[str, str, str, str]] = []

    def row(
        name: str, child: str, base: str, ratio: float | None = None, best: float | None = None
    ) -> None:
        text = "" if ratio is None else f"{ratio:.2f}x"
        if best is not None:
            text += f" ({best:.2f}x)"
        rows.append((name, child, base, text))

    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="modes-bench-") as tmp:
        started = time.perf_counter()
        path = gguf.ensure_model_file(Path(tmp))
        row(
            "assemble GGUF (cold: 4 chunks, hashed, renamed)", "", ms(time.perf_counter() - started)
        )

        app_before = rss_mb()
        child = model_process.ModelProcess(lambda: path)
        took = time.perf_counter()
        child.load()
        child_load = time.perf_counter() - took
        app_with_child = rss_mb()
        inproc = llama_runner.LlamaRunner(lambda: path)
        took = time.perf_counter()
        inproc.load()
        inproc_load = time.perf_counter() - took
        app_with_both = rss_mb()
        row(
            f"load (start + import + model; n_ctx={inproc.n_ctx}, n_threads={inproc.n_threads})",
            ms(child_load),
            ms(inproc_load),
            child_load / inproc_load,
        )

        # the first call after a load pays for allocations in llama.cpp and for reading the
        # model's pages (mmap): whoever goes first warms the page cache for the other, so
        # these two are not compared
        params = llama_runner.GenerationParams(max_tokens=16, temperature=0)
        cold_child = first_token(child.chat(ask(0), params))
        cold_inproc = first_token(inproc.chat(ask(0), params))
        row("first token, cold (first call after load)", ms(cold_child), ms(cold_inproc))

        warm_child, warm_inproc = interleaved(
            runs,
            lambda run: first_token(child.chat(ask(run + 1), params)),
            lambda run: first_token(inproc.chat(ask(run + 1), params)),
        )
        row(
            f"first token, warm: median (best) of {runs}",
            f"{ms(statistics.median(warm_child))} ({ms(min(warm_child))})",
            f"{ms(statistics.median(warm_inproc))} ({ms(min(warm_inproc))})",
            statistics.median(warm_child) / statistics.median(warm_inproc),
            min(warm_child) / min(warm_inproc),
        )

        story = llama_runner.GenerationParams(max_tokens=args.tokens, stop=(), seed=7)
        tps_child, tps_inproc = interleaved(
            runs,
            lambda _run: tokens_per_second(child.chat(STORY, story)),
            lambda _run: tokens_per_second(inproc.chat(STORY, story)),
        )
        # a time ratio, like the rows above: above 1.00x the child is slower
        row(
            f"tokens/s over {args.tokens} tokens: median (best) of {runs}",
            f"{statistics.median(tps_child):.1f} ({max(tps_child):.1f})",
            f"{statistics.median(tps_inproc):.1f} ({max(tps_inproc):.1f})",
            statistics.median(tps_inproc) / statistics.median(tps_child),
            max(tps_inproc) / max(tps_child),
        )

        child_pid = child.pid
        assert child_pid is not None
        row(
            "RSS of the model's process (peak)",
            f"{rss_mb(child_pid):.0f} MB ({rss_mb(child_pid, 'VmHWM'):.0f})",
            f"{app_with_both - app_with_child:.0f} MB (this process grew by)",
        )
        row(
            "RSS the app process adds for the model",
            f"{app_with_child - app_before:.0f} MB",
            f"{app_with_both - app_with_child:.0f} MB",
        )
        child.close()
        inproc.close()

    import llama_cpp

    print(
        f"local model bench: llama-cpp-python {llama_cpp.__version__}, {os.cpu_count()} CPUs, "
        f"load average {load_before[0]:.2f} -> {os.getloadavg()[0]:.2f}; ratios are times "
        "(child / in-process; target <= 1.10x)"
    )
    widths = [max(len(r[i]) for r in [HEADER, *rows]) for i in range(4)]
    for r in [HEADER, tuple("-" * w for w in widths), *rows]:
        print(f"{r[0]:<{widths[0]}}  {r[1]:>{widths[1]}}  {r[2]:>{widths[2]}}  {r[3]:>{widths[3]}}")


if __name__ == "__main__":
    main()

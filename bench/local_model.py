"""Benchmark the embedded local model (`local/gemma-3-270m`): file, load, latency, throughput.

    python bench/local_model.py [--runs 5] [--tokens 128]

Prints one table and never asserts a time. Baselines come from the same run: the raw
`llama_cpp.Llama.create_completion` stream on the same loaded model, measured interleaved
with ours, so the "vs baseline" column is what our runner and litellm add on top of
llama.cpp. Warm figures are medians; each warm run asks a different question, so the
shared transcript head is cached (as in a chat) but the question is evaluated. The load
average is printed because llama.cpp slows down sharply when its threads share cores with
other busy processes.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "True")
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
STORY = "Once upon a time, in a small village by the sea, there lived"
HEADER = ("measurement", "median", "runs", "vs baseline")


def ask(run: int) -> list[dict[str, str]]:
    return [{"role": "user", "content": QUESTIONS[run % len(QUESTIONS)]}]


def fmt_seconds(value: float) -> str:
    return f"{value * 1000:.0f} ms" if value < 10 else f"{value:.1f} s"


def timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def raw_first_token(llama: Any, prompt: str, stop: list[str]) -> float:
    started = time.perf_counter()
    stream = llama.create_completion(
        prompt, max_tokens=16, temperature=0, stop=stop, repeat_penalty=1.1, stream=True
    )
    try:
        for chunk in stream:
            if chunk["choices"][0]["text"]:
                break
        return time.perf_counter() - started
    finally:
        stream.close()


def raw_tokens_per_second(llama: Any, tokens: int) -> float:
    started = time.perf_counter()
    count = 0
    for chunk in llama.create_completion(
        STORY, max_tokens=tokens, temperature=0.7, repeat_penalty=1.1, seed=7, stream=True
    ):
        count += bool(chunk["choices"][0]["text"])
    return count / (time.perf_counter() - started)


async def litellm_first_token(model: str, messages: list[dict[str, str]]) -> float:
    import litellm

    started = time.perf_counter()
    stream = await litellm.acompletion(
        model=model, messages=messages, stream=True, max_tokens=16, temperature=0
    )
    elapsed = 0.0
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            elapsed = time.perf_counter() - started
            break
    await stream.aclose()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description="Benchmark the embedded local model.")
    parser.add_argument("--runs", type=int, default=5, help="runs per warm measurement")
    parser.add_argument("--tokens", type=int, default=128, help="tokens for throughput")
    args = parser.parse_args()
    runs: int = args.runs
    rows: list[tuple[str, str, str, str]] = []

    def row(name: str, value: str, count: int | None = None, ratio: float | None = None) -> None:
        ratio_text = "" if ratio is None else f"{ratio:.2f}x"
        rows.append((name, value, "" if count is None else str(count), ratio_text))

    load_before = os.getloadavg()
    started = time.perf_counter()
    import litellm

    litellm.suppress_debug_info = True
    from modes_tui.llm import gguf, llama_runner, local, transcript

    row("import litellm + modes_tui.llm.local", fmt_seconds(time.perf_counter() - started), 1)
    import llama_cpp

    cpus = os.cpu_count() or 1

    with tempfile.TemporaryDirectory(prefix="modes-bench-") as tmp:
        data_dir = Path(tmp)
        took = timed(lambda: gguf.ensure_model_file(data_dir))
        row("assemble GGUF (cold: 4 chunks, hashed, renamed)", fmt_seconds(took), 1)
        took = statistics.median(
            timed(lambda: gguf.ensure_model_file(data_dir)) for _ in range(runs)
        )
        row("ensure_model_file, file present (size check)", fmt_seconds(took), runs)
        took = timed(lambda: gguf.ensure_model_file(data_dir, verify=True))
        row("ensure_model_file(verify=True) (re-hash)", fmt_seconds(took), 1)

        provider = local.register_local_provider(data_dir=data_dir)
        runner = provider.runner
        took = timed(runner.load)
        row(
            f"load model (n_ctx={runner.n_ctx}, n_threads={runner.n_threads})", fmt_seconds(took), 1
        )

        stop = list(transcript.STOP_SEQUENCES)
        with runner.exclusive() as llama:
            cold = raw_first_token(llama, transcript.render_transcript(ask(0)), stop)
        row("first token, cold: first llama.cpp call after load", fmt_seconds(cold), 1)
        cold = asyncio.run(litellm_first_token(local.LOCAL_MODEL_ID, ask(1)))
        row("first token, cold: first litellm call (its lazy imports)", fmt_seconds(cold), 1)

        # Interleaved, so drift in machine load hits both sides alike. Direct llama.cpp calls
        # hold the runner's lock: two calls into one context at once abort the process.
        raw_ttft: list[float] = []
        our_ttft: list[float] = []
        for run in range(1, runs + 1):
            with runner.exclusive() as llama:
                raw_ttft.append(
                    raw_first_token(llama, transcript.render_transcript(ask(run)), stop)
                )
            our_ttft.append(asyncio.run(litellm_first_token(local.LOCAL_MODEL_ID, ask(run + runs))))
        base_ttft = statistics.median(raw_ttft)
        row("first token, warm: raw llama.cpp [baseline]", fmt_seconds(base_ttft), runs, 1.0)
        warm = statistics.median(our_ttft)
        row("first token, warm: via litellm", fmt_seconds(warm), runs, warm / base_ttft)

        params = llama_runner.GenerationParams(max_tokens=args.tokens, stop=(), seed=7)
        raw_tps: list[float] = []
        our_tps: list[float] = []
        for _ in range(runs):
            with runner.exclusive() as llama:
                raw_tps.append(raw_tokens_per_second(llama, args.tokens))
            started = time.perf_counter()
            last = list(runner.generate(STORY, params))[-1]
            our_tps.append(last.completion_tokens / (time.perf_counter() - started))
        base_tps = statistics.median(raw_tps)
        row(f"tokens/s over {args.tokens}: raw llama.cpp [baseline]", f"{base_tps:.1f}", runs, 1.0)
        ours = statistics.median(our_tps)
        row(f"tokens/s over {args.tokens}: LlamaRunner", f"{ours:.1f}", runs, ours / base_tps)

        # llama.cpp spins at its thread barriers, so one thread per core collapses when
        # another process (or our own UI thread) wants a core. Compare the other setting.
        model_path = str(runner.model_path)
        provider.close()
        for threads in sorted({cpus, max(1, cpus - 1)} - {runner.n_threads}):
            other = llama_cpp.Llama(
                model_path=model_path, n_ctx=llama_runner.N_CTX, n_threads=threads, verbose=False
            )
            tps = statistics.median(raw_tokens_per_second(other, args.tokens) for _ in range(runs))
            row(
                f"tokens/s over {args.tokens}: raw, n_threads={threads}",
                f"{tps:.1f}",
                runs,
                tps / base_tps,
            )
            other.close()

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    row("peak RSS (whole process)", f"{peak:.0f} MB")

    print(
        f"local model bench: {local.LOCAL_MODEL_ID}, llama-cpp-python {llama_cpp.__version__}, "
        f"{cpus} CPUs, load average {load_before[0]:.2f} -> {os.getloadavg()[0]:.2f}"
    )
    widths = [max(len(r[i]) for r in [HEADER, *rows]) for i in range(4)]
    for r in [HEADER, tuple("-" * w for w in widths), *rows]:
        print(f"{r[0]:<{widths[0]}}  {r[1]:>{widths[1]}}  {r[2]:>{widths[2]}}  {r[3]:>{widths[3]}}")


if __name__ == "__main__":
    main()

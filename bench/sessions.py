"""Session store benchmark: load a long session into events, list many sessions, append records.

    python bench/sessions.py [--turns 1000] [--sessions 1000] [--appends 500] [--dir DIR]

Each measurement has a baseline taken in the same run on the same files: plain `json.loads`
over the same lines for loading, `os.scandir` of the same folder for listing, and the
append without fsync for the append with fsync. It prints a table; it never asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from modes_tui.core.evals.scoring import percentile
from modes_tui.core.paths import Dirs, app_dirs
from modes_tui.store.manage import rename_session
from modes_tui.store.replay import replay
from modes_tui.store.search import search_sessions
from modes_tui.store.session_log import SessionLog
from modes_tui.store.session_reader import load_session
from modes_tui.store.sessions import list_sessions

SYSTEM = {"role": "system", "content": "You are a helpful assistant. " * 20}
ROUTE = {
    "mode_name": "code",
    "decided_by": "classifier",
    "reason": "nearest examples: fix this stack trace",
    "decision": {
        "mode_name": "code",
        "confidence": 0.82,
        "reason": "nearest examples",
        "probabilities": {"chat": 0.05, "code": 0.82, "reason": 0.04, "shell": 0.06, "write": 0.03},
    },
    "duration_ms": 4.2,
    "classifier": {"with": "embedding", "model": "all-MiniLM-L6-v2"},
    "error": None,
    "runner_up": "shell",
    "sticky": False,
    "at": "2026-12-02T14:15:03.123+00:00",
}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": f"{name} in the working directory.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        },
    }
    for name in ("read_file", "list_files", "search_files")
]


RENAMED_EVERY = 10
"""One session in this many is renamed for the listing measurement."""


def best_of(repeats: int, work: Callable[[], Any]) -> float:
    """The fastest of `repeats` runs, in seconds (the least disturbed by the machine)."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return min(times)


def write_long_session(dirs: Dirs, turns: int) -> Path:
    """`turns` turns of 10 records each: user, route, 2 requests, 2 checkpoints, 2 answers,
    2 tool results. Requests carry the last 20 messages, as the engine sends them."""
    history: list[dict[str, Any]] = []
    with SessionLog.create(dirs, pack="default", model="openai/gpt-4.1-mini") as log:
        for turn in range(1, turns + 1):
            user = {"role": "user", "content": f"turn {turn}: why does this loop never end? " * 5}
            history.append(user)
            log.record("user", turn, content=user["content"])
            log.record("route", turn, route=ROUTE, setting="auto", warnings=[])
            request = {"model": "openai/gpt-4.1-mini", "messages": [SYSTEM, *history[-20:]]}
            log.record("request", turn, request={**request, "tools": TOOLS}, mode="code", round=1)
            calls = [
                {"id": f"c{turn}-{i}", "name": "read_file", "arguments": {"path": f"f{i}.py"}}
                for i in (1, 2)
            ]
            partial = {"role": "assistant", "content": "Let me look", "mode": "code"}
            log.record("assistant", turn, message=partial, partial=True)
            first = {**partial, "content": "Let me look at both files.", "tool_calls": calls}
            log.record("assistant", turn, message=first, usage={"prompt_tokens": 900})
            history.append(first)
            for call in calls:
                result = json.dumps({"text": "def loop():\n    while True:\n        pass\n" * 30})
                log.record("tool_result", turn, call=call, outcome="ok", result=result)
                history.append({"role": "tool", "content": result, "tool_call_id": call["id"]})
            log.record("request", turn, request=request, mode="code", round=2)
            answer = {"role": "assistant", "content": "The loop has no exit. " * 40, "mode": "code"}
            log.record("assistant", turn, message={**answer, "content": "The loop"}, partial=True)
            log.record("assistant", turn, message=answer, usage={"prompt_tokens": 1500})
            history.append(answer)
    return log.path


def write_many_sessions(dirs: Dirs, count: int) -> None:
    for index in range(count):
        session_id = f"2026{index // 1000 + 1:02d}01-{index % 1000:06d}-beef"
        with SessionLog.create(dirs, pack="default", session_id=session_id) as log:
            log.record("user", 1, content=f"session {index}: a first question " * 3)
            log.record("route", 1, route=ROUTE, setting="auto", warnings=[])
            log.record("user", 2, content="and a second one")


def append_times(dirs: Dirs, count: int, fsync: bool) -> list[float]:
    record = {
        "message": {"role": "assistant", "content": "An answer of ordinary length. " * 20},
        "usage": {"prompt_tokens": 900, "completion_tokens": 120, "cost": 0.0012},
    }
    times = []
    with SessionLog.create(dirs, fsync=fsync) as log:
        for turn in range(count):
            started = time.perf_counter()
            log.record("assistant", turn + 1, **record)
            times.append(time.perf_counter() - started)
    return times


def p95(values: list[float]) -> float:
    return percentile(values, 95) or 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--appends", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--dir", help="where to write (default: a temp dir); fsync cost depends on it"
    )
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(dir=args.dir) as root:
        long_dirs = app_dirs(Path(root) / "long")
        many_dirs = app_dirs(Path(root) / "many")
        append_dirs = app_dirs(Path(root) / "append")

        path = write_long_session(long_dirs, args.turns)
        data = path.read_bytes()
        lines = [line for line in data.split(b"\n") if line]

        def baseline_load() -> list[Any]:
            # The floor for any loader: parse every line and keep the result.
            return [json.loads(line) for line in path.read_bytes().split(b"\n") if line]

        def baseline_discard() -> None:
            for line in path.read_bytes().split(b"\n"):
                if line:
                    json.loads(line)

        def full_load() -> int:
            return sum(1 for _ in replay(load_session(path)).events())

        events = full_load()
        t_base = best_of(args.repeats, baseline_load)
        t_discard = best_of(args.repeats, baseline_discard)
        request_bytes = sum(len(line) for line in lines if b'"type":"request"' in line[:40])
        t_load = best_of(args.repeats, lambda: load_session(path))
        t_events = best_of(args.repeats, full_load)

        write_many_sessions(many_dirs, args.sessions)
        folder = many_dirs.sessions

        def baseline_list() -> None:
            with os.scandir(folder) as entries:
                for _ in entries:
                    pass

        t_scan = best_of(args.repeats, baseline_list)
        t_list = best_of(args.repeats, lambda: list_sessions(many_dirs))
        renamed = sorted(folder.glob("*.jsonl"))[::RENAMED_EVERY]
        for log in renamed:  # a rename appends to the log and leaves a title sidecar
            rename_session(log.name.removesuffix(".jsonl"), "a title the user chose", many_dirs)
        t_list_renamed = best_of(args.repeats, lambda: list_sessions(many_dirs))
        t_search = best_of(args.repeats, lambda: search_sessions("second one", many_dirs))
        for summary in (folder / ".summaries").iterdir():
            summary.unlink()  # the fallback: the first line of each log
        t_list_head = best_of(args.repeats, lambda: list_sessions(many_dirs))

        plain = append_times(append_dirs, args.appends, fsync=False)
        synced = append_times(append_dirs, max(50, args.appends // 5), fsync=True)

    mb = len(data) / 1e6
    rows = [
        ("operation", "time", "baseline (same run)", "ratio", "target"),
        (
            f"load {args.turns} turns ({len(lines)} records, {mb:.1f} MB) into {events} events",
            f"{t_events * 1000:.0f} ms",
            f"json.loads per line, kept {t_base * 1000:.0f} ms",
            f"{t_events / t_base:.2f}x",
            "<= 500 ms",
        ),
        (
            "  of which load_session (parse, check, migrate)",
            f"{t_load * 1000:.0f} ms",
            f"json.loads per line, kept {t_base * 1000:.0f} ms",
            f"{t_load / t_base:.2f}x",
            "",
        ),
        (
            "  (json.loads per line, results discarded)",
            f"{t_discard * 1000:.0f} ms",
            "",
            "",
            "",
        ),
        (
            f"list {args.sessions} sessions (summaries)",
            f"{t_list * 1000:.1f} ms",
            f"os.scandir {t_scan * 1000:.2f} ms",
            f"{t_list / t_scan:.0f}x",
            "<= 300 ms",
        ),
        (
            f"list {args.sessions} sessions, {len(renamed)} of them renamed (title sidecars)",
            f"{t_list_renamed * 1000:.1f} ms",
            f"the same list before the renames {t_list * 1000:.1f} ms",
            f"{t_list_renamed / t_list:.2f}x",
            "<= 300 ms",
        ),
        (
            f"search {args.sessions} sessions by text (reads every log)",
            f"{t_search * 1000:.1f} ms",
            f"list {t_list * 1000:.1f} ms",
            f"{t_search / t_list:.1f}x",
            "",
        ),
        (
            f"list {args.sessions} sessions (first lines, no summaries)",
            f"{t_list_head * 1000:.1f} ms",
            f"os.scandir {t_scan * 1000:.2f} ms",
            f"{t_list_head / t_scan:.0f}x",
            "<= 300 ms",
        ),
        (
            f"append one record, flush only (n={len(plain)})",
            f"mean {statistics.mean(plain) * 1e6:.0f} us, p95 {p95(plain) * 1e6:.0f} us",
            "",
            "1.0x",
            "",
        ),
        (
            f"append one record, flush + fsync (n={len(synced)})",
            f"mean {statistics.mean(synced) * 1e6:.0f} us, p95 {p95(synced) * 1e6:.0f} us",
            "flush only",
            f"{statistics.mean(synced) / statistics.mean(plain):.0f}x",
            "",
        ),
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(
        f"bench/sessions.py  python {platform.python_version()}  {platform.system()}  "
        f"{os.cpu_count()} cpus, load {load}  best of {args.repeats}  "
        f"dir {args.dir or tempfile.gettempdir()}"
    )
    for index, row in enumerate(rows):
        print(
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        )
        if index == 0:
            print("  ".join("-" * width for width in widths))
    print(
        f"request records are {request_bytes / len(data):.0%} of the long session's bytes: "
        "each one repeats the history window the model was sent"
    )


if __name__ == "__main__":
    main()

"""What a kill -9 mid-answer costs: records and answer text lost, over repeated kills.

    python bench/kill_sessions.py [--kills 20] [--seed 11] [--dir DIR]

Each round starts `modes-tui --model scripted/slow chat --plain --json` (a long answer,
~50 chunks a second), sends one message, and SIGKILLs the process at a random moment
between 0.2 s and 6 s after the first answer text appeared (so some kills land before the
first answer checkpoint, written every 2 s). Then it compares the log with what the process
had printed:

- records lost: an event was printed (route_decided, request_built) but its record, written
  before the event, is not in the log; plus the user's message;
- unparseable: complete lines of the log that are not JSON (a torn last line is counted
  apart: the writer was killed mid-line);
- answer text lost: characters printed to the user after the last checkpoint;
- readable: `sessions`, `replay` and `export` exit 0 on the session.

It prints a table; it never asserts.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
TYPED = "tell me a very long story"
SLOW_CHAT = ["--model", "scripted/slow", "chat", "--plain", "--json", "--classifier", "keyword"]
EVENT_RECORD = {"route_decided": "route", "request_built": "request"}


@dataclass
class Round:
    """One kill and what it cost."""

    wait: float
    expected: int
    lost: int
    complete_lines: int
    unparseable: int
    torn: bool
    shown_chars: int
    saved_chars: int
    readable: bool


def one_round(home: Path, env: dict[str, str], wait: float) -> Round:
    sessions = home / "data" / "sessions"
    before = set(sessions.glob("*.jsonl"))
    child = subprocess.Popen(
        [sys.executable, "-m", "modes_tui", *SLOW_CHAT],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert child.stdin is not None and child.stdout is not None
    printed: list[bytes] = []
    first_text = threading.Event()

    def read() -> None:
        assert child.stdout is not None
        for line in child.stdout:
            printed.append(line)
            if b'"text_delta"' in line:
                first_text.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    child.stdin.write(f"{TYPED}\n".encode())
    child.stdin.flush()
    first_text.wait(60)
    time.sleep(wait)
    os.kill(child.pid, signal.SIGKILL)
    child.wait(30)
    reader.join(10)

    events = []
    for line in printed:
        with contextlib.suppress(ValueError):  # the line the kill cut short
            events.append(json.loads(line))
    shown = "".join(e["text"] for e in events if e.get("type") == "text_delta")
    (log,) = set(sessions.glob("*.jsonl")) - before
    *complete, rest = log.read_bytes().split(b"\n")
    records: list[dict[str, Any]] = []
    unparseable = 0
    for line in complete:
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except ValueError:
            unparseable += 1
    expected = ["user"] + [EVENT_RECORD[e["type"]] for e in events if e.get("type") in EVENT_RECORD]
    present = [r["type"] for r in records]
    lost = 0
    for kind in expected:
        if kind in present:
            present.remove(kind)
        else:
            lost += 1
    saved = [r for r in records if r["type"] == "assistant" and r.get("partial")]
    saved_text = saved[-1]["message"]["content"] if saved else ""
    readable = all(
        subprocess.run(
            [sys.executable, "-m", "modes_tui", *verb],
            capture_output=True,
            env=env,
            timeout=120,
        ).returncode
        == 0
        for verb in (["sessions"], ["replay", log.stem], ["export", log.stem])
    )
    return Round(
        wait=wait,
        expected=len(expected),
        lost=lost,
        complete_lines=len([c for c in complete if c.strip()]),
        unparseable=unparseable,
        torn=bool(rest),
        shown_chars=len(shown),
        saved_chars=len(saved_text) if shown.startswith(saved_text) else 0,
        readable=readable,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--dir", type=Path, default=None, help="keep the sessions here")
    args = parser.parse_args()
    home = args.dir or Path(tempfile.mkdtemp(prefix="modes-tui-kill-"))
    env = {**os.environ, "MODES_TUI_HOME": str(home), "PYTHONPATH": str(REPO)}
    rng = random.Random(args.seed)
    rounds = []
    for number in range(1, args.kills + 1):
        result = one_round(home, env, rng.uniform(0.2, 6.0))
        rounds.append(result)
        print(
            f"kill {number:2d} after {result.wait:4.1f} s: records lost {result.lost}/"
            f"{result.expected}, unparseable {result.unparseable}, torn {result.torn}, "
            f"answer shown {result.shown_chars} saved {result.saved_chars}, "
            f"readable {result.readable}",
            flush=True,
        )
    lost_text = [r.shown_chars - r.saved_chars for r in rounds]
    shown_total = sum(r.shown_chars for r in rounds)
    print()
    print(f"| {args.kills} kills with SIGKILL mid-answer | value |")
    print("|---|---|")
    print(f"| records expected (user, route, request) | {sum(r.expected for r in rounds)} |")
    print(f"| records lost | {sum(r.lost for r in rounds)} |")
    print(f"| complete log lines / unparseable | {sum(r.complete_lines for r in rounds)} / "
          f"{sum(r.unparseable for r in rounds)} |")  # fmt: skip
    print(f"| torn last lines (reported and skipped on load) | {sum(r.torn for r in rounds)} |")
    print(f"| sessions readable by sessions, replay, export | "
          f"{sum(r.readable for r in rounds)}/{len(rounds)} |")  # fmt: skip
    print(f"| answer text shown / saved | {shown_total} / {sum(r.saved_chars for r in rounds)} "
          f"chars |")  # fmt: skip
    print(f"| answer text lost per kill: median / max | {statistics.median(lost_text):.0f} / "
          f"{max(lost_text)} chars |")  # fmt: skip
    print(f"| kills before the first checkpoint (nothing saved) | "
          f"{sum(1 for r in rounds if r.saved_chars == 0)} |")  # fmt: skip
    print(f"\nsessions kept in {home}")


if __name__ == "__main__":
    main()

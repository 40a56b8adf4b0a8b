"""kill -9 mid-answer: the session keeps the user's message and the checkpointed answer.

A real `modes-tui chat --plain --json` process streams a long answer (`--model
scripted/slow`) and is killed with SIGKILL at different moments after its first answer
checkpoint reached the log. Afterwards every complete line of the log parses, the message
is there, the checkpoint holds a prefix of what the user saw, and `sessions`, `replay` and
`export` read the session. bench/kill_sessions.py does the same 20 times and counts losses.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
KILLS = 5
TYPED = "tell me a very long story"
SLOW_CHAT = ["--model", "scripted/slow", "chat", "--plain", "--json", "--classifier", "keyword"]

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")


def records_of(log: Path) -> tuple[list[dict[str, Any]], bytes]:
    """The complete records of a log (each must parse) and the torn rest after them."""
    data = log.read_bytes()
    *complete, rest = data.split(b"\n")
    return [json.loads(line) for line in complete if line.strip()], rest


def kill_mid_answer(home: Path, env: dict[str, str], extra_wait: float) -> tuple[str, Path]:
    """Start a turn, wait for its first checkpoint, wait `extra_wait`, SIGKILL; return the
    answer text the process had printed and its session log."""
    before = set((home / "data" / "sessions").glob("*.jsonl"))
    child = subprocess.Popen(
        [sys.executable, "-m", "modes_tui", *SLOW_CHAT],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert child.stdin is not None and child.stdout is not None
    printed: list[bytes] = []
    reader = threading.Thread(target=lambda: printed.extend(child.stdout), daemon=True)
    reader.start()
    try:
        child.stdin.write(f"{TYPED}\n".encode())
        child.stdin.flush()
        deadline = time.monotonic() + 60
        log: Path | None = None
        while time.monotonic() < deadline:
            new = set((home / "data" / "sessions").glob("*.jsonl")) - before
            if new:
                log = new.pop()
                if b'"partial":true' in log.read_bytes():
                    break
            time.sleep(0.02)
        else:
            raise AssertionError("no answer checkpoint within 60 s")
        time.sleep(extra_wait)
        assert child.poll() is None, "the answer ended before the kill"
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(timeout=30)
        reader.join(timeout=10)
    shown = ""
    for line in printed:
        try:
            event = json.loads(line)
        except ValueError:
            continue  # the line the kill cut short
        if event.get("type") == "text_delta":
            shown += event["text"]
    assert log is not None
    return shown, log


def saved_answer(log: Path) -> str:
    """The answer the checkpoints hold: each after the first holds what was new since the
    one before, and loading joins them."""
    from modes_tui.store.session_reader import load_session

    joined = [r for r in load_session(log).records if r["type"] == "assistant" and r.get("partial")]
    return str(joined[-1]["message"]["content"])


def test_sigkill_mid_stream_leaves_a_readable_session_with_the_partial_answer(
    modes_home: Path,
) -> None:
    env = {**os.environ, "MODES_TUI_HOME": str(modes_home), "PYTHONPATH": str(REPO)}
    rng = random.Random(11)
    logs: list[Path] = []
    for _ in range(KILLS):
        shown, log = kill_mid_answer(modes_home, env, rng.uniform(0.0, 2.5))
        logs.append(log)
        records, _torn = records_of(log)  # raises if a complete line does not parse
        assert [r["type"] for r in records][:2] == ["meta", "user"]
        assert [r["content"] for r in records if r["type"] == "user"] == [TYPED]
        saved = [r for r in records if r["type"] == "assistant" and r.get("partial")]
        assert saved, "no checkpoint of the answer"
        checkpoint = saved_answer(log)
        assert checkpoint and shown.startswith(checkpoint)  # what was saved, the user saw
        assert not any(r["type"] == "assistant" and not r.get("partial") for r in records)

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "modes_tui", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )

    listed = cli("sessions", "--json")
    assert listed.returncode == 0, listed.stderr
    assert {s["id"] for s in json.loads(listed.stdout)} == {log.stem for log in logs}
    for log in logs:
        checkpoint = saved_answer(log)
        replayed = cli("replay", log.stem, "--json")
        assert replayed.returncode == 0, replayed.stderr
        assert "Traceback" not in replayed.stderr
        (turn,) = json.loads(replayed.stdout)["turns"]
        assert turn["user"] == TYPED and turn["interrupted"] is True
        exported = cli("export", log.stem)
        assert exported.returncode == 0, exported.stderr
        assert TYPED in exported.stdout and checkpoint.splitlines()[0] in exported.stdout

"""A writer killed with SIGKILL in the middle of a streamed answer loses nothing before it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from modes_tui.core.history.events import TurnFailed
from modes_tui.store.replay import replay
from modes_tui.store.session_reader import load_session

REPO = Path(__file__).resolve().parents[2]
SESSION_ID = "20260101-000000-dead"

WRITER = f"""
import os, sys, time
from modes_tui.core.paths import app_dirs
from modes_tui.store.session_log import SessionLog

log = SessionLog.create(app_dirs(), pack="default", model="m", session_id={SESSION_ID!r})
log.record("user", 1, content="tell me a long story")
log.record("route", 1, route={{"mode_name": "chat", "decided_by": "classifier",
    "reason": "r", "decision": {{"mode_name": "chat", "confidence": 0.9, "reason": "r"}}}},
    setting="auto", warnings=[])
log.record("request", 1, request={{"model": "m", "messages": [{{"role": "user",
    "content": "tell me a long story"}}]}}, mode="chat", round=1, notes=[])
text = ""
for part in range(5):  # the engine checkpoints the streaming answer
    text += f"part {{part}}. "
    log.record("assistant", 1, message={{"role": "assistant", "content": text,
        "mode": "chat", "model": "m"}}, partial=True)
print("ready", flush=True)

real_write = os.write
def slow_disk(fd, data):  # small pieces with a pause: the kill lands mid-record
    time.sleep(0.002)
    return real_write(fd, bytes(data[:4096]))
os.write = slow_disk
log.record("assistant", 1, message={{"role": "assistant", "content": text + "x" * 4_000_000,
    "mode": "chat", "model": "m"}}, usage={{"prompt_tokens": 1, "completion_tokens": 2}})
print("finished", flush=True)
"""


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_sigkill_mid_record_keeps_every_earlier_record(modes_home: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO), "MODES_TUI_HOME": str(modes_home)}
    child = subprocess.Popen(
        [sys.executable, "-c", WRITER], env=env, stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    try:
        assert child.stdout.readline().strip() == "ready"
        path = modes_home / "data" / "sessions" / f"{SESSION_ID}.jsonl"
        complete = path.stat().st_size
        deadline = time.monotonic() + 60
        # Kill once the big record is partly on disk (and long before it could finish).
        while path.stat().st_size < complete + 3 * 4096 and time.monotonic() < deadline:
            time.sleep(0.005)
        child.send_signal(signal.SIGKILL)
        assert child.wait(timeout=30) == -signal.SIGKILL
        assert "finished" not in child.stdout.read()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        child.stdout.close()

    assert path.stat().st_size > complete  # the kill did land mid-record
    session = load_session(SESSION_ID)
    types = [r["type"] for r in session.records]
    assert types == ["meta", "user", "route", "request", *["assistant"] * 5]
    assert session.records[1]["content"] == "tell me a long story"
    assert session.records[-1]["message"]["content"] == "part 0. part 1. part 2. part 3. part 4. "
    [problem] = session.problems
    assert problem.path == path and problem.line == 10
    assert str(problem).startswith(f"{path}:10: torn last line")

    # The partial answer is shown, and the turn is marked as interrupted.
    replayed = replay(session)
    [turn] = replayed.turns
    assert turn.user == "tell me a long story" and turn.interrupted
    last = turn.events[-1]
    assert isinstance(last, TurnFailed) and last.kind == "interrupted"
    assert last.partial == "part 0. part 1. part 2. part 3. part 4. "
    assert [m.role for m in replayed.conversation] == ["user", "assistant"]
    assert replayed.conversation.messages[-1].cancelled

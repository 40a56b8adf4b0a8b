"""Checkpoints append what is new: a streaming answer's log grows with the answer, not its square.

A 58 KB answer once wrote an 867 KB log and a 9 MB answer a 921 MB one, because every
checkpoint held the whole answer so far. Each checkpoint after the first of a round now
holds only the text since the one before; loading joins them, so a crash mid-answer, replay,
resume and export still give the whole partial answer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from modes_tui.core.engine.config import EngineConfig
from modes_tui.core.engine.engine import Engine
from modes_tui.core.history.events import TurnFailed, TurnFinished
from modes_tui.core.packs.profiles import load_pack
from modes_tui.core.paths import app_dirs
from modes_tui.core.routing.classifiers.keyword import KeywordClassifier
from modes_tui.core.routing.router import Router
from modes_tui.llm.fake import ScriptedModel, ScriptedReply
from modes_tui.store.export import session_markdown
from modes_tui.store.replay import replay
from modes_tui.store.session_log import SessionLog
from modes_tui.store.session_reader import load_session

CHUNK = 2_000
CHUNKS = 100


def answer_text() -> str:
    # Every chunk different, with non-ASCII, so a join off by one character shows.
    return "".join(f"[{i:03d}é" + "x" * (CHUNK - 6) + "]" for i in range(CHUNKS))


async def stream_a_long_answer(tmp_path: Path, text: str) -> Path:
    """One turn whose answer streams in CHUNKS chunks, checkpointed after every chunk."""
    log = SessionLog.create(app_dirs(), pack="default", model="scripted/plain")
    engine = Engine(
        config=EngineConfig(default_model="scripted/plain", cwd=tmp_path),
        pack=load_pack("default"),
        router=Router(load_pack("default"), KeywordClassifier()),
        model=ScriptedModel().script(ScriptedReply(text, chunk_size=CHUNK)),
        session=log,
    )
    engine.checkpoint_seconds = 0.0  # a checkpoint at every chunk: the worst case
    events = [event async for event in engine.run_turn("tell me a long story")]
    log.close()
    assert isinstance(events[-1], TurnFinished)
    return log.path


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


async def test_the_log_grows_linearly_with_the_answer(tmp_path: Path) -> None:
    text = answer_text()
    path = await stream_a_long_answer(tmp_path, text)
    written = path.stat().st_size
    answer_bytes = len(text.encode("utf-8"))
    checkpoints = [r for r in records(path) if r.get("partial")]
    assert len(checkpoints) == CHUNKS
    # The checkpoints once wrote CHUNKS/2 times the answer (10 MB here); now each character
    # is written twice (checkpoint, final record), plus a few hundred bytes per record.
    assert written <= 2 * answer_bytes + 500 * CHUNKS + 20_000, written
    assert "".join(r["message"]["content"] for r in checkpoints) == text


async def test_loading_joins_the_checkpoints_into_the_whole_answer(tmp_path: Path) -> None:
    text = answer_text()
    path = await stream_a_long_answer(tmp_path, text)
    lines = path.read_bytes().splitlines(keepends=True)
    final = max(i for i, line in enumerate(lines) if b'"type":"assistant"' in line)
    # the app died before the final record: only the checkpoints are there
    path.write_bytes(b"".join(lines[:final]))
    session = load_session(path)
    assert session.problems == ()
    joined = [r for r in session.records if r.get("partial")]
    assert len(joined) == 1 and "continues" not in joined[0]
    assert joined[0]["message"]["content"] == text
    (turn,) = replay(session).turns
    failed = turn.events[-1]
    assert isinstance(failed, TurnFailed) and turn.interrupted
    assert failed.partial == text
    assert replay(session).conversation.messages[-1].content == text  # what resume continues
    assert text[-3000:] in session_markdown(replay(session))


async def streamed_lines(tmp_path: Path) -> tuple[str, Path, list[bytes], list[int]]:
    """A long answer streamed into a session log: its text, the log, the log's lines and the
    indexes of its checkpoint lines."""
    text = answer_text()
    path = await stream_a_long_answer(tmp_path, text)
    lines = path.read_bytes().splitlines(keepends=True)
    checkpoint_lines = [i for i, line in enumerate(lines) if b'"partial":true' in line]
    return text, path, lines, checkpoint_lines


async def test_a_crash_in_the_middle_of_a_checkpoint_keeps_the_text_before_it(
    tmp_path: Path,
) -> None:
    text, path, lines, checkpoint_lines = await streamed_lines(tmp_path)
    torn_at = checkpoint_lines[40]  # the 41st checkpoint is cut half-way through
    path.write_bytes(b"".join(lines[:torn_at]) + lines[torn_at][: len(lines[torn_at]) // 2])
    session = load_session(path)
    assert [p.message.split(" (")[0] for p in session.problems] == ["torn last line"]
    (turn,) = replay(session).turns
    failed = turn.events[-1]
    assert isinstance(failed, TurnFailed)
    assert failed.partial == text[: 40 * CHUNK]  # the 40 complete checkpoints, exactly


async def test_a_lost_checkpoint_in_the_middle_is_reported_and_the_rest_kept(
    tmp_path: Path,
) -> None:
    text, path, lines, checkpoint_lines = await streamed_lines(tmp_path)
    final = max(i for i, line in enumerate(lines) if b'"type":"assistant"' in line)
    damaged = list(lines[:final])
    damaged[checkpoint_lines[10]] = b"{not json\n"
    path.write_bytes(b"".join(damaged))
    session = load_session(path)
    messages = [p.message for p in session.problems]
    assert any("corrupt line" in m for m in messages)
    assert any(
        "continues at content character 22000, but the ones before hold 20000" in m
        for m in messages
    )
    (turn,) = replay(session).turns
    partial = turn.events[-1].partial  # type: ignore[attr-defined]
    assert partial == text[: 10 * CHUNK] + text[11 * CHUNK :]  # only the lost chunk is missing


def test_a_log_with_whole_checkpoints_still_loads(tmp_path: Path) -> None:
    # Written before checkpoints held deltas: every checkpoint is the whole answer so far.
    path = tmp_path / "old.jsonl"
    head = {"v": 1, "type": "meta", "at": "", "turn": 0, "id": "old"}
    user = {"v": 1, "type": "user", "at": "", "turn": 1, "content": "hi"}
    parts = ["one ", "one two ", "one two three"]
    checkpoints = [
        {
            "v": 1,
            "type": "assistant",
            "at": "",
            "turn": 1,
            "message": {"role": "assistant", "content": part},
            "partial": True,
        }
        for part in parts
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in [head, user, *checkpoints]))
    session = load_session(path)
    assert session.problems == ()
    (turn,) = replay(session).turns
    assert turn.events[-1].partial == "one two three"  # type: ignore[attr-defined]

"""Session logs: what is written, how it is read back, and how sessions are found."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import pytest

from modes_tui.core.errors import SessionError
from modes_tui.core.history.records import SCHEMA_VERSION
from modes_tui.core.model.wire import ModelRequest
from modes_tui.core.paths import Dirs, app_dirs
from modes_tui.store.session_log import SessionLog
from modes_tui.store.session_reader import load_session, parse_session
from modes_tui.store.sessions import list_sessions, resolve_session
from tests.support.store_records import write_demo_session


@pytest.fixture
def dirs() -> Dirs:
    return app_dirs()


def lines_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


# --------------------------------------------------------------------------- writing


def test_a_new_session_starts_with_meta_and_stamps_every_record(dirs: Dirs) -> None:
    with SessionLog.create(dirs, pack="default", model="local/gemma-3-270m", cwd="/w") as log:
        log.record("user", 1, content="hi")
        log.record("ui_event", 1, event="cancel")
    assert re.fullmatch(r"\d{8}-\d{6}-[0-9a-f]{4}", log.id)
    assert log.path == dirs.sessions / f"{log.id}.jsonl"
    assert stat.S_IMODE(log.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(log.summary_path.stat().st_mode) == 0o600
    assert stat.S_IMODE(dirs.sessions.stat().st_mode) == 0o700
    records = lines_of(log.path)
    assert [r["type"] for r in records] == ["meta", "user", "ui_event"]
    assert records[0]["id"] == log.id and records[0]["pack"] == "default"
    assert records[0]["cwd"] == "/w" and records[0]["app_version"]
    for record in records:
        assert record["v"] == SCHEMA_VERSION
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00", record["at"])
    assert [r["turn"] for r in records] == [0, 1, 1]


def test_each_record_is_in_the_file_when_record_returns(dirs: Dirs) -> None:
    log = SessionLog.create(dirs)
    for turn in range(1, 4):
        log.record("user", turn, content=f"message {turn}")
        # Read through another file object while the log is still open.
        assert lines_of(log.path)[-1]["content"] == f"message {turn}"
    log.close()


def test_fsync_mode_writes_the_same_records(dirs: Dirs) -> None:
    with SessionLog.create(dirs, fsync=True) as log:
        log.record("user", 1, content="durable")
    assert lines_of(log.path)[-1]["content"] == "durable"


def test_bad_record_calls_are_programming_errors(dirs: Dirs) -> None:
    log = SessionLog.create(dirs)
    with pytest.raises(ValueError, match="unknown record type 'chat'"):
        log.record("chat", 1, content="x")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="set by the log itself"):
        log.record("user", 1, content="x", v=2)
    log.close()


def test_secrets_are_redacted_on_the_way_in(dirs: Dirs) -> None:
    request = ModelRequest(
        model="openai/gpt-4.1",
        messages=({"role": "user", "content": "my key is sk-live-123, keep it"},),
        extra={
            "api_key": "sk-live-123",
            "extra_headers": {"Authorization": "Bearer tok", "X-Api-Key": "k", "Accept": "json"},
            "headers": [["Proxy-Authorization", "Basic zzz"], ["User-Agent", "modes"]],
            "api_base": "https://example.test",
        },
    )
    with SessionLog.create(dirs) as log:
        log.record("user", 1, content="my key is sk-live-123, keep it")
        log.record("request", 1, request=request, mode="chat", round=1, notes=[])
        log.record(
            "request",
            1,
            request={"model": "m", "aws_secret_access_key": "A", "openai_api_key": "B"},
            mode="chat",
            round=2,
            notes=[],
        )
    text = log.path.read_text()
    records = lines_of(log.path)
    sent = records[2]["request"]
    assert sent["api_key"] == "[redacted]"
    assert sent["extra_headers"] == {
        "Authorization": "[redacted]",
        "X-Api-Key": "[redacted]",
        "Accept": "json",
    }
    assert sent["headers"] == [["Proxy-Authorization", "[redacted]"], ["User-Agent", "modes"]]
    assert sent["api_base"] == "https://example.test"
    assert records[3]["request"] == {
        "model": "m",
        "aws_secret_access_key": "[redacted]",
        "openai_api_key": "[redacted]",
    }
    assert "Bearer tok" not in text and "Basic zzz" not in text
    # What the user typed is kept as typed, even when it looks like a key.
    assert records[1]["content"] == "my key is sk-live-123, keep it"
    assert sent["messages"][0]["content"] == "my key is sk-live-123, keep it"


def test_text_that_is_not_valid_unicode_is_kept_exactly(dirs: Dirs) -> None:
    odd = "pasted \udcff bytes and ünïcode"
    with SessionLog.create(dirs) as log:
        log.record("user", 1, content=odd)
    session = load_session(log.id)
    assert session.problems == () and session.records[1]["content"] == odd
    assert list_sessions(dirs)[0].title == odd


def test_values_are_recorded_as_plain_json(dirs: Dirs) -> None:
    with SessionLog.create(dirs) as log:
        log.record("ui_event", 1, event="x", path=Path("/tmp/a"), tags={"b", "a"}, obj=object())
    record = lines_of(log.path)[-1]
    assert record["path"] == "/tmp/a" and record["tags"] == ["a", "b"]
    assert record["obj"].startswith("<object object")


# --------------------------------------------------------------------------- loading


def test_a_session_loads_back_whole(dirs: Dirs) -> None:
    demo = write_demo_session(dirs)
    session = load_session(demo.log.id)
    assert session.problems == ()
    assert session.id == demo.log.id and session.turns == 4
    assert session.meta["pack"] == "testpack" and session.pack == "testpack"
    assert session.title == demo.users[0]
    assert len(session.records) == len(demo.log.path.read_text().splitlines())
    assert session.lines == tuple(range(1, len(session.records) + 1))


def write_lines(dirs: Dirs, name: str, lines: list[str | bytes], end: bytes = b"\n") -> Path:
    dirs.sessions.mkdir(parents=True, exist_ok=True)
    path = dirs.sessions / f"{name}.jsonl"
    raw = [line if isinstance(line, bytes) else line.encode() for line in lines]
    path.write_bytes(b"\n".join(raw) + end)
    return path


META = json.dumps({"v": 1, "type": "meta", "at": "", "turn": 0, "id": "s", "pack": "p"})


def rec(kind: str, turn: int, **fields: object) -> str:
    return json.dumps({"v": 1, "type": kind, "at": "", "turn": turn, **fields})


def test_a_torn_last_line_is_reported_with_file_and_line_and_skipped(dirs: Dirs) -> None:
    full = rec("assistant", 1, message={"role": "assistant", "content": "a long answer"})
    path = write_lines(
        dirs, "20260101-000000-aaaa", [META, rec("user", 1, content="hi"), full[:25]], end=b""
    )
    session = load_session(path)
    assert [r["type"] for r in session.records] == ["meta", "user"]
    [problem] = session.problems
    assert (problem.path, problem.line) == (path, 3)
    assert "torn last line" in problem.message
    assert str(problem).startswith(f"{path}:3: torn last line")


def test_a_torn_multibyte_character_is_a_torn_line_too(dirs: Dirs) -> None:
    full = json.dumps({"v": 1, "type": "user", "turn": 1, "content": "wörld"}, ensure_ascii=False)
    full = full.encode()
    cut = full[: full.index("ö".encode()) + 1]  # half of a two-byte character
    path = write_lines(dirs, "20260101-000000-aaab", [META.encode(), cut], end=b"")
    session = load_session(path)
    assert [p.line for p in session.problems] == [2]
    assert "torn last line" in session.problems[0].message


def test_a_complete_last_record_without_end_of_line_is_kept(dirs: Dirs) -> None:
    path = write_lines(dirs, "20260101-000000-aaac", [META, rec("user", 1, content="x")], end=b"")
    session = load_session(path)
    assert session.problems == () and len(session.records) == 2


def test_a_corrupt_middle_line_is_reported_and_the_rest_kept(dirs: Dirs) -> None:
    path = write_lines(
        dirs,
        "20260101-000000-aaad",
        [
            META,
            rec("user", 1, content="one"),
            '{"v": 1, "type": "us',
            "[1, 2]",
            "",
            rec("user", 2, content="two"),
        ],
    )
    session = load_session(path)
    assert [r.get("content") for r in session.records] == [None, "one", "two"]
    assert [(p.line, p.message.split(":")[0]) for p in session.problems] == [
        (3, "corrupt line skipped"),
        (4, "not a record (a JSON object expected); skipped"),
    ]


def test_records_of_schema_version_0_are_migrated(dirs: Dirs) -> None:
    path = write_lines(
        dirs,
        "20250101-000000-0000",
        [
            json.dumps({"kind": "meta", "ts": 1733140503.25, "id": "old", "pack": "default"}),
            json.dumps({"kind": "user", "ts": 1733140504, "text": "first"}),
            json.dumps(
                {
                    "kind": "route",
                    "ts": 1733140505,
                    "route": {"mode_name": "chat", "decided_by": "classifier", "reason": "r"},
                }
            ),
            json.dumps(
                {
                    "kind": "assistant",
                    "ts": 1733140506,
                    "text": "hello",
                    "mode": "chat",
                    "model": "m",
                    "reasoning": "hm",
                }
            ),
            json.dumps({"kind": "user", "ts": 1733140507, "text": "second"}),
        ],
    )
    session = load_session(path)
    assert session.problems == ()
    assert all(r["v"] == SCHEMA_VERSION and "kind" not in r for r in session.records)
    assert [(r["type"], r["turn"]) for r in session.records] == [
        ("meta", 0),
        ("user", 1),
        ("route", 1),
        ("assistant", 1),
        ("user", 2),
    ]
    assert session.records[0]["at"] == "2024-12-02T11:55:03.250+00:00"
    assert session.records[1]["content"] == "first"
    assert session.records[3]["message"] == {
        "role": "assistant",
        "content": "hello",
        "reasoning": "hm",
        "mode": "chat",
        "model": "m",
    }


def test_records_of_a_newer_schema_are_kept_and_reported_once(dirs: Dirs) -> None:
    newer = [
        json.dumps({"v": 2, "type": "user", "at": "", "turn": t, "content": "x", "lang": "en"})
        for t in (1, 2)
    ]
    path = write_lines(dirs, "20300101-000000-0000", [META, *newer])
    session = load_session(path)
    assert len(session.records) == 3
    [problem] = session.problems
    assert problem.line == 2
    assert "2 record(s) written by a newer modes-tui (schema version 2" in problem.message
    assert "upgrade modes-tui" in problem.message


def test_invalid_versions_and_unknown_types_are_reported(dirs: Dirs) -> None:
    path = write_lines(
        dirs,
        "20260101-000000-aaae",
        [META, json.dumps({"v": "one", "type": "user"}), rec("telemetry", 1, x=1)],
    )
    session = load_session(path)
    assert [r["type"] for r in session.records] == ["meta", "telemetry"]
    assert [p.line for p in session.problems] == [2, 3]
    assert "unknown type 'telemetry': kept, not replayed" in session.problems[1].message


def test_an_empty_session_loads_with_a_problem(dirs: Dirs) -> None:
    path = write_lines(dirs, "20260101-000000-aaaf", [], end=b"")
    session = load_session(path)
    assert session.records == () and session.turns == 0 and session.title == ""
    assert [str(p) for p in session.problems] == [
        f"{path}: empty: the session was started but nothing was recorded"
    ]
    assert session.meta == {"id": "20260101-000000-aaaf"}


def test_a_session_without_meta_is_reported(tmp_path: Path) -> None:
    session = parse_session(tmp_path / "x.jsonl", (rec("user", 1, content="hi") + "\n").encode())
    assert [p.message for p in session.problems] == ["the first record is not a meta record"]


def test_resuming_after_a_torn_line_keeps_new_records_whole(dirs: Dirs) -> None:
    path = write_lines(
        dirs, "20260101-000000-abcd", [META, rec("user", 1, content="hi"), '{"v": 1, "ty'], end=b""
    )
    session = load_session(path)
    log = SessionLog.resume(session)
    log.record("user", 2, content="after the crash")
    log.close()
    again = load_session(path)
    assert [r.get("content") for r in again.records] == [None, "hi", "after the crash"]
    [summary] = list_sessions(dirs)
    assert (summary.turns, summary.title) == (2, "after the crash")  # "hi" says nothing
    assert [p.line for p in again.problems] == [3]
    assert "corrupt line skipped" in again.problems[0].message


# --------------------------------------------------------------------------- finding


def test_ids_latest_prefixes_and_paths_resolve(dirs: Dirs) -> None:
    for session_id in ("20260101-090000-aaaa", "20260102-090000-bbbb", "20260102-100000-cccc"):
        SessionLog.create(dirs, session_id=session_id).close()
    folder = dirs.sessions
    assert resolve_session("latest") == folder / "20260102-100000-cccc.jsonl"
    assert resolve_session("20260101") == folder / "20260101-090000-aaaa.jsonl"
    assert resolve_session("20260102-090000-bbbb.jsonl") == folder / "20260102-090000-bbbb.jsonl"
    assert resolve_session(str(folder / "20260101-090000-aaaa.jsonl")).name.startswith("20260101")
    with pytest.raises(SessionError, match=r"'20260102' matches 2 sessions .*give more of the id"):
        resolve_session("20260102")


def test_an_unknown_id_says_how_to_find_ids(dirs: Dirs) -> None:
    SessionLog.create(dirs).close()
    with pytest.raises(SessionError) as caught:
        load_session("nope")
    assert str(caught.value) == (
        f"no session 'nope' in {dirs.sessions}; list session ids with `modes-tui sessions`, "
        "or use `latest` for the newest"
    )
    with pytest.raises(SessionError, match=r"^no session file at /no/such\.jsonl"):
        load_session("/no/such.jsonl")


def test_latest_without_sessions_says_how_to_make_one(dirs: Dirs) -> None:
    with pytest.raises(SessionError, match=r"there are no sessions yet in .*start one"):
        load_session("latest")


def test_the_list_is_newest_first_with_titles_and_turns(dirs: Dirs) -> None:
    write_demo_session(dirs, session_id="20260102-090000-bbbb")
    with SessionLog.create(dirs, session_id="20260103-090000-cccc", pack="default") as log:
        log.record("user", 1, content="\n\n  second session, first line  \nmore")
    SessionLog.create(dirs, session_id="20260101-090000-aaaa").close()
    listed = list_sessions(dirs)
    assert [s.id for s in listed] == [
        "20260103-090000-cccc",
        "20260102-090000-bbbb",
        "20260101-090000-aaaa",
    ]
    assert [(s.title, s.turns) for s in listed] == [
        ("second session, first line", 1),
        ("my python script segfaults, see main.py", 4),
        (None, 0),
    ]
    assert listed[0].pack == "default" and listed[0].created and listed[0].problem is None
    assert list_sessions(dirs, limit=1)[0].id == "20260103-090000-cccc"
    assert listed[0].to_dict()["id"] == "20260103-090000-cccc"


def test_without_a_summary_the_list_reads_the_first_line(dirs: Dirs) -> None:
    demo = write_demo_session(dirs)
    demo.log.summary_path.unlink()
    [summary] = list_sessions(dirs)
    assert summary.pack == "testpack" and summary.turns is None and summary.problem is None


def test_listing_never_parses_past_the_first_line(dirs: Dirs) -> None:
    good = dirs.sessions / "20260101-000000-aaaa.jsonl"
    dirs.sessions.mkdir(parents=True)
    good.write_bytes(META.encode() + b"\n" + os.urandom(200_000) + b"\n\xff\xfe not json")
    empty = dirs.sessions / "20260102-000000-bbbb.jsonl"
    empty.write_bytes(b"")
    listed = list_sessions(dirs)
    assert [(s.id, s.problem) for s in listed] == [
        ("20260102-000000-bbbb", "empty: nothing was recorded"),
        ("20260101-000000-aaaa", None),
    ]
    assert listed[1].pack == "p"


def bytes_read() -> int:
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


@pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="needs Linux /proc/self/io")
def test_a_huge_session_does_not_make_listing_read_it(dirs: Dirs) -> None:
    demo = write_demo_session(dirs)
    with open(demo.log.path, "ab") as handle:  # 20 MB more of the same session
        handle.write((rec("ui_event", 5, event="x", pad="p" * 1000) + "\n").encode() * 20_000)
    for with_summary in (True, False):
        if not with_summary:
            demo.log.summary_path.unlink()
        before = bytes_read()
        [summary] = list_sessions(dirs)
        read = bytes_read() - before
        assert summary.id == demo.log.id
        assert read < 1_000_000, f"listing read {read} bytes (summary: {with_summary})"

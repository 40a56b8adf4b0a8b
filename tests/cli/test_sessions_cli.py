"""`--resume`, `sessions rename|rm|--search`, and the REPL's /resume /fork /rename, as a user
runs them: subprocesses with pipes, exit codes and messages."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from modes_tui.cli import main
from modes_tui.core.paths import app_dirs
from modes_tui.store.session_reader import load_session
from modes_tui.store.sessions import list_sessions
from tests.support.cli_support import run_cli
from tests.support.fake_encoder import HashingEncoder

REPO = Path(__file__).resolve().parents[2]
CHAT = ("--model", "scripted/echo", "chat", "--plain", "--classifier", "keyword")


def events(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def test_chat_resume_continues_the_same_log_with_its_history(modes_home: Path) -> None:
    first = run_cli("my python script segfaults\nhello there\n", *CHAT, home=modes_home)
    assert first.returncode == 0, first.stderr
    [session] = list_sessions(app_dirs())

    again = run_cli("hello, what next?\n", *CHAT, "--json", "--resume", home=modes_home)
    assert again.returncode == 0, again.stderr
    assert all(line.startswith("{") for line in again.stdout.splitlines())  # events only
    assert again.stderr.startswith(f"(resumed session {session.id} · ")
    request = next(e for e in events(again.stdout) if e["type"] == "request_built")
    sent = request["request"]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert sent[1]["content"] == "my python script segfaults"
    assert sent[4]["content"].endswith("hello there")

    assert [s.id for s in list_sessions(app_dirs())] == [session.id]
    loaded = load_session(session.id)
    users = [(r["turn"], r["content"]) for r in loaded.records if r["type"] == "user"]
    assert users == [
        (1, "my python script segfaults"),
        (2, "hello there"),
        (3, "hello, what next?"),
    ]
    assert [r["event"] for r in loaded.records if r["type"] == "ui_event"] == ["resumed"]


def test_resume_shows_the_previous_turns_in_the_repl(modes_home: Path) -> None:
    run_cli("my python script segfaults\n", *CHAT, home=modes_home)
    result = run_cli("hello\n", *CHAT, "--resume", "latest", home=modes_home)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("(resumed session ") and "· 1 turn)" in lines[0]
    assert lines[1:3] == ["› my python script segfaults", lines[2]]
    assert lines[2].startswith("[code · by classifier")


def test_resume_of_an_unknown_or_newer_session_fails_clearly(modes_home: Path) -> None:
    result = run_cli("hello\n", *CHAT, "--resume", "nope", home=modes_home)
    assert result.returncode == 1
    assert "modes-tui: there are no sessions yet" not in result.stderr
    assert result.stderr.startswith("modes-tui: no session 'nope' in ")
    run_cli("hello\n", *CHAT, home=modes_home)
    [session] = list_sessions(app_dirs())
    with open(session.path, "a") as handle:
        handle.write('{"v":3,"type":"user","turn":2,"at":"","content":"future"}\n')
    result = run_cli("hello\n", *CHAT, "--resume", session.id, home=modes_home)
    assert result.returncode == 1
    assert "written by a newer modes-tui (schema version 3" in result.stderr
    assert result.stdout == ""


def test_resume_switches_to_the_sessions_pack_unless_one_is_given(modes_home: Path) -> None:
    made = run_cli("where is my order\n", "--pack", "support", *CHAT, home=modes_home)
    assert made.returncode == 0, made.stderr
    result = run_cli("I want a refund\n", *CHAT, "--json", "--resume", home=modes_home)
    assert "was recorded with pack 'support'; using it" in result.stderr
    route = next(e for e in events(result.stdout) if e["type"] == "route_decided")
    assert route["route"]["mode_name"] in {"help", "returns", "orders", "escalate"}

    forced = run_cli("hello\n", "--pack", "default", *CHAT, "--resume", home=modes_home)
    assert "recorded with pack 'support'; it continues with pack 'default'" in forced.stderr


def test_repl_rename_fork_and_resume_commands(modes_home: Path) -> None:
    script = "my python script segfaults\nhello there\n/rename Crash hunt\n/fork 1\nhello fork\n"
    result = run_cli(script, *CHAT, home=modes_home)
    assert result.returncode == 0, result.stderr
    assert "titled: Crash hunt" in result.stdout
    forked_line = next(line for line in result.stdout.splitlines() if "(forked session" in line)
    assert " at turn 1: new turns go to session " in forked_line
    # both were created within a second or so: which id sorts first is chance
    newest, parent = sorted(list_sessions(app_dirs()), key=lambda s: "fork" not in (s.title or ""))
    assert parent.title == "Crash hunt"
    assert newest.title == "Crash hunt (fork at turn 1)"
    child = load_session(newest.id)
    assert child.meta["parent"] == {"id": parent.id, "turn": 1}
    assert [r["content"] for r in child.records if r["type"] == "user"] == [
        "my python script segfaults",
        "hello fork",
    ]

    bad = run_cli("/fork 9\n/fork x\n/rename\n/resume nope\n", *CHAT, home=modes_home)
    assert "error: nothing recorded yet in this session" in bad.stdout
    assert "error: /fork takes a turn number, not 'x'" in bad.stdout
    assert "usage: /rename TITLE" in bad.stdout
    assert "error: no session 'nope'" in bad.stdout

    back = run_cli(f"/resume {parent.id}\nhello again\n", *CHAT, home=modes_home)
    assert back.stdout.count("(resumed session ") == 1
    again = load_session(parent.id)
    assert [r["content"] for r in again.records if r["type"] == "user"][-1] == "hello again"


# --------------------------------------------------------------------------- sessions verbs


def test_sessions_rename_and_rm(modes_home: Path) -> None:
    run_cli("hello there\n", *CHAT, home=modes_home)
    [session] = list_sessions(app_dirs())
    renamed = run_cli("", "sessions", "rename", session.id[:8], "Small", "talk", home=modes_home)
    assert renamed.returncode == 0, renamed.stderr
    assert renamed.stdout == f"renamed session {session.id}: Small talk\n"
    listing = run_cli("", "sessions", home=modes_home)
    assert listing.stdout.splitlines()[1].endswith("Small talk")

    missing = run_cli("", "sessions", "rename", "nope", "x", home=modes_home)
    assert missing.returncode == 1 and "no session 'nope'" in missing.stderr

    refused = run_cli("", "sessions", "rm", session.id, home=modes_home)
    assert refused.returncode == 1
    assert "there is no terminal to ask; add --yes to delete it" in refused.stderr
    assert session.path.exists()
    gone = run_cli("", "sessions", "rm", session.id, "--yes", home=modes_home)
    assert gone.returncode == 0 and gone.stdout.startswith(f"deleted session {session.id}")
    assert not session.path.exists()
    unknown = run_cli("", "sessions", "rm", session.id, "--yes", home=modes_home)
    assert unknown.returncode == 1 and f"no session '{session.id}'" in unknown.stderr


@pytest.mark.parametrize(("answer", "kept"), [("y", False), ("n", True), ("", True)])
def test_sessions_rm_asks_at_a_terminal(
    answer: str, kept: bool, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from modes_tui.store.session_log import SessionLog

    log = SessionLog.create(app_dirs(), pack="default")
    log.record("user", 1, content="plan a trip to Lisbon")
    log.close()
    asked: list[str] = []
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    monkeypatch.setattr("builtins.input", lambda prompt: asked.append(prompt) or answer)
    assert main(["sessions", "rm", log.id]) == (1 if kept else 0)
    assert asked == [
        f"Delete session {log.id} (plan a trip to Lisbon, 1 turn)? This cannot be undone. [y/N] "
    ]
    assert log.path.exists() is kept
    assert ("kept: nothing was deleted" in capsys.readouterr().out) is kept


def test_sessions_search_ranks_and_says_why(
    modes_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run_cli("how do I undo my last git commit\n", *CHAT, home=modes_home)
    run_cli("write a cover letter for a data analyst job\n", *CHAT, home=modes_home)
    text = run_cli("", "sessions", "--search", "COVER LETTER", "--text-only", home=modes_home)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0].startswith("1.00  ") and lines[0].endswith(
        "write a cover letter for a data analyst job"
    )
    assert lines[1].strip() == "text · turn 1 (you): write a cover letter for a data analyst job"
    none = run_cli("", "sessions", "--search", "pizza", "--text-only", home=modes_home)
    assert none.returncode == 1 and none.stdout == "no session matches 'pizza' by text\n"

    monkeypatch.setattr(
        "modes_tui.cli.sessions._encoder", lambda args, dirs: (HashingEncoder(), "fake", None)
    )
    assert main(["sessions", "--search", "undo git commit", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert hits[0]["title"] == "how do I undo my last git commit"
    assert hits[0]["matches"][0]["how"] == "meaning"
    assert main(["sessions", "--search", "  "]) == 1
    assert "nothing to search for" in capsys.readouterr().err


def test_the_app_with_a_wrong_resume_id_fails_at_the_terminal(modes_home: Path) -> None:
    result = run_cli("", "--resume", home=modes_home)
    assert result.returncode == 1
    assert result.stderr.startswith("modes-tui: there are no sessions yet in ")
    run_cli("hello\n", *CHAT, home=modes_home)
    result = run_cli("", "--resume", "nope", home=modes_home)
    assert result.returncode == 1 and result.stderr.startswith("modes-tui: no session 'nope'")

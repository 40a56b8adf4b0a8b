"""The REPL says which rule decided a tool call, and a typed word is never an answer
(issue 29 item 3). Through the real process: `python -m modes_tui chat --plain` in a
pseudo-terminal (and through a pipe) with `--model scripted/command`, which asks to run the
message as a shell command, and a pack whose shell mode allows or asks for `run_command`;
a file appearing in the working folder is the proof that a command ran."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.support.cli_support import run_cli
from tests.support.pty_support import Terminal, terminal

COMMAND_CHAT = ["--model", "scripted/command", "chat", "--plain", "--classifier", "keyword"]


def shell_pack(tmp_path: Path, permission: str) -> Path:
    """A pack whose shell mode may run commands as `permission` says."""
    pack = tmp_path / "pack"
    pack.mkdir(parents=True)
    (pack / "router.yaml").write_text(yaml.safe_dump({"classifier": "keyword", "fallback": "chat"}))
    (pack / "chat.yaml").write_text(yaml.safe_dump({"description": "Chat."}))
    shell = {
        "description": "Shell.",
        "tools": ["run_command"],
        "permissions": {"run_command": permission},
    }
    (pack / "shell.yaml").write_text(yaml.safe_dump(shell))
    return pack


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    return work


def in_shell(screen: Terminal) -> int:
    at = screen.expect("›")
    screen.type("/mode shell\r")
    at = screen.expect("mode setting: shell", after=at)
    return screen.expect("›", after=at)


def test_the_repl_says_an_allow_rule_ran_the_command(
    modes_home: Path, folder: Path, tmp_path: Path
) -> None:
    pack = shell_pack(tmp_path, "allow")
    with terminal(*COMMAND_CHAT, "--profiles", str(pack), home=modes_home, cwd=folder) as screen:
        at = in_shell(screen)
        screen.type("touch ran.txt\r")
        at = screen.expect("(allowed by shell's run_command: allow)", after=at)
        screen.expect("The command answered", after=at)
    assert (folder / "ran.txt").exists()


def test_a_word_typed_at_the_question_is_kept_not_taken_and_the_rule_is_named(
    modes_home: Path, folder: Path, tmp_path: Path
) -> None:
    pack = shell_pack(tmp_path, "ask")
    with terminal(*COMMAND_CHAT, "--profiles", str(pack), home=modes_home, cwd=folder) as screen:
        at = in_shell(screen)
        screen.type("touch ran.txt\r")
        at = screen.expect("Run this command? (asked by shell's run_command: ask)", after=at)
        at = screen.expect("│ touch ran.txt", after=at)
        at = screen.expect("[y/N]", after=at)
        screen.type("lately\r")
        at = screen.expect('(not y or n: "lately"; kept for your next message)', after=at)
        at = screen.expect("[y/N]", after=at)  # asked again
        assert not (folder / "ran.txt").exists()
        screen.type("n\r")
        at = screen.expect("run_command: cancelled", after=at)
        screen.expect("› lately", after=at)  # the word is the next message's draft
    assert not (folder / "ran.txt").exists()


def test_in_a_pipe_the_rule_that_allowed_or_would_have_asked_is_named(
    modes_home: Path, folder: Path, tmp_path: Path
) -> None:
    allowing = shell_pack(tmp_path / "a", "allow")
    ran = folder / "ran.txt"
    result = run_cli(
        f"/mode shell\ntouch {ran}\n", *COMMAND_CHAT, "--profiles", str(allowing), home=modes_home
    )
    assert result.returncode == 0, result.stderr
    assert "run_command allowed by shell's run_command: allow" in result.stderr
    assert ran.exists()

    asking = shell_pack(tmp_path / "b", "ask")
    other = folder / "other.txt"
    result = run_cli(
        f"/mode shell\ntouch {other}\n", *COMMAND_CHAT, "--profiles", str(asking), home=modes_home
    )
    assert (
        "refused run_command: no terminal to confirm it (asked by shell's run_command: ask)"
        in result.stderr
    )
    assert not other.exists()

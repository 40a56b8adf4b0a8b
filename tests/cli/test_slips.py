"""Command-line slips say what was meant (issue 30, item 7): a mistyped mode, verb, action or
option gets `did you mean`, through the real `modes-tui` process; with nothing close,
the message lists the choices as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from modes_tui.cli.parser import build_parser
from tests.support.cli_support import run_cli


def last_line(stderr: str) -> str:
    return stderr.strip().splitlines()[-1]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["mode", "codee"], "unknown mode 'codee' in pack default: did you mean 'code'?"),
        (["sesions"], "modes-tui: error: unknown verb 'sesions': did you mean 'sessions'?"),
        (
            ["sessions", "--serch", "x"],
            "modes-tui sessions: error: unknown option --serch: did you mean --search?",
        ),
        (["sessions", "--serch"], "error: unknown option --serch: did you mean --search?"),
        (["sessions", "rnme", "x", "y"], "error: unknown action 'rnme': did you mean 'rename'?"),
        (["--modle", "x", "chat"], "error: unknown option --modle: did you mean --model?"),
        (["route", "hi", "--clasifier", "keyword"], "did you mean --classifier?"),
        (["corrections", "lst"], "error: unknown action 'lst': did you mean 'list'?"),
        (
            ["export", "x", "--format", "jsn"],
            "error: invalid choice 'jsn' for --format: did you mean 'json'?",
        ),
    ],
)
def test_a_slip_is_answered_with_what_was_meant(
    args: list[str], said: str, modes_home: Path
) -> None:
    result = run_cli("", *args, home=modes_home)
    assert result.returncode in (1, 2), result
    assert said in last_line(result.stderr), result.stderr
    assert "invalid choice: 'x'" not in result.stderr  # the symptom is not the message


def test_the_mode_message_still_lists_the_modes(modes_home: Path) -> None:
    result = run_cli("", "mode", "codee", home=modes_home)
    assert result.returncode == 1
    assert "(choose one of: auto, off, chat, code, reason, shell, write)" in result.stderr
    assert not (modes_home / "state").exists() or "codee" not in "".join(
        path.read_text("utf-8") for path in (modes_home / "state").rglob("*") if path.is_file()
    )  # nothing was written


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["frobnicate"], "argument VERB: invalid choice: 'frobnicate'"),
        (["chat", "--plain", "--bogus"], "unrecognized arguments: --bogus"),
        (["mode", "zzz"], "unknown mode 'zzz' in pack default; choose one of: auto, off,"),
        (["sessions", "--zzzzzz", "x"], "unknown option --zzzzzz (see modes-tui sessions --help)"),
    ],
)
def test_with_nothing_close_the_message_names_the_choices(
    args: list[str], said: str, modes_home: Path
) -> None:
    result = run_cli("", *args, home=modes_home)
    assert result.returncode in (1, 2)
    assert said in result.stderr and "did you mean" not in result.stderr


def test_known_options_and_their_abbreviations_still_parse() -> None:
    parser = build_parser()
    args = parser.parse_args(["sessions", "--sea", "tides", "--json"])
    assert (args.search, args.json) == ("tides", True)
    args = parser.parse_args(["route", "--json", "--", "-not-an-option"])
    assert args.text == ["-not-an-option"]

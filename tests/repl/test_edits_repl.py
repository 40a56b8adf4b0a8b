"""Modes that change files in the REPL (issue 23): the question shows the diff as plain
`-`/`+` lines with escapes inert, a pipe (nobody to ask) leaves the file as it was unless
the mode's policy allows the edit, and `/undo` puts it back. The piped runs use
`--model scripted/edit`, which turns "replace `OLD` with `NEW` in PATH" into an edit_file
call, in a temporary project (the working directory the tools are confined to)."""

from __future__ import annotations

import asyncio
import io
import os
import subprocess
import sys
from pathlib import Path

import yaml
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output.plain_text import PlainTextOutput

from modes_tui.core.edits import Editor
from modes_tui.core.model.wire import ToolCall
from modes_tui.repl.questions import PromptConfirmer
from tests.support.cli_support import REPO
from tests.support.repl_support import answer_when_asked, within

FAILING = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
FIX = "/code replace `a - b` with `a + b` in calc.py"


async def test_the_question_shows_plain_diff_lines_with_escapes_inert(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text(FAILING)
    arguments = {"path": "calc.py", "content": "def add(a, b):\n    return a + b  \x1b[2J\n"}
    change = Editor(tmp_path).preview("write_file", arguments)
    shown = io.StringIO()
    with create_pipe_input() as pipe:
        confirmer = PromptConfirmer(input=pipe, output=PlainTextOutput(shown), arming=0)
        call = ToolCall("1", "write_file", arguments)
        asked = asyncio.create_task(confirmer.confirm(call, None, preview=change))
        await answer_when_asked(confirmer, pipe, "y\r")
        assert await within(asked) is True
    text = shown.getvalue().replace("\r\n", "\n")  # the terminal's line ends
    assert "--- a/calc.py\n+++ b/calc.py" in text
    assert "-    return a - b\n+    return a + b  \\x1b[2J" in text
    assert "Apply this change? change calc.py (+1 -1)" in text
    assert "\x1b[2J" not in text


def project(tmp_path: Path, **code: object) -> tuple[Path, Path]:
    """A project with a failing function, and a pack whose code mode edits files."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "calc.py").write_text(FAILING)
    pack = tmp_path / "pack"
    pack.mkdir()
    (pack / "router.yaml").write_text(yaml.safe_dump({"classifier": "keyword", "fallback": "chat"}))
    (pack / "chat.yaml").write_text(yaml.safe_dump({"description": "Chat."}))
    code_mode = {"description": "Code.", "tools": ["read_file", "edit_file"], **code}
    (pack / "code.yaml").write_text(yaml.safe_dump(code_mode))
    return root, pack


def piped(stdin: str, root: Path, pack: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MODES_TUI_HOME": str(home), "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "modes_tui", "--model", "scripted/edit", "chat", "--plain"]
    return subprocess.run(
        [*command, "--classifier", "keyword", "--profiles", str(pack)],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=root,
        timeout=120,
    )


def test_in_a_pipe_an_edit_that_asks_is_refused_and_the_file_untouched(
    tmp_path: Path, modes_home: Path
) -> None:
    root, pack = project(tmp_path)
    result = piped(FIX + "\n", root, pack, modes_home)
    assert result.returncode == 0, result.stderr
    assert "refused edit_file: no terminal to confirm it" in result.stderr
    assert "← edit_file: cancelled" in result.stdout
    assert (root / "calc.py").read_text() == FAILING


def test_an_allowed_edit_is_written_and_undo_puts_it_back(tmp_path: Path, modes_home: Path) -> None:
    root, pack = project(tmp_path, permissions={"edit_file": "allow"})
    result = piped(f"{FIX}\n/undo\n/undo\n", root, pack, modes_home)
    assert result.returncode == 0, result.stderr
    assert "← edit_file: ok\n  change calc.py (+1 -1)\n" in result.stdout
    assert "undid turn 1:\n  restored calc.py" in result.stdout
    assert "nothing to undo" in result.stdout  # the second /undo
    assert (root / "calc.py").read_text() == FAILING

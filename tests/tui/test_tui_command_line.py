"""`modes-tui` as a user runs it, at a real terminal: the command line starts the app (the
runtime built after the first frame), a message is answered, and quitting closes what the
run opened: the shell gets 0 back and the session is saved, whole, for `--resume`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.cli_support import REPO
from tests.support.pty_support import terminal


def test_a_message_then_quit_saves_the_session_and_exits_cleanly(tmp_path: Path) -> None:
    home = tmp_path / "home"
    args = ("chat", "--model", "scripted/echo", "--classifier", "keyword")
    with terminal(*args, home=home, cwd=tmp_path) as screen:
        screen.expect("Ask anything")
        screen.type("hello from the terminal\r")
        screen.expect("You said: hello from the terminal")  # scripted/echo's answer
        screen.type("\x11")  # ctrl+q: nothing typed is left, so one quit quits
        assert screen.exit_code() == 0

    listed = subprocess.run(
        [sys.executable, "-m", "modes_tui", "sessions", "--json"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
        env={"MODES_TUI_HOME": str(home), "PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    (session,) = json.loads(listed.stdout)
    assert (session["turns"], session["model"], session["problem"]) == (1, "scripted/echo", None)
    records = Path(session["path"]).read_text(encoding="utf-8").splitlines()
    assert "You said: hello from the terminal" in records[-1]  # the answer, the last record

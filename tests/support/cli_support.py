"""Running `python -m modes_tui` as a user would: a subprocess with pipes and its own home."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


def run_cli(stdin: str, *args: str, home: Path) -> subprocess.CompletedProcess[str]:
    """`modes-tui ARGS` with `stdin` piped in and `home` as MODES_TUI_HOME; never hangs."""
    env = {**os.environ, "MODES_TUI_HOME": str(home), "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "modes_tui", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=120,
    )


PIPED_CHAT = ("--model", "scripted/echo", "chat", "--plain", "--classifier", "keyword")
"""`modes-tui chat` as a pipe drives it: the echoing scripted model, the keyword router."""


def run_piped_chat(stdin: str, *args: str, home: Path) -> subprocess.CompletedProcess[str]:
    """`modes-tui PIPED_CHAT ARGS` with `stdin` piped in (`run_cli`)."""
    return run_cli(stdin, *PIPED_CHAT, *args, home=home)


def run_python(code: str, *, env: dict[str, str] | None = None) -> str:
    """`python -c CODE` in a fresh interpreter, in the checkout: its standard output.

    Raises when it fails, and never hangs (no stdin, 120 s at most). `env` replaces the
    environment when given (give `MODES_TUI_HOME`, so nothing touches the real home)."""
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
        env=env,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    return done.stdout


def wait_until_reaped(runner: Any) -> None:
    """Until a killed model process has exited for good (its parent could reap it)."""
    for _ in range(1000):
        if not runner.loaded:  # polls the process: true only once it can be reaped
            return
        time.sleep(0.01)
    raise AssertionError(f"the model process {runner.pid} still runs 10 s after it was killed")

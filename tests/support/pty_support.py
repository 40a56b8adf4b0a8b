"""Running `python -m modes_tui` at a real terminal: a pseudo-terminal the test types into.

What a pipe cannot show: the terminal driver buffering keys typed while a turn runs, and
prompt-toolkit reading them. Bounded: every wait has a timeout, and the process (started
in its own session) is killed when the test leaves the `with` block.
"""

from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.cli_support import REPO

WAIT_SECONDS = 60.0
"""The longest a test waits for any one thing to appear (a loaded machine is slow)."""


class Terminal:
    """The user's side of a pseudo-terminal running one process."""

    def __init__(self, master: int, process: subprocess.Popen[bytes]) -> None:
        self.master = master
        self.process = process
        self.screen = ""
        """Everything the process wrote so far, decoded."""

    def type(self, text: str) -> None:
        """Keys, as a burst (one write)."""
        os.write(self.master, text.encode())

    def expect(self, text: str, *, after: int = 0, timeout: float = WAIT_SECONDS) -> int:
        """Wait until `text` shows (at or past offset `after`); return the offset past it."""
        deadline = time.monotonic() + timeout
        while (found := self.screen.find(text, after)) < 0:
            left = deadline - time.monotonic()
            if left <= 0 or self.process.poll() is not None:
                self._read(0.2)
                if (found := self.screen.find(text, after)) >= 0:
                    break
                raise AssertionError(f"{text!r} never showed; the screen:\n{self.screen[-3000:]}")
            self._read(min(left, 0.2))
        return found + len(text)

    def exit_code(self, timeout: float = WAIT_SECONDS) -> int | None:
        """Wait for the process to end, reading what it writes meanwhile (a process that
        restores the terminal as it exits blocks on a full pseudo-terminal otherwise)."""
        deadline = time.monotonic() + timeout
        while self.process.poll() is None and time.monotonic() < deadline:
            self._read(0.1)
        return self.process.poll()

    def _read(self, timeout: float) -> None:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if ready:
            try:
                chunk = os.read(self.master, 65536)
            except OSError:  # the process is gone and its side closed
                return
            self.screen += chunk.decode("utf-8", errors="replace")


@contextmanager
def terminal(*args: str, home: Path, cwd: Path) -> Iterator[Terminal]:
    """`modes-tui ARGS` in a 120x40 pseudo-terminal, with `home` as MODES_TUI_HOME."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    env = {
        **os.environ,
        "MODES_TUI_HOME": str(home),
        "PYTHONPATH": str(REPO),
        "TERM": "xterm-256color",
        "PROMPT_TOOLKIT_NO_CPR": "1",  # no cursor-position requests for the test to answer
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "modes_tui", *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        cwd=cwd,
        start_new_session=True,
    )
    os.close(slave)
    try:
        yield Terminal(master, process)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
        os.close(master)

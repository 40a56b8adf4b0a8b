"""A crash of the app gives the terminal back: alternate screen off, mouse off, cursor shown.

The terminal UI runs in a pseudo-terminal, draws its first frame, and is killed by a signal
it cannot handle (SIGSEGV, SIGKILL). Afterwards the last bytes on the terminal are the reset
sequences and the terminal is back in the mode it was in before (echo, line editing). The
plain REPL gets the same: killed while prompt_toolkit waits for a line in raw mode.
"""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from modes_tui.cli.terminal_guard import REPL_RESET as REPL_RESET_TEXT
from modes_tui.cli.terminal_guard import RESET as RESET_TEXT

REPO = Path(__file__).resolve().parents[2]
ALT_SCREEN_ON = b"\x1b[?1049h"
RESET = RESET_TEXT.encode()
REPL_RESET = REPL_RESET_TEXT.encode()
BRACKETED_PASTE_ON = b"\x1b[?2004h"


def read_until(master: int, done: bytes | None, timeout: float, seen: bytearray) -> None:
    """Read the terminal into `seen` until it ends with (or holds) `done`, or `timeout` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if done is not None and done in seen:
            return
        ready, _, _ = select.select([master], [], [], 0.05)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # every writer is gone
                return
            if not chunk:
                return
            seen += chunk


def start_tui(
    home: Path, *, plain: bool = False
) -> tuple[subprocess.Popen[bytes], int, int, list[object]]:
    master, slave = pty.openpty()
    before = termios.tcgetattr(slave)
    os.set_blocking(master, False)
    env = {
        **os.environ,
        "MODES_TUI_HOME": str(home),
        "PYTHONPATH": str(REPO),
        "TERM": "xterm-256color",
        "COLUMNS": "100",
        "LINES": "30",
    }
    termios.tcsetwinsize(slave, (30, 100))
    app = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "modes_tui",
            "--model",
            "scripted/demo",
            "chat",
            *(["--plain"] if plain else []),
            "--classifier",
            "keyword",
        ],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        start_new_session=True,
    )
    return app, master, slave, before


@pytest.mark.parametrize(
    "sig", [signal.SIGSEGV, signal.SIGKILL, signal.SIGTERM], ids=lambda sig: sig.name
)
def test_a_killed_app_leaves_the_terminal_reset(tmp_path: Path, sig: signal.Signals) -> None:
    app, master, slave, before = start_tui(tmp_path)
    seen = bytearray()
    try:
        read_until(master, ALT_SCREEN_ON, 60, seen)
        assert ALT_SCREEN_ON in seen, bytes(seen[-500:])
        read_until(master, b"\x1b[?25l", 30, seen)  # the cursor hidden: raw mode is on
        read_until(master, None, 1.0, seen)  # let the first frames settle
        assert not termios.tcgetattr(slave)[3] & termios.ICANON  # the app's raw mode
        os.kill(app.pid, sig)
        assert app.wait(timeout=30) == -sig
        after = len(seen)
        read_until(master, RESET, 10, seen)
        read_until(master, None, 0.5, seen)  # nothing may follow the reset
        restored = termios.tcgetattr(slave)
    finally:
        if app.poll() is None:
            app.kill()
            app.wait(timeout=30)
        os.close(master)
        os.close(slave)
    assert bytes(seen[after:]).endswith(RESET), bytes(seen[-300:])
    assert restored[3] & termios.ICANON and restored[3] & termios.ECHO
    assert restored[3] == before[3]


def test_a_normal_quit_writes_no_second_reset(tmp_path: Path) -> None:
    app, master, slave, _ = start_tui(tmp_path)
    seen = bytearray()
    try:
        read_until(master, b"\x1b[?25l", 60, seen)
        read_until(master, None, 1.0, seen)
        os.write(master, b"\x11")  # ctrl+q
        assert app.wait(timeout=30) == 0
        read_until(master, None, 1.0, seen)
    finally:
        if app.poll() is None:
            app.kill()
            app.wait(timeout=30)
        os.close(master)
        os.close(slave)
    assert b"\x1b[?1049l" in seen  # Textual gave the terminal back itself
    assert RESET not in seen  # and the keeper stayed quiet


def close(app: subprocess.Popen[bytes], master: int, slave: int) -> None:
    if app.poll() is None:
        app.kill()
        app.wait(timeout=30)
    os.close(master)
    os.close(slave)


def wait_for_repl_prompt(master: int, slave: int, seen: bytearray) -> None:
    read_until(master, BRACKETED_PASTE_ON, 60, seen)  # prompt_toolkit waits for a line
    read_until(master, None, 1.0, seen)  # let the prompt settle
    assert "›".encode() in seen, bytes(seen[-500:])
    mode = termios.tcgetattr(slave)[3]
    assert not mode & termios.ICANON and not mode & termios.ECHO  # prompt_toolkit's raw mode


@pytest.mark.parametrize(
    "sig", [signal.SIGSEGV, signal.SIGKILL, signal.SIGTERM], ids=lambda sig: sig.name
)
def test_a_killed_repl_leaves_the_terminal_reset(tmp_path: Path, sig: signal.Signals) -> None:
    app, master, slave, before = start_tui(tmp_path, plain=True)
    seen = bytearray()
    try:
        wait_for_repl_prompt(master, slave, seen)
        os.kill(app.pid, sig)
        assert app.wait(timeout=30) == -sig
        after = len(seen)
        read_until(master, REPL_RESET, 10, seen)
        read_until(master, None, 0.5, seen)  # nothing may follow the reset
        restored = termios.tcgetattr(slave)
    finally:
        close(app, master, slave)
    assert bytes(seen[after:]).endswith(REPL_RESET), bytes(seen[-300:])
    assert restored[3] & termios.ICANON and restored[3] & termios.ECHO
    assert restored[3] == before[3]


def test_a_normal_repl_exit_writes_no_second_reset(tmp_path: Path) -> None:
    app, master, slave, before = start_tui(tmp_path, plain=True)
    seen = bytearray()
    try:
        wait_for_repl_prompt(master, slave, seen)
        os.write(master, b"\x04")  # ctrl+d
        assert app.wait(timeout=30) == 0
        read_until(master, None, 1.0, seen)
        restored = termios.tcgetattr(slave)
    finally:
        close(app, master, slave)
    assert b"\x1b[?2004l" in seen  # prompt_toolkit gave the terminal back itself
    assert REPL_RESET not in seen  # and the keeper stayed quiet
    assert restored[3] == before[3]


def test_a_guard_whose_keeper_never_started_releases_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the app ends before its first frame (a failed start): the keeper was never spawned,
    # and quitting must not wait for it (it used to be started at once, so release waited)
    from modes_tui.cli import terminal_guard

    monkeypatch.setattr(terminal_guard.os, "isatty", lambda fd: True)
    monkeypatch.setattr(terminal_guard.termios, "tcgetattr", lambda fd: [0] * 6 + [[b"\x00"]])
    spawned: list[object] = []
    monkeypatch.setattr(terminal_guard.subprocess, "Popen", lambda *a, **k: spawned.append(a))
    guard = terminal_guard.TerminalGuard.start(later=True)
    began = time.monotonic()
    guard.release()
    assert time.monotonic() - began < 1.0
    guard.spawn()  # too late: the app is gone, no keeper is started for it
    time.sleep(0.1)
    assert spawned == []

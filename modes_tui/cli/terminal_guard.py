"""Give the terminal back when the app dies without a chance to do it itself.

The terminal UI switches the terminal to the alternate screen, turns on mouse reporting,
hides the cursor and sets raw mode; Textual undoes all of that when the app ends, even on an
exception. A process that dies by a signal (a native crash, SIGKILL, the out-of-memory
killer, SIGTERM) undoes nothing, and the shell is left on a blank screen that prints escape
codes at every mouse move. So `TerminalGuard` starts a tiny keeper process before the app
runs: it holds the terminal's settings from before the app and waits on a pipe. The app
writes `ok` when Textual has given the terminal back; if the pipe closes without it (the app
died), the keeper restores the settings and writes the reset sequences.

The plain REPL (prompt_toolkit) is guarded by the same keeper with `REPL_RESET`: it sets raw
mode and bracketed paste while it waits for a line, and hides the cursor and turns off line
wrap while it draws, but never uses the alternate screen or the mouse.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import termios
import threading
from typing import IO

RESET = (
    "\x1b[?2004l"  # bracketed paste off
    "\x1b[?1000l\x1b[?1003l\x1b[?1015l\x1b[?1006l"  # mouse reporting off
    "\x1b[?1004l"  # focus events off
    "\x1b[<u"  # the kitty keyboard protocol popped (before leaving the alternate screen)
    "\x1b[?7h"  # line wrap on
    "\x1b[?1049l"  # the alternate screen left
    "\x1b[?25h"  # the cursor shown
)
"""What Textual's driver writes when the app stops, in one write."""

REPL_RESET = (
    "\x1b[0m"  # colours and styles off (a death in the middle of drawing the completion menu)
    "\x1b[?2004l"  # bracketed paste off
    "\x1b[?7h"  # line wrap on (prompt_toolkit turns it off while it draws)
    "\x1b[?25h"  # the cursor shown (hidden while it draws)
)
"""What prompt_toolkit leaves on if it dies. Not `?1049l`: outside the alternate screen
xterm takes it as "restore the saved cursor" and would move the cursor to a stale place."""

_KEEPER = """
import json, os, signal, sys, termios
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGHUP, signal.SIG_IGN)
saved = json.loads(sys.stdin.readline() or "null")
if sys.stdin.read().strip() != "ok":
    if saved is not None:
        try:
            termios.tcsetattr(1, termios.TCSANOW, saved)
        except (termios.error, OSError):
            pass
    try:
        os.write(2, sys.argv[1].encode())
    except OSError:
        pass
"""
"""The keeper: stdlib only, started with -I -S so it costs a few milliseconds of one core."""


class TerminalGuard:
    """A keeper process that resets the terminal if the app dies; `release()` when it did not."""

    def __init__(self) -> None:
        self._pipe: IO[bytes] | None = None
        self._keeper: subprocess.Popen[bytes] | None = None
        self._ready = threading.Event()
        self._lock = threading.Lock()
        self._pending: tuple[list[object], int, str] | None = None
        """The settings, output and reset of a keeper not started yet."""

    @classmethod
    def start(cls, *, output: int = 2, reset: str = RESET, later: bool = False) -> TerminalGuard:
        """Guard the terminal on stdin and `output` (stderr, where Textual draws; stdout for
        the REPL), if both are one: `reset` is written to `output` if the app dies.

        The settings are read now, before the app changes anything. With `later`, the
        keeper is started by `spawn()`: the terminal UI calls it after its first frame
        (starting a process costs the app 2-5 ms it does not need before it has drawn)."""
        guard = cls()
        if not (os.isatty(0) and os.isatty(output)):
            guard._ready.set()
            return guard
        try:
            saved = termios.tcgetattr(0)  # now: before the app changes anything
        except termios.error:
            guard._ready.set()
            return guard
        guard._pending = (saved, output, reset)
        if not later:
            guard.spawn()
        return guard

    def spawn(self) -> None:
        """Start the keeper, once, on a thread of its own (starting a process must not hold
        up the thread that asks); nothing after `release()`."""
        with self._lock:
            pending, self._pending = self._pending, None
        if pending is None:
            return
        threading.Thread(
            target=self._spawn, args=pending, name="modes-tui-terminal-guard", daemon=True
        ).start()

    def _spawn(self, saved: list[object], output: int, reset: str) -> None:
        try:
            keeper = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _KEEPER, reset],
                stdin=subprocess.PIPE,
                # the keeper's stdout: the terminal the settings came from, to put them back
                stdout=0,
                stderr=output,  # where the reset sequences go
                # its own session: no terminal signals, and no job control on its writes
                start_new_session=True,
            )
            assert keeper.stdin is not None
            cc = [c[0] if isinstance(c, bytes) else c for c in saved[6]]  # type: ignore[attr-defined]
            keeper.stdin.write(json.dumps([*saved[:6], cc]).encode() + b"\n")
            keeper.stdin.flush()
            self._pipe = keeper.stdin
            self._keeper = keeper
        except OSError:
            pass  # no guard: the app still runs
        finally:
            self._ready.set()

    def release(self) -> None:
        """The app gave the terminal back itself: the keeper exits without a word."""
        with self._lock:
            never, self._pending = self._pending is not None, None
        if never:  # the app ended before its first frame: no keeper was started
            self._ready.set()
        self._ready.wait(timeout=5.0)
        pipe, self._pipe = self._pipe, None
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.write(b"ok")
                pipe.close()
        if self._keeper is not None:  # reaped, not left a zombie until the app exits
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._keeper.wait(timeout=2.0)

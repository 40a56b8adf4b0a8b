"""search_files' matching, in a child process with a hard time limit.

`RegexSearch` starts `regex_worker.py` in a fresh interpreter, streams it the content of
each file the caller has already opened (confined, bounded), and collects the matching
lines. A pattern that backtracks past the time limit ends the search with a `ToolError`
naming the file and line, instead of holding the GIL (and so the app's event loop) for
seconds or hours. Blocking calls only: the tool runs in a worker thread.
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from modes_tui.core.errors import ToolError
from modes_tui.core.tools.confined import shown_path

__all__ = ["Match", "RegexSearch", "SearchOutcome"]

_WORKER = Path(__file__).with_name("regex_worker.py")
_KILL_GRACE = 5.0
"""Seconds past the limit before the child is killed (the alarm should have stopped it)."""


@dataclass(frozen=True, slots=True)
class Match:
    """One matching line."""

    file: str
    """The file, as the tool shows it."""
    line: int
    """1-based line number."""
    text: str
    """The line, stripped and cut."""


@dataclass(frozen=True, slots=True)
class SearchOutcome:
    """What the child found, and whether it stopped at the cap on matches."""

    matches: tuple[Match, ...]
    """The hits, in order."""
    full: bool
    """The cap on matches was reached: there may be more."""


class RegexSearch:
    """One search: `add()` each file's content, then `finish()`; use as a context manager."""

    def __init__(
        self,
        pattern: str,
        *,
        ignore_case: bool,
        seconds: float,
        max_matches: int,
        max_chars: int = 200,
    ) -> None:
        try:
            re.compile(pattern, re.IGNORECASE if ignore_case else 0)
        except re.error as error:
            raise ToolError(
                f"`{shown_path(pattern)}` is not a valid regular expression: {error}"
            ) from None
        self.pattern = shown_path(pattern)  # as messages show it: cut, escapes visible
        self.seconds = seconds
        self.files: list[str] = []
        self.lines: list[str] = []
        settings = {
            "pattern": pattern,
            "ignore_case": ignore_case,
            "seconds": seconds,
            "max_matches": max_matches,
            "max_chars": max_chars,
        }
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-I", "-S", str(_WORKER)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        except OSError as error:
            raise ToolError(
                f"the search could not start its helper process ({error.strerror or error}); "
                "try again, or read the files with read_file"
            ) from None
        # a thread drains the child's output, so neither side can block on a full pipe
        self.reader = threading.Thread(target=self._read, args=(self.process.stdout,), daemon=True)
        self.reader.start()
        self._send(json.dumps(settings).encode() + b"\n")

    def __enter__(self) -> RegexSearch:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self.reader.join(_KILL_GRACE)  # the child is gone: its output ends at once
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    def _read(self, stream: IO[bytes] | None) -> None:
        assert stream is not None
        with contextlib.suppress(ValueError, OSError):  # closed under us: nothing more to read
            for raw in stream:
                self.lines.append(raw.decode("utf-8", "replace"))

    def _send(self, data: bytes) -> bool:
        """Write to the child; False once it has stopped reading (done, full or timed out)."""
        stdin = self.process.stdin
        assert stdin is not None
        try:
            stdin.write(data)
            return True
        except (BrokenPipeError, ValueError, OSError):
            return False

    def add(self, shown: str, data: bytes) -> bool:
        """Search `data` (the content of the file shown as `shown`); False to stop adding."""
        self.files.append(shown)
        return self._send(json.dumps({"size": len(data)}).encode() + b"\n") and self._send(data)

    def finish(self) -> SearchOutcome:
        """The matches; ToolError when the pattern ran out of time or the child failed."""
        with contextlib.suppress(OSError):
            assert self.process.stdin is not None
            self.process.stdin.close()
        try:
            self.process.wait(self.seconds + _KILL_GRACE)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.reader.join(_KILL_GRACE)
        return self._outcome([json.loads(line) for line in list(self.lines) if line.strip()])

    def _outcome(self, replies: list[dict[str, Any]]) -> SearchOutcome:
        matches = tuple(
            Match(self.files[index], number, text)
            for index, number, text in (reply["match"] for reply in replies if "match" in reply)
        )
        last = replies[-1] if replies else {}
        if "error" in last:
            raise ToolError(f"`{self.pattern}` is not a valid regular expression: {last['error']}")
        if "timeout" in last:
            index, number = last["timeout"]
            where = f"{self.files[index]} line {number}" if number else self.files[index]
            raise ToolError(
                f"the pattern `{self.pattern}` took longer than {self.seconds:g} s (stopped at "
                f"{where}); simplify it (nested repeats such as (a+)+ take exponential time) "
                "or narrow the search with path or glob"
            )
        if "done" not in last and "full" not in last:
            raise ToolError(
                f"the search for `{self.pattern}` stopped unexpectedly (its helper process "
                f"ended with code {self.process.returncode} after {self.seconds:g} s at most); "
                "simplify the pattern or narrow the search with path or glob"
            )
        return SearchOutcome(matches, "full" in last)

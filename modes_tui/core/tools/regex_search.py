"""search_files' matching: the `regex` library with its own time limit.

Python's `re` can take exponential time (`(a+)+$` doubles per character), holds the GIL
while it matches and cannot be stopped from another thread. The `regex` library (a drop-in
superset of `re`'s syntax) takes `timeout=` on every match call and raises `TimeoutError`
when it runs out, checked inside its own backtracking loop, so no signal, alarm or child
process is needed, and it releases the GIL while matching on a `str`, so the app's event
loop keeps running while a search thread works. The limit is the search's total: each
call gets what is left of it.

`RegexSearch` takes each file's content as the caller read it (confined, bounded, judged by
the mode's rules) and collects the matching lines, numbered as read_file numbers them.
Blocking calls only: the tool runs in a worker thread.

A call with `timeout=` costs about 15 microseconds, so a file is first searched whole, in
one call (`MULTILINE`, its lines joined by a newline): no match there means no line matches,
and most files are skipped at that price. That holds for any pattern whose matching at a
line depends only on the line: `^`, `$`, word boundaries and `.` behave the same at a
line's edges in both; a pattern with the anchors A, Z, z or G (backslashed) or any `(?`
(lookarounds, inline flags) may not, and is searched line by line only.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from types import TracebackType

import regex

from modes_tui.core.errors import ToolError
from modes_tui.core.tools.confined import shown_path

__all__ = ["Match", "RegexSearch", "SearchOutcome"]

_LINE_BOUND = ("\\A", "\\Z", "\\z", "\\G", "(?")
"""In a pattern, what can make a whole-file search miss a line the line search finds."""


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
    """What the search found, and whether it stopped at the cap on matches."""

    matches: tuple[Match, ...]
    """The hits, in order."""
    full: bool
    """The cap on matches was reached: there may be more."""


def lines_of(data: bytes) -> list[str]:
    """The lines as read_file numbers them: split at "\\n" only, a CRLF's "\\r" dropped.

    str.splitlines also breaks at a form feed, a lone CR, U+2028 and more, so a line number
    it gives is not the one read_file's start_line reads.
    """
    lines = [line.removesuffix("\r") for line in data.decode("utf-8", "replace").split("\n")]
    if lines[-1] == "":
        lines.pop()  # the end of the last line, not a line of its own
    return lines


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
            self.compiled = regex.compile(pattern, regex.IGNORECASE if ignore_case else 0)
        except (regex.error, ValueError, OverflowError) as error:
            raise ToolError(
                f"`{shown_path(pattern)}` is not a valid regular expression: {error}"
            ) from None
        self.whole: regex.Pattern[str] | None = None
        """The same pattern over a whole file (MULTILINE), when that is safe (see above)."""
        if not any(part in pattern for part in _LINE_BOUND):
            flags = regex.MULTILINE | (regex.IGNORECASE if ignore_case else 0)
            self.whole = regex.compile(pattern, flags)
        self.pattern = shown_path(pattern)  # as messages show it: cut, escapes visible
        self.seconds = seconds
        self.max_matches = max_matches
        self.max_chars = max_chars
        self.matches: list[Match] = []
        self.full = False
        self.spent = 0.0
        """Seconds spent matching so far (reading files is not counted)."""
        self.timed_out: tuple[str, int] | None = None

    def __enter__(self) -> RegexSearch:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        return None

    def add(self, shown: str, data: bytes) -> bool:
        """Search `data` (the content of the file shown as `shown`); False to stop adding
        (the cap on matches reached, or the time limit)."""
        if self.full or self.timed_out is not None:
            return False
        started = time.monotonic()
        number = 0
        lines = lines_of(data)
        try:
            if (
                self.whole is not None
                and self.whole.search(
                    "\n".join(lines), timeout=max(self.seconds - self.spent, 0.001)
                )
                is None
            ):
                lines = []  # no line of it matches: nothing to look at line by line
            for number, line in enumerate(lines, 1):
                left = self.seconds - self.spent - (time.monotonic() - started)
                if left <= 0:
                    raise TimeoutError
                if self.compiled.search(line, timeout=left) is None:
                    continue
                self._found(shown, number, line)
                if self.full:
                    break
        except TimeoutError:
            self.timed_out = (shown, number)
        self.spent += time.monotonic() - started
        return not self.full and self.timed_out is None

    def _found(self, shown: str, number: int, line: str) -> None:
        text = line.strip()
        if len(text) > self.max_chars:
            text = text[: self.max_chars] + " …"
        self.matches.append(Match(shown, number, text))
        self.full = len(self.matches) >= self.max_matches

    def finish(self) -> SearchOutcome:
        """The matches; ToolError when the pattern ran out of time."""
        if self.timed_out is not None:
            file, number = self.timed_out
            where = f"{file} line {number}" if number else file
            raise ToolError(
                f"the pattern `{self.pattern}` took too long: more than {self.seconds:g} s of "
                f"matching (stopped at {where}); simplify it (nested repeats such as (a+)+ "
                "take exponential time) or narrow the search with path or glob"
            )
        return SearchOutcome(tuple(self.matches), self.full)

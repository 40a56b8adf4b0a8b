"""The child process that runs search_files' regular expression, under a time limit.

Python's `re` can take exponential time (`(a+)+$` doubles per character) and holds the GIL
while it matches, so a search in a worker thread still freezes the app's event loop. This
script runs in its own interpreter (`python -I -S regex_worker.py`, stdlib only, nothing of
modes_tui imported) and arms a SIGALRM timer around the matching: `re` checks for signals as
it backtracks, so the alarm stops even a runaway match. The parent (`regex_search.py`) also
kills it if it outlives the limit by far.

Protocol, all lines JSON:
- stdin: one settings line `{"pattern", "ignore_case", "seconds", "max_matches", "max_chars"}`,
  then per file a header line `{"size": N}` followed by N bytes of its content;
- stdout: `{"match": [file_index, line, text]}` per hit, then one of `{"done": true}`,
  `{"full": true}` (max_matches reached), `{"timeout": [file_index, line]}`, `{"error": text}`.
"""

from __future__ import annotations

import json
import re
import signal
import sys
from typing import Any, BinaryIO, TextIO


class _OutOfTime(Exception):
    """The time limit ran out inside the matching."""


def _alarm(signum: int, frame: object) -> None:
    raise _OutOfTime


def _say(out: TextIO, value: dict[str, Any]) -> None:
    out.write(json.dumps(value, ensure_ascii=True) + "\n")
    out.flush()


def _lines(data: bytes) -> list[str]:
    """The lines as read_file numbers them: split at "\n" only, a CRLF's "\r" dropped.

    str.splitlines also breaks at a form feed, a lone CR, U+2028 and more, so a line number
    it gives is not the one read_file's start_line reads.
    """
    lines = [line.removesuffix("\r") for line in data.decode("utf-8", "replace").split("\n")]
    if lines[-1] == "":
        lines.pop()  # the end of the last line, not a line of its own
    return lines


def _search_file(
    regex: re.Pattern[str],
    data: bytes,
    index: int,
    settings: dict[str, Any],
    found: list[int],
    out: TextIO,
) -> tuple[str, int] | None:
    """Matches of one file to stdout; ("timeout" | "full", line) when it must stop."""
    number = 0
    try:
        for number, line in enumerate(_lines(data), 1):
            if regex.search(line):
                text = line.strip()
                if len(text) > settings["max_chars"]:
                    text = text[: settings["max_chars"]] + " …"
                _say(out, {"match": [index, number, text]})
                found[0] += 1
                if found[0] >= settings["max_matches"]:
                    return "full", number
    except _OutOfTime:
        return "timeout", number
    return None


def run(stdin: BinaryIO, out: TextIO) -> None:
    """Read the settings and the files from `stdin`, write the results to `out`."""
    settings = json.loads(stdin.readline())
    try:
        regex = re.compile(settings["pattern"], re.IGNORECASE if settings["ignore_case"] else 0)
    except re.error as error:
        _say(out, {"error": str(error)})
        return
    signal.signal(signal.SIGALRM, _alarm)
    left = float(settings["seconds"])
    found = [0]
    index = -1
    while header := stdin.readline():
        index += 1
        data = stdin.read(json.loads(header)["size"])
        # the timer runs only while matching: reading the next file is the parent's time
        try:
            signal.setitimer(signal.ITIMER_REAL, left)
            stop = _search_file(regex, data, index, settings, found, out)
            left = signal.setitimer(signal.ITIMER_REAL, 0)[0]
        except _OutOfTime:  # fired after the last line, before the timer was stopped
            stop = ("timeout", 0)
        if stop is None and left <= 0:
            stop = ("timeout", 0)
        if stop is not None:
            kind, line = stop
            _say(out, {"timeout": [index, line]} if kind == "timeout" else {"full": True})
            return
    _say(out, {"done": True})


if __name__ == "__main__":
    run(sys.stdin.buffer, sys.stdout)

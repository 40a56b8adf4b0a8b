"""search_files' matching with the `regex` library (issue 34): lines as read_file numbers
them, the whole-file first pass never hiding a line the line search finds, and the time
limit from any thread."""

from __future__ import annotations

import pytest

from modes_tui.core.errors import ToolError
from modes_tui.core.tools.regex_search import RegexSearch


def hits(pattern: str, data: bytes, *, ignore_case: bool = False) -> list[tuple[int, str]]:
    with RegexSearch(pattern, ignore_case=ignore_case, seconds=5, max_matches=100) as search:
        search.add("f.txt", data)
        return [(match.line, match.text) for match in search.finish().matches]


TEXT = b"first line\r\n  indented one\nlast word\n"


@pytest.mark.parametrize(
    ("pattern", "lines"),
    [
        ("^first", [1]),
        ("line$", [1]),  # the CRLF's \r is not part of the line
        ("^ +indented", [2]),
        (r"\Aindented", []),  # \A: the start of a line, not only of the file
        (r"\A {2}indented", [2]),
        (r"(?<!\s)last", [3]),  # a lookbehind at a line's start sees nothing before it
        (r"one(?!\s)", [2]),  # a lookahead at a line's end sees nothing after it
        (r"word\Z", [3]),
        (r"line\s+indented", []),  # a match never spans two lines
        ("(?i)LAST", [3]),
        (r"\bword\b", [3]),
    ],
)
def test_each_line_is_matched_on_its_own(pattern: str, lines: list[int]) -> None:
    assert [line for line, _ in hits(pattern, TEXT)] == lines


def test_ignore_case_and_cut_lines() -> None:
    long = b"x" * 300 + b" NEEDLE\n"
    [(line, text)] = hits("needle", long, ignore_case=True)
    assert line == 1 and text == "x" * 200 + " …"


def test_a_bad_pattern_names_itself() -> None:
    with pytest.raises(ToolError, match=r"`\(unclosed` is not a valid regular expression"):
        RegexSearch("(unclosed", ignore_case=False, seconds=1, max_matches=1)


def test_the_cap_on_matches_stops_the_search() -> None:
    with RegexSearch("a", ignore_case=False, seconds=5, max_matches=2) as search:
        assert search.add("one.txt", b"a\na\na\n") is False
        outcome = search.finish()
    assert outcome.full and [m.line for m in outcome.matches] == [1, 2]


def test_the_time_limit_counts_across_files() -> None:
    with RegexSearch("(a|aa)+$", ignore_case=False, seconds=0.2, max_matches=5) as search:
        assert search.add("fine.txt", b"aaa\n") is True
        assert search.add("slow.txt", b"a" * 40 + b"b\n") is False
        assert search.add("after.txt", b"aaa\n") is False  # nothing more once out of time
        with pytest.raises(ToolError) as stopped:
            search.finish()
    assert stopped.value.message.startswith(
        "the pattern `(a|aa)+$` took too long: more than 0.2 s of matching (stopped at slow.txt)"
    )

"""Session titles made locally from the first user messages (no model call)."""

from __future__ import annotations

import pytest

from modes_tui.core.paths import app_dirs
from modes_tui.store.session_log import SessionLog
from modes_tui.store.session_reader import load_session
from modes_tui.store.sessions import list_sessions
from modes_tui.store.titles import TITLE_CHARS, generate_title

TRACEBACK = """Traceback (most recent call last):
  File "/home/me/app/main.py", line 12, in <module>
    run(config["port"])
KeyError: 'port'"""


@pytest.mark.parametrize(
    ("messages", "title"),
    [
        (["how do I undo my last git commit?"], "how do I undo my last git commit"),
        (
            ["Hi! Can you please help me fix this segfault in my C parser? It crashes on ''."],
            "fix this segfault in my C parser",
        ),
        (
            ["Could you translate 'good morning' into French, please?"],
            ("translate 'good morning' into French"),
        ),
        (
            ["so I was wondering if you could summarise this article for me"],
            ("summarise this article for me"),
        ),
        (["can you explain what a monad is"], "explain what a monad is"),
        (
            ["hey there, quick question: what's the capital of Australia?"],
            ("what's the capital of Australia"),
        ),
        # a pasted traceback is named by what went wrong
        ([TRACEBACK], "KeyError: 'port'"),
        (["why does this fail\n\n" + TRACEBACK], "KeyError: 'port'"),
        # code first, then the question
        (
            ["```python\nwhile True:\n    pass\n```\nwhy does this loop never end"],
            ("why does this loop never end"),
        ),
        # filler alone says nothing: the next message names the session
        (
            ["hi", "thanks!", "write a cover letter for a junior data analyst job"],
            ("write a cover letter for a junior data analyst job"),
        ),
        (["hello", "ok"], None),
        (["", "   "], None),
        # a long message is cut at a word boundary, and not after a dangling "a" or "the"
        (
            ["please write a haiku about autumn leaves falling on a quiet pond at dawn"],
            "write a haiku about autumn leaves falling…",
        ),
        # "so" inside a word, "hi" inside a word, are words of the topic
        (["sonnet about the sea"], "sonnet about the sea"),
        (["history of the hittites"], "history of the hittites"),
    ],
)
def test_titles_from_real_first_messages(messages: list[str], title: str | None) -> None:
    made = generate_title(messages)
    assert made == title
    if made is not None:
        assert len(made) <= TITLE_CHARS


def test_a_session_is_titled_by_its_first_message_that_says_something() -> None:
    dirs = app_dirs()
    log = SessionLog.create(dirs, pack="default")
    log.record("user", 1, content="hello!")
    assert list_sessions(dirs)[0].title is None
    log.record("user", 2, content="Can you help me plan a 3-day trip to Lisbon in May?")
    log.record("user", 3, content="and what about Porto")
    log.close()
    assert list_sessions(dirs)[0].title == "plan a 3-day trip to Lisbon in May"
    assert load_session(log.id).title == "plan a 3-day trip to Lisbon in May"

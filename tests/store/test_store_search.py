"""Searching saved sessions by text and by meaning."""

from __future__ import annotations

import pytest

from modes_tui.core.errors import SessionError
from modes_tui.core.history.conversation import Message
from modes_tui.core.paths import Dirs, app_dirs
from modes_tui.core.routing.classifiers.embedding import EmbeddingCache
from modes_tui.store.search import search_sessions
from modes_tui.store.session_log import SessionLog
from tests.support.fake_encoder import HashingEncoder


def write(dirs: Dirs, session_id: str, *turns: tuple[str, str]) -> None:
    log = SessionLog.create(dirs, pack="default", session_id=session_id)
    for number, (asked, answered) in enumerate(turns, 1):
        log.record("user", number, content=asked)
        log.record("assistant", number, message=Message("assistant", answered).to_dict())
    log.close()


@pytest.fixture
def dirs() -> Dirs:
    dirs = app_dirs()
    write(
        dirs,
        "20260101-090000-aaaa",
        ("how do I undo my last git commit", "Use git reset --soft HEAD~1."),
    )
    write(
        dirs,
        "20260102-090000-bbbb",
        ("my C parser crashes on empty input", "That is a segfault from a NULL pointer."),
        ("thanks, and how do I test it", "Write a unit test with an empty string."),
    )
    write(
        dirs,
        "20260103-090000-cccc",
        ("write a cover letter for a data analyst job", "Dear hiring manager, ..."),
    )
    return dirs


def test_text_matches_say_where_and_rank_above_meaning_only(dirs: Dirs) -> None:
    hits = search_sessions("SEGFAULT", dirs, encoder=HashingEncoder())
    assert hits[0].id == "20260102-090000-bbbb"
    assert hits[0].score >= 1.0
    text = [m for m in hits[0].matches if m.how == "text"]
    assert [m.describe() for m in text] == [
        "text · turn 1 (answer): That is a segfault from a NULL pointer."
    ]
    assert all(h.score < 1.0 for h in hits[1:])  # the rest matched by meaning at most


def test_meaning_finds_a_session_without_the_exact_words(dirs: Dirs) -> None:
    encoder = HashingEncoder()
    hits = search_sessions("undo a git commit", dirs, encoder=encoder)
    assert [h.id for h in hits][:1] == ["20260101-090000-aaaa"]
    (why,) = hits[0].matches
    assert why.how == "meaning" and why.who in ("you", "title") and why.turn in (0, 1)
    assert why.similarity is not None and why.similarity >= 0.35
    assert why.describe().startswith(f"meaning {why.similarity:.2f} · ")
    assert "20260103-090000-cccc" not in [h.id for h in hits]  # nothing in common
    # without an encoder, only the words as typed count
    assert search_sessions("undo a git commit", dirs) == []
    assert [h.id for h in search_sessions("GIT COMMIT", dirs)] == ["20260101-090000-aaaa"]


def test_vectors_are_cached_so_a_second_search_encodes_only_the_query(dirs: Dirs) -> None:
    cache = EmbeddingCache(dirs.cache / "session-search")
    first, told_first = HashingEncoder(), list[int]()
    search_sessions(
        "parser", dirs, encoder=first, encoder_name="fake", cache=cache, encoding=told_first.append
    )
    assert "my C parser crashes on empty input" in first.texts
    assert told_first == [4]  # the four user messages; answers are not encoded
    second, told_second = HashingEncoder(), list[int]()
    again = search_sessions(
        "parser",
        dirs,
        encoder=second,
        encoder_name="fake",
        cache=cache,
        encoding=told_second.append,
    )
    assert second.texts == ["parser"] and told_second == []
    assert again[0].id == "20260102-090000-bbbb"


def test_an_empty_query_is_refused() -> None:
    with pytest.raises(SessionError, match="nothing to search for"):
        search_sessions("   ")


@pytest.mark.local
def test_the_real_encoder_matches_by_meaning(dirs: Dirs) -> None:
    from modes_tui.llm.encoders import load_encoder

    encoder = load_encoder("local/all-MiniLM-L6-v2")
    hits = search_sessions("revert a commit in version control", dirs, encoder=encoder)
    assert hits and hits[0].id == "20260101-090000-aaaa"
    hits = search_sessions("job application letter", dirs, encoder=encoder)
    assert hits and hits[0].id == "20260103-090000-cccc"

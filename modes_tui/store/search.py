"""Finding saved sessions by what was said in them (`modes-tui sessions --search TEXT`).

Two ways to match, combined into one ranking:

- **text**: the words as typed, case-insensitive, in the title, the user's messages and
  the answers. Every session with a text match ranks above every session without one.
- **meaning**: the router's local encoder (all-MiniLM-L6-v2 by default) compares the
  query with the title and each user message (the answers are long and cost far more to
  encode; what a user remembers of a session is mostly what they asked). Vectors are
  cached on disk per encoder and text, like the embedding classifier's, so only new
  messages are encoded on the next search.

Each hit says why it matched: the turn, who said it, a snippet, and the similarity.
Searching reads whole logs (unlike the session list); it runs only when asked.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from modes_tui.core.errors import SessionError
from modes_tui.core.paths import Dirs, app_dirs
from modes_tui.core.routing.ports import Encoder
from modes_tui.core.terminal_text import terminal_safe
from modes_tui.store.session_reader import LoadedSession, load_session
from modes_tui.store.sessions import session_ids

if TYPE_CHECKING:
    from modes_tui.core.routing.classifiers.embedding import EmbeddingCache

MIN_SIMILARITY = 0.35
"""Below this cosine similarity a passage does not count as a match by meaning."""
SNIPPET_CHARS = 36
"""Characters shown on each side of a text match."""
TEXT_MATCHES_SHOWN = 3
"""Text matches listed per session (the first ones, in turn order)."""
ENCODED_CHARS = 1000
"""The part of a message the encoder reads (MiniLM reads 256 tokens at most anyway)."""


Who = Literal["title", "you", "answer"]


@dataclass(frozen=True, slots=True)
class Match:
    """One reason a session matched."""

    how: Literal["text", "meaning"]
    """The words as typed, or the meaning (by the encoder)."""
    turn: int
    """The turn it is in (0 for the title)."""
    who: Who
    """Where: the title, the user's message, or the answer."""
    snippet: str
    """The matching part, on one line."""
    similarity: float | None = None
    """For a match by meaning: the cosine similarity."""

    def describe(self) -> str:
        """`text · turn 3 (you): …the snippet…`."""
        where = "title" if self.who == "title" else f"turn {self.turn} ({self.who})"
        how = "text" if self.similarity is None else f"meaning {self.similarity:.2f}"
        return f"{how} · {where}: {self.snippet}"

    def to_dict(self) -> dict[str, Any]:
        """Plain data for `--json`."""
        return {
            "how": self.how,
            "turn": self.turn,
            "who": self.who,
            "snippet": self.snippet,
            "similarity": None if self.similarity is None else round(self.similarity, 4),
        }


@dataclass(frozen=True, slots=True)
class SearchHit:
    """A session that matched, with its score and reasons."""

    id: str
    """The session id."""
    title: str
    """Its title."""
    created: str | None
    """When it started."""
    score: float
    """1 for any text match, plus the best similarity by meaning; higher ranks first."""
    matches: tuple[Match, ...]
    """Why it matched: text matches first, then the closest by meaning."""

    def to_dict(self) -> dict[str, Any]:
        """Plain data for `--json`."""
        return {
            "id": self.id,
            "title": self.title,
            "created": self.created,
            "score": round(self.score, 4),
            "matches": [m.to_dict() for m in self.matches],
        }


@dataclass(frozen=True, slots=True)
class _Passage:
    turn: int
    who: Who
    text: str


def _passages(session: LoadedSession) -> list[_Passage]:
    found = []
    if session.meta.get("title"):  # a generated title only repeats a user message
        found.append(_Passage(0, "title", str(session.meta["title"])))
    for record in session.records:
        kind = record.get("type")
        turn = record.get("turn")
        turn = turn if isinstance(turn, int) else 0
        if kind == "user":
            found.append(_Passage(turn, "you", str(record.get("content") or "")))
        elif kind == "assistant" and not record.get("partial"):
            message = record.get("message")
            if isinstance(message, dict) and message.get("content"):
                found.append(_Passage(turn, "answer", str(message["content"])))
    # a snippet is cut from the text: made safe first, a sequence cannot be cut in two
    found = [_Passage(p.turn, p.who, terminal_safe(p.text)) for p in found]
    return [p for p in found if p.text.strip()]


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _snippet(text: str, start: int, length: int) -> str:
    left = max(0, start - SNIPPET_CHARS)
    right = min(len(text), start + length + SNIPPET_CHARS)
    cut = _one_line(text[left:right])
    return ("…" if left > 0 else "") + cut + ("…" if right < len(text) else "")


def _text_matches(query: str, passages: Sequence[_Passage]) -> list[Match]:
    needle = query.casefold()
    found = []
    for passage in passages:
        at = passage.text.casefold().find(needle)
        if at >= 0:
            found.append(
                Match("text", passage.turn, passage.who, _snippet(passage.text, at, len(query)))
            )
    return found


def search_sessions(
    query: str,
    dirs: Dirs | None = None,
    *,
    encoder: Encoder | None = None,
    encoder_name: str = "",
    cache: EmbeddingCache | None = None,
    limit: int = 20,
    min_similarity: float = MIN_SIMILARITY,
    encoding: Callable[[int], object] | None = None,
) -> list[SearchHit]:
    """Sessions that match `query` by text or (with an encoder) by meaning, best first.

    `encoding(n)` is told, before the encoder runs, how many messages are not cached yet
    (the first search over many sessions takes a while; later ones encode only new ones).
    """
    query = query.strip()
    if not query:
        raise SessionError('nothing to search for: give some words, e.g. --search "git rebase"')
    dirs = dirs or app_dirs()
    sessions: list[tuple[LoadedSession, list[_Passage]]] = []
    for session_id in session_ids(dirs):
        try:
            session = load_session(dirs.sessions / f"{session_id}.jsonl", dirs)
        except SessionError:
            continue  # unreadable right now (deleted meanwhile): nothing to match
        sessions.append((session, _passages(session)))

    similar: dict[str, tuple[float, _Passage]] = {}
    if encoder is not None:
        similar = _closest(query, sessions, encoder, encoder_name, cache, encoding)

    hits = []
    for session, passages in sessions:
        matches = _text_matches(query, passages)[:TEXT_MATCHES_SHOWN]
        score = 1.0 if matches else 0.0
        best = similar.get(session.id)
        if best is not None and best[0] >= min_similarity:
            similarity, passage = best
            score += similarity
            snippet = _one_line(passage.text)
            if len(snippet) > 2 * SNIPPET_CHARS:
                snippet = snippet[: 2 * SNIPPET_CHARS - 1].rstrip() + "…"
            matches.append(Match("meaning", passage.turn, passage.who, snippet, similarity))
        if matches:
            created = session.meta.get("created")
            hits.append(
                SearchHit(
                    session.id,
                    session.title,
                    str(created) if created else None,
                    score,
                    tuple(matches),
                )
            )
    hits.sort(key=lambda hit: (-hit.score, hit.id), reverse=False)
    return hits[:limit]


def _closest(
    query: str,
    sessions: Sequence[tuple[LoadedSession, list[_Passage]]],
    encoder: Encoder,
    encoder_name: str,
    cache: EmbeddingCache | None,
    encoding: Callable[[int], object] | None,
) -> dict[str, tuple[float, _Passage]]:
    """Session id -> its passage closest in meaning to `query`, with the similarity."""
    import numpy as np

    wanted = {
        p.text[:ENCODED_CHARS] for _, passages in sessions for p in passages if p.who != "answer"
    }
    vectors: dict[str, Any] = {}
    if cache is not None and encoder_name:
        vectors.update(cache.load(encoder_name, sorted(wanted)))
    missing = sorted(wanted - vectors.keys())
    if missing:
        if encoding is not None:
            encoding(len(missing))
        encoded = np.asarray(encoder.encode(missing), dtype=np.float32)
        fresh = {text: encoded[i] for i, text in enumerate(missing)}
        vectors.update(fresh)
        if cache is not None and encoder_name:
            cache.store(encoder_name, fresh)
    target = np.asarray(encoder.encode([query]), dtype=np.float32)[0]
    best: dict[str, tuple[float, _Passage]] = {}
    for session, passages in sessions:
        for passage in passages:
            if passage.who == "answer":
                continue
            similarity = float(np.dot(vectors[passage.text[:ENCODED_CHARS]], target))
            if session.id not in best or similarity > best[session.id][0]:
                best[session.id] = (similarity, passage)
    return best

"""Continuity: how close in meaning a message is to the turns it may continue.

The conversation step (`steps.in_conversation`) reads two things of the latest message: its
shape (`follow_up.follow_up_score`: cue words, length, a request of its own) and, when the
classifier can embed (`TurnVectors`: the embedding backend, or a cascade's first stage), its
cosine to the user's recent messages answered in the current mode. "the logs say OOMKilled"
after "why did my container exit?" has no cue word, but it sits on that turn's subject.

Closeness counts from the pack's `unrelated` cosine (what two examples of *different* modes
reach 85% of the time: below it two texts share no subject) and fully from `SIMILAR_FULL`
on, as a chance of at most `SIMILARITY_WEIGHT` that the message continues the turn. A
message that stands alone and routes surely elsewhere ("write an email to the tiler" after
a sum about tiles) keeps only what its self-containedness leaves of that chance
(`follow_up.weigh`), so a self-contained request still moves.

Vectors come from the classifier's query cache: the message was encoded to classify it, and
each earlier turn was encoded when it was routed, so a turn costs no extra encode unless the
history was loaded from disk (then each old turn is encoded once).
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import math
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from modes_tui.core.history.conversation import Message

log = logging.getLogger("modes_tui.routing")

RECENT_TURNS = 3
"""How many of the user's latest messages in the current mode the message is compared with."""
SIMILAR_FULL = 0.5
"""From this cosine on, closeness counts fully."""
SIMILARITY_WEIGHT = 0.8
"""The chance that a message as close as `SIMILAR_FULL` continues the turn, before its
self-containedness is weighed."""


@runtime_checkable
class TurnVectors(Protocol):
    """A classifier that can give the vectors of routed messages (`EmbeddingClassifier`)."""

    def turn_vectors(self, texts: Sequence[str]) -> tuple[list[Any], float] | None:
        """One L2-normalised vector per text and the pack's `unrelated` cosine; None while
        the encoder is not ready."""
        ...


@dataclass(frozen=True, slots=True)
class Continuity:
    """How close in meaning the message is to the recent turns of the current mode."""

    similarity: float
    """The highest cosine between the message and one of those turns."""
    unrelated: float
    """The pack's cosine below which two texts share no subject."""
    turns_back: int = 1
    """Which turn was closest: 1 is the user's last message (0: the last answer)."""

    @property
    def chance(self) -> float:
        """0 (no closer than unrelated texts) .. `SIMILARITY_WEIGHT` (from `SIMILAR_FULL` on)."""
        span = max(SIMILAR_FULL - self.unrelated, 1e-6)
        share = min(max((self.similarity - self.unrelated) / span, 0.0), 1.0)
        return round(SIMILARITY_WEIGHT * share, 4)

    def explain(self) -> str:
        """`continues your last turn (similarity 0.71)`, for a route that stayed."""
        return f"continues {self._turn()} (similarity {self.similarity:.2f})"

    def compared(self) -> str:
        """`similarity 0.12 to your last turn`, for a request that moved."""
        return f"similarity {self.similarity:.2f} to {self._turn()}"

    def _turn(self) -> str:
        if self.turns_back == 0:
            return "the last answer"
        return "your last turn" if self.turns_back == 1 else f"your turn {self.turns_back} back"


def recent_turns(
    transcript: Sequence[Any], current: str | None, limit: int = RECENT_TURNS
) -> list[str]:
    """The user's latest messages answered in `current`, newest first, before the message
    being routed (the transcript's last entry); stops at a turn another mode answered. The
    latest answer counts as `current`'s when it names no mode (the caller said it was)."""
    turns: list[str] = []
    answered_by: str | None = None
    latest = True
    for entry in reversed(transcript[:-1]):
        role, content, mode = _fields(entry)
        if role == "assistant":
            answered_by = mode or (current if latest else None)
            latest = False
            continue
        if role != "user" or not content.strip():
            continue
        if answered_by != current or len(turns) >= limit:
            break
        turns.append(content)
        answered_by = None
    return turns


ANSWER_CHARS = 400
"""How much of the last answer is compared (its start: what it told the user to do)."""


def latest_answer(transcript: Sequence[Any], current: str | None) -> str | None:
    """The start of the last answer, when `current` gave it (None otherwise)."""
    for entry in reversed(transcript[:-1]):
        role, content, mode = _fields(entry)
        if role == "assistant":
            if (mode or current) != current or not content.strip():
                return None
            return content[:ANSWER_CHARS]
    return None


def warm_answer(classifier: object, answer: str) -> None:
    """Encode the start of `answer` now, in a thread of its own (a turn has just ended), so
    the next message's route finds its vector cached instead of encoding it then (about
    10 ms for `ANSWER_CHARS` on 2 cores). Nothing happens when the classifier cannot embed."""
    source = vector_source(classifier)
    excerpt = answer[:ANSWER_CHARS]
    if source is None or not excerpt.strip():
        return

    def warm() -> None:
        try:
            source.turn_vectors([excerpt])
        except Exception as error:  # noqa: BLE001 - the route encodes it then, as before
            log.warning("follow-ups: the last answer was not encoded ahead (%s)", error)
        finally:
            _WARMING.discard(threading.current_thread())

    thread = threading.Thread(target=warm, name="modes-tui-answer-vector", daemon=True)
    _WARMING.add(thread)
    thread.start()


EXIT_WAIT = 10.0
"""Seconds the process waits at exit for answers still being encoded (`_join_warming`)."""
_WARMING: set[threading.Thread] = set()


@atexit.register
def _join_warming() -> None:
    """Wait, at exit, for the answers still being encoded. A session piped in ends right after
    its last answer; a daemon thread still inside the encoder's native code when the
    interpreter finalizes aborted the process ("terminate called without an active
    exception", exit status -6) on a loaded machine."""
    deadline = time.monotonic() + EXIT_WAIT
    for thread in list(_WARMING):
        thread.join(max(0.0, deadline - time.monotonic()))


def _fields(entry: Any) -> tuple[str, str, str | None]:
    if isinstance(entry, Message):
        return entry.role, entry.content, entry.mode
    if isinstance(entry, Mapping):
        content = entry.get("content")
        if isinstance(content, list):  # content parts: the text ones, as the router reads them
            content = "\n".join(
                str(part.get("text", "")) for part in content if isinstance(part, Mapping)
            )
        mode = entry.get("mode")
        text = "" if content is None else str(content)
        return str(entry.get("role", "")), text, str(mode) if mode else None
    return "", "", None  # a plain string: no role, no mode, it cannot be a turn of a mode


def vector_source(classifier: object) -> TurnVectors | None:
    """The classifier, or its first stage (a cascade), when it can embed routed messages."""
    for candidate in (classifier, getattr(classifier, "first", None)):
        if isinstance(candidate, TurnVectors):
            return candidate
    return None


async def measure(
    classifier: object,
    message: str,
    turns: Iterable[str],
    routed: Callable[[str], str] = lambda text: text,
    answer: str | None = None,
) -> Continuity | None:
    """The message's closeness to `turns` (newest first), or None when the classifier cannot
    embed, is not ready, failed to, or there are no turns: the step then reads the shape alone.

    `routed` maps a turn's text to what the router classified of it (the request of a framed
    message), so its vector is the one the classifier cached when it routed that turn.
    """
    source = vector_source(classifier)
    texts = [routed(turn) for turn in turns]
    if source is None or not texts:
        return None
    extra = [answer] if answer else []
    try:
        # Cached vectors come back at once; an old turn loaded from disk is encoded here,
        # off the event loop.
        seen = await asyncio.to_thread(source.turn_vectors, [message, *texts, *extra])
        return None if seen is None else _closest(seen, len(texts), answered=bool(extra))
    except Exception as error:  # noqa: BLE001 - extra evidence: without it, the shape decides
        log.warning(
            "follow-ups: closeness to the recent turns not measured (%s: %s); the message's "
            "shape decides this turn",
            type(error).__name__,
            error,
        )
        return None


def _closest(seen: tuple[list[Any], float], turns: int, *, answered: bool = False) -> Continuity:
    """The closest turn from (message vector, turn vectors..., [answer vector]; unrelated
    cosine)."""
    vectors, unrelated = seen
    expected = turns + int(answered)
    if len(vectors) != expected + 1:
        raise ValueError(f"turn_vectors gave {len(vectors)} vectors for {expected + 1} texts")
    query = np.asarray(vectors[0], dtype=np.float32)
    cosines = [float(np.asarray(v, dtype=np.float32) @ query) for v in vectors[1:]]
    best = max(range(len(cosines)), key=cosines.__getitem__)
    similarity = cosines[best]
    if not (math.isfinite(similarity) and math.isfinite(unrelated)):
        raise ValueError(f"turn_vectors gave a cosine of {similarity} (unrelated {unrelated})")
    return Continuity(round(similarity, 4), float(unrelated), (best + 1) % (turns + 1))

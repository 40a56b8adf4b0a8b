"""`router.yaml`: how a pack's router decides, read and checked.

`read_router` fills a `RouterConfig` from the file's mapping, noting every problem on the
pack's `FieldReader`; the pack reader (`profiles.py`) calls it once the modes are known,
because the fallback must name one of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from modes_tui.core.errors import cut_repr
from modes_tui.core.packs.fields import FieldReader, HistoryWindow
from modes_tui.core.values.doubt import ASK_BELOW, ASK_MARGIN

CLASSIFIERS = ("keyword", "embedding", "chat", "judge", "cascade")
ROUTER_KEYS = frozenset(
    {
        "classifier",
        "model",
        "encoder",
        "fallback",
        "below_confidence",
        "history",
        "truncate",
        "sticky",
        "instructions",
        "cascade",
        "tools",
        "ask_below",
        "ask_margin",
    }
)
CASCADE_KEYS = frozenset({"first", "then", "below"})


@dataclass(frozen=True, slots=True)
class CascadeConfig:
    """A cheap classifier first, a stronger one only when the first is unsure."""

    first: str
    """The cheap backend."""
    then: str
    """The backend asked when the first one's confidence is below `below`."""
    below: float
    """The first backend's own threshold."""


@dataclass(frozen=True, slots=True)
class RouterConfig:
    """`router.yaml`: how the router decides."""

    classifier: str = "embedding"
    """keyword | embedding | chat | judge | cascade | python:pkg.mod:obj"""
    model: str = "default"
    """The model for the chat and judge backends."""
    encoder: str = "local/all-MiniLM-L6-v2"
    """The encoder for the embedding backend (local, or any litellm embedding model)."""
    fallback: str = ""
    """The mode used whenever the classifier is ignored."""
    below_confidence: float | None = None
    """Route to the fallback below this confidence; None accepts any confidence."""
    history: HistoryWindow = field(default_factory=lambda: HistoryWindow(6))
    """What the classifier sees of the history."""
    truncate_message: int | None = 30_000
    """Cap in characters on the routed message (head and tail kept)."""
    truncate_history_entry: int | None = 2_000
    """Cap in characters on each history entry (head kept)."""
    sticky: float = 0.0
    """Keep the current mode unless another beats it by this margin."""
    instructions: str = ""
    """Routing guidance (trusted text) given to every backend."""
    cascade: CascadeConfig | None = None
    """The two stages of the cascade backend."""
    ask_below: float | None = ASK_BELOW
    """A route whose confidence is below this is unsure (the app asks; null: never)."""
    ask_margin: float | None = ASK_MARGIN
    """A route whose runner-up is this close to its pick is unsure (null: never)."""


def read_router(
    reader: FieldReader, file: Path, data: Mapping[str, Any], modes: Mapping[str, str]
) -> RouterConfig:
    """The router configuration in `data`; `modes` maps each mode name to its auto_enter."""
    reader.unknown_keys(file, data, ROUTER_KEYS)
    names = list(modes)
    classifier = data.get("classifier", "embedding")
    if not isinstance(classifier, str) or not (
        classifier in CLASSIFIERS or classifier.startswith("python:")
    ):
        reader.problem(
            file,
            "classifier",
            f"{cut_repr(classifier)} is not one of {', '.join(CLASSIFIERS)} or python:pkg.module:object",
        )
        classifier = "keyword"
    fallback = data.get("fallback")
    if fallback is None:
        reader.problem(
            file,
            "fallback",
            f"missing; name the mode that takes unsure turns (one of {', '.join(names)})",
        )
        fallback = ""
    elif fallback not in names:
        reader.problem(
            file,
            "fallback",
            f"{cut_repr(fallback)} is not a mode of this pack; modes: {', '.join(names)}",
        )
    elif modes[fallback] != "allow":
        reader.problem(
            file,
            "fallback",
            f"{cut_repr(fallback)} has auto_enter other than allow, but the fallback must take "
            "unsure turns without asking; pick another fallback or allow it",
        )
    truncate = data.get("truncate", {})
    message_cap: int | None = 30_000
    entry_cap: int | None = 2_000
    if not isinstance(truncate, dict) or not set(truncate) <= {"message", "history_entry"}:
        reader.problem(
            file, "truncate", "must be {message: N, history_entry: N} (null disables a cap)"
        )
    else:
        message_cap = reader.cap(file, truncate, "message", 30_000, "truncate.message")
        entry_cap = reader.cap(file, truncate, "history_entry", 2_000, "truncate.history_entry")
    cascade = None
    if classifier == "cascade" or "cascade" in data:
        cascade = _cascade(reader, file, data.get("cascade"))
    instructions = data.get("instructions", "")
    if not isinstance(instructions, str):
        reader.problem(file, "instructions", "must be text")
        instructions = ""
    model = data.get("model", "default")
    encoder = data.get("encoder", "local/all-MiniLM-L6-v2")
    for key, value in (("model", model), ("encoder", encoder)):
        if not isinstance(value, str) or not value.strip():
            reader.problem(file, key, "must be a model id")
    return RouterConfig(
        classifier=classifier,
        model=str(model),
        encoder=str(encoder),
        fallback=str(fallback),
        below_confidence=reader.fraction(file, data, "below_confidence", None),
        history=reader.history(file, data.get("history", {"last": 6}), "history"),
        truncate_message=message_cap,
        truncate_history_entry=entry_cap,
        sticky=reader.fraction(file, data, "sticky", 0.0) or 0.0,
        instructions=" ".join(instructions.split()),
        cascade=cascade,
        ask_below=reader.fraction(file, data, "ask_below", ASK_BELOW),
        ask_margin=reader.fraction(file, data, "ask_margin", ASK_MARGIN),
    )


def _cascade(reader: FieldReader, file: Path, value: Any) -> CascadeConfig | None:
    if not isinstance(value, dict):
        reader.problem(
            file,
            "cascade",
            "the cascade classifier needs cascade: {first: NAME, then: NAME, below: 0..1}",
        )
        return None
    reader.unknown_keys(file, value, CASCADE_KEYS)
    stages = []
    for key in ("first", "then"):
        stage = value.get(key)
        if stage not in CLASSIFIERS or stage == "cascade":
            reader.problem(
                file,
                f"cascade.{key}",
                f"{cut_repr(stage)} must be one of keyword, embedding, chat, judge",
            )
            stage = "keyword"
        stages.append(str(stage))
    below = reader.fraction(file, value, "below", 0.5)
    return CascadeConfig(first=stages[0], then=stages[1], below=below if below is not None else 0.5)

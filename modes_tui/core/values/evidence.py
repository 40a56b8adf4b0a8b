"""What decided a route: the nearest example, correction or description (`Evidence`).

The embedding backend names it in the decision's reason ("like your correction 'clean the
build folder' -> shell") and carries it on the `Decision`, so the panel, the inspector and
`route --explain` can show it without parsing the reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

EvidenceKind = Literal["example", "correction", "description"]
QUOTE_LIMIT = 60


@dataclass(frozen=True, slots=True)
class Evidence:
    """The text nearest to the message among what the chosen mode was fitted on."""

    kind: EvidenceKind
    """`example` (the pack's), `correction` (the user's) or `description` (the mode's)."""
    text: str
    """The example's or correction's text, or the description."""
    mode: str
    """The mode it belongs to."""
    similarity: float
    """Its cosine to the message."""
    note: str | None = None
    """For a correction, when it was made (`correction of <date>`)."""

    def describe(self) -> str:
        """The reason's words: `like your correction 'x' -> shell`, `like the example 'x'`."""
        if self.kind == "correction":
            return f"like your correction {quote(self.text)} -> {self.mode}"
        if self.kind == "description":
            return f"like the description of {self.mode}"
        return f"like the example {quote(self.text)}"

    def to_dict(self) -> dict[str, Any]:
        """String keys, for logs and `--json`."""
        return {
            "kind": self.kind,
            "text": self.text,
            "mode": self.mode,
            "similarity": round(self.similarity, 4),
            "note": self.note,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Evidence | None:
        """The inverse of `to_dict`; None for data that is not an evidence record."""
        kind = data.get("kind")
        if kind not in ("example", "correction", "description"):
            return None
        similarity = data.get("similarity")
        return cls(
            kind,
            str(data.get("text") or ""),
            str(data.get("mode") or ""),
            float(similarity) if isinstance(similarity, (int, float)) else 0.0,
            data.get("note") if isinstance(data.get("note"), str) else None,
        )


def quote(text: str) -> str:
    """A text on one line, cut at `QUOTE_LIMIT` characters, in single quotes."""
    flat = " ".join(text.split())
    if len(flat) > QUOTE_LIMIT:
        flat = flat[: QUOTE_LIMIT - 1] + "…"
    return f"'{flat}'"

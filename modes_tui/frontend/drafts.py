"""The message being typed, prepared for its route (`TurnEngine.prepare`) by the app and the
REPL alike: after a pause in typing, its text goes to the engine in a thread, which encodes
what the route will read; the route after Enter then finds the vectors cached instead of
encoding them on a CPU that idled while the user typed (see `bench/framing.py --idle`)."""

from __future__ import annotations

DRAFT_PAUSE = 0.15
"""Seconds without an edit after which the text typed is prepared for its route."""


def routed_draft(text: str) -> bool:
    """Whether `text`, sent as it is, would be routed: not blank and not a command (a `/…`
    line is a command or a one-shot `/MODE text`, which no router reads)."""
    return bool(text.strip()) and not text.lstrip().startswith("/")

"""The message being typed, prepared for its route (`TurnEngine.prepare`) by the app and the
REPL alike: after a pause in typing, its text goes to the engine in a thread, which encodes
what the route will read; the route after Enter then finds the vectors cached instead of
encoding them on a CPU that idled while the user typed (see `bench/framing.py --idle`).
Text that arrives whole (a paste, a line recalled from history, a completion) is prepared at
once: no more keys are coming, and Enter may follow within the pause."""

from __future__ import annotations

from modes_tui.frontend.commands import is_command, message_text

DRAFT_PAUSE = 0.15
"""Seconds without an edit after which the text typed is prepared for its route."""


def routed_text(text: str) -> str | None:
    """What the line typed so far would send to the router: None for a blank line or a
    command (a `/…` line is a command or a one-shot `/MODE text`, which no router reads),
    else the message (`//x` sends `/x`)."""
    if not text.strip() or is_command(text):
        return None
    return message_text(text)


def arrived_whole(before: str, after: str) -> bool:
    """Whether an edit from `before` to `after` added more than one character at once (a
    paste, a recalled line, a completion): the text need not wait for a pause in typing. For
    the REPL, where prompt-toolkit applies typed keys one at a time; the app flags a paste
    where it arrives, since a burst of keys reaches it as one change."""
    return len(after) - len(before) > 1

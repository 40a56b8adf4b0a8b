"""What a typed line is: a message, a one-shot `/MODE text`, or a command.

A line that starts with `/` is a command; `//text` sends `/text` as a message; `/MODE text`
(e.g. `/code why is this slow`) sends that one message to MODE and forces nothing for what
follows (commands win over a mode of the same name). Both front ends read a line here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from modes_tui.frontend.commands import (
    Surface,
    find_command,
    is_command,
    message_text,
    mode_settings,
    one_shot,
)

__all__ = ["Send", "Typed", "read_line"]


@dataclass(frozen=True, slots=True)
class Send:
    """A message to answer; `force` is the mode of this one message (`/MODE text`)."""

    text: str
    force: str | None = None


@dataclass(frozen=True, slots=True)
class Typed:
    """A command line as typed, not checked yet."""

    typed: str
    """The first word as typed (`/EXIT`), for an error that quotes it."""
    name: str
    """The command it names (an alias resolved), or `typed` when none."""
    argument: str
    """The rest of the line, stripped."""


def read_line(line: str, modes: Sequence[str], surface: Surface) -> Send | Typed:
    """Read one typed line; `modes` are the pack's mode names. Raises CommandError for
    `/MODE` without a message (forcing by accident would last)."""
    if not is_command(line):
        return Send(message_text(line))
    shot = one_shot(line, mode_settings(modes))
    if shot is not None:
        return Send(shot.text, shot.mode)
    typed, _, argument = line.strip().partition(" ")
    found = find_command(typed, surface)
    return Typed(typed, found.name if found is not None else typed, argument.strip())

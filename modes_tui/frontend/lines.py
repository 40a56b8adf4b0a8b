"""What a typed line is: a message, a one-shot `/MODE text`, or a checked command.

A line that starts with `/` is a command; `//text` sends `/text` as a message; `/MODE text`
(e.g. `/code why is this slow`) sends that one message to MODE and forces nothing for what
follows (commands win over a mode of the same name). Both front ends read every line here,
once: the name is resolved (aliases too) and the argument checked in that front end's words
(`commands.check_argument`), so a handler only ever sees a command that can run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from modes_tui.core.control_setting import AUTO, OFF
from modes_tui.frontend.commands import (
    Command,
    CommandError,
    OneShot,
    Surface,
    check_argument,
    find_command,
    is_command,
    message_text,
    mode_settings,
    one_shot,
    unknown_command,
)

__all__ = ["Read", "Send", "read_line"]


@dataclass(frozen=True, slots=True)
class Send:
    """A message to answer as it is (the router picks its mode)."""

    text: str
    """What to send (`//x` already made `/x`)."""

    @property
    def force(self) -> None:
        """No mode is named for a plain message (a `OneShot` names one)."""
        return None


Read = Send | OneShot | Command
"""A line read: a message, a one-shot (`.text` and `.force` for both), or a checked command."""


def read_line(line: str, modes: Sequence[str], surface: Surface = "app") -> Read:
    """Read one typed line on `surface`; `modes` are the mode names it may name (auto and
    off may be among them: they are `/mode`'s settings either way).

    Raises CommandError, in the words of `surface`, for an unknown command (kind "unknown"),
    a bad argument, or `/MODE` without a message (forcing by accident would last).
    """
    if not is_command(line):
        return Send(message_text(line))
    settings = mode_settings([m for m in modes if m not in (AUTO, OFF)])
    shot = one_shot(line, settings)
    if shot is not None:
        return shot
    typed, _, argument = line.strip().partition(" ")
    found = find_command(typed.lower(), surface)
    if found is None:
        raise CommandError(unknown_command(typed, surface, settings), kind="unknown")
    return Command(found.name, check_argument(found.name, argument.strip(), settings, surface))

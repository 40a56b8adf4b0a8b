"""Carrying out a command: the front end's handler for each name of the command table.

Each front end keeps one mapping from a command's name (`frontend.commands.COMMANDS`) to a
handler that takes the argument; `dispatch` finds the handler, `missing_handlers` names the
commands of a surface that have none (a test keeps it empty). Adding a command is one
`CommandSpec` in the table and one handler per front end that offers it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TypeVar

from modes_tui.frontend.commands import Surface, commands_for

__all__ = ["Handler", "dispatch", "missing_handlers"]

T = TypeVar("T")

Handler = Callable[[str], Awaitable[T]]
"""Does one command with its argument (stripped; "" when none)."""


async def dispatch(
    name: str, argument: str, handlers: Mapping[str, Handler[T]], unknown: Handler[T]
) -> T:
    """Run the handler of command `name` (already resolved from an alias), or `unknown`."""
    handler = handlers.get(name)
    if handler is None:
        return await unknown(name)
    return await handler(argument)


def missing_handlers(surface: Surface, handlers: Mapping[str, object]) -> list[str]:
    """The commands `surface` offers that `handlers` cannot carry out."""
    return [spec.name for spec in commands_for(surface) if spec.name not in handlers]

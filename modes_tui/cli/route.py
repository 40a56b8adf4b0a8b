"""`modes-tui route TEXT`: which mode would take a message (a dry run, no answer)."""

from __future__ import annotations

import argparse
import asyncio

from modes_tui.cli.common import (
    EXIT_FAILURE,
    EXIT_OK,
    read_stdin,
    runtime_for,
    say,
    say_err,
    say_json,
    terminal_safe,
)
from modes_tui.core.errors import ModesError


def cmd_route(args: argparse.Namespace) -> int:
    """Dry run: which mode would take this message. No answer is generated."""
    from modes_tui.core.history.conversation import Message
    from modes_tui.route_format import explain_lines, verb_text
    from modes_tui.runtime.local_parts import check_for_routes

    runtime = runtime_for(args)
    check_for_routes(runtime)
    text = " ".join(args.text)
    if text == "-":
        text = read_stdin()
    if not text.strip():
        raise ModesError(
            'nothing to route: give a message, e.g. modes-tui route "why does my build fail"'
        )
    route = asyncio.run(runtime.router().route([Message("user", text)]))
    if args.json:
        say_json(route.to_dict())
    else:
        say(verb_text(route))  # the reason may be a routing model's words
        if getattr(args, "explain", False):
            say(terminal_safe("\n".join(explain_lines(route))))
    if route.error is not None:
        # the fallback printed above is what the app would do; a script must still see
        # that the classifier it asked for did not decide
        used = route.classifier.with_ if route.classifier is not None else "routing"
        say_err(
            terminal_safe(f"modes-tui: the {used} classifier failed: {route.reason}"),
        )
        return EXIT_FAILURE
    return EXIT_OK

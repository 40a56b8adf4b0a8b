"""`modes-tui route TEXT`: which mode would take a message (a dry run, no answer)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING

from modes_tui.cli.common import (
    EXIT_FAILURE,
    EXIT_OK,
    read_stdin,
    runtime_for,
    say,
    say_json,
    terminal_safe,
)
from modes_tui.core.errors import ModesError

if TYPE_CHECKING:
    from modes_tui.core.routing import Route


def format_route(route: Route) -> str:
    """One human line (plus detail lines) for a route."""
    confidence = "n/a" if route.confidence is None else f"{route.confidence:.2f}"
    marks = []
    if route.forced:
        marks.append("forced")
    if route.sticky:
        marks.append("sticky")
    mark = f" [{', '.join(marks)}]" if marks else ""
    duration = "" if route.duration_ms is None else f" in {route.duration_ms:.1f} ms"
    lines = [f"{route.mode_name}  (by {route.decided_by}, confidence {confidence}{duration}){mark}"]
    if route.reason:
        lines.append(f"  reason: {route.reason}")
    if route.decision is not None and route.decision.probabilities:
        ranked = route.decision.ranked()
        lines.append("  " + "  ".join(f"{name} {p:.2f}" for name, p in ranked))
    if route.classifier is not None:
        model = f" ({route.classifier.model})" if route.classifier.model else ""
        lines.append(f"  classifier: {route.classifier.with_}{model}")
    return "\n".join(lines)


def cmd_route(args: argparse.Namespace) -> int:
    """Dry run: which mode would take this message. No answer is generated."""
    from modes_tui.core.conversation import Message

    runtime = runtime_for(args)
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
        say(format_route(route))  # the reason may be a routing model's words
    if route.error is not None:
        # the fallback printed above is what the app would do; a script must still see
        # that the classifier it asked for did not decide
        used = route.classifier.with_ if route.classifier is not None else "routing"
        print(
            terminal_safe(f"modes-tui: the {used} classifier failed: {route.reason}"),
            file=sys.stderr,
        )
        return EXIT_FAILURE
    return EXIT_OK

"""Rich renderables for routes, tool calls and turn states: how a value looks on screen.

Kept apart from the widgets so the panel, the replay screen and the inspector draw a
route the same way, and so the looks can be tested without an app.
"""

from __future__ import annotations

from bisect import bisect_right
from datetime import datetime, tzinfo
from itertools import accumulate
from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.console import Group, RenderableType
from rich.text import Text

from modes_tui.route_format import (
    CALLER_MARKS,
    confidence_words,
    duration,
    error_lines,
    marks,
    panel_lines,
    strip_line,
)

if TYPE_CHECKING:
    from modes_tui.core.history.events import TurnCorrected
    from modes_tui.core.history.transcript import Reroute, ToolActivity, TurnTranscript
    from modes_tui.core.values.route import Route

CARD_LINES = 6
"""Output lines a tool card shows in the chat (the inspector shows all)."""

OUTCOME_STYLE = {
    "ok": "green",
    "answered": "cyan",
    "error": "red",
    "blocked": "red",
    "cancelled": "yellow",
}


def plural(count: int, word: str, words: str | None = None) -> str:
    """`1 turn`, `2 turns`, `0 turns`."""
    return f"{count} {word if count == 1 else (words or word + 's')}"


def tool_outcome(activity: ToolActivity) -> str:
    """What became of a tool call, in the user's words: a command that ran but failed
    (a non-zero exit code, a timeout) is a failure even though the tool itself worked."""
    outcome = activity.outcome or ""
    if outcome != "ok":
        return outcome
    from modes_tui.frontend.tool_text import tool_result  # with the first tool call

    result = tool_result(outcome, activity.result)
    return result.status if result.failed else outcome


def format_time(at: str, tz: tzinfo | None = None) -> str:
    """`HH:MM:SS` of an ISO timestamp in `tz` (default: local time); '' if unreadable."""
    try:
        moment = datetime.fromisoformat(at)
    except ValueError:
        return ""
    return moment.astimezone(tz).strftime("%H:%M:%S")


CARD_RULE_WIDTH = 46


def unrouted_words(record: TurnTranscript) -> str:
    """What a turn with no route says: still routing, or never routed (it failed or was
    cancelled before the router decided: a start-up that failed, Esc while routing)."""
    return "routing…" if record.status == "routing" else "not routed"


def route_card(
    record: TurnTranscript,
    route: Route | None = None,
    *,
    attempt: int = 1,
    tz: tzinfo | None = None,
) -> RenderableType:
    """Everything about one decision (default: the turn's latest), for the route panel."""
    route = route if route is not None else record.route
    reroute = record.reroute
    head = Text(f"#{record.number}", style="dim")
    if attempt > 1:
        head.append(f" (retry {attempt - 1})", style="dim")
    head.append(" ")
    if route is None:
        head.append(unrouted_words(record), style="italic")
        return head
    head.append(route.mode_name, style="bold")
    if record.setting == "off":
        head.append(" (modes off)", style="dim")
    for mark in marks(route):
        style = "magenta" if mark in CALLER_MARKS else "red" if mark == "error" else "yellow"
        head.append(f" {mark}", style=f"reverse {style}")
    if record.superseded_by is not None:
        head.append(f" edited → #{record.superseded_by}", style="dim italic")
    when = format_time(route.at, tz)
    if when:
        gap = CARD_RULE_WIDTH - len(head.plain) - len(when)
        head.append(" " * gap if gap > 0 else " ")
        head.append(when, style="dim")
    lines: list[Text] = [head]
    lines.extend(panel_lines(route))
    if record.model:
        role = f" ({record.role} role)" if record.role else ""
        lines.append(Text(f"  answered by {record.model}{role}", style="dim"))
    for note in (*record.warnings, *record.notes):
        lines.append(Text(f"  ! {note}", style="yellow"))
    lines.extend(_correction_marks(record, route))
    lines.extend(error_lines(route))
    if reroute is not None:
        lines.append(reroute_line(reroute, route))
    body = [piece for line in lines[1:] for piece in hanging(line, CARD_RULE_WIDTH)]
    body.append(Text("─" * CARD_RULE_WIDTH, style="grey23"))
    # One Text, not a Group: a long session has a card per turn, and one Text renders fast.
    return Text("\n").join([head, *body])


def hanging(line: Text, width: int) -> list[Text]:
    """`line` wrapped at spaces into lines of at most `width` cells, each continuation
    indented two past the line's own indent, so a long `  reason: ...` reads as one block
    instead of running back to the card's edge (styles kept; wide characters count two
    cells; a word longer than a line is cut). A line with a line break is left to the
    screen."""
    plain = line.plain
    if "\n" in plain or cell_len(plain) <= width:
        return [line]
    lead = len(plain) - len(plain.lstrip(" "))
    indent = " " * (lead + 2)
    ends = list(accumulate(map(cell_len, plain), initial=0))  # cells before each character
    pieces: list[Text] = []
    start, room = 0, width
    while ends[-1] - ends[start] > room:
        fits = bisect_right(ends, ends[start] + room) - 1  # characters start..fits-1 fit
        # never at the line's own indent: the first break is after its first word
        cut = plain.rfind(" ", max(start, lead) + 1, fits + 1)
        after = cut + 1
        if cut <= start:  # no space to break at: cut the word
            cut = after = max(fits, start + 1)
        pieces.append(line[start:cut])
        start, room = after, max(1, width - len(indent))
    pieces.append(line[start:])
    return [pieces[0], *(Text(indent).append_text(piece) for piece in pieces[1:])]


UNDO_HINT = "/wrong undo forgets it"


def correction_line(
    event: TurnCorrected, number: int, indent: str = "", *, undone: bool = False
) -> Text:
    """`↺ counts as a correction of turn 3: chat → shell · /wrong undo forgets it`."""
    which = "this turn" if event.turn == number else f"turn {event.turn}"
    text = Text(f"{indent}↺ ", style="magenta")
    if event.rerun:
        text.append(f"{which} corrected: {event.answered_mode or 'no mode'} → ")
    elif event.turn == number:
        text.append(f"correction recorded: {event.answered_mode or 'no mode'} → ")
    else:
        text.append(f"counts as a correction of {which}: {event.answered_mode or 'no mode'} → ")
    text.append(event.corrected_mode, style="bold")
    if event.correction is not None:
        text.append(" · undone" if undone else f" · {UNDO_HINT}", style="dim")
    if event.note:
        text.append(f"\n{indent}  ! {event.note}", style="yellow")
    return text


def _correction_marks(record: TurnTranscript, route: Route) -> list[Text]:
    """On a decision the user corrected: to what. On the decision a correction came with
    (a re-run, a forced resend, a correction of an earlier turn): what it recorded."""
    lines = [
        Text(f"  ✗ {old.title}", style="magenta") for old in record.superseded if old.route is route
    ]
    if route is record.route:
        lines += [
            correction_line(c, record.number, indent="  ", undone=_undone(record, c))
            for c in record.corrections
        ]
    return lines


def _undone(record: TurnTranscript, event: TurnCorrected) -> bool:
    return event.correction is not None and event.correction.id in record.undone


def reroute_line(reroute: Reroute, recorded: Route | None, indent: str = "  ") -> Text:
    """Replay: how today's router decides the recorded turn."""
    if reroute.route is None:
        return Text(f"{indent}re-route: {reroute.note or 'failed'}", style="red")
    new = reroute.route
    confidence = f" {confidence_words(new)}" if new.confidence is not None else ""
    note = f" · {reroute.note}" if reroute.note else ""
    if reroute.differs:
        was = recorded.mode_name if recorded is not None else "no mode"
        return Text(
            f"{indent}re-route: {new.mode_name}{confidence} (was {was}) ≠{note}",
            style="bold yellow",
        )
    return Text(f"{indent}re-route: {new.mode_name}{confidence} (same) ={note}", style="green")


def tool_summary(activity: ToolActivity, limit: int | None = CARD_LINES) -> RenderableType:
    """A tool call as a person would write it (`$ ls -la`, `read_file a.py`) with, once
    resolved, its outcome and the output's lines: the first `limit` of them and
    "… N more lines" (None: all of them, for the inspector)."""
    # loads with the first tool card, not on the way to the first frame
    from modes_tui.frontend.tool_text import fold, tool_result, tool_title

    head = Text("⚙ ", style="cyan")
    head.append(tool_title(activity.call.name, activity.call.arguments), style="bold cyan")
    if activity.outcome is None:
        head.append(
            "  waiting for confirmation…" if activity.needs_confirmation else "  running…",
            style="italic dim",
        )
        return head
    result = tool_result(activity.outcome, activity.result)
    style = "red" if result.failed else OUTCOME_STYLE.get(activity.outcome, "")
    head.append(f"  {result.status}", style=style)
    if activity.duration_ms:
        head.append(f" · {duration(activity.duration_ms)}", style="dim")
    # `core.edits` too
    from modes_tui.core.edits.editor import EDIT_TOOL_NAMES

    if activity.call.name in EDIT_TOOL_NAMES and activity.outcome == "ok":
        # the change it made: its summary line, then the diff, coloured (live and in replay)
        summary, _, diff = activity.result.partition("\n")
        diff_limit = DIFF_PREVIEW_LINES if limit is not None else len(activity.result)
        return Group(head, Text(summary, style="bold"), diff_text(diff, diff_limit))
    lines = result.lines
    if not lines:
        head.append(" · no output", style="dim")
        return head
    if limit is None:
        return Group(head, Text("\n".join(lines)))
    folded = fold(lines, limit)
    body = Text("\n".join(folded.lines))
    if folded.hidden:
        body.append(f"\n{folded.note} (the inspector shows all)", style="dim italic")
    return Group(head, body)


DIFF_STYLES = {
    "file": "bold",
    "hunk": "cyan",
    "add": "green",
    "remove": "red",
    "context": "",
    "note": "dim italic",
}
"""How each kind of diff line is coloured."""
DIFF_PREVIEW_LINES = 40
"""Diff lines shown under a finished edit in the chat (the inspector shows all)."""


def diff_text(diff: str, limit: int) -> Text:
    """A unified diff (already terminal-safe: `core.edits.diffs`) coloured by line kind,
    at most `limit` lines."""
    from modes_tui.core.edits.diffs import diff_lines

    text = Text()
    lines = diff_lines(diff)
    for line in lines[:limit]:
        text.append(line.text + "\n", style=DIFF_STYLES[line.kind])
    if len(lines) > limit:
        text.append(f"… {len(lines) - limit} more lines\n", style="dim")
    text.rstrip()
    return text


def turn_plain_text(record: TurnTranscript) -> Text:
    """A finished turn as one cheap block of text (older turns before they load)."""
    text = Text()
    text.append("you  ", style="bold")
    text.append(record.user_text)
    text.append("\n")
    if record.route is not None:
        text.append_text(strip_line(record.route, record.mode))
        text.append("\n")
    if record.reroute is not None:
        text.append_text(reroute_line(record.reroute, record.route, indent=""))
        text.append("\n")
    text.append(record.answer or "(no answer)", style="" if record.answer else "dim")
    if record.tools:
        text.append(f"\n⚙ {plural(len(record.tools), 'tool call')}", style="dim cyan")
    return text

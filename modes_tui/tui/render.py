"""Rich renderables for routes, tool calls and turn states: how a value looks on screen.

Kept apart from the widgets so the panel, the replay screen and the inspector draw a
route the same way, and so the looks can be tested without an app.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime, tzinfo
from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text

from modes_tui.core.events import TurnCorrected
from modes_tui.core.routing import Route
from modes_tui.core.terminal_text import terminal_safe
from modes_tui.tui.turns import Reroute, ToolActivity, TurnRecord

BAR_WIDTH = 14
RAW_OUTPUT_LIMIT = 400
RESULT_PREVIEW_LIMIT = 400
RESULT_PREVIEW_LINES = 4

DECIDED_BY_STYLE = {"caller": "bold magenta", "classifier": "green", "fallback": "yellow"}
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
    try:
        result = json.loads(activity.result)
    except (TypeError, ValueError):
        return outcome
    if not isinstance(result, dict):
        return outcome
    if result.get("timed_out"):
        return "failed: timed out"
    code = result.get("exit_code")
    if isinstance(code, int) and not isinstance(code, bool) and code != 0:
        return f"failed: exit code {code}"
    return outcome


def format_time(at: str, tz: tzinfo | None = None) -> str:
    """`HH:MM:SS` of an ISO timestamp in `tz` (default: local time); '' if unreadable."""
    try:
        moment = datetime.fromisoformat(at)
    except ValueError:
        return ""
    return moment.astimezone(tz).strftime("%H:%M:%S")


def format_ms(value: float | None) -> str:
    """A duration for people: `0.4 ms`, `120 ms`, `2.3 s`."""
    if value is None:
        return ""
    if value < 10:
        return f"{value:.1f} ms"
    if value < 1000:
        return f"{value:.0f} ms"
    return f"{value / 1000:.1f} s"


def bar(fraction: float, width: int = BAR_WIDTH) -> Text:
    """A horizontal bar for a probability."""
    filled = round(max(0.0, min(1.0, fraction)) * width)
    text = Text("█" * filled, style="cyan")
    text.append("░" * (width - filled), style="grey35")
    return text


def marks(route: Route) -> list[str]:
    """Short marks: forced, sticky, fallback, error."""
    found = []
    if route.forced:
        found.append("forced")
    if route.sticky:
        found.append("sticky")
    if route.decided_by == "fallback":
        found.append("fallback")
    if route.error is not None:
        found.append("error")
    return found


def route_headline(route: Route, mode: str | None = None) -> Text:
    """`code · classifier 0.82 · 3.1 ms`: the one-line summary under a user message."""
    text = Text()
    shown = mode if mode is not None else route.mode_name
    text.append("→ ", style="dim")
    text.append(shown or "no mode", style="bold")
    text.append(" · ", style="dim")
    text.append(f"by {route.decided_by}", style=DECIDED_BY_STYLE.get(route.decided_by, ""))
    if route.confidence is not None:
        text.append(f" {route.confidence:.2f}")
    if route.duration_ms is not None:
        text.append(f" · {format_ms(route.duration_ms)}", style="dim")
    for mark in marks(route):
        if mark != "fallback":
            text.append(f" [{mark}]", style="magenta" if mark == "forced" else "yellow")
    if route.reason:
        text.append(f" · {route.reason}", style="dim italic")
    return text


def probability_lines(route: Route) -> list[Text]:
    """A bar per mode probability, highest first; modes at zero share one line."""
    if route.decision is None:
        return []
    ranked = route.decision.ranked()
    if not ranked:
        return []
    shown = [(name, p) for name, p in ranked if p > 0]
    zero = [name for name, p in ranked if p <= 0]
    width = max(len(name) for name, _ in shown) if shown else 0
    lines = []
    for name, probability in shown:
        line = Text(f"  {name:<{width}} ", style="bold" if name == route.mode_name else "")
        line.append_text(bar(probability))
        line.append(f" {probability:.2f}")
        lines.append(line)
    if zero:
        lines.append(Text(f"  0.00: {', '.join(zero)}", style="dim"))
    return lines


def error_lines(route: Route) -> list[Text]:
    """The routing error, with the raw model output for parse errors."""
    if route.error is None:
        return []
    error = route.error
    name = getattr(error, "type_name", None) or type(error).__name__
    lines = [Text(terminal_safe(f"  ⚠ {name}: {error}"), style="red")]
    stage = getattr(error, "stage", None) or getattr(error, "extra", {}).get("stage")
    raw = getattr(error, "raw_output", None) or getattr(error, "extra", {}).get("raw_output")
    if stage:
        lines.append(Text(f"    stage: {stage}", style="red"))
    if raw:
        shown = raw if len(raw) <= RAW_OUTPUT_LIMIT else raw[:RAW_OUTPUT_LIMIT] + "…"
        lines.append(Text(terminal_safe(f"    raw: {shown}"), style="dim red"))
    return lines


CARD_RULE_WIDTH = 46


def route_card(
    record: TurnRecord,
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
        head.append("routing…", style="italic")
        return head
    head.append(route.mode_name, style="bold")
    if record.setting == "off":
        head.append(" (modes off)", style="dim")
    for mark in marks(route):
        style = "magenta" if mark == "forced" else "red" if mark == "error" else "yellow"
        head.append(f" {mark}", style=f"reverse {style}")
    if record.superseded_by is not None:
        head.append(f" edited → #{record.superseded_by}", style="dim italic")
    when = format_time(route.at, tz)
    if when:
        gap = CARD_RULE_WIDTH - len(head.plain) - len(when)
        head.append(" " * gap if gap > 0 else " ")
        head.append(when, style="dim")
    lines: list[Text] = [head]
    detail = Text("  by ", style="dim")
    detail.append(route.decided_by, style=DECIDED_BY_STYLE.get(route.decided_by, ""))
    if route.confidence is not None:
        detail.append(f" · confidence {route.confidence:.2f}")
    if route.duration_ms is not None:
        detail.append(f" · {format_ms(route.duration_ms)}", style="dim")
    lines.append(detail)
    lines.extend(probability_lines(route))
    if route.runner_up:
        lines.append(Text(f"  runner-up: {route.runner_up}", style="dim"))
    if route.reason:
        lines.append(Text(f"  reason: {route.reason}", style="italic"))
    if route.classifier is not None:
        via = f"  via {route.classifier.with_}"
        if route.classifier.model:
            via += f" ({route.classifier.model})"
        lines.append(Text(via, style="dim"))
    if record.model:
        lines.append(Text(f"  answered by {record.model}", style="dim"))
    for note in (*record.warnings, *record.notes):
        lines.append(Text(f"  ! {note}", style="yellow"))
    lines.extend(_correction_marks(record, route))
    lines.extend(error_lines(route))
    if reroute is not None:
        lines.append(reroute_line(reroute, route))
    lines.append(Text("─" * CARD_RULE_WIDTH, style="grey23"))
    # One Text, not a Group: a long session has a card per turn, and one Text renders fast.
    return Text("\n").join(lines)


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


def _correction_marks(record: TurnRecord, route: Route) -> list[Text]:
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


def _undone(record: TurnRecord, event: TurnCorrected) -> bool:
    return event.correction is not None and event.correction.id in record.undone


def reroute_line(reroute: Reroute, recorded: Route | None, indent: str = "  ") -> Text:
    """Replay: how today's router decides the recorded turn."""
    if reroute.route is None:
        return Text(f"{indent}re-route: {reroute.note or 'failed'}", style="red")
    new = reroute.route
    confidence = "" if new.confidence is None else f" {new.confidence:.2f}"
    note = f" · {reroute.note}" if reroute.note else ""
    if reroute.differs:
        was = recorded.mode_name if recorded is not None else "no mode"
        return Text(
            f"{indent}re-route: {new.mode_name}{confidence} (was {was}) ≠{note}",
            style="bold yellow",
        )
    return Text(f"{indent}re-route: {new.mode_name}{confidence} (same) ={note}", style="green")


def tool_summary(activity: ToolActivity) -> RenderableType:
    """A tool call with its arguments and, once resolved, its outcome and result."""
    head = Text("⚙ ", style="cyan")
    head.append(activity.call.name, style="bold cyan")
    head.append(f"({format_arguments(activity.call.arguments)})")
    if activity.outcome is None:
        head.append(
            "  waiting for confirmation…" if activity.needs_confirmation else "  running…",
            style="italic dim",
        )
        return head
    outcome = tool_outcome(activity)
    style = "red" if outcome.startswith("failed") else OUTCOME_STYLE.get(outcome, "")
    head.append(f"  {outcome}", style=style)
    if activity.duration_ms:
        head.append(f" · {format_ms(activity.duration_ms)}", style="dim")
    return Group(head, Text(preview(activity.result), style="dim"))


def preview(result: str) -> str:
    """The first lines of a tool result (the inspector shows all of it)."""
    lines = result.splitlines()
    shown = "\n".join(lines[:RESULT_PREVIEW_LINES])
    if len(shown) > RESULT_PREVIEW_LIMIT:
        shown = shown[:RESULT_PREVIEW_LIMIT] + "…"
    hidden = len(lines) - RESULT_PREVIEW_LINES
    if hidden > 0:
        shown += f"\n… {hidden} more line{'s' if hidden != 1 else ''} (the inspector shows all)"
    return shown


def format_arguments(arguments: Mapping[str, Any]) -> str:
    """`path="a.py", limit=3` for a call's arguments."""
    return ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in arguments.items())


def turn_plain_text(record: TurnRecord) -> Text:
    """A finished turn as one cheap block of text (older turns before they load)."""
    text = Text()
    text.append("you  ", style="bold")
    text.append(record.user_text)
    text.append("\n")
    if record.route is not None:
        text.append_text(route_headline(record.route, record.mode))
        text.append("\n")
    if record.reroute is not None:
        text.append_text(reroute_line(record.reroute, record.route, indent=""))
        text.append("\n")
    text.append(record.answer or "(no answer)", style="" if record.answer else "dim")
    if record.tools:
        text.append(f"\n⚙ {plural(len(record.tools), 'tool call')}", style="dim cyan")
    return text

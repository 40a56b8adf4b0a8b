"""How a routing decision reads, one formatter per place it is shown.

| output kind | function | used by |
|---|---|---|
| one-line strip under a user message | `strip_line` | the TUI chat |
| panel lines (detail, bars, reason, classifier) | `panel_lines`, `error_lines` | route panel, inspector |
| the same lines as plain text | `panel_text` | the REPL's `/why` |
| REPL line | `repl_line` | `modes-tui chat --plain`, its `/why` and `/resume` |
| Markdown line | `markdown_line` | `modes-tui export`, `/export` |
| text for the `route` verb | `verb_text` | `modes-tui route TEXT` |
| JSON | `Route.to_dict()` | `--json` everywhere |

They share one vocabulary (`marks`, `duration`, `confidence_words`), so the same decision says
"forced", "one-shot" (`/MODE text`: the caller chose the mode of that message only) or
"sticky", times itself and names whose confidence it shows (`0.79 in shell` on a fallback to
chat) the same way everywhere. The screen formatters return Rich `Text`; rich is imported
inside them, so the REPL and the CLI verbs never load it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from modes_tui.core.terminal_text import terminal_safe

if TYPE_CHECKING:
    from rich.text import Text

    from modes_tui.core.values.route import Route

BAR_WIDTH = 14
"""Cells of a probability bar."""
RAW_OUTPUT_LIMIT = 400
"""Characters of a classifier's raw output shown under a parse error."""
DECIDED_BY_STYLE = {
    "caller": "bold magenta",
    "classifier": "green",
    "fallback": "yellow",
    "model": "bold cyan",
}
"""Colour of who decided."""
SHOWN_MARKS = ("forced", "one-shot", "sticky", "hand-off")
"""The marks the one-line formats print (fallback and error speak for themselves)."""
CALLER_MARKS = ("forced", "one-shot")
"""The marks of a mode the caller chose, drawn in the caller's colour."""


def two_places(value: float) -> str:
    """`core.values.two_places` (a number the router gives, at most 0.99), imported at its
    first use: the values package is not needed before the app's first frame."""
    from modes_tui.core.values.numbers import two_places as shown

    return shown(value)


def marks(route: Route) -> list[str]:
    """Short marks: forced (or one-shot), sticky, fallback, error."""
    found = []
    if route.forced:
        found.append("one-shot" if route.one_shot else "forced")
    if route.sticky:
        found.append("sticky")
    if route.decided_by == "fallback":
        found.append("fallback")
    if route.decided_by == "model":
        found.append("hand-off")
    if route.error is not None:
        found.append("error")
    return found


def duration(value: float | None) -> str:
    """A duration for people: `0.4 ms`, `120 ms`, `2.3 s`."""
    if value is None:
        return ""
    if value < 10:
        return f"{value:.1f} ms"
    if value < 1000:
        return f"{value:.0f} ms"
    return f"{value / 1000:.1f} s"


# ------------------------------------------------------------------ screen (Rich)


def bar(fraction: float, width: int = BAR_WIDTH) -> Text:
    """A horizontal bar for a probability."""
    from rich.text import Text

    filled = round(max(0.0, min(1.0, fraction)) * width)
    text = Text("█" * filled, style="cyan")
    text.append("░" * (width - filled), style="grey35")
    return text


def confidence_words(route: Route) -> str | None:
    """`0.82`, or `0.79 in shell` when the classifier's confidence is in another mode than the
    one that took the turn (a fallback, a declined entry, a sticky hold, a forced mode): a bare
    number beside `chat` would read as the router's confidence in chat."""
    if route.confidence is None:
        return None
    whose = route.decision.mode_name if route.decision is not None else None
    number = two_places(route.confidence)
    return number if whose is None or whose == route.mode_name else f"{number} in {whose}"


def full_reason(route: Route) -> str | None:
    """The route's reason with its evidence. A fallback under the threshold says only that
    ("Below confidence threshold"), while the classifier's own reason names what pulled it
    down (the nearest example, or a correction to the fallback): both are shown, so that a
    table of 0.99 for shell beside a 0.05 confidence is explained where it is shown."""
    decision = route.decision
    if route.decided_by != "fallback" or decision is None or not decision.reason:
        return route.reason
    if decision.reason == route.reason:
        return route.reason
    whose = f"{decision.mode_name}: " if decision.mode_name else ""  # none chosen: no name
    return f"{route.reason} ({whose}{decision.reason})"


def strip_line(route: Route, mode: str | None = None) -> Text:
    """`→ code · by classifier 0.82 · 3.1 ms`: the one-line strip under a user message."""
    from rich.text import Text

    text = Text()
    shown = mode if mode is not None else route.mode_name
    text.append("→ ", style="dim")
    text.append(shown or "no mode", style="bold")
    text.append(" · ", style="dim")
    text.append(f"by {route.decided_by}", style=DECIDED_BY_STYLE.get(route.decided_by, ""))
    confidence = confidence_words(route)
    if confidence is not None:
        text.append(f" {confidence}")
    if route.duration_ms is not None:
        text.append(f" · {duration(route.duration_ms)}", style="dim")
    for mark in marks(route):
        if mark != "fallback":
            text.append(f" [{mark}]", style="magenta" if mark in CALLER_MARKS else "yellow")
    if route.reason:
        text.append(f" · {route.reason}", style="dim italic")
    return text


Words = list[tuple[str, str]]
"""One line of a decision as (text, style) pieces: the panel draws them, the REPL prints
their text (`panel_text`), so both say the same thing."""


def probability_words(route: Route) -> list[Words]:
    """A bar per mode probability, highest first; modes at zero share one line."""
    if route.decision is None:
        return []
    ranked = route.decision.ranked()
    if not ranked:
        return []
    shown = [(name, p) for name, p in ranked if p > 0]
    zero = [name for name, p in ranked if p <= 0]
    width = max(len(name) for name, _ in shown) if shown else 0
    lines: list[Words] = []
    for name, probability in shown:
        filled = round(max(0.0, min(1.0, probability)) * BAR_WIDTH)
        lines.append(
            [
                (f"  {name:<{width}} ", "bold" if name == route.mode_name else ""),
                ("█" * filled, "cyan"),
                ("░" * (BAR_WIDTH - filled), "grey35"),
                (f" {two_places(probability)}", ""),
            ]
        )
    if zero:
        lines.append([(f"  0.00: {', '.join(zero)}", "dim")])
    return lines


def panel_words(route: Route) -> list[Words]:
    """The panel's body of a decision: who decided, how sure, the bars, why, and with what."""
    detail: Words = [
        ("  by ", "dim"),
        (route.decided_by, DECIDED_BY_STYLE.get(route.decided_by, "")),
    ]
    confidence = confidence_words(route)
    if confidence is not None:
        detail.append((f" · confidence {confidence}", ""))
    if route.duration_ms is not None:
        detail.append((f" · {duration(route.duration_ms)}", "dim"))
    lines = [detail, *probability_words(route)]
    if route.runner_up:
        lines.append([(f"  runner-up: {route.runner_up}", "dim")])
    if route.reason:
        lines.append([(terminal_safe(f"  reason: {full_reason(route)}"), "italic")])
    if route.framing is not None:  # the user's words only: the quoted text is never on a route
        lines.append([(terminal_safe(f"  framing: {route.framing.explain()}"), "dim")])
    if route.classifier is not None:
        via = f"  via {route.classifier.with_}"
        if route.classifier.model:
            via += f" ({route.classifier.model})"
        lines.append([(via, "dim")])
    return lines


def error_words(route: Route) -> list[Words]:
    """The routing error, with the raw model output for parse errors."""
    if route.error is None:
        return []
    error = route.error
    name = getattr(error, "type_name", None) or type(error).__name__
    lines: list[Words] = [[(terminal_safe(f"  ⚠ {name}: {error}"), "red")]]
    stage = getattr(error, "stage", None) or getattr(error, "extra", {}).get("stage")
    raw = getattr(error, "raw_output", None) or getattr(error, "extra", {}).get("raw_output")
    if stage:
        lines.append([(f"    stage: {stage}", "red")])
    if raw:
        shown = raw if len(raw) <= RAW_OUTPUT_LIMIT else raw[:RAW_OUTPUT_LIMIT] + "…"
        lines.append([(terminal_safe(f"    raw: {shown}"), "dim red")])
    return lines


def _drawn(lines: list[Words]) -> list[Text]:
    """Each line as Rich `Text`: its first piece's style is the line's, as the panel drew it."""
    from rich.text import Text

    drawn = []
    for (first, style), *rest in lines:
        text = Text(first, style=style)
        for piece, piece_style in rest:
            text.append(piece, style=piece_style)
        drawn.append(text)
    return drawn


def probability_lines(route: Route) -> list[Text]:
    """`probability_words` drawn."""
    return _drawn(probability_words(route))


def panel_lines(route: Route) -> list[Text]:
    """`panel_words` drawn: the route panel and the inspector."""
    return _drawn(panel_words(route))


def error_lines(route: Route) -> list[Text]:
    """`error_words` drawn."""
    return _drawn(error_words(route))


def panel_text(route: Route) -> list[str]:
    """The panel's words as plain lines (the REPL's `/why`): the same lines, no styles."""
    return [
        "".join(piece for piece, _ in words) for words in panel_words(route) + error_words(route)
    ]


# ------------------------------------------------------------------ plain text


def repl_line(route: Route) -> str:
    """`[code · by classifier · confidence 0.82 · 12 ms]` with forced and sticky marks."""
    parts = [route.mode_name, f"by {route.decided_by}"]
    confidence = confidence_words(route)
    if confidence is not None:
        parts.append(f"confidence {confidence}")
    if route.duration_ms is not None:
        parts.append(f"{route.duration_ms:.0f} ms")
    parts += [mark for mark in marks(route) if mark in SHOWN_MARKS]
    line = "[" + " · ".join(parts) + "]"
    if route.decided_by == "fallback" and route.reason:
        line += f" {route.reason}"
    if route.unsure is not None:  # the pick ran; say what else it nearly was
        line += f" {route.unsure.line()}"
    return line


def markdown_line(route: Route, setting: str = "auto") -> str:
    """One line: mode, who decided, confidence, time, marks and reason."""
    parts = [f"{route.mode_name} by {route.decided_by}"]
    confidence = confidence_words(route)
    if confidence is not None:
        parts.append(f"confidence {confidence}")
    if route.duration_ms is not None:
        parts.append(f"{route.duration_ms:.1f} ms")
    found = [mark for mark in marks(route) if mark in SHOWN_MARKS]
    if setting not in ("auto", route.mode_name):
        found.append(f"setting {setting}")
    text = ", ".join(parts)
    if found:
        text += f" [{', '.join(found)}]"
    if route.reason:
        text += f": {route.reason}"
    return text


def explain_lines(route: Route) -> list[str]:
    """`route --explain`: the framing, the conversation and the doubt behind a route."""
    lines = []
    if route.framing is not None:
        lines.append(f"  framing: {route.framing.explain()}")
    if route.follow_up is not None:
        lines.append(f"  follow-up: {route.follow_up:.2f} (how much it leans on the last turn)")
    if route.alone is not None:
        confidence = "n/a" if route.alone.confidence is None else two_places(route.alone.confidence)
        lines.append(f"  alone: {route.alone.mode_name} {confidence}")
    if route.unsure is not None:
        why = {
            "low": "below ask_below",
            "close": "runner-up within ask_margin",
            "threshold": "the pick just under below_confidence",
        }[route.unsure.why]
        runs = route.unsure.pick
        lines.append(f"  {route.unsure.line()} ({why}; {runs} runs here, the app asks first)")
    if not lines:
        lines.append("  framing: the whole message is the request (nothing quoted)")
    return lines


def verb_text(route: Route) -> str:
    """One human line (plus detail lines) for `modes-tui route`."""
    confidence = confidence_words(route) or "n/a"
    found = [mark for mark in marks(route) if mark in SHOWN_MARKS]
    mark = f" [{', '.join(found)}]" if found else ""
    took = "" if route.duration_ms is None else f", {route.duration_ms:.1f} ms"
    lines = [f"{route.mode_name}  (by {route.decided_by}, confidence {confidence}{took}){mark}"]
    if route.reason:
        lines.append(terminal_safe(f"  reason: {full_reason(route)}"))
    if route.decision is not None and route.decision.probabilities:
        ranked = route.decision.ranked()
        lines.append("  " + "  ".join(f"{name} {two_places(p)}" for name, p in ranked))
    if route.classifier is not None:
        model = f" ({route.classifier.model})" if route.classifier.model else ""
        lines.append(f"  classifier: {route.classifier.with_}{model}")
    return "\n".join(lines)

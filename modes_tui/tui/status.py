"""The header (active mode, control setting, model, warnings) and the status line (progress)."""

from __future__ import annotations

import time
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING

from rich.text import Text
from textual.timer import Timer
from textual.widgets import Static

from modes_tui.core.control_setting import AUTO, OFF, ControlReading
from modes_tui.tui.render import tool_outcome

if TYPE_CHECKING:
    from collections.abc import Sequence

    from modes_tui.core.history.events import TurnEvent
    from modes_tui.core.history.transcript import TurnTranscript
    from modes_tui.tui.startup import LoadProgress

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
PROGRESS_CELLS = 12
"""Width of the start-up progress bar."""
DEMO_LABEL = "offline demo model"
NOT_KNOWN = "…"
"""What the header shows for the model and the pack until the settings are read."""


def is_demo_model(model: str) -> bool:
    """Whether `model` is the embedded offline model."""
    # Imported here: the model catalog is not needed before the settings are read, and
    # the first frame shows `NOT_KNOWN` for the model.
    from modes_tui.core.config.models import EMBEDDED_MODEL

    return model == EMBEDDED_MODEL


def model_label(model: str) -> str:
    """The model's name, with the embedded default called what it is."""
    if model == NOT_KNOWN:
        return model
    return f"{model} ({DEMO_LABEL})" if is_demo_model(model) else model


def setting_label(setting: str) -> str:
    """`auto`, `off`, or `forced NAME`."""
    if setting in (AUTO, OFF):
        return setting
    return f"forced {setting}"


def since_label(since: str, tz: tzinfo | None = None, now: datetime | None = None) -> str:
    """When a setting was made, as a person says it: `14:02` (today), `yesterday 14:02`,
    `Mon 14:02` (this week), `Dec 1 14:02`, `2025-12-01 14:02` (another year); in `tz`
    (None: local time). An unreadable time is shown as it is written."""
    try:
        at = datetime.fromisoformat(since)
    except ValueError:
        return since
    at = at.astimezone(tz)
    today = (now or datetime.now(at.tzinfo)).astimezone(at.tzinfo).date()
    clock = at.strftime("%H:%M")
    days = (today - at.date()).days
    if days == 0:
        return clock
    if days == 1:
        return f"yesterday {clock}"
    if 1 < days < 7:
        return f"{at.strftime('%a')} {clock}"
    if at.year == today.year:
        return f"{at.strftime('%b')} {at.day} {clock}"
    return f"{at.date().isoformat()} {clock}"


def reading_label(reading: ControlReading, tz: tzinfo | None = None) -> str:
    """The setting, since when, and where it comes from: `forced code since yesterday 14:02
    (this pack)`, `off (all packs)`, `forced shell (this run only)`; plain `auto` when
    nothing is set (the default)."""
    label = setting_label(reading.mode)
    if reading.since and reading.mode != AUTO:
        label += f" since {since_label(reading.since, tz)}"
    return label if reading.source == "default" else f"{label} ({reading.where})"


HAND_BACK = "ctrl+g or /mode auto to hand it back"


def forced_line(reading: ControlReading, tz: tzinfo | None = None) -> str | None:
    """The status line while a mode is forced (or modes are off): what, since when, and how
    to give routing back; None under `auto`."""
    if reading.mode == AUTO:
        return None
    what = "modes off" if reading.mode == OFF else f"forced: {reading.mode}"
    since = f" since {since_label(reading.since, tz)}" if reading.since else ""
    return f"{what}{since} — {HAND_BACK}"


class ModeHeader(Static):
    """One line: which mode is active, what the control file says, which model answers."""

    DEFAULT_CSS = """
    ModeHeader {
        dock: top;
        height: 1;
        background: $panel;
        color: $text;
        padding: 0 1;
    }
    """

    def __init__(
        self, *, model: str, pack: str, id: str | None = None, tz: tzinfo | None = None
    ) -> None:
        super().__init__(id=id)
        self.tz = tz
        """Time zone for the time a setting was made (None: local)."""
        self.model = model
        self.pack = pack
        self.reading = ControlReading(AUTO)
        self.active_mode: str | None = None
        self.cost: str | None = None
        """The session's cost line (total, saved vs always X, budget), once there is one."""
        self._lines = 1

    def on_mount(self) -> None:
        self._draw()

    def show(
        self,
        reading: ControlReading | None = None,
        *,
        active_mode: str | None = None,
        model: str | None = None,
        pack: str | None = None,
        cost: str | None = None,
    ) -> None:
        """Redraw with whatever changed."""
        if pack is not None:
            self.pack = pack
        if reading is not None:
            self.reading = reading
        if active_mode is not None:
            self.active_mode = active_mode
        if model is not None:
            self.model = model
        if cost is not None:
            self.cost = cost
        self._draw()

    @property
    def shown_mode(self) -> str:
        """The mode the next turn will use as far as we know."""
        setting = self.reading.mode
        if setting == OFF:
            return "no mode"
        if setting != AUTO:
            return setting
        return self.active_mode or "router picks"

    def render_text(self, width: int | None = None) -> Text:
        """The header line (tests read it), in the fullest form that fits `width` cells.

        Narrower terminals drop the app's name, then the labels, then shorten the demo
        model's note; values are never cut. When even that does not fit, the parts wrap
        onto a second line between values (`_draw` makes room for it).
        """
        forms = [(True, True, False), (False, True, False), (False, False, False)]
        forms.append((False, False, True))
        text = Text()
        for brand, labels, short in forms:
            text = self._header_text(
                brand=brand, labels=labels, short=short, keep=width is not None
            )
            if width is None or text.cell_len <= width:
                return text
        return text

    def _header_text(self, *, brand: bool, labels: bool, short: bool, keep: bool) -> Text:
        setting = self.reading.mode
        text = Text()
        if brand:
            text.append(" modes-tui ", style="bold reverse")
            text.append(" │ ", style="dim")
        model = model_label(self.model)
        if short and self.model != NOT_KNOWN and is_demo_model(self.model):
            model = f"{self.model} (demo)"
        style = "bold magenta" if setting not in (AUTO, OFF) else "bold"
        parts = [
            ("mode ", self.shown_mode, "bold"),
            ("setting ", reading_label(self.reading, self.tz), style),
            ("pack ", self.pack, ""),
            ("model ", model, ""),
        ]
        if self.cost:
            parts.append(("cost ", self.cost, ""))
        for index, (label, value, value_style) in enumerate(parts):
            if index:
                text.append(" │ ", style="dim")
            if labels:
                text.append(label, style="dim")
            # No-break spaces: a wrapped header breaks between values, never inside one.
            text.append(value.replace(" ", "\u00a0") if keep else value, style=value_style)
        if self.reading.warning:
            text.append(f" │ ⚠ {self.reading.warning}", style="bold yellow")
        return text

    def on_resize(self) -> None:
        self._draw()

    def _draw(self) -> None:
        width = self.size.width or None  # the content width (padding excluded)
        text = self.render_text(width)
        lines = 1 if width is None else max(1, len(text.wrap(self.app.console, width)))
        if lines != self._lines:
            self._lines = lines
            self.styles.height = lines
        self.update(text, layout=False)  # fixed height unless a wrap needs more: no reflow


class StatusLine(Static):
    """What the app is busy with (loading, routing, answering, running a tool), with a timer."""

    DEFAULT_CSS = """
    StatusLine {
        height: 1;
        padding: 0 1;
        color: $text-muted;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    StatusLine.-error { color: $error; }
    StatusLine.-busy { color: $accent; }
    """

    IDLE = "Enter sends · /help for commands · shift+tab cycles modes"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(self.IDLE, id=id, markup=False)
        self.activity: str | None = None
        self.animated = True
        """Spinner and elapsed time; off for screenshots and snapshot tests."""
        self._started = 0.0
        self._frame = 0
        self._timer: Timer | None = None
        self.progress: LoadProgress | None = None
        """Start-up progress to draw as a bar while busy (None once the engine is in)."""
        self.setting_note: str | None = None
        """Shown instead of the hint while a mode is forced (`forced_line`)."""
        self._hint_shown = True

    def show_setting(self, reading: ControlReading, tz: tzinfo | None = None) -> None:
        """Keep the forced-mode line for idle moments; show it now if the hint is showing."""
        self.setting_note = forced_line(reading, tz)
        if self._hint_shown and self.activity is None and not self.has_class("-error"):
            self.idle()

    def busy(self, activity: str) -> None:
        """Show `activity` with a spinner and the time spent so far."""
        if activity != self.activity:
            self._started = time.monotonic()
        self.activity = activity
        self._hint_shown = False
        self.remove_class("-error")
        self.add_class("-busy")
        if self._timer is None:
            self._timer = self.set_interval(0.1, self._tick)
        self._tick()

    def idle(self, message: str | None = None) -> None:
        """Nothing going on; show `message` or the hint."""
        self.activity = None
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self.remove_class("-busy", "-error")
        self._hint_shown = message is None
        self.update(Text(message or self.setting_note or self.IDLE), layout=False)

    def error(self, message: str) -> None:
        """A problem the user should read (a command they typed, a failed load)."""
        self.idle()
        self._hint_shown = False
        self.add_class("-error")
        self.update(Text(message), layout=False)

    def follow(self, record: TurnTranscript, event: TurnEvent, mcp: Sequence[str] = ()) -> None:
        """Say what the turn `record` does now that `event` happened; `mcp` names the MCP
        servers of the mode it was routed to (a server's first start takes seconds). A
        correction speaks for itself (the app says what it recorded)."""
        match event.type:
            case "route_decided" if mcp:
                self.busy(f"Routed to {record.mode}; getting tools from MCP {', '.join(mcp)}…")
            case "route_decided":
                self.busy(f"Routed to {record.mode or 'no mode'}; asking the model…")
            case "request_built":
                self.busy(f"Waiting for {model_label(event.request.model)}…")
            case "text_delta" if self.activity and not self.activity.startswith("Answering"):
                self.busy(f"Answering in {record.mode or 'no mode'}…")
            case "tool_call_requested":
                what = "Asking before running" if event.needs_confirmation else "Running"
                self.busy(f"{what} {event.call.name}…")
            case "tool_call_finished":
                activity = record.tool(event.call.id)
                outcome = tool_outcome(activity) if activity is not None else event.outcome
                self.busy(f"{event.call.name}: {outcome}; asking the model…")
            case "turn_finished":
                self.idle()
            case "turn_cancelled":
                self.idle("Cancelled; the partial answer is kept · ctrl+r tries again")
            case "turn_failed":
                retry = " · ctrl+r or the Retry button tries again" if event.retryable else ""
                self.error(f"The turn failed: {event.error}{retry}")
            case "conversation_compacted":
                self.busy("Older turns summarised for the model; asking it…")
            case _:
                pass  # the turn's view shows the rest

    def _tick(self) -> None:
        if self.activity is None:
            return
        if not self.animated:
            self.update(Text(f"… {self.activity}"), layout=False)
            return
        self._frame = (self._frame + 1) % len(SPINNER)
        elapsed = time.monotonic() - self._started
        shown = f" {elapsed:.1f} s" if elapsed >= 0.5 else ""
        phase = self.progress.phase if self.progress is not None else None
        if phase is not None:
            filled = round(phase.fraction * PROGRESS_CELLS)
            line = Text(f"{SPINNER[self._frame]} {self.activity} ")
            line.append("█" * filled, style="bold")
            line.append("░" * (PROGRESS_CELLS - filled), style="dim")
            line.append(f" {phase.fraction:.0%} · {phase.label}{shown}")
            self.update(line, layout=False)
            return
        # Ten times a second: a one-line widget of fixed height never needs the screen
        # laid out again, and a full layout per tick would stall streaming.
        self.update(Text(f"{SPINNER[self._frame]} {self.activity}{shown}"), layout=False)

"""The route panel: every routing decision of the session, newest first.

Each decision is one option of an `OptionList`, so a long session scrolls cheaply and the
keyboard works as in any list. Selecting a decision asks for the inspector of its turn.

Speed (issue 14): a decision's card is drawn once and kept with its entry, so a new turn
adds one card instead of drawing the 200 listed again; the list keeps its measured cards
while the panel is hidden (ctrl+b), so showing it again does not measure them all anew; and
the list itself is mounted with the first decision, not on the first frame.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import tzinfo
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from modes_tui.core.terminal_text import terminal_safe
from modes_tui.tui.render import route_card

if TYPE_CHECKING:
    from modes_tui.core.edits.policy import Policy
    from modes_tui.core.history.events import TurnEvent
    from modes_tui.core.history.transcript import TurnTranscript
    from modes_tui.core.values.route import Route

PAGE = 200
"""Decisions listed at a time: a 1,000-turn session opens fast, older ones come on demand."""
MORE = "more"
NARROW = 100
"""Below this many columns the panel leaves the layout (ctrl+b shows it over the chat)."""
OVERLAY_WIDTH = 52
"""Columns of the panel shown over the chat on a narrow terminal."""
REDRAWN_AFTER = frozenset(
    ("request_built", "turn_finished", "turn_cancelled", "turn_corrected", "turn_failed")
)
"""Events after which a decision's card shows more (its model, its outcome, a correction)."""


class PanelEntry:
    """One decision: the turn it belongs to and the route as decided then (a plain class:
    it loads before the first frame, where a dataclass would compile its methods)."""

    __slots__ = ("attempt", "option", "record", "route")

    def __init__(self, record: TurnTranscript, route: Route | None, attempt: int) -> None:
        self.record = record
        """The turn."""
        self.route = route
        """The decision (None while routing)."""
        self.attempt = attempt
        """1, or 2+ for a retry's decision."""
        self.option: Option | None = None
        """Its card in the list, once drawn (None until then, or after the turn changed)."""


class DecisionList(OptionList):
    """The list of decisions; it keeps its measured cards while only hidden and shown.

    Textual's list forgets every card's rendering and height on each resize, and hiding the
    panel then showing it is two: 200 multi-line cards were wrapped again on every ctrl+b,
    though the width was the same. Cards are measured again only for a new width.
    """

    BINDINGS: ClassVar = [Binding("enter", "select", "Inspect", id="panel.inspect")]
    """Enter on a decision opens the inspector (shown in the footer while the list has focus)."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._measured_width = 0
        """The width the cards were last measured at (0: never)."""

    def on_resize(self, event: events.Resize) -> None:
        # Runs before OptionList's own handler, which forgets every card unless prevented.
        width = event.size.width
        if width == self._measured_width or not width:
            event.prevent_default()  # same width, or hidden: the cards are still right
            return
        self._measured_width = width  # OptionList's own handler clears its caches next

    def on_focus(self) -> None:
        """Tabbed to with no decision selected yet: the newest is, so Enter inspects it at
        once (a cursor the user moved stays where it is)."""
        if self.option_count and self.highlighted is None:
            self.highlighted = 0


def policy_text(mode: str, policy: Policy, tools: Sequence[str]) -> Text:
    """One short block: which tools the mode runs, asks about and may not use, and the
    paths nobody may touch."""
    from modes_tui.core.edits.policy import ASKS_BY_NATURE  # with the first route, not before

    by: dict[str, list[str]] = {"allow": [], "ask": [], "deny": []}
    for name in tools:
        by[policy.rule(name, asks=name in ASKS_BY_NATURE).permission].append(name)
    # Tool names can come from an MCP server and globs from a pack: both are outside text.
    text = Text(f"{terminal_safe(mode)} may ", style="dim")
    for permission, label, style in (
        ("allow", "run", "green"),
        ("ask", "ask", "yellow"),
        ("deny", "not use", "red"),
    ):
        if by[permission]:
            text.append(f"{label}: ", style="dim")
            text.append(terminal_safe(" ".join(by[permission])) + " ", style=style)
    if policy.deny:
        text.append("· never: ", style="dim")
        text.append(terminal_safe(" ".join(policy.deny.globs)), style="red")
    return text


class RoutePanel(Vertical):
    """Routing decisions, newest first; Enter or a click opens the inspector."""

    DEFAULT_CSS = """
    RoutePanel {
        width: 50;
        border-left: tall $panel;
        height: 1fr;
    }
    RoutePanel > #panel-title {
        background: $panel;
        color: $text;
        padding: 0 1;
        text-style: bold;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    RoutePanel > OptionList, RoutePanel > OptionList:focus {
        height: 1fr;
        border: none;
        padding: 0;
        background: transparent;
    }
    RoutePanel > OptionList > .option-list--option { padding: 0 0; }
    RoutePanel > #panel-setting { padding: 0 1; height: auto; }
    RoutePanel > #panel-hint {
        color: $text-muted;
        padding: 0 1;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    RoutePanel > #panel-policy { padding: 0 1; height: auto; display: none; }
    RoutePanel > #panel-policy.-shown { display: block; }
    RoutePanel > #panel-empty { color: $text-muted; padding: 1 1; height: 1fr; }
    RoutePanel > OptionList.-empty { display: none; }
    RoutePanel.-has-decisions > #panel-empty { display: none; }
    """

    class InspectRequested(Message):
        """The user picked a decision to inspect."""

        def __init__(self, record: TurnTranscript) -> None:
            self.record = record
            """The turn to inspect."""
            super().__init__()

    def __init__(
        self, *, tz: tzinfo | None = None, live: bool = True, id: str | None = None
    ) -> None:
        super().__init__(id=id)
        self._tz = tz
        self._live = live
        self._wanted: bool | None = None
        """The user's choice (ctrl+b): shown or not (None: by the terminal's width)."""
        self.entries: list[PanelEntry] = []
        """Oldest first."""
        self.limit = PAGE
        """How many of the newest decisions are listed; "more" adds a page."""
        self.setting = "auto"
        """The control setting, as shown."""
        self.warning: str | None = None
        """Why the control file was ignored, if it was."""

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="panel-title")
        if self._live:
            yield Static(self._setting_text(), id="panel-setting")
        # Empty until the first decision: the list (and its styles) come with the first one.
        yield Static("No decisions yet: send a message.", id="panel-empty")
        hint = "enter: inspect the request of a turn"
        if self._live:
            hint = "enter: inspect a turn · ctrl+e: correct it"
        yield Static(hint, id="panel-hint")
        if self._live:
            yield Static("", id="panel-policy")

    @property
    def options(self) -> OptionList:
        """The list widget (mounted here on first use: no decision yet costs no list)."""
        found = self.query("#decisions")
        if found:
            return found.first(OptionList)
        decisions = DecisionList(id="decisions", classes="-empty")
        self.mount(decisions, before=self.query_one("#panel-hint"))
        return decisions

    def _title(self) -> Text:
        count = len([e for e in self.entries if e.route is not None])
        return Text(f"Routes · {count} decision{'s' if count != 1 else ''}")

    def _setting_text(self) -> Text:
        text = Text("setting ", style="dim")
        text.append(
            self.setting, style="bold magenta" if self.setting.startswith("forced") else "bold"
        )
        if self.warning:
            text.append(f"\n⚠ {self.warning}", style="yellow")
        return text

    def show_setting(self, setting: str, warning: str | None = None) -> None:
        """Show the control setting (it changes from keys, /mode, or another process)."""
        self.setting, self.warning = setting, warning
        if self.is_mounted and self._live:
            self.query_one("#panel-setting", Static).update(self._setting_text())

    def show_policy(self, mode: str | None, policy: Policy | None, tools: Sequence[str]) -> None:
        """What the active mode may do with its tools (shown while it has tools)."""
        if not self.is_mounted or not self._live:
            return
        line = self.query_one("#panel-policy", Static)
        line.set_class(bool(tools) and policy is not None, "-shown")
        if policy is not None and tools:
            line.update(policy_text(mode or "no mode", policy, tools))

    def _option(self, index: int, entry: PanelEntry) -> Option:
        if entry.option is None:
            card = route_card(entry.record, entry.route, attempt=entry.attempt, tz=self._tz)
            entry.option = Option(card, id=f"route-{index}")
        return entry.option

    def _rebuild(self) -> None:
        highlighted = self.options.highlighted
        shown = list(enumerate(self.entries))[-self.limit :]
        options = [self._option(index, entry) for index, entry in reversed(shown)]
        older = len(self.entries) - len(shown)
        if older:
            more = Text(
                f"▼ {older} older decision{'s' if older != 1 else ''} · "
                f"enter shows {min(older, PAGE)} more"
            )
            options.append(Option(more, id=MORE))
        self.options.set_options(options)
        self.options.set_class(not options, "-empty")
        self.set_class(bool(options), "-has-decisions")
        if highlighted is not None and options:
            self.options.highlighted = min(highlighted, len(options) - 1)
        self.query_one("#panel-title", Static).update(self._title())

    @property
    def shown(self) -> int:
        """How many decisions are listed (the newest ones)."""
        return min(len(self.entries), self.limit)

    def set_records(self, records: Iterable[TurnTranscript]) -> None:
        """Show the decisions of finished turns (a replayed session)."""
        self.entries = [PanelEntry(r, r.route, r.attempt) for r in records]
        self._rebuild()

    def decided(self, record: TurnTranscript) -> None:
        """A new decision for `record` (a new turn, or a retry)."""
        last = self.entries[-1] if self.entries else None
        if last is not None and last.record is record and last.route is None:
            last.route, last.attempt, last.option = record.route, record.attempt, None
        else:
            self.entries.append(PanelEntry(record, record.route, record.attempt))
        self._rebuild()

    def refresh_record(self, record: TurnTranscript) -> None:
        """Redraw the decisions of `record` (its model or notes became known)."""
        for index, entry in enumerate(self.entries):
            position = len(self.entries) - 1 - index
            if entry.record is record:
                entry.option = None  # drawn again when next listed
                if position < self.limit:
                    self.options.replace_option_prompt_at_index(
                        position, self._option(index, entry).prompt
                    )

    def follow(self, record: TurnTranscript, event: TurnEvent) -> None:
        """Keep `record`'s decision current as its turn goes on."""
        if event.type == "route_decided":
            self.decided(record)
        elif event.type in REDRAWN_AFTER:
            self.refresh_record(record)

    def toggle(self, columns: int) -> None:
        """Show or hide the panel (ctrl+b); the choice holds until the width crosses NARROW."""
        self._wanted = not self.display
        self.fit(columns)

    def fit(self, columns: int) -> None:
        """Below NARROW columns the panel leaves the layout (its screen gets `-narrow`): each
        turn keeps its one-line route strip, and ctrl+b shows the whole panel over the chat."""
        narrow = columns < NARROW
        was_narrow = self.screen.has_class("-narrow")
        if narrow != was_narrow:
            self._wanted = None  # crossing the line: the width decides again
        shown = self._wanted if self._wanted is not None else not narrow
        if self.display != shown:
            self.display = shown
        if not narrow and not was_narrow:
            return  # the usual wide layout: nothing to restyle (keeps the first frame cheap)
        self.screen.set_class(narrow, "-narrow")
        self.lay_out(columns, narrow=narrow)

    def lay_out(self, columns: int, *, narrow: bool) -> None:
        """Below the app's narrow width the panel floats over the chat, against the right
        edge (absolute: out of the row, so the chat keeps the whole width)."""
        self.set_class(narrow, "-overlay")
        if narrow:
            width = min(OVERLAY_WIDTH, max(20, columns - 4))
            self.styles.width = width
            self.styles.offset = (columns - width, 0)  # placed from the row's left edge
        else:
            self.styles.width = None
            self.styles.offset = (0, 0)

    def highlighted_record(self) -> TurnTranscript | None:
        """The turn of the highlighted decision, when the list has the focus."""
        found = self.query("#decisions")  # no list yet: nothing to point at
        if not found:
            return None
        options = found.first(OptionList)
        if not options.has_focus or options.highlighted is None:
            return None
        index = len(self.entries) - 1 - options.highlighted
        return self.entries[index].record if 0 <= index < len(self.entries) else None

    def clear(self) -> None:
        """Forget every decision (`/clear`)."""
        self.entries = []
        self._rebuild()

    @on(OptionList.OptionSelected, "#decisions")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id == MORE:
            self.limit += PAGE
            self._rebuild()
            return
        index = len(self.entries) - 1 - event.option_index
        if 0 <= index < len(self.entries):
            self.post_message(self.InspectRequested(self.entries[index].record))

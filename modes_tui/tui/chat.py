"""The chat log: one `TurnView` per user turn, fed by the engine's events.

Answers stream through `Markdown.get_stream()` into an anchored `VerticalScroll`, and get
one full update when the reply ends. Turns older than the last `FULL_TURNS` are drawn as
one cheap `LiteTurn` each and become full views when they scroll into sight or are clicked.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import tzinfo

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Button, Collapsible, Markdown, Static
from textual.widgets._markdown import MarkdownStream

from modes_tui.core.events import (
    ModeChanged,
    ReasoningDelta,
    RequestBuilt,
    RouteDecided,
    TextDelta,
    ToolCallFinished,
    ToolCallRequested,
    TurnCancelled,
    TurnEvent,
    TurnFailed,
    TurnFinished,
    Usage,
)
from modes_tui.tui.render import (
    format_ms,
    reroute_line,
    route_headline,
    tool_summary,
    turn_plain_text,
)
from modes_tui.tui.turns import TurnRecord

FULL_TURNS = 20
"""How many of the newest turns are drawn in full."""
LOAD_MARGIN = 10
"""Lines above and below the viewport whose cheap turns load as full ones."""
REASONING_REFRESH_S = 0.1
"""How often folded reasoning is redrawn while it streams."""


class ToolCallView(Static):
    """A tool call, its arguments and (once resolved) its result."""

    DEFAULT_CSS = """
    ToolCallView {
        margin: 0 0 1 2;
        padding: 0 1;
        border-left: thick $secondary;
        height: auto;
    }
    """


class AnswerSegment(Markdown):
    """Answer text of one model round."""

    DEFAULT_CSS = """
    AnswerSegment {
        margin: 0 0 0 0;
        padding: 0 1;
        background: transparent;
    }
    """


class TurnNote(Horizontal):
    """How the turn ended when it did not simply finish: failed (with retry) or cancelled."""

    DEFAULT_CSS = """
    TurnNote {
        height: auto;
        margin: 0 0 0 2;
    }
    TurnNote > Static {
        width: 1fr;
        height: auto;
    }
    TurnNote > Button {
        margin: 0 1;
        min-width: 10;
    }
    TurnNote.-failed > Static { color: $error; }
    TurnNote.-cancelled > Static { color: $warning; }
    """

    class RetryRequested(Message):
        """The user pressed Retry on a failed turn."""

        def __init__(self, number: int) -> None:
            self.number = number
            """The turn to retry."""
            super().__init__()

    def __init__(self, number: int, text: Text, *, retry: bool, kind: str) -> None:
        super().__init__(classes=f"-{kind}")
        self._number = number
        self._text = text
        self._retry = retry

    def compose(self) -> ComposeResult:
        yield Static(self._text)
        if self._retry:
            yield Button("Retry", variant="warning", id="retry", compact=True)

    @on(Button.Pressed, "#retry")
    def _retry_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.post_message(self.RetryRequested(self._number))


class TurnView(Vertical):
    """One user turn in full: message, route, answer, tools, reasoning, and how it ended."""

    DEFAULT_CSS = """
    TurnView {
        height: auto;
        margin: 0 0 1 0;
    }
    TurnView > .user {
        background: $boost;
        padding: 0 1;
        border-left: thick $primary;
    }
    TurnView > .route {
        padding: 0 1;
        color: $text-muted;
    }
    TurnView > .reroute { padding: 0 1; }
    TurnView > #body { height: auto; }
    TurnView > Collapsible {
        margin: 0 0 0 1;
        padding: 0;
        border-top: none;
    }
    TurnView > Collapsible Static { color: $text-muted; padding: 0 1; }
    TurnView > .meta { padding: 0 1; color: $text-disabled; }
    """

    def __init__(self, record: TurnRecord, *, live: bool = True, tz: tzinfo | None = None) -> None:
        super().__init__(id=f"turn-{record.number}")
        self.record = record
        self.live = live
        self._tz = tz
        self._segment: AnswerSegment | None = None
        self._stream: MarkdownStream | None = None
        self._reasoning: Static | None = None
        self._reasoning_timer: Timer | None = None
        self._tools: dict[str, ToolCallView] = {}
        self._shown = ""
        """Text of the widget being streamed into."""
        self._segments_shown = 0

    def compose(self) -> ComposeResult:
        record = self.record
        yield Static(Text(record.user_text), classes="user")
        yield Static(self._route_text(), classes="route")
        if record.reroute is not None:
            yield Static(reroute_line(record.reroute, record.route), classes="reroute")
        yield Vertical(id="body")

    async def on_mount(self) -> None:
        if not self.live:
            await self._draw_finished()

    def _route_text(self) -> Text:
        record = self.record
        if record.route is None:
            return Text("→ routing…", style="italic")
        line = route_headline(record.route, record.mode)
        if record.mode_change is not None and record.number > 1:
            line.append(f"  (was {record.mode_change.previous or 'no mode'})", style="dim")
        return line

    @property
    def body(self) -> Vertical:
        """Answer segments and tool calls, in order."""
        return self.query_one("#body", Vertical)

    async def _draw_finished(self) -> None:
        """Draw a turn that is already over (replay, loaded turns)."""
        record = self.record
        widgets: list[Widget] = []
        for index, segment in enumerate(record.segments):
            if segment:
                widgets.append(AnswerSegment(segment))
            widgets.extend(
                ToolCallView(tool_summary(t)) for t in record.tools if t.segment == index
            )
        await self.body.mount_all(widgets)
        if record.reasoning:
            await self._ensure_reasoning()
        await self._draw_ending()

    # ---------------------------------------------------------------- live events

    async def apply(self, event: TurnEvent) -> None:
        """Show what `event` changes. The record has already absorbed it."""
        if isinstance(event, RouteDecided | ModeChanged):
            self.query_one(".route", Static).update(self._route_text())
        elif isinstance(event, RequestBuilt):
            if event.round > 1:
                await self._close_segment()
        elif isinstance(event, TextDelta):
            await self._write(event.text)
        elif isinstance(event, ReasoningDelta):
            await self._ensure_reasoning()
            if self._reasoning_timer is None:
                self._reasoning_timer = self.set_timer(REASONING_REFRESH_S, self._flush_reasoning)
        elif isinstance(event, ToolCallRequested):
            await self._close_segment()
            activity = self.record.tool(event.call.id)
            if activity is not None:
                view = ToolCallView(tool_summary(activity))
                self._tools[event.call.id] = view
                await self.body.mount(view)
        elif isinstance(event, ToolCallFinished):
            activity = self.record.tool(event.call.id)
            if activity is not None:
                shown = self._tools.get(event.call.id)
                if shown is None:
                    shown = ToolCallView(tool_summary(activity))
                    self._tools[event.call.id] = shown
                    await self.body.mount(shown)
                shown.update(tool_summary(activity))
        elif isinstance(event, Usage):
            pass  # shown with the ending
        elif isinstance(event, TurnFinished | TurnFailed | TurnCancelled):
            await self._close_segment(final=True)
            self._flush_reasoning()
            await self._draw_ending()

    async def _write(self, text: str) -> None:
        """Stream answer text into the current widget (opened on the first text)."""
        stream = await self._open_segment()
        self._shown += text
        await stream.write(text)

    async def _open_segment(self) -> MarkdownStream:
        if self._stream is None:
            self._segment = AnswerSegment()
            self._shown = ""
            self._segments_shown += 1
            await self.body.mount(self._segment)
            self._stream = Markdown.get_stream(self._segment)
        return self._stream

    async def _close_segment(self, *, final: bool = False) -> None:
        """Stop streaming the current widget; give it one full update if its text differs."""
        if self._stream is None or self._segment is None:
            return
        stream, segment = self._stream, self._segment
        self._stream = self._segment = None
        await stream.stop()
        text = self._shown
        record = self.record
        if final and self._segments_shown == 1 and record.message and record.message.content:
            # A one-widget answer shows the recorded message (the engine may trim it).
            text = record.message.content
        if segment.source != text:
            await segment.update(text)

    async def _ensure_reasoning(self) -> None:
        if self._reasoning is None:
            self._reasoning = Static(Text(self.record.reasoning))
            await self.mount(Collapsible(self._reasoning, title="Reasoning", collapsed=True))

    def _flush_reasoning(self) -> None:
        self._reasoning_timer = None
        if self._reasoning is not None:
            self._reasoning.update(Text(self.record.reasoning))

    async def _draw_ending(self) -> None:
        """The meta line, or the failure / cancel note."""
        await self.query(".meta").remove()
        await self.query(TurnNote).remove()
        record = self.record
        widgets: list[Widget] = []
        if record.failure is not None:
            failure = record.failure
            text = Text(f"✗ {failure.error}", style="bold")
            if failure.hint:
                text.append(f"\n  {failure.hint}", style="")
            if failure.partial and not record.answer:
                text.append(f"\n  partial answer: {failure.partial}")
            widgets.append(
                TurnNote(
                    record.number,
                    text,
                    retry=failure.retryable and self.live,
                    kind="failed",
                )
            )
        elif record.cancelled:
            widgets.append(
                TurnNote(
                    record.number,
                    Text("■ cancelled: the answer above is partial"),
                    retry=False,
                    kind="cancelled",
                )
            )
        meta = self._meta_text()
        if meta.plain:
            widgets.append(Static(meta, classes="meta"))
        if widgets:
            await self.mount_all(widgets)

    def _meta_text(self) -> Text:
        record = self.record
        parts = []
        if record.model:
            parts.append(record.model)
        if record.usages:
            parts.append(f"{record.prompt_tokens} → {record.completion_tokens} tokens")
        if record.cost:
            parts.append(f"${record.cost:.4f}")
        if record.tools:
            spent = sum(t.duration_ms for t in record.tools)
            parts.append(f"{len(record.tools)} tool call(s) {format_ms(spent)}")
        return Text(" · ".join(parts))

    async def show_reroute(self) -> None:
        """Show (or update) today's decision for this recorded turn."""
        record = self.record
        if record.reroute is None:
            return
        line = reroute_line(record.reroute, record.route)
        found = self.query(".reroute")
        if found:
            found.first(Static).update(line)
        else:
            await self.mount(Static(line, classes="reroute"), after=self.query_one(".route"))

    async def restart(self) -> None:
        """Clear the answer for a retry."""
        await self._close_segment()
        self._tools.clear()
        self._reasoning = None
        await self.body.remove_children()
        await self.query(Collapsible).remove()
        await self.query(".meta").remove()
        await self.query(TurnNote).remove()
        self.query_one(".route", Static).update(self._route_text())


class LiteTurn(Static):
    """An older turn drawn as plain text; it loads in full when seen or clicked."""

    DEFAULT_CSS = """
    LiteTurn {
        margin: 0 0 1 0;
        padding: 0 1;
        color: $text-muted;
        border-left: thick $panel;
    }
    LiteTurn:hover { border-left: thick $primary; }
    """

    class LoadRequested(Message):
        """The turn should be drawn in full."""

        def __init__(self, view: LiteTurn) -> None:
            self.view = view
            """The cheap view to replace."""
            super().__init__()

    def __init__(self, record: TurnRecord) -> None:
        super().__init__(turn_plain_text(record), id=f"lite-{record.number}")
        self.record = record

    def on_click(self) -> None:
        self.post_message(self.LoadRequested(self))


class SystemNote(Markdown):
    """Help, the mode list, export results: text from the app, not from a model."""

    DEFAULT_CSS = """
    SystemNote {
        margin: 0 2 1 2;
        padding: 0 1;
        border: round $secondary;
        background: transparent;
    }
    """


class ChatLog(VerticalScroll):
    """Every turn of the conversation; stays at the bottom while answers stream."""

    DEFAULT_CSS = """
    ChatLog {
        padding: 0 1;
        scrollbar-size-vertical: 1;
    }
    """

    def __init__(self, *, tz: tzinfo | None = None, id: str | None = None) -> None:
        super().__init__(id=id)
        self._tz = tz
        self._load_timer: Timer | None = None

    def on_mount(self) -> None:
        self.anchor()
        self.watch(self, "scroll_y", self._scrolled, init=False)

    def view(self, number: int) -> TurnView | None:
        """The full view of turn `number`, if it is drawn in full."""
        for child in self.query_children(TurnView):
            if child.record.number == number:
                return child
        return None

    async def start_turn(self, record: TurnRecord) -> TurnView:
        """A new live turn at the bottom."""
        view = TurnView(record, live=True, tz=self._tz)
        await self.mount(view)
        self.anchor()
        return view

    async def show_records(self, records: Iterable[TurnRecord], *, live: bool = False) -> None:
        """Draw finished turns: the newest `FULL_TURNS` in full, older ones cheaply."""
        records = list(records)
        cut = max(0, len(records) - FULL_TURNS)
        widgets: list[Widget] = [LiteTurn(r) for r in records[:cut]]
        widgets += [TurnView(r, live=live, tz=self._tz) for r in records[cut:]]
        await self.mount_all(widgets)
        self.anchor()

    async def add_note(self, markdown: str) -> SystemNote:
        """A note from the app at the bottom."""
        note = SystemNote(markdown)
        await self.mount(note)
        self.anchor()
        return note

    async def clear(self) -> None:
        """Remove every turn and note."""
        await self.remove_children()

    async def refresh_reroutes(self) -> None:
        """Show re-route results that arrived after the turns were drawn (replay)."""
        for child in self.children:
            if isinstance(child, TurnView):
                await child.show_reroute()
            elif isinstance(child, LiteTurn):
                child.update(turn_plain_text(child.record))

    # ---------------------------------------------------------------- load on scroll

    def _scrolled(self) -> None:
        if self._load_timer is not None:
            self._load_timer.stop()
        self._load_timer = self.set_timer(0.05, self._load_visible)

    async def _load_visible(self) -> None:
        """Replace cheap turns that are in (or near) the viewport with full ones."""
        self._load_timer = None
        top = self.scroll_y - LOAD_MARGIN
        bottom = self.scroll_y + self.size.height + LOAD_MARGIN
        for lite in list(self.query_children(LiteTurn)):
            region = lite.virtual_region
            if region.bottom >= top and region.y <= bottom:
                await self.load(lite)

    async def load(self, lite: LiteTurn) -> TurnView:
        """Draw one cheap turn in full, in place."""
        view = TurnView(lite.record, live=False, tz=self._tz)
        await self.mount(view, after=lite)
        await lite.remove()
        return view

    @on(LiteTurn.LoadRequested)
    async def _load_requested(self, event: LiteTurn.LoadRequested) -> None:
        event.stop()
        await self.load(event.view)

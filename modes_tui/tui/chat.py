"""The chat log: one `TurnView` per user turn, fed by the engine's events.

Answers stream through `Markdown.get_stream()` into an anchored `VerticalScroll`, and get
one full update when the reply ends. Turns older than the last `FULL_TURNS` are drawn as
one cheap `LiteTurn` each and become full views when they scroll into sight or are clicked.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
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
"""How many of the newest turns are mounted when a conversation is drawn."""
OPEN_IN_FULL = 4
"""How many of those are drawn in full at once (the rest load as they scroll into view)."""
LOAD_BATCH = 20
"""How many older turns are mounted at a time as the user scrolls up."""
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
    """A failed live turn: what went wrong, and a Retry button."""

    DEFAULT_CSS = """
    TurnNote {
        height: auto;
        margin: 0 0 0 2;
    }
    TurnNote > Static {
        width: 1fr;
        height: auto;
        color: $error;
    }
    TurnNote > Button {
        margin: 0 1;
        min-width: 10;
    }
    """

    class RetryRequested(Message):
        """The user pressed Retry on a failed turn."""

        def __init__(self, number: int) -> None:
            self.number = number
            """The turn to retry."""
            super().__init__()

    def __init__(self, number: int, text: Text, *, retry: bool, kind: str) -> None:
        super().__init__(classes=f"tail ending -{kind}")
        self._number = number
        self._text = text
        self._retry = retry

    def compose(self) -> ComposeResult:
        yield Static(self._text, classes="note-text")
        if self._retry:
            yield Button("Retry", variant="warning", id="retry", compact=True)

    @on(Button.Pressed, "#retry")
    def _retry_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.post_message(self.RetryRequested(self._number))


class TurnView(Vertical):
    """One user turn in full: message, route, answer, tools, reasoning, and how it ended.

    Children, in order: the user's message, the route line, answer segments and tool calls
    (in the order they happened), then the "tail": folded reasoning, how the turn ended, and
    the meta line. Finished turns are composed at once (one layout pass); live ones grow.
    """

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
    TurnView > Collapsible {
        margin: 0 0 0 1;
        padding: 0;
        border-top: none;
    }
    TurnView > Collapsible Static { color: $text-muted; padding: 0 1; }
    TurnView > .meta { padding: 0 1; color: $text-disabled; }
    TurnView > .note-text { margin: 0 0 0 2; }
    TurnView .-failed { color: $error; }
    TurnView .-cancelled { color: $warning; }
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
        if not self.live:
            for index, segment in enumerate(record.segments):
                if segment:
                    yield AnswerSegment(segment)
                for activity in record.tools:
                    if activity.segment == index:
                        yield ToolCallView(tool_summary(activity))
            if record.reasoning:
                yield self._reasoning_view()
            yield from self._ending()

    def _route_text(self) -> Text:
        record = self.record
        if record.route is None:
            return Text("→ routing…", style="italic")
        line = route_headline(record.route, record.mode)
        if record.mode_change is not None and record.number > 1:
            line.append(f"  (was {record.mode_change.previous or 'no mode'})", style="dim")
        if record.reroute is not None:
            line.append("\n")
            line.append_text(reroute_line(record.reroute, record.route, indent=""))
        return line

    async def _mount_in_order(self, widget: Widget) -> None:
        """Mount an answer segment or a tool call after the others, before the tail."""
        tail = self.query_children(".tail")
        if tail:
            await self.mount(widget, before=tail.first())
        else:
            await self.mount(widget)

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
            if self._reasoning is None:
                await self.mount(self._reasoning_view())
            if self._reasoning_timer is None:
                self._reasoning_timer = self.set_timer(REASONING_REFRESH_S, self._flush_reasoning)
        elif isinstance(event, ToolCallRequested):
            await self._close_segment()
            activity = self.record.tool(event.call.id)
            if activity is not None:
                view = ToolCallView(tool_summary(activity))
                self._tools[event.call.id] = view
                await self._mount_in_order(view)
        elif isinstance(event, ToolCallFinished):
            activity = self.record.tool(event.call.id)
            if activity is not None:
                shown = self._tools.get(event.call.id)
                if shown is None:
                    shown = ToolCallView(tool_summary(activity))
                    self._tools[event.call.id] = shown
                    await self._mount_in_order(shown)
                shown.update(tool_summary(activity))
        elif isinstance(event, Usage):
            pass  # shown with the ending
        elif isinstance(event, TurnFinished | TurnFailed | TurnCancelled):
            await self._close_segment(final=True)
            self._flush_reasoning()
            await self.query_children(".ending").remove()
            await self.mount_all(list(self._ending()))

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
            await self._mount_in_order(self._segment)
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

    def _reasoning_view(self) -> Collapsible:
        self._reasoning = Static(Text(self.record.reasoning))
        return Collapsible(self._reasoning, title="Reasoning", collapsed=True, classes="tail")

    def _flush_reasoning(self) -> None:
        self._reasoning_timer = None
        if self._reasoning is not None:
            self._reasoning.update(Text(self.record.reasoning))

    def _ending(self) -> Iterator[Widget]:
        """How the turn ended (failed, with retry; cancelled) and the meta line."""
        record = self.record
        if record.failure is not None:
            failure = record.failure
            text = Text(f"✗ {failure.error}", style="bold")
            if failure.hint:
                text.append(f"\n  {failure.hint}", style="")
            if failure.partial and not record.answer:
                text.append(f"\n  partial answer: {failure.partial}")
            if failure.retryable and self.live:
                yield TurnNote(record.number, text, retry=True, kind="failed")
            else:
                yield Static(text, classes="tail ending note-text -failed")
        elif record.cancelled:
            text = Text("■ cancelled: the answer above is partial")
            yield Static(text, classes="tail ending note-text -cancelled")
        meta = self._meta_text()
        if meta.plain:
            yield Static(meta, classes="tail ending meta")

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
        self.query_one(".route", Static).update(self._route_text())

    async def restart(self) -> None:
        """Clear the answer for a retry: everything below the route line goes."""
        await self._close_segment()
        self._tools.clear()
        self._reasoning = None
        self._segments_shown = 0
        await self.remove_children(list(self.children)[2:])
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


class EarlierTurns(Static):
    """The top of a long conversation: how many older turns are not drawn yet."""

    DEFAULT_CSS = """
    EarlierTurns {
        color: $text-muted;
        text-align: center;
        margin: 0 0 1 0;
    }
    EarlierTurns:hover { color: $text; }
    """

    class LoadRequested(Message):
        """Draw the next batch of older turns."""

    def show(self, count: int) -> None:
        """Say how many turns are above."""
        self.update(
            Text(f"▲ {count} earlier turn{'s' if count != 1 else ''} · scroll up or click to show")
        )

    def on_click(self) -> None:
        self.post_message(self.LoadRequested())


class ChatLog(VerticalScroll):
    """Every turn of the conversation; stays at the bottom while answers stream.

    A long conversation is drawn from the bottom up: the newest `FULL_TURNS` are mounted
    (the few on screen in full, the others as cheap `LiteTurn`s that load in full when they
    scroll into view) and older ones are mounted `LOAD_BATCH` at a time as the user scrolls
    up to the top.
    """

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
        self._earlier: list[TurnRecord] = []
        """Turns above the first mounted one, oldest first."""
        self._marker: EarlierTurns | None = None

    def on_mount(self) -> None:
        self.anchor()
        self.watch(self, "scroll_y", self._scrolled, init=False)

    def view(self, number: int) -> TurnView | None:
        """The full view of turn `number`, if it is drawn in full."""
        for child in self.query_children(TurnView):
            if child.record.number == number:
                return child
        return None

    @property
    def earlier_count(self) -> int:
        """Turns not drawn yet, above the first one shown."""
        return len(self._earlier)

    async def start_turn(self, record: TurnRecord) -> TurnView:
        """A new live turn at the bottom."""
        await self._trim()
        view = TurnView(record, live=True, tz=self._tz)
        await self.mount(view)
        self.anchor()
        return view

    async def show_records(self, records: Iterable[TurnRecord], *, live: bool = False) -> None:
        """Draw finished turns from the bottom up (see the class docstring)."""
        records = list(records)
        recent = records[-FULL_TURNS:]
        self._earlier = records[: len(records) - len(recent)]
        opened = recent[-OPEN_IN_FULL:]
        widgets: list[Widget] = [LiteTurn(r) for r in recent[: len(recent) - len(opened)]]
        widgets += [TurnView(r, live=live, tz=self._tz) for r in opened]
        await self.mount_all(widgets)
        await self._show_marker()
        self.anchor()

    async def _show_marker(self) -> None:
        if self._earlier:
            if self._marker is None:
                self._marker = EarlierTurns()
                await self.mount(self._marker, before=0)
            self._marker.show(len(self._earlier))
        elif self._marker is not None:
            await self._marker.remove()
            self._marker = None

    async def load_earlier(self) -> int:
        """Mount the next batch of older turns above the first one shown; keep the view still."""
        if not self._earlier:
            return 0
        batch = self._earlier[-LOAD_BATCH:]
        del self._earlier[-LOAD_BATCH:]
        height_before = self.virtual_size.height
        y_before = self.scroll_y
        where = 1 if self._marker is not None else 0
        await self.mount_all([LiteTurn(r) for r in batch], before=where)
        await self._show_marker()

        def keep_place() -> None:
            grown = self.virtual_size.height - height_before
            self.scroll_to(y=y_before + grown, animate=False, immediate=True)

        self.call_after_refresh(keep_place)
        return len(batch)

    async def _trim(self) -> None:
        """Keep a long live conversation light: unmount the oldest turns (they load on scroll)."""
        turns = [c for c in self.children if isinstance(c, TurnView | LiteTurn)]
        extra = len(turns) - (FULL_TURNS + LOAD_BATCH)
        if extra <= 0 or self.is_anchor_released:
            return
        gone = turns[:extra]
        self._earlier.extend(t.record for t in gone)
        await self.remove_children(gone)
        await self._show_marker()

    @property
    def is_anchor_released(self) -> bool:
        """The user scrolled away from the bottom."""
        return self.scroll_y < self.max_scroll_y - 1

    async def add_note(self, markdown: str) -> SystemNote:
        """A note from the app at the bottom."""
        note = SystemNote(markdown)
        await self.mount(note)
        self.anchor()
        return note

    async def clear(self) -> None:
        """Remove every turn and note."""
        self._earlier = []
        self._marker = None
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
        """Near the top, mount older turns; cheap turns in (or near) view load in full."""
        self._load_timer = None
        if self._earlier and self.scroll_y <= LOAD_MARGIN:
            await self.load_earlier()
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

    @on(EarlierTurns.LoadRequested)
    async def _earlier_requested(self, event: EarlierTurns.LoadRequested) -> None:
        event.stop()
        await self.load_earlier()

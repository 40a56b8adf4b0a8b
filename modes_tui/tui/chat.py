"""The chat log: one view per user turn, drawn from the bottom up.

The newest turns are drawn in full (`turn_view.TurnView`, imported on first use so the
Markdown parser is not on the path to the first frame); older ones are cheap `LiteTurn`s
that load in full when they scroll into view, and the oldest are mounted in batches as the
user scrolls up.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import tzinfo
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on
from textual.containers import VerticalScroll
from textual.geometry import Size
from textual.layout import DockArrangeResult
from textual.message import Message
from textual.scrollbar import ScrollBar
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Static

from modes_tui.core.terminal_text import terminal_safe
from modes_tui.tui.render import turn_plain_text
from modes_tui.tui.stream_fit import FitsInStream

if TYPE_CHECKING:
    from modes_tui.core.history.compaction import Compaction
    from modes_tui.core.history.transcript import TurnTranscript
    from modes_tui.tui.turn_view import SystemNote, TurnView

FULL_TURNS = 20
"""How many of the newest turns are mounted when a conversation is drawn."""
OPEN_IN_FULL = 4
"""At most how many of those are drawn in full at once: the newest ones that fill the
screen (the rest load as they scroll into view)."""
LOAD_BATCH = 20
"""How many older turns are mounted at a time as the user scrolls up."""
LOAD_MARGIN = 10
"""Lines above and below the viewport whose cheap turns load as full ones."""


class PlainNote(FitsInStream, Static):
    """A note from the app that must show whole (an error): plain text, wrapped."""


class HeightsByWidth(Static):
    """A Static that remembers its height at two widths, not one.

    Textual keeps the height for the last width only, so hiding and showing the route
    panel (two widths, back and forth) wraps every mounted turn's text again each time.
    """

    HEIGHTS_KEPT = 2

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._heights: dict[int, int] = {}

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        height = self._heights.get(width)
        if height is None:
            height = super().get_content_height(container, viewport, width)
            if len(self._heights) >= self.HEIGHTS_KEPT:
                self._heights.pop(next(iter(self._heights)))
            self._heights[width] = height
        return height

    def update(self, content: Any = "", *, layout: bool = True) -> None:
        self._heights.clear()
        super().update(content, layout=layout)


class LiteTurn(HeightsByWidth):
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

    def __init__(self, record: TurnTranscript) -> None:
        super().__init__(turn_plain_text(record), id=f"lite-{record.number}")
        self.record = record

    def on_click(self) -> None:
        self.post_message(self.LoadRequested(self))


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
        layout: stream;
        padding: 0 1;
        scrollbar-size-vertical: 1;
    }
    ChatLog > .plain-note {
        margin: 0 2 1 2;
        padding: 0 1;
        border: round $error;
        color: $text;
    }
    """

    def __init__(self, *, tz: tzinfo | None = None, id: str | None = None) -> None:
        super().__init__(id=id)
        self._tz = tz
        self._load_timer: Timer | None = None
        self._earlier: list[TurnTranscript] = []
        """Turns above the first mounted one, oldest first."""
        self._marker: EarlierTurns | None = None
        self._reading: tuple[Widget, int] | None = None
        """The first widget at or below the top line as turns above it load, and how far
        below the top line it must stay (see `arrange`)."""

    def on_mount(self) -> None:
        self.anchor()
        self.watch(self, "scroll_y", self._user_scrolled, init=False)

    def arrange(self, size: Size, optimal: bool = False) -> DockArrangeResult:
        """Lay the turns out, keeping what the user reads where it was on screen.

        The scroll position is corrected in the same layout pass that gives a swapped turn
        its new height, as Textual's own bottom anchoring is: corrected a refresh later,
        one frame (longer on a loaded machine) showed the text jumped.
        """
        result = super().arrange(size, optimal)
        if self._reading is not None:
            widget, offset = self._reading
            for placement in result.placements:
                if placement.widget is widget:
                    y = max(0, placement.region.y - offset)
                    self.set_reactive(ChatLog.scroll_y, y)
                    self.set_reactive(ChatLog.scroll_target_y, y)
                    self.vertical_scrollbar.set_reactive(ScrollBar.position, y)
                    break
        return result

    def _keep_reading(self, seen: float) -> None:
        """Hold the first widget at or below the top line (`seen`) where it is on screen
        until the user scrolls."""
        for child in self.children:
            if child.display and child.virtual_region.y >= seen:
                self._reading = (child, child.virtual_region.y - round(seen))
                return

    def view(self, number: int) -> TurnView | None:
        """The full view of turn `number`, if it is drawn in full."""
        from modes_tui.tui.turn_view import TurnView

        for child in self.query_children(TurnView):
            if child.record.number == number:
                return child
        return None

    @property
    def earlier_count(self) -> int:
        """Turns not drawn yet, above the first one shown."""
        return len(self._earlier)

    async def start_turn(self, record: TurnTranscript) -> TurnView:
        """A new live turn at the bottom."""
        from modes_tui.tui.turn_view import TurnView

        await self._trim()
        await self._unload_above()
        view = TurnView(record, live=True, tz=self._tz)
        await self.mount(view)
        self.anchor()
        return view

    async def show_records(self, records: Iterable[TurnTranscript], *, live: bool = False) -> None:
        """Draw finished turns from the bottom up (see the class docstring)."""
        from modes_tui.tui.turn_view import TurnView

        records = list(records)
        recent = records[-FULL_TURNS:]
        self._earlier = records[: len(records) - len(recent)]
        opened = recent[-self._turns_to_fill(recent) :]
        widgets: list[Widget] = [LiteTurn(r) for r in recent[: len(recent) - len(opened)]]
        widgets += [TurnView(r, live=live, tz=self._tz) for r in opened]
        await self.mount_all(widgets)
        await self._show_marker()
        self.anchor()

    def _turns_to_fill(self, records: list[TurnTranscript]) -> int:
        """How many of the newest turns fill the screen, by their plain text's lines
        (1 to OPEN_IN_FULL). Each full turn is dozens of widgets that every relayout
        (a resize, the panel shown or hidden) arranges again, so only those seen are drawn
        in full; the others load as they scroll into view."""
        width = max(20, (self.size.width or self.app.size.width) - 6)
        height = self.size.height or self.app.size.height
        lines = 0
        for count, record in enumerate(reversed(records[-OPEN_IN_FULL:]), start=1):
            lines += sum(
                1 + len(line) // width for line in turn_plain_text(record).plain.split("\n")
            )
            if lines >= height:
                return count
        return min(len(records), OPEN_IN_FULL) or 1

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
        from modes_tui.tui.turn_view import TurnView

        turns = [c for c in self.children if isinstance(c, TurnView | LiteTurn)]
        extra = len(turns) - (FULL_TURNS + LOAD_BATCH)
        if extra <= 0 or self.is_anchor_released:
            return
        gone = turns[:extra]
        self._earlier.extend(t.record for t in gone)
        await self.remove_children(gone)
        await self._show_marker()

    async def _unload_above(self) -> None:
        """While the user follows the conversation at the bottom, finished turns far above
        the screen go back to their plain stand-ins (they load in full again when scrolled
        to), so a long live session relays out as fast as a fresh one. The newest
        `OPEN_IN_FULL` stay in full whatever their size."""
        from modes_tui.tui.turn_view import TurnView

        if self.is_anchor_released:
            return
        top = self.scroll_y - LOAD_MARGIN
        views = list(self.query_children(TurnView))[:-OPEN_IN_FULL]
        gone = [view for view in views if view.virtual_region.bottom < top]
        for view in gone:
            await self.mount(LiteTurn(view.record), before=view)
        if gone:
            await self.remove_children(gone)

    @property
    def is_anchor_released(self) -> bool:
        """The user scrolled away from the bottom."""
        return self.scroll_y < self.max_scroll_y - 1

    async def add_note(self, markdown: str) -> SystemNote:
        """A note from the app at the bottom."""
        from modes_tui.tui.turn_view import SystemNote

        note = SystemNote(terminal_safe(markdown))  # it may quote a pack or a session
        await self.mount(note)
        self.anchor()
        return note

    async def add_plain_note(self, text: str) -> Static:
        """A note from the app that must show whole (an error): plain text, wrapped."""
        note = PlainNote(Text(terminal_safe(text)), classes="plain-note")  # errors quote files
        await self.mount(note)
        self.anchor()
        return note

    async def add_compaction(self, compaction: Compaction) -> Widget:
        """The folded note of a `/compact` at the bottom (the summary is sanitised there)."""
        from modes_tui.tui.compaction_note import CompactionNote

        note = CompactionNote(compaction)
        await self.mount(note)
        self.anchor()
        return note

    async def clear(self) -> None:
        """Remove every turn and note."""
        self._earlier = []
        self._marker = None
        self._reading = None
        await self.remove_children()

    async def refresh_reroutes(self) -> None:
        """Show re-route results that arrived after the turns were drawn (replay)."""
        from modes_tui.tui.turn_view import TurnView

        for child in self.children:
            if isinstance(child, TurnView):
                await child.show_reroute()
            elif isinstance(child, LiteTurn):
                child.update(turn_plain_text(child.record))

    # ---------------------------------------------------------------- load on scroll

    def _user_scrolled(self) -> None:
        self._reading = None  # the user moved: their place is wherever they scrolled to
        self._scrolled()

    def _scrolled(self) -> None:
        if self._load_timer is not None:
            self._load_timer.stop()
        self._load_timer = self.set_timer(0.05, self._load_visible)

    async def _load_visible(self) -> None:
        """Near the top, mount older turns; cheap turns in (or near) view load in full.

        A turn drawn in full is taller or shorter than its plain stand-in, so after a load
        the screen is checked again once laid out (what moved into view loads too), and when
        a turn that starts above the top line loads, the view moves by what it grew (in the
        same layout pass: `arrange`), so what the user is reading stays where it is.
        """
        self._load_timer = None
        if self._earlier and self.scroll_y <= LOAD_MARGIN:
            await self.load_earlier()
        seen = self.scroll_y
        following = not self.is_anchor_released
        top = seen - LOAD_MARGIN
        bottom = seen + self.size.height + LOAD_MARGIN
        regions = [
            (lite, lite.virtual_region_with_margin) for lite in self.query_children(LiteTurn)
        ]
        shown = [(lite, r) for lite, r in regions if r.bottom >= top and r.y <= bottom]
        if not following and any(region.y < seen for _, region in shown):
            self._keep_reading(seen)
        for lite, _ in shown:
            view = await self.load(lite)
            if self._reading is not None and self._reading[0] is lite:
                self._reading = (view, self._reading[1])
        if shown:
            self._scrolled()

    async def load(self, lite: LiteTurn) -> TurnView:
        """Draw one cheap turn in full, in place."""
        from modes_tui.tui.turn_view import TurnView

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

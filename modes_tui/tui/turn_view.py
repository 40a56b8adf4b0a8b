"""One turn in full: the user's message, the route, the streamed Markdown answer, tool
calls, folded reasoning, and how the turn ended.

Answers stream through `Markdown.get_stream()` and get one full update when the reply
ends (only if the text shown differs). Imported on first use by `chat`, so Markdown (and
its parser) is not on the path to the app's first frame.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import tzinfo
from typing import assert_never

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Button, Collapsible, Markdown, Static
from textual.widgets._markdown import MarkdownStream

from modes_tui.core.history.events import ToolCallFinished, ToolCallRequested, TurnEvent
from modes_tui.core.history.transcript import Superseded, TurnTranscript
from modes_tui.frontend.tool_text import EMPTY_ANSWER
from modes_tui.route_format import duration, strip_line
from modes_tui.tui.compaction_note import CompactionNote
from modes_tui.tui.markdown_lists import BLOCKS as LIST_BLOCKS
from modes_tui.tui.render import correction_line, reroute_line, tool_summary, unrouted_words
from modes_tui.tui.stream_fit import FitsInStream
from modes_tui.tui.turn_messages import RetryRequested

NO_RETRY = {
    "auth": "the same key would be refused again; set the provider's API key variable "
    "(e.g. OPENAI_API_KEY) and start modes-tui again",
    "not_found": "the same model id would fail again; fix it in the profile or --model",
    "context_too_long": "the same request would be too long again; /clear first",
    "bad_request": "the provider would refuse the same request again",
}
"""Why a failed turn offers no Retry button, by error kind (the hint says what to do)."""

REASONING_REFRESH_S = 0.1
"""How often folded reasoning is redrawn while it streams."""


class ToolCallView(FitsInStream, Static):
    """A tool call, its arguments and (once resolved) its result."""

    DEFAULT_CSS = """
    ToolCallView {
        margin: 0 0 1 2;
        padding: 0 1;
        border-left: thick $secondary;
        height: auto;
    }
    """


def answer_parser() -> MarkdownIt:
    """Textual's Markdown parser, showing every character of an answer as written and
    keeping every line break.

    HTML is off: Textual's Markdown draws no HTML and dropped what the parser took for it,
    so `List<String>` showed as "List" and a traceback's `<module>` vanished. Without it,
    tags, `<br>` and comments are text, shown literally (autolinks `<https://...>` stay links).

    Markdown joins lines that a single newline separates (a "soft" break) into one, so a
    haiku or an address showed as one line; models mean those breaks. A rule after the
    inline pass turns each soft break into a hard one. Code blocks, tables and list items
    are untouched (their line structure is not made of soft breaks), and a stream is parsed
    with the same rule at each step, so it stays incremental.
    """
    parser = MarkdownIt("gfm-like", {"html": False})
    parser.core.ruler.push("keep_line_breaks", _keep_line_breaks)
    return parser


def _keep_line_breaks(state: StateCore) -> None:
    for token in state.tokens:
        if token.type == "inline" and token.children:
            for child in token.children:
                if child.type == "softbreak":
                    child.type = "hardbreak"


class AnswerSegment(Markdown):
    """Answer text of one model round (lists drawn one widget per item: `markdown_lists`),
    with its single line breaks kept."""

    BLOCKS = LIST_BLOCKS

    def __init__(self, markdown: str | None = None) -> None:
        super().__init__(markdown, parser_factory=answer_parser)

    DEFAULT_CSS = """
    AnswerSegment {
        layout: stream;
        margin: 0 0 0 0;
        padding: 0 1;
        background: transparent;
    }
    """


class EndingNote(FitsInStream, Static):
    """How a turn ended when there is nothing to press (cancelled, or failed for good)."""


class Fold(FitsInStream, Collapsible):
    """Folded text in a turn: reasoning, or an answer the user corrected."""


class TurnNote(FitsInStream, Horizontal):
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
        self.post_message(RetryRequested(self._number))


class TurnView(Vertical):
    """One user turn in full: message, route, answer, tools, reasoning, and how it ended.

    Children, in order: the user's message, the route line, answer segments and tool calls
    (in the order they happened), then the "tail": folded reasoning, how the turn ended, and
    the meta line. Finished turns are composed at once (one layout pass); live ones grow.
    """

    DEFAULT_CSS = """
    TurnView {
        layout: stream;
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
    TurnView > Collapsible.superseded CollapsibleTitle { color: $warning; }
    TurnView > .meta { padding: 0 1; color: $text-disabled; }
    TurnView > .note-text { margin: 0 0 0 2; }
    TurnView .-failed { color: $error; }
    TurnView .-cancelled { color: $warning; }
    """

    def __init__(
        self, record: TurnTranscript, *, live: bool = True, tz: tzinfo | None = None
    ) -> None:
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
        yield from self._folds()
        yield Static(self._route_text(), classes="route")
        if not self.live and record.compactions:
            from modes_tui.tui.compaction_note import CompactionNote

            for compacted in record.compactions:
                yield CompactionNote(compacted.compaction)
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

    def _folds(self) -> Iterator[Widget]:
        """The answers the user corrected, folded, each marked with both modes."""
        for old in self.record.superseded:
            yield _fold(old)

    def _route_text(self) -> Text:
        record = self.record
        if record.route is None:
            return Text(f"→ {unrouted_words(record)}", style="italic")
        line = strip_line(record.route, record.mode)
        previous = record.mode_change.previous if record.mode_change is not None else None
        if record.mode_change is not None and record.number > 1 and not record.superseded:
            line.append(f"  (was {previous or 'no mode'})", style="dim")
        for corrected in record.corrections:
            if corrected.rerun and not corrected.note:
                continue  # the fold above and the route's reason say it already
            line.append("\n")
            undone = corrected.correction is not None and corrected.correction.id in record.undone
            line.append_text(correction_line(corrected, record.number, undone=undone))
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
        match event.type:
            case "route_decided" | "mode_changed":
                self.show_route()
            case "turn_corrected":
                await self._corrected(rerun=event.rerun)
            case "request_built":
                await self._next_round(event.round)
            case "text_delta":
                await self._write(event.text)
            case "reasoning_delta":
                await self._show_reasoning()
            case "tool_call_requested" | "tool_call_finished":
                await self._show_tool(event)
            case "conversation_compacted":
                await self._mount_in_order(CompactionNote(event.compaction))
            case "usage":
                pass  # shown with the ending
            case "turn_finished" | "turn_failed" | "turn_cancelled":
                await self._end()
            case _:
                assert_never(event)

    async def _corrected(self, *, rerun: bool) -> None:
        """A re-run folds the answer it replaces; a correction without one moves the route."""
        if rerun:
            await self._fold_answer()
        else:
            self.show_route()

    async def _next_round(self, number: int) -> None:
        """A request after the first closes the answer segment the round before wrote."""
        if number > 1:
            await self._close_segment()

    async def _show_reasoning(self) -> None:
        """Open the folded reasoning on its first text; redraw it at most every
        REASONING_REFRESH_S while it streams."""
        if self._reasoning is None:
            await self.mount(self._reasoning_view())
        if self._reasoning_timer is None:
            self._reasoning_timer = self.set_timer(REASONING_REFRESH_S, self._flush_reasoning)

    async def _show_tool(self, event: ToolCallRequested | ToolCallFinished) -> None:
        """A call asked for closes the answer segment above it and shows the record's
        activity; its result updates that view (or shows it, when no request came)."""
        call_id = event.call.id
        activity = self.record.tool(call_id)
        if isinstance(event, ToolCallRequested):
            await self._close_segment()
        if activity is None:
            return
        shown = self._tools.get(call_id)
        if shown is None or isinstance(event, ToolCallRequested):
            shown = self._tools[call_id] = ToolCallView(tool_summary(activity))
            await self._mount_in_order(shown)
        else:
            shown.update(tool_summary(activity))

    async def _end(self) -> None:
        """The turn ended (finished, failed, cancelled): the last segment, the ending."""
        await self._close_segment(final=True)
        if not self._segments_shown and self.record.answer:
            # a partial answer that never streamed here: the failure's own, or an
            # earlier attempt's that a failed retry keeps
            self._segments_shown = 1
            await self._mount_in_order(AnswerSegment(self.record.answer))
        self._flush_reasoning()
        if self.record.route is None:
            self.show_route()  # "routing…" no more: it ended before the router decided
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
        return Fold(self._reasoning, title="Reasoning", collapsed=True, classes="tail")

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
            if record.shows_kept_partial:
                text.append(f"\n  {kept_note(record)}")
            if not failure.retryable and self.live:
                why = NO_RETRY.get(failure.kind, "the same request would fail the same way")
                text.append(f"\n  no Retry: {why}", style="dim")
            if failure.retryable and self.live:
                yield TurnNote(record.number, text, retry=True, kind="failed")
            else:
                yield EndingNote(text, classes="tail ending note-text -failed")
        elif record.cancelled:
            text = Text("■ cancelled: the answer above is partial")
            if record.shows_kept_partial:
                text.append(f"\n  {kept_note(record)}")
            yield EndingNote(text, classes="tail ending note-text -cancelled")
        elif record.said_nothing:
            yield EndingNote(Text(EMPTY_ANSWER, style="dim"), classes="tail ending note-text")
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
            calls = f"{len(record.tools)} tool call{'s' if len(record.tools) != 1 else ''}"
            parts.append(f"{calls} {duration(spent)}" if spent else calls)
        return Text(" · ".join(parts))

    def show_route(self) -> None:
        """Redraw the route line (a correction of this turn was made or undone). A turn
        not composed yet has no line to redraw: it draws the record as it is when it
        composes (a re-route can land while a replayed turn is being drawn in full)."""
        for route in self.query(".route").results(Static):
            route.update(self._route_text())

    async def show_reroute(self) -> None:
        """Show (or update) today's decision for this recorded turn."""
        self.show_route()

    async def restart(self) -> None:
        """Clear the answer for a retry: everything below the route line goes."""
        await self._close_segment()
        self._tools.clear()
        self._reasoning = None
        self._segments_shown = 0
        children = list(self.children)
        route = self.query_one(".route", Static)
        await self.remove_children(children[children.index(route) + 1 :])
        route.update(self._route_text())

    async def _fold_answer(self) -> None:
        """A correction re-runs the turn: the answer so far folds away above a new route line."""
        await self._close_segment()
        if self._reasoning_timer is not None:
            self._reasoning_timer.stop()
            self._reasoning_timer = None
        self._tools.clear()
        self._reasoning = None
        self._segments_shown = 0
        await self.remove_children(list(self.children)[1:])
        await self.mount_all([*self._folds(), Static(self._route_text(), classes="route")])
        # the stream layout measured the fold before it collapsed: measure it again
        self.refresh(layout=True)


def kept_note(record: TurnTranscript) -> str:
    """Why the answer above a failed retry is an older one."""
    return (
        f"attempt {record.attempt} gave no text; the partial answer above is attempt "
        f"{record.kept_from}'s, kept"
    )


def _fold(old: Superseded) -> Collapsible:
    parts: list[Widget] = []
    if old.route is not None:
        parts.append(Static(strip_line(old.route, old.mode)))
    parts.append(AnswerSegment(old.answer or "_(no answer)_"))
    return Fold(*parts, title=old.title, collapsed=True, classes="superseded")


class SystemNote(FitsInStream, Markdown):
    """The mode list, export results: text from the app, not from a model (it may quote a
    path or a name with angle brackets: shown as written)."""

    def __init__(self, markdown: str | None = None) -> None:
        super().__init__(markdown, parser_factory=answer_parser)

    DEFAULT_CSS = """
    SystemNote {
        margin: 0 2 1 2;
        padding: 0 1;
        border: round $secondary;
        background: transparent;
    }
    """

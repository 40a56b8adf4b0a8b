"""Replaying a recorded session through the live widgets, and picking one to replay."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import tzinfo
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from modes_tui.core.history.safe_events import TerminalEvents
from modes_tui.core.history.transcript import TurnTranscript, fold_turn
from modes_tui.core.terminal_text import terminal_safe
from modes_tui.tui.chat import ChatLog
from modes_tui.tui.inspector import InspectorScreen
from modes_tui.tui.messages import Rerouted, RerouteFailed
from modes_tui.tui.panel import RoutePanel
from modes_tui.tui.render import format_time, plural
from modes_tui.tui.services import (
    ReplayedSession,
    RerouteResult,
    SessionSummary,
)

if TYPE_CHECKING:
    from modes_tui.store.replay import ReplayedTurn


def records_from_turns(turns: Iterable[ReplayedTurn]) -> list[TurnTranscript]:
    """Feed each recorded turn's events into a record, as a live turn would be fed."""
    records = []
    for turn in turns:
        screen = TerminalEvents()  # a session file is text from outside
        shown = [*(e for event in turn.events for e in screen.take(event)), *screen.finish()]
        record = fold_turn(turn.turn, terminal_safe(turn.user or ""), shown)
        if record.status in ("routing", "answering"):
            record.status = "finished"  # the log ended mid-turn; show what there is
        records.append(record)
    return records


class ReplayScreen(Screen[None]):
    """A recorded session, drawn by the same chat and panel widgets, without any model."""

    DEFAULT_CSS = """
    ReplayScreen > #replay-title {
        dock: top;
        height: auto;
        background: $panel;
        padding: 0 1;
    }
    ReplayScreen > Horizontal { height: 1fr; }
    ReplayScreen ChatLog { width: 1fr; }
    ReplayScreen.-narrow ChatLog { width: 100%; }
    """

    BINDINGS: ClassVar = [
        Binding("escape,q", "app.pop_screen", "Close replay", id="replay.close"),
        Binding("ctrl+b", "toggle_panel", "Routes", id="replay.panel"),
    ]

    def __init__(
        self,
        session: ReplayedSession,
        *,
        tz: tzinfo | None = None,
        reroute: Callable[[], RerouteResult] | None = None,
    ) -> None:
        super().__init__()
        self.session = session
        self.records = records_from_turns(session.turns)
        self._tz = tz
        self._reroute = reroute
        self.reroute_note = "" if reroute is None else "re-routing with today's router…"
        """What the title says about re-routing."""

    def _title(self) -> Text:
        session = self.session
        title = Text("Replay ", style="bold")
        title.append(session.id, style="bold cyan")
        title.append(f" · {plural(len(self.records), 'turn')} · no model is called", style="dim")
        if session.title:
            title.append(f"\n{session.title}", style="italic")
        summary = session.summary or self.reroute_note
        if summary:
            title.append(f"\nre-route: {summary}")
        for warning in session.warnings:
            title.append(f"\n⚠ {warning}", style="yellow")
        return title

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="replay-title")
        with Horizontal():
            yield ChatLog(id="replay-chat", tz=self._tz)
            yield RoutePanel(id="replay-routes", tz=self._tz, live=False)
        yield Footer()

    async def on_mount(self) -> None:
        # chat's layout rules: below 100 columns the panel leaves the row (ctrl+b shows
        # it over the chat) and each turn keeps a one-line route strip
        self.query_one(RoutePanel).fit(self.app.size.width)
        await self.query_one(ChatLog).show_records(self.records)
        self.query_one(RoutePanel).set_records(self.records)
        if self._reroute is not None:
            # After the first paint: the re-route thread competes for the GIL.
            self.call_after_refresh(self.run_reroute)

    @work(thread=True, exclusive=True, exit_on_error=False, group="reroute", name="re-route")
    def run_reroute(self) -> None:
        """Today's router over the recorded turns, off the event loop; the result (or the
        error) comes back as a message, handled below."""
        assert self._reroute is not None
        try:
            result = self._reroute()
        except Exception as error:  # noqa: BLE001 - the replay stays; the title says it failed
            self.post_message(RerouteFailed(str(error)))
            return
        self.post_message(Rerouted(result))

    @on(Rerouted)
    async def _rerouted(self, message: Rerouted) -> None:
        if self.is_attached:
            await self.show_reroute(message.result)

    @on(RerouteFailed)
    def _reroute_failed(self, message: RerouteFailed) -> None:
        if self.is_attached:
            self.reroute_note = f"failed: {message.error}"
            self.query_one("#replay-title", Static).update(self._title())

    async def show_reroute(self, result: RerouteResult) -> None:
        """Mark each turn with today's decision."""
        for record in self.records:
            record.reroute = result.by_turn.get(record.number)
        self.session.summary = result.summary
        self.query_one("#replay-title", Static).update(self._title())
        await self.query_one(ChatLog).refresh_reroutes()
        self.query_one(RoutePanel).set_records(self.records)

    def on_resize(self, event: events.Resize) -> None:
        """The panel fits the width as on the chat screen."""
        if self.is_mounted:
            self.query_one(RoutePanel).fit(event.size.width)

    def action_toggle_panel(self) -> None:
        """Show or hide the route panel (on a narrow terminal, over the chat)."""
        self.query_one(RoutePanel).toggle(self.app.size.width)

    @on(RoutePanel.InspectRequested)
    def _inspect(self, event: RoutePanel.InspectRequested) -> None:
        event.stop()
        self.app.push_screen(InspectorScreen(event.record, tz=self._tz))


@dataclass(frozen=True, slots=True)
class PickedSession:
    """What the user chose in the session picker."""

    id: str
    """The session."""
    resume: bool = False
    """Continue it here (`r`) rather than replay it (Enter)."""


class SessionsScreen(ModalScreen[PickedSession | None]):
    """Pick a recorded session; Enter replays it, `r` resumes it."""

    DEFAULT_CSS = """
    SessionsScreen { align: center middle; }
    SessionsScreen > Vertical {
        width: 90%;
        max-width: 120;
        height: 80%;
        border: thick $primary;
        background: $surface;
    }
    SessionsScreen #sessions-title { padding: 0 1; text-style: bold; background: $panel; }
    SessionsScreen OptionList { height: 1fr; border: none; }
    """

    BINDINGS: ClassVar = [
        Binding("escape", "dismiss_none", "Close", id="sessions.close"),
        Binding("r", "resume", "Resume", id="sessions.resume"),
    ]

    def __init__(self, sessions: Sequence[SessionSummary], *, tz: tzinfo | None = None) -> None:
        super().__init__()
        self.sessions = list(sessions)
        self._tz = tz

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(
                f"Sessions · {len(self.sessions)} · Enter replays, r resumes, Esc closes",
                id="sessions-title",
            )
            options = [Option(self._line(s), id=s.id) for s in self.sessions]
            if not options:
                options = [Option("No recorded sessions yet.", disabled=True)]
            yield OptionList(*options, id="sessions")

    def _line(self, session: SessionSummary) -> Text:
        text = Text(session.id, style="bold cyan")
        created = session.created[:10] + " " + format_time(session.created, self._tz)
        text.append(f"  {created}", style="dim")
        if session.turns is not None:
            text.append(f"  {plural(session.turns, 'turn')}", style="dim")
        if session.pack:
            text.append(f"  {session.pack}", style="dim")
        text.append(f"\n  {session.title or '(untitled)'}")
        return text

    @on(OptionList.OptionSelected, "#sessions")
    def _picked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id:
            self.dismiss(PickedSession(event.option.id))

    def action_resume(self) -> None:
        """Continue the highlighted session in the app."""
        options = self.query_one("#sessions", OptionList)
        if options.highlighted is None:
            return
        session_id = options.get_option_at_index(options.highlighted).id
        if session_id:
            self.dismiss(PickedSession(session_id, resume=True))

    def action_dismiss_none(self) -> None:
        """Close without picking."""
        self.dismiss(None)

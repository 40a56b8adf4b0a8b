"""Running turns in the app: send, retry, resend an edit, correct, and show every event.

The engine's events are folded into the turn's `TurnTranscript` and drawn by its
`TurnView`; `_reflect` updates the route panel, the header and the status line.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, assert_never

from textual import on, work

from modes_tui.core.terminal_text import terminal_safe
from modes_tui.frontend import corrections
from modes_tui.frontend.commands import CommandError, message_text, one_shot
from modes_tui.tui.app_base import AppBase
from modes_tui.tui.render import tool_outcome
from modes_tui.tui.status import model_label
from modes_tui.tui.turn_messages import RetryRequested

if TYPE_CHECKING:
    from modes_tui.core.events import TurnCorrected, TurnEvent, TurnFailed
    from modes_tui.core.transcript import TurnTranscript
    from modes_tui.tui.services import TurnEngine
    from modes_tui.tui.turn_view import TurnView

# The event and transcript types load with the first turn, not on the way to the first
# frame (`modes_tui.core.events` alone is a dozen dataclasses).


class TurnsApp(AppBase):
    """Turns: run, retry, resend, correct, cancel; one event at a time onto the screen."""

    @work(exclusive=True, exit_on_error=False, group="turn", name="turn")
    async def run_turn(self, text: str, *, force: str | None = None) -> None:
        """Route and answer one message, showing every event; `force` names the mode of
        this message only (`/MODE text`), the control file is not touched."""
        from modes_tui.core.transcript import TurnTranscript

        self._turn_running = True
        number = (self.records[-1].number if self.records else 0) + 1
        record = TurnTranscript(number, terminal_safe(text))  # a paste may hold escapes
        self.records.append(record)
        view = await self.chat.start_turn(record)
        try:
            engine = await self._wait_for_engine(record, view)
            if engine is None:
                return
            self.status.busy("Routing…")
            await self._play(record, view, engine.run_turn(text, force=force))
        finally:
            self._turn_running = False

    def send_line(self, text: str, *, replacing: TurnTranscript | None = None) -> None:
        """Run a typed line as a turn: `/MODE text` in MODE for this message only, `//x` as
        `/x`, anything else as it is; in place of turn `replacing` when one is edited."""
        try:
            shot = one_shot(text, self.settings())
        except CommandError as error:  # cannot happen for a line checked when it was sent
            self.status.error(str(error))
            return
        message, force = (shot.text, shot.mode) if shot else (message_text(text), None)
        if replacing is not None:
            self.resend_turn(replacing, message, force=force)
        else:
            self.run_turn(message, force=force)

    @work(exclusive=True, exit_on_error=False, group="turn", name="retry")
    async def retry_turn(self, record: TurnTranscript) -> None:
        """Run the last turn again."""
        if self.engine is None:
            return
        self._turn_running = True
        try:
            view = self.chat.view(record.number)
            record.restart()
            if view is not None:
                await view.restart()
            self.status.busy("Retrying: routing…")
            await self._play(record, view, self.engine.retry())
        finally:
            self._turn_running = False

    async def _wait_for_engine(self, record: TurnTranscript, view: TurnView) -> TurnEngine | None:
        settled = self._engine_settled
        if settled is not None and not settled.is_set():
            what = model_label(self.services.model) if self.started else "modes-tui"
            self.status.busy(f"Loading {what}; your message waits…")
            await settled.wait()
        if self.engine is None:
            failure = self._startup_failure()
            record.apply(failure)
            await view.apply(failure)
            return None
        return self.engine

    async def _play(
        self, record: TurnTranscript, view: TurnView | None, events: AsyncIterator[TurnEvent]
    ) -> None:
        from modes_tui.core.safe_events import safe_events

        async for event in safe_events(events):  # model text must not drive the terminal
            record.apply(event)
            if view is not None:
                await view.apply(event)
            self._reflect(record, event)

    def _reflect(self, record: TurnTranscript, event: TurnEvent) -> None:
        """Panel, header and status line for one event."""
        match event.type:
            case "route_decided":
                self.panel.decided(record)
                self.header.show(active_mode=record.mode or "no mode")
                profile = self.services.pack.get(record.mode) if record.mode else None
                if profile is not None and profile.mcp:  # a server's first start takes seconds
                    servers = ", ".join(profile.mcp)
                    self.status.busy(f"Routed to {record.mode}; getting tools from MCP {servers}…")
                else:
                    self.status.busy(f"Routed to {record.mode or 'no mode'}; asking the model…")
            case "request_built":
                self.panel.refresh_record(record)
                self.status.busy(f"Waiting for {model_label(event.request.model)}…")
            case "text_delta":
                if self.status.activity and not self.status.activity.startswith("Answering"):
                    self.status.busy(f"Answering in {record.mode or 'no mode'}…")
            case "tool_call_requested":
                what = "Asking before running" if event.needs_confirmation else "Running"
                self.status.busy(f"{what} {event.call.name}…")
            case "tool_call_finished":
                activity = record.tool(event.call.id)
                outcome = tool_outcome(activity) if activity is not None else event.outcome
                self.status.busy(f"{event.call.name}: {outcome}; asking the model…")
            case "turn_finished":
                self.panel.refresh_record(record)
                self.status.idle()
                self._show_cost()
            case "turn_cancelled":
                self.panel.refresh_record(record)
                self.status.idle("Cancelled; the partial answer is kept · ctrl+r tries again")
                self._show_cost()
            case "turn_corrected":
                self.panel.refresh_record(record)
                self._corrected(event)
            case "turn_failed":
                self.panel.refresh_record(record)
                self._show_cost()
                retry = " · ctrl+r or the Retry button tries again" if event.retryable else ""
                self.status.error(f"The turn failed: {event.error}{retry}")
            case "mode_changed" | "reasoning_delta" | "usage":
                pass  # the turn's view shows them; nothing changes in the panel or status
            case _:
                assert_never(event)

    def _startup_failure(self) -> TurnFailed:
        """Why a message cannot run: the setup or the model failed, with the fix."""
        from modes_tui.core.events import TurnFailed

        problem = self._startup_problem
        if problem is not None:
            return TurnFailed(
                error=f"modes-tui could not start: {problem.headline}",
                kind="startup",
                hint=problem.hint,
                retryable=False,
            )
        return TurnFailed(
            error=f"the model could not start: {self._engine_error}",
            kind="startup",
            hint="Check the model settings (modes-tui --help), then restart.",
            retryable=False,
        )

    def _turn_failed_unexpectedly(self, message: str) -> None:
        from modes_tui.core.events import TurnFailed

        if not self.records:
            self.status.error(message)
            return
        record = self.records[-1]
        failure = TurnFailed(
            error=message,
            kind="app",
            hint="This is a bug in modes-tui; the conversation is kept. Retry may work.",
            retryable=True,
        )
        record.apply(failure)
        view = self.chat.view(record.number)
        if view is not None:
            self.call_later(view.apply, failure)
        self._reflect(record, failure)

    def action_cancel_turn(self) -> None:
        """Stop the running turn (the partial answer stays), or stop editing a message."""
        if self._editing is not None and not self._turn_running:
            self._stop_editing()
            self.prompt.value = ""
            self.status.idle("Edit dropped; the turn stays as it was.")
            return
        if self._turn_running and self.engine is not None:
            self.engine.cancel()
            self.status.busy("Cancelling…")

    def action_retry(self) -> None:
        """Retry the last turn when it failed or was cancelled."""
        if not self.records or self._turn_running:
            return
        record = self.records[-1]
        if not retryable(record):
            self.status.error("Only a failed or cancelled last turn can be retried.")
            return
        self.retry_turn(record)

    async def _run_next(self) -> None:
        """A turn ended: start the first waiting message, if any."""
        if self._turn_running or not len(self.pending):
            return
        text = await self.pending.take_first()
        if text is not None:
            self.send_line(text)

    @work(exclusive=True, exit_on_error=False, group="turn", name="resend")
    async def resend_turn(
        self, old: TurnTranscript, text: str, *, force: str | None = None
    ) -> None:
        """Run an edited last message in place of its turn (`force`: its `/MODE`)."""
        from modes_tui.core.transcript import TurnTranscript

        engine = self.engine
        if engine is None:
            self.status.error("The model is not ready yet; your edit is in the prompt history.")
            return
        self._turn_running = True
        try:
            record = TurnTranscript(len(self.records) + 1, text)
            old.superseded_by = record.number
            self.records.append(record)
            view = self.chat.view(old.number)
            if view is not None:
                await view.remove()
            self.panel.refresh_record(old)
            new_view = await self.chat.start_turn(record)
            self.status.busy(f"Resending as turn {record.number}: routing…")
            await self._play(record, new_view, engine.resend(text, force=force))
        finally:
            self._turn_running = False

    def action_correct(self) -> None:
        """The picker for the last turn, or for the decision selected in the route panel."""
        record = self.panel.highlighted_record() or (self.records[-1] if self.records else None)
        if not self._can_correct(record):
            return
        assert record is not None
        from modes_tui.tui.correct import CorrectScreen

        def chosen(mode: str | None) -> None:
            if mode:
                self.correct(record, mode)

        fallback = self.services.pack.router.fallback
        self.push_screen(CorrectScreen(record, self.mode_names(), fallback), callback=chosen)

    def _can_correct(self, record: TurnTranscript | None) -> bool:
        if record is None:
            self.status.error("No turn to correct yet: send a message first.")
        elif self._turn_running:
            self.status.error("A turn is running: wait for it, or Esc cancels it; then correct.")
        elif self.engine is None:
            self.status.error("modes-tui is still starting; try again in a moment.")
        else:
            return True
        return False

    def correct(self, record: TurnTranscript | None, mode: str) -> None:
        """Say `record`'s turn belonged to `mode` (the last turn is answered again in it)."""
        if not self._can_correct(record):
            return
        assert record is not None and self.engine is not None
        outcome = corrections.correct(self.engine, mode, turn=record.number)
        if isinstance(outcome, corrections.CorrectionRefused):
            self.status.error(outcome.reason)
            return
        events = outcome.events
        self._turn_running = True  # at once: a second correction must wait for this one
        self.status.busy(f"Correcting turn {record.number} to {mode}…")
        self.correct_turn(record, events)

    @work(exclusive=True, exit_on_error=False, group="turn", name="correct")
    async def correct_turn(self, record: TurnTranscript, events: AsyncIterator[TurnEvent]) -> None:
        """Show a correction: the folded first answer, then the re-run."""
        try:
            await self._play(record, self.chat.view(record.number), events)
        finally:
            self._turn_running = False

    def _corrected(self, event: TurnCorrected) -> None:
        if event.note:
            note = terminal_safe(event.note)  # it quotes the corrected message
            self.notify(note, title="Correction", severity="warning", timeout=8, markup=False)
        if event.rerun:
            self.status.busy(
                f"Turn {event.turn}: answered in {event.answered_mode or 'no mode'}, "
                f"corrected to {event.corrected_mode}; answering again…"
            )
        elif event.correction is not None:
            self.status.idle(
                f"Turn {event.turn} recorded as {event.corrected_mode} for the router to learn "
                "· /wrong undo forgets it"
            )

    def undo_correction(self) -> None:
        """Forget the latest correction of this session (`/wrong undo`); the answers stay."""
        if self.engine is None:
            self.status.error("modes-tui is still starting; try again in a moment.")
            return
        undone = corrections.undo(self.engine)
        if isinstance(undone, corrections.CorrectionRefused):
            self.status.error(undone.reason)
            return
        correction = undone.correction
        for record in self.records:
            if any(c.correction == correction for c in record.corrections):
                record.undone.add(correction.id)
                self.panel.refresh_record(record)
                view = self.chat.view(record.number)
                if view is not None:
                    view.show_route()
        self.status.idle(
            f"Forgot the correction of turn {correction.turn} "
            f"({correction.routed_mode or 'no mode'} → {correction.corrected_mode}); "
            "the answers stay."
        )

    @on(RetryRequested)
    def _retry_pressed(self, event: RetryRequested) -> None:
        event.stop()
        self.prompt.focus()  # the clicked button goes with the old answer: keys to the prompt
        if self.records and event.number != self.records[-1].number:
            self.status.error("Only the last turn can be retried.")
            return
        self.action_retry()


def retryable(record: TurnTranscript) -> bool:
    """A turn ctrl+r runs again: failed with a retryable error, or cancelled by the user
    (a cancelled turn keeps its message, so the engine can answer it again)."""
    if record.superseded_by is not None:
        return False
    if record.status == "cancelled":
        return True
    return record.failure is not None and record.failure.retryable

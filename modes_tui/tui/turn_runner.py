"""Running one turn on screen: the record, its view in the chat, and the engine's events
said by the panel, the header and the status line.

Every kind of turn (new, retried, resent after an edit, corrected) is a coroutine here that
the conversation runs in its one turn worker. A turn's number is given in one place,
`TurnRunner.new_record`: one more than the last turn's (a resent turn is a new turn too).
The runner translates events into widgets; it decides nothing about routing or models.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING

from modes_tui.core.terminal_text import terminal_safe
from modes_tui.tui.messages import TurnEnded, error_text
from modes_tui.tui.turn_queue import typed_line

if TYPE_CHECKING:
    from modes_tui.core.engine.ports import TurnEngine
    from modes_tui.core.history.events import TurnCorrected, TurnEvent
    from modes_tui.core.history.transcript import TurnTranscript
    from modes_tui.core.values.route import Route
    from modes_tui.tui.parts import ConversationParts
    from modes_tui.tui.turn_queue import Sent
    from modes_tui.tui.turn_view import TurnView

# The event and transcript types load with the first turn, not on the way to the first
# frame (`modes_tui.core.history.events` alone is a dozen dataclasses).


STILL_STARTING = "modes-tui is still starting; try again in a moment."


def next_number(records: list[TurnTranscript]) -> int:
    """The number of the next turn: one more than the last one's (1 for the first)."""
    return (records[-1].number if records else 0) + 1


class TurnRunner:
    """Runs turns into the conversation's parts."""

    def __init__(self, parts: ConversationParts) -> None:
        self._parts = parts

    def new_record(self, text: str) -> TurnTranscript:
        """A new turn at the end of the conversation, numbered after the last one."""
        from modes_tui.core.history.transcript import TurnTranscript

        parts = self._parts
        record = TurnTranscript(next_number(parts.records), text)
        parts.records.append(record)
        return record

    # ------------------------------------------------------------------ starting a turn

    def send(self, sent: Sent, *, replacing: TurnTranscript | None = None) -> None:
        """Run a line read at Enter as a turn (`/MODE text` in MODE for this message only),
        in place of turn `replacing` when one is edited."""
        message = sent.message
        if replacing is not None:
            self.resend(replacing, message.text, force=message.force)
        else:
            self.ask(message.text, force=message.force)

    def ask(self, text: str, *, force: str | None = None) -> None:
        """Route and answer one message as a new turn; `force` names the mode of this message
        only (`/MODE text`), the control file is not touched."""
        self._begin(partial(self.new_turn, text, force))

    def retry(self, record: TurnTranscript) -> None:
        """Run the last turn again."""
        engine = self._parts.engine
        if engine is not None:
            self._begin(partial(self.retried_turn, record, engine))

    def resend(self, old: TurnTranscript, text: str, *, force: str | None = None) -> None:
        """Run an edited last message in place of its turn (`force`: its `/MODE`)."""
        engine = self._parts.engine
        if engine is None:
            self._parts.status.error(
                "The model is not ready yet; your edit is in the prompt history."
            )
            return
        self._begin(partial(self.resent_turn, old, text, force, engine))

    def correct(self, record: TurnTranscript | None, mode: str, *, rerun: bool = True) -> None:
        """Say `record`'s turn belonged to `mode` (the last turn is answered again in it,
        unless `rerun` is False: a hand-off the user keeps)."""
        engine = self._parts.engine
        if not self.can_correct(record) or record is None or engine is None:
            return
        from modes_tui.frontend import corrections  # with the first correction

        outcome = corrections.correct(engine, mode, turn=record.number, rerun=rerun)
        if isinstance(outcome, corrections.CorrectionRefused):
            self._parts.status.error(outcome.reason)
            return
        self._parts.status.busy(f"Correcting turn {record.number} to {mode}…")
        self._begin(partial(self.corrected_turn, record, outcome.events))

    def recall(self) -> bool:
        """Up in an empty prompt: take back the newest waiting message, else edit the last
        message (resending it replaces that turn). False lets up walk the history."""
        parts = self._parts
        last = parts.records[-1] if parts.records else None
        if last is not None and parts.chat.view(last.number) is None:
            last = None  # cleared away (/clear): there is no turn on screen to replace
        recall = parts.turns.recall(last)
        if recall == "take back":
            parts.app.call_later(self._take_back_waiting)
        elif recall == "edit" and last is not None:
            parts.prompt.recall(typed_line(last))
            parts.status.idle(f"Editing turn {last.number} · Enter replaces it · esc keeps it")
        return recall is not None

    async def _take_back_waiting(self) -> None:
        sent = await self._parts.turns.take_back()
        if sent is not None:
            self._parts.prompt.value = sent.line
            self._parts.status.idle("Took a waiting message back: Enter queues it again.")

    def keep_hand_off(self, record: TurnTranscript | None) -> None:
        """Count `record`'s hand-off as a correction to the mode it was handed to (ctrl+n)."""
        route = record.route if record is not None else None
        if route is None or route.decided_by != "model":
            self._parts.status.error(
                "The last turn was not handed to another mode: nothing to keep."
            )
            return
        self.correct(record, route.mode_name, rerun=False)

    def can_correct(self, record: TurnTranscript | None) -> bool:
        """A turn can be corrected now; if not, the status line says why."""
        status = self._parts.status
        if record is None:
            status.error("No turn to correct yet: send a message first.")
        elif self._parts.turns.running:
            status.error("A turn is running: wait for it, or Esc cancels it; then correct.")
        elif self._parts.engine is None:
            status.error(STILL_STARTING)
        else:
            return True
        return False

    def _begin(self, turn: Callable[[], Awaitable[None]]) -> None:
        """Every kind of turn starts here: the queue knows at once (a second Enter or a second
        correction in the same instant waits), then the one turn worker runs it."""
        self._parts.turns.start()
        self._parts.app.run_worker(
            self._run(turn), exclusive=True, exit_on_error=False, group="turn", name="turn"
        )

    async def _run(self, turn: Callable[[], Awaitable[None]]) -> None:
        """The one worker every kind of turn runs in; `TurnEnded` says it ended."""
        crash: str | None = None
        try:
            await turn()
        except Exception as error:  # noqa: BLE001 - a bug must not take the conversation along
            crash = error_text(error)
        finally:
            self._parts.turns.finish()
            self._parts.post_message(TurnEnded(crash))

    # ------------------------------------------------------------------ the kinds of turn

    async def new_turn(self, text: str, force: str | None) -> None:
        """Route and answer `text` as a new turn (`force`: its one-shot mode)."""
        parts = self._parts
        record = self.new_record(terminal_safe(text))  # a paste may hold escapes
        view = await parts.chat.start_turn(record)
        engine = await parts.engine_settled()
        if engine is None:
            failure = parts.startup_failure()
            record.apply(failure)
            await view.apply(failure)
            return
        parts.status.busy("Routing…")
        await self.show_events(record, view, engine.run_turn(text, force=force))

    async def retried_turn(self, record: TurnTranscript, engine: TurnEngine) -> None:
        """The last turn again, in its place."""
        view = self._parts.chat.view(record.number)
        record.restart()
        if view is not None:
            await view.restart()
        self._parts.status.busy("Retrying: routing…")
        await self.show_events(record, view, engine.retry())

    async def resent_turn(
        self, old: TurnTranscript, text: str, force: str | None, engine: TurnEngine
    ) -> None:
        """An edited last message as a new turn in place of `old`."""
        parts = self._parts
        record = self.new_record(text)
        old.superseded_by = record.number
        view = parts.chat.view(old.number)
        if view is not None:
            await view.remove()
        parts.panel.refresh_record(old)
        new_view = await parts.chat.start_turn(record)
        parts.status.busy(f"Resending as turn {record.number}: routing…")
        await self.show_events(record, new_view, engine.resend(text, force=force))

    async def corrected_turn(
        self, record: TurnTranscript, events: AsyncIterator[TurnEvent]
    ) -> None:
        """A correction: the folded first answer, then the re-run."""
        await self.show_events(record, self._parts.chat.view(record.number), events)

    async def show_events(
        self, record: TurnTranscript, view: TurnView | None, events: AsyncIterator[TurnEvent]
    ) -> None:
        """Every event of the turn into its record, its view and the other parts."""
        from modes_tui.core.history.safe_events import safe_events

        async for event in safe_events(events):  # model text must not drive the terminal
            record.apply(event)
            if view is not None:
                await view.apply(event)
            self.reflect(record, event)

    def reflect(self, record: TurnTranscript, event: TurnEvent) -> None:
        """Panel, header and status line for one event (the turn's view draws the rest)."""
        parts = self._parts
        parts.panel.follow(record, event)
        if event.type == "route_decided":
            parts.header.show(active_mode=record.mode or "no mode")
            self._note_hand_off(event.route)
            self._show_policy(record.mode)
            parts.status.follow(record, event, self._mcp_servers(record.mode))
        elif event.type == "turn_corrected":
            self._corrected(event)
        else:
            if event.type == "request_built" and event.round == 1:
                # what the model is really offered: none when it cannot call tools
                self._show_policy(record.mode, [tool.name for tool in event.request.tools])
            parts.status.follow(record, event)
        if event.type in ("turn_finished", "turn_cancelled", "turn_failed"):
            self._show_cost()

    def failed_unexpectedly(self, message: str) -> None:
        """A bug broke the last turn: a failure card on it, with Retry."""
        from modes_tui.core.history.events import TurnFailed

        parts = self._parts
        if not parts.records:
            parts.status.error(message)
            return
        record = parts.records[-1]
        failure = TurnFailed(
            error=message,
            kind="app",
            hint="This is a bug in modes-tui; the conversation is kept. Retry may work.",
            retryable=True,
        )
        record.apply(failure)
        view = parts.chat.view(record.number)
        if view is not None:
            parts.app.call_later(view.apply, failure)
        self.reflect(record, failure)

    def _show_cost(self) -> None:
        """The session's cost in the header, once a turn had a known, non-zero price."""
        ledger = getattr(getattr(self._parts.engine, "costs", None), "ledger", None)
        if ledger is not None and (ledger.total or ledger.budget is not None):
            self._parts.header.show(cost=ledger.header())

    def _show_policy(self, mode: str | None, offered: Sequence[str] | None = None) -> None:
        """The route panel says what the answering mode may do with its tools: the mode's
        list once routed, then the tools the request really offers (`offered`)."""
        services = self._parts.services
        profile = services.pack.get(mode) if mode and services is not None else None
        if profile is None:
            self._parts.panel.show_policy(mode, None, ())
        else:
            tools = profile.tools if offered is None else offered
            self._parts.panel.show_policy(mode, profile.policy, tools)

    def _mcp_servers(self, mode: str | None) -> tuple[str, ...]:
        services = self._parts.services
        profile = services.pack.get(mode) if mode and services is not None else None
        return tuple(profile.mcp) if profile is not None else ()

    def _note_hand_off(self, route: Route) -> None:
        """Say that the model handed the turn over, and how to keep that as a correction."""
        if route.decided_by != "model":
            return
        self._parts.app.notify(
            terminal_safe(f"{route.mode_name}: {route.reason}"),  # the model wrote the reason
            title=f"Handed to {route.mode_name} · ctrl+n: keep it as a correction",
            timeout=8,
            markup=False,
        )

    def _corrected(self, event: TurnCorrected) -> None:
        status = self._parts.status
        if event.note:
            note = terminal_safe(event.note)  # it quotes the corrected message
            self._parts.app.notify(
                note, title="Correction", severity="warning", timeout=8, markup=False
            )
        if event.rerun:
            status.busy(
                f"Turn {event.turn}: answered in {event.answered_mode or 'no mode'}, "
                f"corrected to {event.corrected_mode}; answering again…"
            )
        elif event.correction is not None:
            status.idle(
                f"Turn {event.turn} recorded as {event.corrected_mode} for the router to learn "
                "· /wrong undo forgets it"
            )

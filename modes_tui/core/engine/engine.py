"""The engine's public face: one conversation's turns, each a stream of `TurnEvent`s.

    read the control file -> route (or force, or `off`) -> ModeChanged? -> build the request
    (base prompt + this mode's instructions, this mode's tools, the profile's history window)
    -> stream text and reasoning -> resolve tool calls through the guards -> repeat until the
    model answers with text -> TurnFinished / TurnFailed / TurnCancelled

Everything that happens is written to the session writer as it happens. The engine is
headless: it talks to models only through `ChatModel` and to the user only through events
and a `Confirmer`.

Invariants:
- The user's message is in the conversation before anything can fail; a failed or
  cancelled turn keeps it (and any partial answer), so `retry()` can run the turn again.
- Mode instructions and the mode-change note exist only in the request (its system part),
  never in the shared history.
- Every tool call the model asked for gets a result in the history before the next
  request, even when the turn is cancelled half-way, so the next request is valid.
- `cancel()` stops the running step (routing, the model stream, a guard's question, a tool)
  at once; nothing waits for the model to finish.

The engine owns the parts and the conversation; each call that runs a turn hands a
`TurnOrder` and a `TurnContext` to a `Turn` (core.engine.turn), which plays its phases.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import AsyncGenerator, Sequence
from dataclasses import replace

from modes_tui.core.config.ports import ControlSource
from modes_tui.core.edits.checkpoints import (
    Checkpoints,
    UndoPlan,
    UndoResult,
)
from modes_tui.core.edits.editor import Editor, session_tools
from modes_tui.core.edits.policy import Policy
from modes_tui.core.engine.cancelling import TurnSlot
from modes_tui.core.engine.config import EngineConfig
from modes_tui.core.engine.context import Recorder, TurnContext
from modes_tui.core.engine.costs import TurnCosts
from modes_tui.core.engine.fitter import RequestFitter
from modes_tui.core.engine.guards import ConfirmationGuard, Limits, default_guards
from modes_tui.core.engine.hand_off import HandOffGuard
from modes_tui.core.engine.policy_guard import PolicyDecision, PolicyGuard
from modes_tui.core.engine.ports import Asker, Confirmer, CorrectionRecorder, Guard
from modes_tui.core.engine.prepare import TurnOrder
from modes_tui.core.engine.rerun import CorrectionPlan, TurnCorrections
from modes_tui.core.engine.setup import ModeSetups
from modes_tui.core.engine.state import EngineState, StopRequested, usage_dict
from modes_tui.core.engine.turn import Turn
from modes_tui.core.errors import CompactionRefused, CorrectionRefused
from modes_tui.core.history.compaction import Compaction
from modes_tui.core.history.conversation import Conversation
from modes_tui.core.history.events import TurnEvent
from modes_tui.core.history.ledger import CostLedger
from modes_tui.core.history.ports import SessionWriter
from modes_tui.core.history.records import SummaryRecord, UiEventRecord
from modes_tui.core.model.ports import ChatModel
from modes_tui.core.packs.profiles import Pack
from modes_tui.core.routing.router import Router
from modes_tui.core.tools.ports import ToolServers
from modes_tui.core.tools.registry import ToolRegistry
from modes_tui.core.values.correction import Correction
from modes_tui.core.values.route import Route, RoutedTurn

__all__ = ["Confirmer", "Engine", "EngineConfig", "Limits"]

log = logging.getLogger("modes_tui.engine")


class Engine:
    """Runs the turns of one conversation.

    `config` carries the settings (`EngineConfig`, one value); the other arguments are the
    parts the engine works with. The parts it builds get what they need passed in (the
    pack, the recorder, the state), never the engine itself.
    """

    def __init__(
        self,
        *,
        config: EngineConfig,
        pack: Pack,
        router: Router,
        model: ChatModel,
        control: ControlSource | None = None,
        session: SessionWriter | None = None,
        tools: ToolRegistry | None = None,
        guards: Sequence[Guard] | None = None,
        confirm: Confirmer | None = None,
        corrections: CorrectionRecorder | None = None,
        servers: ToolServers | None = None,
    ) -> None:
        self.config = config
        """The settings every turn starts with (replace it to change them between turns)."""
        self.pack = pack
        self.router = router
        self.model = model
        self.control = control
        self.state = EngineState()
        """The conversation and where it stands (history, turn count, mode, routes)."""
        self.recorder = recorder = Recorder(session)
        """The session log (a failed write is reported by the next route)."""
        self.tools = tools if tools is not None else session_tools(config.cwd, pack=pack)
        self.checkpoints = Checkpoints()
        """What each turn's writes replaced (`undo`)."""
        self.editor: Editor = self.tools.editor or Editor(config.cwd)
        """Plans, checkpoints and writes write_file / edit_file changes."""
        self.asker: Asker | None = confirm if isinstance(confirm, Asker) else None
        """Who answers the engine's questions (entering a mode, the budget), when `confirm` can."""
        chosen = list(guards) if guards is not None else default_guards(config.limits)
        self.guards: list[Guard] = with_policy(
            chosen, config, pack, self.state, recorder, confirm, self.editor
        )
        """What every tool call passes before it runs, in order (append to extend)."""
        self.costs = TurnCosts(model, CostLedger(budget=config.budget))
        """Prices and the cost ledger (`costs.ledger`: per turn, total, saved, budget)."""
        self.servers = servers
        """MCP servers whose tools modes may list (`mcp:`); the caller closes them."""
        state = self.state
        self.editor.bind(
            checkpoints=self.checkpoints, record=recorder.checkpoint, turn=lambda: state.turn
        )
        self.corrections = TurnCorrections(
            corrections, router, session_id=lambda: getattr(recorder.session, "id", None)
        )
        """Corrections of this conversation's turns (`correct`, `undo_correction`)."""
        self.setups = ModeSetups(pack, model, self.tools, servers)
        """Resolves a mode into how it runs (model, thinking, tools, system prompt)."""
        self.slot = TurnSlot()
        """The running turn, and where a cancel reaches it."""
        self.fitter = RequestFitter(model, self.setups.capable)
        """Fits every request into its model's context window; compacts older turns."""

    # ------------------------------------------------------------------ settings and state

    @property
    def session(self) -> SessionWriter | None:
        """Where the session log goes (None: nowhere)."""
        return self.recorder.session

    @session.setter
    def session(self, session: SessionWriter | None) -> None:
        self.recorder.session = session

    @property
    def default_model(self) -> str:
        return self.config.default_model

    @property
    def checkpoint_seconds(self) -> float:
        """How often a long answer is written to the session log while it streams."""
        return self.config.checkpoint_seconds

    @checkpoint_seconds.setter
    def checkpoint_seconds(self, seconds: float) -> None:
        self.config = replace(self.config, checkpoint_seconds=seconds)

    @property
    def conversation(self) -> Conversation:
        """The shared history (read-only for UIs)."""
        return self.state.conversation

    @conversation.setter
    def conversation(self, conversation: Conversation) -> None:
        self.state.conversation = conversation

    @property
    def turn(self) -> int:
        """The number of user turns so far."""
        return self.state.turn

    @property
    def routes(self) -> list[Route]:
        """Every route of the session, oldest first."""
        return self.state.routes

    @property
    def running(self) -> bool:
        """A turn is in progress."""
        return self.slot.running

    @property
    def mode(self) -> str | None:
        """The mode of the latest turn (None: none yet, or `off`)."""
        return self.state.mode

    # ------------------------------------------------------------------ turns

    def run_turn(self, text: str, *, force: str | None = None) -> AsyncGenerator[TurnEvent, None]:
        """Answer `text`: `async for event in engine.run_turn(text)`.

        `force` names a mode (or `off`, or `auto`) for this turn only. A caller that stops
        listening early should close the generator (`contextlib.aclosing`), so the turn
        ends at once and leaves a consistent history.
        """
        return self._play(TurnOrder("new", text, force))

    def prepare(self, draft: str) -> None:
        """Encode ahead what routing `draft` will read, while the user is still typing it
        (`Router.prepare`); blocking, so call it off the event loop. Best effort: a failure
        is logged and the route encodes the message itself, as without it."""
        try:
            self.router.prepare(list(self.conversation.messages), draft)
        except Exception as error:  # noqa: BLE001 - the route after Enter encodes it then
            log.warning("the draft was not encoded ahead (%s: %s)", type(error).__name__, error)

    def retry(self) -> AsyncGenerator[TurnEvent, None]:
        """Run the last turn again from its user message (which is not added twice), in the
        mode the caller chose for it, if it chose one (`/code why is this slow`)."""
        return self._play(TurnOrder("retry", force=self.state.turn_force))

    def resend(self, text: str, *, force: str | None = None) -> AsyncGenerator[TurnEvent, None]:
        """Replace the last turn with `text` (the user edited their last message); `force`
        as in `run_turn` (an edited `/MODE text` stays in MODE).

        The last user message and everything after it leave the history, and `text` runs as
        a new turn. The session log keeps the old turn and records a `ui_event`
        `supersede` naming it, so a replay or a resume knows it was replaced.
        """
        return self._play(TurnOrder("edit", text, force))

    def correct(
        self, mode: str, *, turn: int | None = None, rerun: bool = True
    ) -> AsyncGenerator[TurnEvent, None]:
        """Say turn `turn` (default: the latest) belonged to `mode`: `async for event in ...`.

        A correction is recorded for the router to learn from. The latest turn is answered
        again in `mode` (the first `TurnCorrected` opens the re-run; the earlier answer leaves
        the shared history but stays in the session log); an earlier turn, or any turn with
        `rerun=False` (keeping a hand-off: that mode answered already), only gets the
        correction recorded. The control file is not touched. Raises `CorrectionRefused` at
        once when the turn cannot be corrected as asked.
        """
        if self.slot.running:
            raise CorrectionRefused("a turn is running: wait for it or cancel it, then correct it")
        plan = self.corrections.plan(
            turn, mode, latest=self.state.turn, messages=self.state.conversation.messages
        )
        if plan.rerun and rerun:
            return self._play(TurnOrder("correction", plan=plan))
        return self._record_only(replace(plan, rerun=False))

    def undo_correction(self) -> Correction:
        """Forget the latest correction made in this session (the answers stay)."""
        correction = self.corrections.undo()
        self.recorder.write(
            UiEventRecord(
                self.state.turn, "correction_undone", {"id": correction.id, "of": correction.turn}
            )
        )
        return correction

    def plan_undo(self, count: int = 1) -> UndoPlan:
        """What `/undo count` would put back, and which files changed on disk since."""
        if self.slot.running:
            raise RuntimeError("cannot undo while a turn runs; wait for it or cancel it")
        return self.checkpoints.plan_undo(count, self.config.cwd)

    def undo(self, plan: UndoPlan, *, overwrite: bool = False) -> UndoResult:
        """Put back the files of `plan` (files changed since only with `overwrite`); recorded."""
        if self.slot.running:
            raise RuntimeError("cannot undo while a turn runs; wait for it or cancel it")
        result = self.checkpoints.undo(plan, self.config.cwd, overwrite=overwrite)
        if result.turns:
            self.recorder.write(UiEventRecord(self.state.turn, "undo", result.to_dict()))
        return result

    def cancel(self) -> None:
        """Stop the running turn; it yields TurnCancelled(partial). Safe from any thread."""
        self.slot.cancel()

    async def compact(self) -> Compaction:
        """Summarise every turn but the latest for the models (`/compact`), and record it.

        The chat keeps every message; the models see the summary instead of those turns
        from the next request on. Raises `CompactionRefused` while a turn runs, or when
        there is no turn before the latest one to summarise.
        """
        if self.slot.running:
            raise CompactionRefused("a turn is running: wait for it or cancel it, then /compact")
        conversation = self.state.conversation
        self.slot.enter()  # no turn starts meanwhile, and a cancel stops the summary call
        try:
            made = await self.slot.stopper.step(
                self.fitter.compact(
                    conversation,
                    len(conversation),
                    "command",
                    keep=1,
                    summary_model=self.config.summary_model,
                )
            )
        except StopRequested:
            raise CompactionRefused("/compact was cancelled; nothing changed") from None
        finally:
            self.slot.leave()
        if made is None:
            raise CompactionRefused(
                "nothing to compact yet: the latest turn always stays as it is, and there is "
                "no earlier turn (or the earlier ones are compacted already)"
            )
        compaction, usage = made
        self.recorder.write(SummaryRecord(self.state.turn, compaction, usage_dict(usage)))
        return compaction

    def clear(self) -> None:
        """Forget the conversation (`/clear`); routes and the turn count stay."""
        if self.slot.running:
            raise RuntimeError("cannot clear the conversation while a turn runs; cancel it first")
        self.state.conversation.clear()
        self.corrections.cleared()
        self.recorder.write(UiEventRecord(self.state.turn, "clear"))

    def restore(
        self,
        conversation: Conversation,
        *,
        turn: int,
        mode: str | None,
        routes: Sequence[Route] = (),
        routed: Sequence[RoutedTurn] = (),
        checkpoints: Checkpoints | None = None,
    ) -> None:
        """Carry on from a saved session (resume, fork): as if this engine had run its turns.

        `conversation` is the history the models saw, `turn` the last turn's number, `mode`
        the mode of the last turn (None: none, or `off`), `routes` the recorded decisions,
        `routed` what the router decided per turn (so `/wrong` can correct those turns),
        `checkpoints` what the turns' writes replaced (so `/undo` can put it back).
        """
        if self.slot.running:
            raise RuntimeError("cannot restore a session while a turn runs; cancel it first")
        state = self.state
        state.conversation = conversation
        state.turn = turn
        state.routes = list(routes)
        state.mode = mode
        self.corrections.turns = {routed_turn.turn: routed_turn for routed_turn in routed}
        if checkpoints is not None:
            self.checkpoints.load(checkpoints.items, checkpoints.undone)

    # ------------------------------------------------------------------ the turn

    def _play(self, order: TurnOrder) -> AsyncGenerator[TurnEvent, None]:
        return Turn(self._context(), order).play()

    def _context(self) -> TurnContext:
        """What the turn may use: the settings as they are now, and the engine's parts."""
        return TurnContext(
            config=self.config,
            pack=self.pack,
            router=self.router,
            model=self.model,
            control=self.control,
            state=self.state,
            recorder=self.recorder,
            slot=self.slot,
            setups=self.setups,
            costs=self.costs,
            corrections=self.corrections,
            guards=self.guards,
            asker=self.asker,
            fitter=self.fitter,
        )

    async def _record_only(self, plan: CorrectionPlan) -> AsyncGenerator[TurnEvent, None]:
        event = self.corrections.apply(plan)
        self.recorder.correction(self.state.turn, event)
        yield event


def with_policy(
    chosen: list[Guard],
    config: EngineConfig,
    pack: Pack,
    state: EngineState,
    recorder: Recorder,
    confirm: Confirmer | None,
    editor: Editor,
) -> list[Guard]:
    """`chosen` and, unless it decides confirmations itself, the hand-off guard and the
    mode's policy after them (last, so nobody is asked about a call another guard refuses);
    each decision of the policy is recorded."""
    if any(isinstance(guard, ConfirmationGuard | PolicyGuard) for guard in chosen):
        return chosen
    policy = functools.partial(mode_policy, pack)
    targets = [p.name for p in pack.available() if p.auto_enter != "never"]
    confirm_first = {p.name for p in pack.profiles if p.auto_enter == "confirm"}
    asker = confirm if isinstance(confirm, Asker) else None
    chosen.append(
        HandOffGuard(lambda: targets, policy, asks_first=confirm_first.__contains__, asker=asker)
    )

    def noted(decision: PolicyDecision, answer: bool | None) -> None:
        details = {**decision.to_dict(), "asked": answer is not None, "answer": answer}
        recorder.write(UiEventRecord(state.turn, "policy", details))

    chosen.append(PolicyGuard(policy, config.cwd, confirm, editor=editor, record=noted))
    return chosen


def mode_policy(pack: Pack, mode: str | None) -> Policy:
    """What `mode` may do (no mode, or one not in the pack: the shipped default)."""
    profile = pack.get(mode) if mode is not None else None
    return profile.policy if profile is not None else Policy()

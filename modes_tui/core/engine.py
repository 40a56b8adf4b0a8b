"""The turn engine: one user turn, end to end, as a stream of `TurnEvent`s.

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
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import threading
import time
from collections.abc import AsyncGenerator, Awaitable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

from modes_tui.core.auto_enter import confirm_entry
from modes_tui.core.control import AUTO, OFF, ControlReading, ControlSource
from modes_tui.core.conversation import Conversation, Message, ToolCall
from modes_tui.core.correcting import (
    CorrectionPlan,
    CorrectionRecorder,
    RoutedTurn,
    TurnCorrections,
)
from modes_tui.core.corrections import Correction
from modes_tui.core.errors import CorrectionRefused, ProviderError, UnknownMode
from modes_tui.core.events import (
    ModeChanged,
    ReasoningDelta,
    RequestBuilt,
    RouteDecided,
    TextDelta,
    ToolCallFinished,
    ToolCallRequested,
    ToolOutcome,
    TurnCancelled,
    TurnCorrected,
    TurnEvent,
    TurnFailed,
    TurnFinished,
    Usage,
)
from modes_tui.core.guards import (
    ConfirmationGuard,
    Confirmer,
    Guard,
    Limits,
    default_guards,
)
from modes_tui.core.ledger import CostLedger
from modes_tui.core.profiles import HistoryWindow, Pack, Profile
from modes_tui.core.prompts import template_locals
from modes_tui.core.questions import Asker
from modes_tui.core.records import (
    AssistantRecord,
    RequestRecord,
    RouteRecord,
    SessionRecord,
    SessionWriter,
    ToolResultRecord,
    UiEventRecord,
    UserRecord,
    write_record,
)
from modes_tui.core.routing import Route, Router
from modes_tui.core.tool_rounds import CANCELLED_BY_USER, resolve_call, tool_json
from modes_tui.core.tools import Tool, ToolRegistry, default_registry
from modes_tui.core.toolservers import ToolServers, server_tools
from modes_tui.core.turn_costs import TurnCosts, fallback_note
from modes_tui.core.turn_request import build_request
from modes_tui.core.turn_state import Cancelled, RoundLimit, TurnSetup, TurnState, usage_dict
from modes_tui.llm.base import (
    ChatModel,
    ModelEvent,
    ModelRequest,
    ReasoningChunk,
    TextChunk,
    ToolCallChunk,
    UsageReport,
)

__all__ = ["Confirmer", "Engine", "Limits"]

log = logging.getLogger("modes_tui.engine")

OFF_REASON = "Modes are off"
CHECKPOINT_SECONDS = 2.0
BUDGET_HINT = (
    "raise `budget:` in config.yaml (or MODES_TUI_BUDGET), or send it with a cheaper mode "
    "(/mode NAME); your message is kept"
)
NOT_RETRYABLE = frozenset({"auth", "context_too_long", "not_found", "bad_request"})
T = TypeVar("T")


class Engine:
    """Runs the turns of one conversation."""

    def __init__(
        self,
        *,
        pack: Pack,
        router: Router,
        model: ChatModel,
        default_model: str,
        control: ControlSource | None = None,
        session: SessionWriter | None = None,
        tools: ToolRegistry | None = None,
        guards: Sequence[Guard] | None = None,
        confirm: Confirmer | None = None,
        cwd: Path | None = None,
        model_override: str | None = None,
        limits: Limits = Limits(),  # noqa: B008 - frozen, so one shared default is safe
        inputs: Mapping[str, Any] | None = None,
        corrections: CorrectionRecorder | None = None,
        budget: float | None = None,
        servers: ToolServers | None = None,
    ) -> None:
        self.pack = pack
        self.router = router
        self.model = model
        self.default_model = default_model
        self.control = control
        self.session = session
        self.cwd = Path(cwd) if cwd is not None else Path.cwd()
        self.tools = tools if tools is not None else default_registry(self.cwd)
        chosen = list(guards) if guards is not None else default_guards(limits)
        if not any(isinstance(guard, ConfirmationGuard) for guard in chosen):
            # last, so nobody is asked about a call another guard refuses
            chosen.append(ConfirmationGuard(confirm))
        self.guards: list[Guard] = chosen
        self.model_override = model_override
        self.limits = limits
        self.checkpoint_seconds = CHECKPOINT_SECONDS
        """How often a long answer is written to the session log while it streams."""
        self.inputs = dict(inputs or {})
        self.asker: Asker | None = confirm if isinstance(confirm, Asker) else None
        """Answers questions about a turn (entering a confirm-first mode, the budget)."""
        self.costs = TurnCosts(model, CostLedger(budget=budget))
        """Prices and the cost ledger (`costs.ledger`: per turn, total, saved, budget)."""
        self.servers = servers
        """MCP servers whose tools modes may list (`mcp:`); the caller closes them."""

        self.conversation = Conversation()
        """The shared history (read-only for UIs)."""
        self.routes: list[Route] = []
        """Every route of the session, oldest first."""
        self.turn = 0
        """The number of user turns so far."""
        self.corrections = TurnCorrections(
            corrections, router, session_id=lambda: getattr(self.session, "id", None)
        )
        """Corrections of this conversation's turns (`correct`, `undo_correction`)."""

        self._mode: str | None = None
        self._running = False
        self._cancel_requested = False
        self._awaiting: asyncio.Task[Any] | None = None
        self._cancel_delivered = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: int | None = None
        self._capabilities: dict[tuple[str, str], bool] = {}
        self._prompts: dict[tuple[str | None, str], str] = {}
        self._record_failure: str | None = None

    # ------------------------------------------------------------------ public

    @property
    def running(self) -> bool:
        """A turn is in progress."""
        return self._running

    @property
    def mode(self) -> str | None:
        """The mode of the latest turn (None: none yet, or `off`)."""
        return self._mode

    def run_turn(self, text: str, *, force: str | None = None) -> AsyncGenerator[TurnEvent, None]:
        """Answer `text`: `async for event in engine.run_turn(text)`.

        `force` names a mode (or `off`, or `auto`) for this turn only. A caller that stops
        listening early should close the generator (`contextlib.aclosing`), so the turn
        ends at once and leaves a consistent history.
        """
        return self._play(text, force)

    def retry(self) -> AsyncGenerator[TurnEvent, None]:
        """Run the last turn again from its user message (which is not added twice)."""
        return self._play(None, None)

    def resend(self, text: str) -> AsyncGenerator[TurnEvent, None]:
        """Replace the last turn with `text` (the user edited their last message).

        The last user message and everything after it leave the history, and `text` runs as
        a new turn. The session log keeps the old turn and records a `ui_event`
        `supersede` naming it, so a replay or a resume knows it was replaced.
        """
        return self._play(text, None, supersede=True)

    def correct(self, mode: str, *, turn: int | None = None) -> AsyncGenerator[TurnEvent, None]:
        """Say turn `turn` (default: the latest) belonged to `mode`: `async for event in ...`.

        A correction is recorded for the router to learn from. The latest turn is answered
        again in `mode` (the first `TurnCorrected` opens the re-run; the earlier answer leaves
        the shared history but stays in the session log); an earlier turn only gets the
        correction recorded. The control file is not touched. Raises `CorrectionRefused` at
        once when the turn cannot be corrected as asked.
        """
        if self._running:
            raise CorrectionRefused("a turn is running: wait for it or cancel it, then correct it")
        plan = self.corrections.plan(
            turn, mode, latest=self.turn, messages=self.conversation.messages
        )
        if plan.rerun:
            return self._play(None, mode, plan)
        return self._record_only(plan)

    def undo_correction(self) -> Correction:
        """Forget the latest correction made in this session (the answers stay)."""
        correction = self.corrections.undo()
        self._record(
            UiEventRecord(
                self.turn, "correction_undone", {"id": correction.id, "of": correction.turn}
            )
        )
        return correction

    async def _record_only(self, plan: CorrectionPlan) -> AsyncGenerator[TurnEvent, None]:
        event = self.corrections.apply(plan)
        self._record_correction(event)
        yield event

    def _record_correction(self, event: TurnCorrected) -> None:
        correction = event.correction.to_dict() if event.correction is not None else None
        details = {
            "of": event.turn,
            "answered_mode": event.answered_mode,
            "corrected_mode": event.corrected_mode,
            "rerun": event.rerun,
            "correction": correction,
            "note": event.note,
        }
        self._record(UiEventRecord(self.turn, "correction", details))

    def cancel(self) -> None:
        """Stop the running turn; it yields TurnCancelled(partial). Safe from any thread."""
        if not self._running:
            return
        if self._loop is not None and threading.get_ident() != self._thread:
            self._loop.call_soon_threadsafe(self._cancel_now)
        else:
            self._cancel_now()

    def clear(self) -> None:
        """Forget the conversation (`/clear`); routes and the turn count stay."""
        if self._running:
            raise RuntimeError("cannot clear the conversation while a turn runs; cancel it first")
        self.conversation.clear()
        self.corrections.cleared()
        self._record(UiEventRecord(self.turn, "clear"))

    def restore(
        self,
        conversation: Conversation,
        *,
        turn: int,
        mode: str | None,
        routes: Sequence[Route] = (),
        routed: Sequence[RoutedTurn] = (),
    ) -> None:
        """Carry on from a saved session (resume, fork): as if this engine had run its turns.

        `conversation` is the history the models saw, `turn` the last turn's number, `mode`
        the mode of the last turn (None: none, or `off`), `routes` the recorded decisions,
        `routed` what the router decided per turn (so `/wrong` can correct those turns).
        """
        if self._running:
            raise RuntimeError("cannot restore a session while a turn runs; cancel it first")
        self.conversation = conversation
        self.turn = turn
        self.routes = list(routes)
        self._mode = mode
        self.corrections.turns = {routed_turn.turn: routed_turn for routed_turn in routed}

    # ------------------------------------------------------------------ the turn

    async def _play(
        self,
        text: str | None,
        force: str | None,
        plan: CorrectionPlan | None = None,
        *,
        supersede: bool = False,
    ) -> AsyncGenerator[TurnEvent, None]:
        if self._running:
            raise RuntimeError("a turn is already running; cancel it or wait for it to end")
        self._running = True
        self._cancel_requested = False
        self._cancel_delivered = False
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        state = TurnState()
        fresh = text is not None
        try:
            if text is None:
                index = self._last_user_index()
                if index is None:
                    yield TurnFailed(
                        "there is no turn to retry",
                        kind="nothing_to_retry",
                        hint="type a message first",
                        retryable=False,
                    )
                    return
                del self.conversation.messages[index + 1 :]
                text = self.conversation.messages[index].content
                if plan is None:
                    self._record(UiEventRecord(self.turn, "retry"))
                else:  # the superseded answer stays in the session log, before this record
                    corrected = self.corrections.apply(plan)
                    self._record_correction(corrected)
                    yield corrected
            else:
                last = self._last_user_index() if supersede else None
                if last is not None:
                    del self.conversation.messages[last:]
                    self._record(UiEventRecord(self.turn, "supersede", {"superseded": self.turn}))
                self.turn += 1
                self.conversation.append(Message("user", text))
                self._record(UserRecord(self.turn, text))
            state.user_index = len(self.conversation) - 1

            control, warnings = self._read_control()
            kept = None if fresh else self.corrections.kept_mode(self.turn)
            if plan is not None:  # the user decided: a forced route that says what it replaces
                route = replace(self.router.force(plan.mode), reason=plan.reason)
            elif kept is not None:  # retrying a corrected turn keeps the user's mode
                route = replace(self.router.force(kept[0]), reason=kept[1])
            else:
                route = await self._step(self._route(force, control, warnings))
                route = await self._step(confirm_entry(route, self.pack, self.asker, self._mode))
                self.corrections.routed(self.turn, text, route, state.user_index)
            self.routes.append(route)
            # `off` is a reserved name, never a mode: the turn runs with no mode at all
            state.mode = None if route.mode_name == OFF else route.mode_name
            self._record(RouteRecord(self.turn, route, control.mode, tuple(warnings)))
            yield RouteDecided(route, control.mode, tuple(warnings))
            self._checkpoint()

            if state.mode != self._mode:
                previous, self._mode = self._mode, state.mode
                yield ModeChanged(previous, state.mode)
                self._checkpoint()

            if fresh:
                resent = self.corrections.resend(self.turn, text, route, self.conversation.messages)
                if resent is not None:
                    self._record_correction(resent)
                    yield resent

            setup = await self._step(self._setup(state.mode))
            state.setup = setup
            await self._step(self.costs.set_baseline(self._models_in_use()))
            for round_no in range(1, self.limits.model_rounds + 1):
                state.new_round()
                state.next_checkpoint = time.monotonic() + self.checkpoint_seconds
                request = build_request(setup, self.conversation.messages, state.user_index)
                if round_no == 1:
                    refusal = await self._step(
                        self.costs.check_budget(setup.model, request, self.asker)
                    )
                    if refusal is not None:
                        yield self._fail(state, refusal, "budget", BUDGET_HINT, retryable=False)
                        return
                self._record(
                    RequestRecord(self.turn, request.to_dict(), setup.mode, round_no, setup.notes)
                )
                yield RequestBuilt(request, setup.mode, round_no, setup.notes)
                calls: list[ToolCallChunk] = []
                # without fallbacks, no extra generator layer on every chunk
                answer = (
                    self._answer(request, state, round_no)
                    if setup.fallbacks
                    else self._stream(request)
                )
                async with contextlib.aclosing(answer) as stream:
                    async for event in stream:
                        if isinstance(event, RequestBuilt):  # a fallback model takes over
                            setup = self._current(state)
                            yield event
                            continue
                        if isinstance(event, TextChunk):
                            state.text.append(event.text)
                            if time.monotonic() >= state.next_checkpoint:
                                self._checkpoint_answer(state)
                            yield TextDelta(event.text)
                        elif isinstance(event, ReasoningChunk):
                            state.reasoning.append(event.text)
                            if time.monotonic() >= state.next_checkpoint:
                                self._checkpoint_answer(state)
                            yield ReasoningDelta(event.text)
                        elif isinstance(event, ToolCallChunk):
                            calls.append(event)
                        elif isinstance(event, UsageReport):
                            state.usage.append(event)
                            state.round_usage = event
                            state.calls.append(
                                (
                                    setup.model,
                                    event.prompt_tokens,
                                    event.completion_tokens,
                                    event.cost,
                                )
                            )
                            yield Usage(
                                setup.model,
                                event.prompt_tokens,
                                event.completion_tokens,
                                event.cost,
                            )
                message = self._stamp(
                    Message(
                        "assistant",
                        state.partial(),
                        tool_calls=tuple(chunk.call for chunk in calls),
                        reasoning="".join(state.reasoning),
                    ),
                    state,
                )
                self.conversation.append(message)
                if not calls:
                    self._record(
                        AssistantRecord(
                            self.turn,
                            message,
                            usage_dict(state.round_usage),
                            closes_turn=True,
                            turn_usage=state.total_usage(),
                            cost=self._settle_cost(state),
                        )
                    )
                    yield TurnFinished(message)
                    return
                state.round_message = len(self.conversation) - 1
                state.unresolved = [chunk.call for chunk in calls]
                self._record(AssistantRecord(self.turn, message, usage_dict(state.round_usage)))
                last_round = round_no == self.limits.model_rounds
                for chunk in calls:
                    tool = setup.tools.get(chunk.call.name)
                    asks = bool(tool and tool.needs_confirmation and not last_round)
                    yield ToolCallRequested(chunk.call, needs_confirmation=asks)
                    try:  # a cancel while the caller held ToolCallRequested lands in _step
                        outcome, result, took = await self._step(
                            resolve_call(
                                chunk,
                                tool,
                                state,
                                turn=self.turn,
                                round_no=round_no,
                                last_round=last_round,
                                messages=self.conversation.messages,
                                guards=self.guards,
                                limits=self.limits,
                            )
                        )
                    except Cancelled:
                        result = tool_json({"cancelled": True, "reason": CANCELLED_BY_USER})
                        self._add_result(state, chunk.call, "cancelled", result, 0.0)
                        yield ToolCallFinished(chunk.call, "cancelled", result, 0.0)
                        raise
                    self._add_result(state, chunk.call, outcome, result, took)
                    yield ToolCallFinished(chunk.call, outcome, result, took)
                    self._checkpoint()
                if last_round:
                    raise RoundLimit
        except Cancelled:
            partial = state.unstored()
            added = self._settle(state, cancelled=True)
            if added is not None:
                self._record(AssistantRecord(self.turn, added))
            ended = {
                "partial": partial,
                "turn_usage": state.total_usage(),
                "cost": self._settle_cost(state),
            }
            self._record(UiEventRecord(self.turn, "cancel", ended))
            yield TurnCancelled(partial)
        except RoundLimit:
            yield self._fail(
                state,
                f"stopped after {self.limits.model_rounds} model calls in one turn: "
                "the model kept asking for tools",
                "round_limit",
                "ask it to answer with what it found so far, or to take a different approach",
                retryable=False,
            )
        except ProviderError as error:
            where = f" ({error.model})" if error.model else ""
            yield self._fail(
                state,
                f"{error.kind.replace('_', ' ')}{where}: {error.provider_message}",
                error.kind,
                error.hint,
                retryable=error.kind not in NOT_RETRYABLE,
            )
        except (GeneratorExit, asyncio.CancelledError):
            # the consumer went away or its task was cancelled: leave a consistent history
            partial = state.unstored()
            added = self._settle(state, cancelled=True)
            if added is not None:
                self._record(AssistantRecord(self.turn, added))
            ended = {"partial": partial, "reason": "abandoned", "cost": self._settle_cost(state)}
            self._record(UiEventRecord(self.turn, "cancel", ended))
            raise
        except Exception as error:
            log.exception("turn %d failed unexpectedly", self.turn)
            yield self._fail(
                state,
                f"{type(error).__name__}: {error}",
                "internal",
                "this is a bug in modes-tui; the details are in the log. Retry may work.",
                retryable=True,
            )
        finally:
            self._running = False
            self._cancel_requested = False
            self._cancel_delivered = False
            self._awaiting = None

    # ------------------------------------------------------------------ models, policy, cost

    async def _answer(
        self, request: ModelRequest, state: TurnState, round_no: int
    ) -> AsyncGenerator[ModelEvent | RequestBuilt, None]:
        """The model's events; on a retryable failure before any output, the next fallback.

        litellm's own `fallbacks=` is not used: it retries on any error (a wrong key too),
        keeps no record of why it switched, and only covers the stream's opening; here the
        switch is a RequestBuilt with a note, so the panel and the session say who answered
        and why, and a failure after text arrived ends the turn with that text kept.
        """
        while True:
            setup = self._current(state)
            try:
                async with contextlib.aclosing(self._stream(request)) as stream:
                    async for event in stream:
                        yield event
                return
            except ProviderError as error:
                produced = state.text or state.reasoning
                if produced or not setup.fallbacks or error.kind in NOT_RETRYABLE:
                    raise
                failed = setup.model
                following = await self._step(
                    self._setup(state.mode, model=setup.fallbacks[0], rest=setup.fallbacks[1:])
                )
                note = fallback_note(failed, error, following.model)
                following = replace(following, notes=(*following.notes, note))
                state.setup = following
                request = build_request(following, self.conversation.messages, state.user_index)
                switched = {"from": failed, "kind": error.kind, "error": error.provider_message}
                self._record(
                    RequestRecord(
                        self.turn,
                        request.to_dict(),
                        following.mode,
                        round_no,
                        following.notes,
                        fallback=switched,
                    )
                )
                yield RequestBuilt(request, following.mode, round_no, following.notes)

    @staticmethod
    def _current(state: TurnState) -> TurnSetup:
        assert state.setup is not None  # set before the first request
        return state.setup

    def _models_in_use(self) -> set[str]:
        """Every model a mode of the pack answers with (the ledger's baseline candidates)."""
        if self.model_override:
            return {self.model_override}
        return {
            self.default_model if profile.model == "default" else profile.model
            for profile in self.pack.profiles
        }

    def _settle_cost(self, state: TurnState) -> dict[str, Any] | None:
        """The turn's cost into the ledger; what the session log keeps of it."""
        entry = self.costs.ledger.add(self.turn, state.calls)
        if entry is None:
            return None
        return {**entry.to_dict(), "baseline_model": self.costs.ledger.baseline_model}

    # ------------------------------------------------------------------ steps

    def _checkpoint(self) -> None:
        if self._cancel_requested:
            raise Cancelled

    def _cancel_now(self) -> None:
        self._cancel_requested = True
        # Only while the turn waits in one of its own awaits (`_step`) does the cancel go to
        # the task running the turn; at a `yield` the caller's code is running, and the flag
        # is enough: the turn checks it as soon as it resumes.
        if self._awaiting is not None and not self._cancel_delivered:
            self._cancel_delivered = True
            self._awaiting.cancel()

    def _take_back_cancel(self, task: asyncio.Task[Any] | None) -> bool:
        """Undo a cancel() delivered to `task`; True when nobody else cancelled it too."""
        if not self._cancel_delivered or task is None:
            return False
        self._cancel_delivered = False
        return task.uncancel() == 0

    async def _step(self, work: Awaitable[T]) -> T:
        """Await `work` so that `cancel()` stops it at once, whatever it waits on.

        No task is created: the turn's own task waits, and `cancel()` cancels that task only
        while it is suspended right here, then takes the cancellation back (`uncancel`), so
        a cancellation from the caller's side still propagates as usual.
        """
        if self._cancel_requested:
            close = getattr(work, "close", None)
            if close is not None:
                close()  # never started: close it so it is not reported as never awaited
            raise Cancelled
        task = asyncio.current_task()
        self._awaiting = task
        try:
            result = await work
        except asyncio.CancelledError:
            if self._take_back_cancel(task):
                raise Cancelled from None
            raise
        finally:
            self._awaiting = None
        if self._take_back_cancel(task):  # the work swallowed the cancellation
            raise Cancelled
        return result

    async def _stream(self, request: ModelRequest) -> AsyncGenerator[ModelEvent, None]:
        """The model's events; `cancel()` stops the stream mid-chunk (`_step`, inlined)."""
        stream = self.model.stream(request)
        task = asyncio.current_task()
        try:
            while True:
                if self._cancel_requested:
                    raise Cancelled
                self._awaiting = task
                try:
                    event = await anext(stream)
                except StopAsyncIteration:
                    return
                except asyncio.CancelledError:
                    if self._take_back_cancel(task):
                        raise Cancelled from None
                    raise
                finally:
                    self._awaiting = None
                if self._cancel_delivered and self._take_back_cancel(task):
                    raise Cancelled
                yield event
        finally:
            close = getattr(stream, "aclose", None)
            if close is not None:
                await close()

    async def _route(
        self, force: str | None, control: ControlReading, warnings: list[str]
    ) -> Route:
        wanted: str | None
        if force is not None and force != AUTO:
            wanted = force
        elif force == AUTO:
            wanted = None
        else:
            wanted = OFF if control.mode == OFF else control.forced
        if wanted == OFF:
            return Route(OFF, "caller", OFF_REASON)
        if wanted is not None:
            try:
                return self.router.force(wanted)
            except UnknownMode as error:
                origin = "the control file" if force is None else "the caller"
                warnings.append(
                    f"{origin} asked for mode {wanted!r}: {error}; routing automatically"
                )
        return await self.router.route(self.conversation.messages)

    def _read_control(self) -> tuple[ControlReading, list[str]]:
        warnings: list[str] = []
        if self._record_failure is not None:
            warnings.append(f"the session log could not be written: {self._record_failure}")
            self._record_failure = None
        if self.control is None:
            return ControlReading(AUTO), warnings
        try:
            reading = self.control.read()
        except Exception as error:  # a broken control source must not stop the turn
            log.exception("the control setting could not be read")
            warnings.append(
                f"the control setting could not be read ({error}); routing automatically"
            )
            return ControlReading(AUTO), warnings
        if reading.warning:
            warnings.append(reading.warning)
        return reading, warnings

    async def _setup(
        self, mode: str | None, *, model: str | None = None, rest: tuple[str, ...] | None = None
    ) -> TurnSetup:
        """How `mode` runs; `model` and `rest` replace its model and fallbacks (a fallback)."""
        profile = self.pack.get(mode) if mode is not None else None
        if model is not None:
            model = self.default_model if model == "default" else model
        elif profile is not None and profile.model != "default":
            model = self.model_override or profile.model
        else:
            model = self.model_override or self.default_model
        if rest is None:
            # --model pins one model for the run: no mode's fallbacks apply
            rest = () if self.model_override or profile is None else profile.fallback_models
        notes: list[str] = []
        requested = profile.thinking if profile is not None else "off"
        effort: str | None = None
        if requested != "off":
            if await self._capable("supports_reasoning", model):
                effort = requested
            else:
                notes.append(f"thinking n/a for {model}")
        tools: dict[str, Tool] = {}
        if profile is not None and (profile.tools or profile.mcp):
            missing = [name for name in profile.tools if name not in self.tools]
            if missing:
                notes.append(f"tools not available here: {', '.join(missing)}")
            selected = self.tools.select(profile.tools)
            if (selected or profile.mcp) and not await self._capable("supports_tools", model):
                notes.append(f"tools n/a for {model}")
            else:
                # MCP servers start here, on the first turn of a mode that lists them
                found = await server_tools(profile.mcp, self.servers)
                notes.extend(found.problems)
                tools = {item.name: item for item in (*selected, *found.tools)}
        return TurnSetup(
            mode=mode,
            model=model,
            thinking=effort or "off",
            reasoning_effort=effort,
            tools=tools,
            specs=tuple(item.spec for item in tools.values()),
            system=self._system_prompt(profile),
            window=profile.history if profile is not None else HistoryWindow(20),
            temperature=profile.temperature if profile is not None else None,
            max_tokens=profile.max_tokens if profile is not None else None,
            notes=tuple(notes),
            fallbacks=tuple(rest),
        )

    async def _capable(self, check: str, model: str) -> bool:
        """A capability of `model`, asked once (off the loop: it may import litellm)."""
        key = (check, model)
        known = self._capabilities.get(key)
        if known is not None:
            return known
        method = getattr(self.model, check, None)
        if method is None:
            answer = check == "supports_tools"  # a model without the question gets the tools
        else:
            try:
                answer = bool(await asyncio.to_thread(method, model))
            except Exception:  # an unknown capability is reported as missing
                log.exception("%s(%s) failed", check, model)
                answer = False
        self._capabilities[key] = answer
        return answer

    def _system_prompt(self, profile: Profile | None) -> str:
        """The base prompt plus the mode's instructions, rendered once per mode and day."""
        today = dt.date.today()
        key = (profile.name if profile is not None else None, today.isoformat())
        text = self._prompts.get(key)
        if text is None:
            local = template_locals(profile, self.inputs, today=today, cwd=str(self.cwd))
            base = self.pack.prompts.render_system(local)
            extra = self.pack.prompts.render_instructions(profile, local) if profile else ""
            text = f"{base}\n\n{extra}" if extra else base
            self._prompts[key] = text
        return text

    # ------------------------------------------------------------------ history

    def _stamp(self, message: Message, state: TurnState) -> Message:
        setup = state.setup
        return replace(
            message,
            mode=state.mode,
            model=setup.model if setup else self.model_override or self.default_model,
            thinking=setup.thinking if setup else "off",
        )

    def _add_result(
        self, state: TurnState, call: ToolCall, outcome: ToolOutcome, result: str, took: float
    ) -> None:
        self.conversation.append(Message("tool", result, tool_call_id=call.id, name=call.name))
        if call in state.unresolved:
            state.unresolved.remove(call)
        self._record(ToolResultRecord(self.turn, call, outcome, result, round(took, 3)))

    def _settle(self, state: TurnState, *, cancelled: bool) -> Message | None:
        """Close what the turn left open; return the assistant message added, if any."""
        for call in list(state.unresolved):
            result = tool_json({"cancelled": True, "reason": CANCELLED_BY_USER})
            self._add_result(state, call, "cancelled", result, 0.0)
        if state.user_index < 0:
            return None
        if state.round_message is not None:
            if cancelled:
                index = state.round_message
                stored = self.conversation.messages[index]
                self.conversation.messages[index] = replace(stored, cancelled=True)
            return None
        partial = state.partial()
        if not cancelled and not partial:
            return None
        message = self._stamp(
            Message("assistant", partial, reasoning="".join(state.reasoning), cancelled=cancelled),
            state,
        )
        self.conversation.append(message)
        return message

    def _checkpoint_answer(self, state: TurnState) -> None:
        """Write the answer so far (`partial: true`), so a crash loses none of it."""
        state.next_checkpoint = time.monotonic() + self.checkpoint_seconds
        message = self._stamp(
            Message("assistant", state.partial(), reasoning="".join(state.reasoning)), state
        )
        self._record(AssistantRecord(self.turn, message, partial=True))

    def _fail(
        self, state: TurnState, error: str, kind: str, hint: str, *, retryable: bool
    ) -> TurnFailed:
        """Close the turn as failed: keep what arrived, record it, and say what to do."""
        partial = state.unstored()
        self._settle(state, cancelled=False)
        reasoning = "" if state.round_message is not None else "".join(state.reasoning)
        message = self._stamp(Message("assistant", partial, reasoning=reasoning), state)
        self._record(
            AssistantRecord(
                self.turn,
                message,
                closes_turn=True,
                turn_usage=state.total_usage(),
                cost=self._settle_cost(state),
                error=error,
                failure_kind=kind,
                hint=hint,
                retryable=retryable,
            )
        )
        return TurnFailed(error, kind=kind, hint=hint, partial=partial, retryable=retryable)

    def _last_user_index(self) -> int | None:
        for index in range(len(self.conversation) - 1, -1, -1):
            if self.conversation.messages[index].role == "user":
                return index
        return None

    def _record(self, record: SessionRecord) -> None:
        if self.session is None:
            return
        try:
            write_record(self.session, record)
        except Exception as error:  # the turn goes on; the next RouteDecided warns
            log.exception("could not write a %s record", record.kind)
            if self._record_failure is None:
                self._record_failure = f"{type(error).__name__}: {error}"

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

This module holds the engine's public face and the mode setup; the turn loop is
`core.turn_loop`, stopping it `core.cancelling`, the request `core.turn_request`, tool calls
`core.tool_rounds`, the `auto_enter: confirm` policy `core.auto_enter`, and the records it
writes `core.records`.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import threading
from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from modes_tui.core.control import AUTO, OFF, ControlReading
from modes_tui.core.conversation import Conversation
from modes_tui.core.corrections import Correction
from modes_tui.core.engine.cancelling import TurnStopper
from modes_tui.core.engine.correcting import (
    CorrectionPlan,
    CorrectionRecorder,
    RoutedTurn,
    TurnCorrections,
)
from modes_tui.core.engine.costs import TurnCosts
from modes_tui.core.engine.guards import (
    ConfirmationGuard,
    Limits,
    default_guards,
)
from modes_tui.core.engine.questions import Asker
from modes_tui.core.engine.state import TurnSetup
from modes_tui.core.engine.turn import play
from modes_tui.core.errors import CorrectionRefused, UnknownMode
from modes_tui.core.events import (
    TurnCorrected,
    TurnEvent,
)
from modes_tui.core.ledger import CostLedger
from modes_tui.core.pack_fields import HistoryWindow
from modes_tui.core.ports import (
    UNKNOWN_CAPABILITIES,
    ChatModel,
    Confirmer,
    ControlSource,
    Guard,
    ModelCapabilities,
    SessionWriter,
)
from modes_tui.core.profiles import Pack, Profile
from modes_tui.core.prompts import template_locals
from modes_tui.core.records import (
    SessionRecord,
    UiEventRecord,
    write_record,
)
from modes_tui.core.routing import Route, Router
from modes_tui.core.toolbox import default_registry
from modes_tui.core.tools import Tool, ToolRegistry
from modes_tui.core.toolservers import ToolServers, server_tools

__all__ = ["Confirmer", "Engine", "Limits"]

log = logging.getLogger("modes_tui.engine")

OFF_REASON = "Modes are off"
CHECKPOINT_SECONDS = 2.0


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
        self.tools = tools if tools is not None else default_registry(self.cwd, pack=pack)
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
        self._turn_force: str | None = None
        """The mode the caller chose for the latest message (`/MODE text`), kept for a retry."""
        self._running = False
        self._stopper = TurnStopper()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: int | None = None
        self._capabilities: dict[str, ModelCapabilities] = {}
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
        """Run the last turn again from its user message (which is not added twice), in the
        mode the caller chose for it, if it chose one (`/code why is this slow`)."""
        return self._play(None, self._turn_force)

    def resend(self, text: str, *, force: str | None = None) -> AsyncGenerator[TurnEvent, None]:
        """Replace the last turn with `text` (the user edited their last message); `force`
        as in `run_turn` (an edited `/MODE text` stays in MODE).

        The last user message and everything after it leave the history, and `text` runs as
        a new turn. The session log keeps the old turn and records a `ui_event`
        `supersede` naming it, so a replay or a resume knows it was replaced.
        """
        return self._play(text, force, supersede=True)

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
            self._loop.call_soon_threadsafe(self._stopper.cancel_now)
        else:
            self._stopper.cancel_now()

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

    def _play(
        self,
        text: str | None,
        force: str | None,
        plan: CorrectionPlan | None = None,
        *,
        supersede: bool = False,
    ) -> AsyncGenerator[TurnEvent, None]:
        return play(self, text, force, plan, supersede=supersede)

    def _models_in_use(self) -> set[str]:
        """Every model a mode of the pack answers with (the ledger's baseline candidates)."""
        if self.model_override:
            return {self.model_override}
        return {
            self.default_model if profile.model == "default" else profile.model
            for profile in self.pack.profiles
        }

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
        # a mode the caller passed is for this message only: the route says so (replay,
        # the panel and the log show "one-shot"); the control file's setting is not one
        once = force is not None and force != AUTO
        if wanted == OFF:
            return Route(OFF, "caller", OFF_REASON, one_shot=once)
        if wanted is not None:
            try:
                return replace(self.router.force(wanted), one_shot=once)
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
            if (await self._capable(model)).reasoning:
                effort = requested
            else:
                notes.append(f"thinking n/a for {model}")
        tools: dict[str, Tool] = {}
        if profile is not None and (profile.tools or profile.mcp):
            missing = [name for name in profile.tools if name not in self.tools]
            if missing:
                notes.append(f"tools not available here: {', '.join(missing)}")
            selected = self.tools.select(profile.tools)
            if (selected or profile.mcp) and not (await self._capable(model)).tools:
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

    async def _capable(self, model: str) -> ModelCapabilities:
        """What `model` can do, asked once (off the loop: it may import litellm)."""
        known = self._capabilities.get(model)
        if known is not None:
            return known
        try:
            answer = await asyncio.to_thread(self.model.capabilities, model)
        except Exception:  # an unknown capability is reported as missing
            log.exception("capabilities(%s) failed", model)
            answer = UNKNOWN_CAPABILITIES
        self._capabilities[model] = answer
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

    def _record(self, record: SessionRecord) -> None:
        if self.session is None:
            return
        try:
            write_record(self.session, record)
        except Exception as error:  # the turn goes on; the next RouteDecided warns
            log.exception("could not write a %s record", record.kind)
            if self._record_failure is None:
                self._record_failure = f"{type(error).__name__}: {error}"

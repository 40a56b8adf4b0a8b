"""The engine: one user turn, end to end, as a stream of `TurnEvent`s.

    Engine(config=EngineConfig(default_model=...), pack=..., router=..., model=...)
    async for event in engine.run_turn(text): ...

Modules, in the order a turn visits them:

    engine.py       `Engine`, the public face: run_turn, retry, resend, correct, cancel,
                    clear, restore, plan_undo/undo; owns the conversation and the parts
                    (the policy guard, the editor and checkpoints: core.edits)
    config.py       `EngineConfig`: the settings as one frozen value (the only way an
                    engine is given its settings)
    context.py      `TurnContext`: the parts a turn may use; `Recorder`: the session log
    turn.py         `Turn`: the one loop that plays the steps and acts on their outcomes;
                    closes the turn once, at the end
    outcomes.py     how a step ends, one value: `AnswerDone`, `RunTools`, `HandOff`,
                    `LimitReached`, `Cancelled`, `Failed` (a closed union)
    prepare.py      step 1: the kind of turn (`TurnOrder`: new, edit, retry, correction),
                    the message in place, the control file, the route, the mode entered
    doubt_choice.py the unsure router's pick and runner-up, put to the user before the turn
    auto_enter.py   the `auto_enter: confirm` question before the router enters a mode
    setup.py        `ModeSetups`: a mode resolved into a `TurnSetup` (model, tools, prompt)
    rounds.py       a round: the request, the stream (fallbacks), the answer stored ->
                    `AnswerDone` / `RunTools` / `Failed`
    request.py      the request a round sends: system part, history window, tool traffic
    fitting.py      each request fitted into the model's window, older turns compacted,
                    one retry after a provider's context error
    fitter.py       `RequestFitter`: fits requests with core.context, writes summaries
    mode_note.py    the note that tells a model another mode answered before
    tool_calls.py   the tool calls of a round: checks, guards, the tool, its result ->
                    `HandOff` / `LimitReached` / `Cancelled` / none (go round)
    hand_off.py     `switch_mode`: its guard, and the rest of the turn in the named mode
    policy_guard.py the mode's policy decides each call: allow, ask with the diff, deny
    guards.py       the shipped guards and a turn's `Limits`
    verdicts.py     `PendingCall` and a guard's `Verdict` (`Cancel`, `Block`, `Answer`): values
    questions.py    `Question`: what a turn may ask the user (the budget, auto-enter, a
                    hand-off); `ModeChoice`: which mode, when the router is unsure;
                    `RuleNote`: the rule that decided a call; `verbatim`
    close.py        the end, once: finished / failed / cancelled / abandoned, the records
    state.py        `EngineState` (outlives a turn), `TurnState` (8 fields), `RoundState`,
                    `TurnSetup`; `StopRequested` (a cancel, inside the engine)
    cancelling.py   `TurnSlot`/`TurnStopper`: one turn at a time, stopped at once
    costs.py        prices, the ledger's baseline, the budget question, fallback notes
    rerun.py        `TurnCorrections`: what the router decided per turn, `/wrong`
    ports.py        the engine's ports: `Asker`, `Chooser`, `Confirmer`, `Guard`,
                    `CorrectionRecorder`, `Restorable`, `TurnEngine` (the model seam is
                    `core/model/`)

Public names: `__all__`, imported from the module that defines them (see core/__init__.py).
"""

from __future__ import annotations

from .config import EngineConfig
from .engine import Engine
from .guards import Limits
from .mode_note import NoteEchoFilter
from .ports import Asker, Chooser, Confirmer, CorrectionRecorder, Guard, Restorable, TurnEngine
from .prepare import TurnKind, TurnOrder
from .questions import ANSWER_ARMING_SECONDS, ModeChoice, Question, RuleNote, verbatim
from .turn import Turn

__all__ = ["Engine", "EngineConfig", "Limits", "NoteEchoFilter"]
__all__ += ["Asker", "Chooser", "Confirmer", "CorrectionRecorder", "Guard", "Restorable"]
__all__ += ["TurnEngine", "TurnKind", "TurnOrder"]
__all__ += ["ANSWER_ARMING_SECONDS", "ModeChoice", "Question", "RuleNote", "Turn", "verbatim"]

"""The engine: one user turn, end to end, as a stream of `TurnEvent`s.

    Engine(config=EngineConfig(...), pack=..., router=..., model=...)
    async for event in engine.run_turn(text): ...

Modules, in the order a turn visits them:

    engine.py       `Engine`, the public face: run_turn, retry, resend, correct, cancel,
                    clear, restore, plan_undo/undo; owns the conversation and the parts
                    (the policy guard, the editor and checkpoints: core.edits)
    config.py       `EngineConfig`: the settings as one frozen value
    context.py      `TurnContext`: the parts a turn may use; `Recorder`: the session log
    turn.py         `Turn`: plays the phases and maps every ending to the close phase
    prepare.py      phase 1: the kind of turn (`TurnOrder`: new, edit, retry, correction),
                    the message in place, the control file, the route, the mode entered
    doubt_choice.py the unsure router's pick and runner-up, put to the user before the turn
    auto_enter.py   the `auto_enter: confirm` question before the router enters a mode
    setup.py        `ModeSetups`: a mode resolved into a `TurnSetup` (model, tools, prompt)
    rounds.py       phase 2: per round the request, the stream (fallbacks), the answer
    request.py      the request a round sends: system part, history window, tool traffic
    fitting.py      each request fitted into the model's window, older turns compacted,
                    one retry after a provider's context error
    fitter.py       `RequestFitter`: fits requests with core.context, writes summaries
    mode_note.py    the note that tells a model another mode answered before
    tool_calls.py   the tool calls of a round: checks, guards, the tool, its result
    hand_off.py     `switch_mode`: its guard, and the rest of the turn in the named mode
    policy_guard.py the mode's policy decides each call: allow, ask with the diff, deny
    guards.py       `Guard` verdicts, the shipped guards and a turn's `Limits`
    questions.py    `Question`: what a turn may ask the user (the budget, auto-enter, a
                    hand-off); `ModeChoice`: which mode, when the router is unsure;
                    `RuleNote`: the rule that decided a call; `verbatim`
    close.py        phase 3: finished / failed / cancelled / abandoned, and the records
    state.py        `EngineState` (outlives a turn), `TurnState`, `TurnSetup`
    cancelling.py   `TurnSlot`/`TurnStopper`: one turn at a time, stopped at once
    costs.py        prices, the ledger's baseline, the budget question, fallback notes
    rerun.py        `TurnCorrections`: what the router decided per turn, `/wrong`
    ports.py        the engine's ports: `Asker`, `Chooser`, `Confirmer`, `Guard`,
                    `CorrectionRecorder`, `Restorable`, `TurnEngine` (the model seam is
                    `core/model/`)

Other packages import a public name from the module that defines it
(`from modes_tui.core.engine.<module> import <name>`);
`__all__` lists those names and is the package's public surface: a name not in it,
or starting with `_`, is private to the package (tests/test_architecture.py).
"""

from __future__ import annotations

__all__ = [
    "ANSWER_ARMING_SECONDS",
    "Asker",
    "Chooser",
    "Confirmer",
    "CorrectionRecorder",
    "Engine",
    "EngineConfig",
    "Guard",
    "Limits",
    "ModeChoice",
    "NoteEchoFilter",
    "Question",
    "Restorable",
    "RoutedTurn",
    "RuleNote",
    "Turn",
    "TurnEngine",
    "TurnKind",
    "TurnOrder",
    "verbatim",
]

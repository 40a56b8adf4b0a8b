"""The engine: one user turn, end to end, as a stream of `TurnEvent`s.

    Engine(config=EngineConfig(...), pack=..., router=..., model=...)
    async for event in engine.run_turn(text): ...

Modules, in the order a turn visits them:

    engine.py       `Engine`, the public face: run_turn, retry, resend, correct, cancel,
                    clear, restore; owns the conversation and the parts
    config.py       `EngineConfig`: the settings as one frozen value
    context.py      `TurnContext`: the parts a turn may use; `Recorder`: the session log
    turn.py         `Turn`: plays the phases and maps every ending to the close phase
    prepare.py      phase 1: the kind of turn (`TurnOrder`: new, edit, retry, correction),
                    the message in place, the control file, the route, the mode entered
    auto_enter.py   the `auto_enter: confirm` question before the router enters a mode
    setup.py        `ModeSetups`: a mode resolved into a `TurnSetup` (model, tools, prompt)
    rounds.py       phase 2: per round the request, the stream (fallbacks), the answer
    request.py      the request a round sends: system part, history window, tool traffic
    mode_note.py    the note that tells a model another mode answered before
    tool_calls.py   the tool calls of a round: checks, guards, the tool, its result
    guards.py       `Guard` verdicts, the shipped guards and a turn's `Limits`
    questions.py    `Question`/`Asker`: what a turn may ask the user
    close.py        phase 3: finished / failed / cancelled / abandoned, and the records
    state.py        `EngineState` (outlives a turn), `TurnState`, `TurnSetup`
    cancelling.py   `TurnSlot`/`TurnStopper`: one turn at a time, stopped at once
    costs.py        prices, the ledger's baseline, the budget question, fallback notes
    correcting.py   `TurnCorrections`: what the router decided per turn, `/wrong`
    wire.py         `ModelRequest` and the model's stream events (the `ChatModel` seam)

The names below are imported lazily: leaf modules (wire, guards, questions) are imported
by core.tools and llm/, which the engine itself imports; an eager import would be a cycle.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from modes_tui.core.engine.config import EngineConfig
    from modes_tui.core.engine.engine import Engine
    from modes_tui.core.engine.guards import Limits
    from modes_tui.core.engine.prepare import TurnKind, TurnOrder
    from modes_tui.core.engine.turn import Turn
    from modes_tui.core.ports import Confirmer

__all__ = ["Confirmer", "Engine", "EngineConfig", "Limits", "Turn", "TurnKind", "TurnOrder"]

_WHERE = {
    "Confirmer": "modes_tui.core.ports",
    "Engine": "modes_tui.core.engine.engine",
    "EngineConfig": "modes_tui.core.engine.config",
    "Limits": "modes_tui.core.engine.guards",
    "Turn": "modes_tui.core.engine.turn",
    "TurnKind": "modes_tui.core.engine.prepare",
    "TurnOrder": "modes_tui.core.engine.prepare",
}


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(where), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})

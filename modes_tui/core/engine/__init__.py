"""The engine: one user turn, end to end, as a stream of `TurnEvent`s (placeholder map)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from modes_tui.core.engine.engine import Engine
    from modes_tui.core.engine.guards import Limits
    from modes_tui.core.ports import Confirmer

__all__ = ["Confirmer", "Engine", "Limits"]

_WHERE = {
    "Engine": "modes_tui.core.engine.engine",
    "Limits": "modes_tui.core.engine.guards",
    "Confirmer": "modes_tui.core.ports",
}


def __getattr__(name: str) -> Any:
    # Lazy: leaf modules here (wire, guards, questions) are imported by core.tools and llm/,
    # which the engine itself imports; an eager import would be a cycle.
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(where), name)

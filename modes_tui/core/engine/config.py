"""`EngineConfig`: the settings one engine runs with, as one value.

The runtime builds it once from the settings, the command line and the pack
(`Runtime.engine` -> `build_engine` -> `Engine(config=...)`); each turn reads the value it
started with, so a setting changed mid-turn cannot half-apply.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from modes_tui.core.engine.guards import Limits
from modes_tui.core.packs.profiles import Profile

__all__ = ["CHECKPOINT_SECONDS", "EngineConfig"]

CHECKPOINT_SECONDS = 2.0


@dataclass(frozen=True, slots=True)
class EngineConfig:
    """How an engine answers: its models, its folder, its limits."""

    default_model: str
    """What profiles' `model: default` resolve to (the settings' model)."""
    model_override: str | None = None
    """`--model`: replaces the model of every mode, and their fallbacks."""
    cwd: Path = field(default_factory=Path.cwd)
    """The folder the tools work in and the prompts name."""
    limits: Limits = field(default_factory=Limits)
    """How far one turn may go (model calls, tool calls, output, timeouts)."""
    inputs: Mapping[str, Any] = field(default_factory=dict)
    """Extra template locals of the prompts (`--input key=value`)."""
    budget: float | None = None
    """USD per session (None: no budget)."""
    checkpoint_seconds: float = CHECKPOINT_SECONDS
    """How often a long answer is written to the session log while it streams."""

    def model_for(self, profile: Profile | None) -> str:
        """The model a mode answers with when no fallback has taken over."""
        if profile is not None and profile.model != "default":
            return self.model_override or profile.model
        return self.model_override or self.default_model

    def models_in_use(self, profiles: Iterable[Profile]) -> set[str]:
        """Every model a mode of the pack answers with (the ledger's baseline candidates)."""
        if self.model_override:
            return {self.model_override}
        return {
            self.default_model if profile.model == "default" else profile.model
            for profile in profiles
        }

"""`EngineConfig`: the settings one engine runs with, as one value.

The runtime builds it once from the settings, the command line and the pack
(`Runtime.engine_config` -> `build_engine(config, ...)` -> `Engine(config=...)`); each turn reads the value it
started with, so a setting changed mid-turn cannot half-apply.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from modes_tui.core.config.models import DEFAULT, FAST, STRONG, ModelCatalog, ModelChoice
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
    models: ModelCatalog | None = None
    """Aliases and roles (how `model: fast` becomes the model called); None: none configured."""

    def __post_init__(self) -> None:
        if not isinstance(self.cwd, Path):  # a str from a small caller
            object.__setattr__(self, "cwd", Path(self.cwd))

    @property
    def catalog(self) -> ModelCatalog:
        """The aliases and roles, with `default_model` as what `default` means."""
        if self.models is None:
            return ModelCatalog(default_model=self.default_model)
        return self.models

    def choose(self, profile: Profile | None, model: str | None = None) -> ModelChoice:
        """The alias or litellm id a mode answers with, and the role that gave it: `model` (a
        fallback), else `--model`, else the mode's `model:` (a role or `default` followed)."""
        if model is None:
            model = self.model_override or (profile.model if profile is not None else DEFAULT)
        return self.catalog.choose(model)

    def model_for(self, profile: Profile | None) -> str:
        """The model a mode answers with when no fallback has taken over."""
        return self.choose(profile).name

    @property
    def summary_model(self) -> str:
        """The model that writes summaries of older turns: the run's model (`--model`), else
        the `fast` role's (the default model until `roles:` says otherwise)."""
        return self.choose(None, self.model_override or FAST).name

    def models_in_use(self, profiles: Iterable[Profile]) -> set[str]:
        """Every model a mode of the pack answers with (the ledger's baseline candidates)."""
        if self.model_override:
            return {self.choose(None).name}
        return {self.choose(profile).name for profile in profiles}

    def baseline_role(self, profiles: Iterable[Profile]) -> ModelChoice | None:
        """The `strong` role's model, the "always" of "saved vs always strong", when roles
        are in use: a mode names a role, or `roles:` sets `strong`. None otherwise (the
        priciest model in use is the baseline) and with --model, which pins one model."""
        catalog = self.catalog
        if self.model_override or not catalog.is_role(STRONG):
            return None
        named = any(catalog.is_role(profile.model) for profile in profiles)
        if not named and STRONG not in catalog.roles:
            return None
        return catalog.choose(STRONG)

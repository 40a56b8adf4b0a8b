"""Building engines in tests: the settings among keyword arguments gathered into one
`EngineConfig` (the engine takes its settings only as a config)."""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any

from modes_tui.core.config.models import EMBEDDED_MODEL
from modes_tui.core.engine.config import EngineConfig

SETTINGS = frozenset(item.name for item in fields(EngineConfig))
"""The names of the engine's settings (the fields of `EngineConfig`)."""


def engine_config(**overrides: Any) -> EngineConfig:
    """An `EngineConfig` as a run without settings has it: `default_model` is the embedded
    model unless given, and is what `default` means in `models` (the aliases), if given."""
    overrides.setdefault("default_model", EMBEDDED_MODEL)
    if overrides.get("models") is not None:
        overrides["models"] = replace(overrides["models"], default_model=overrides["default_model"])
    return EngineConfig(**overrides)


def with_config(**arguments: Any) -> dict[str, Any]:
    """`Engine` keyword arguments with the settings among `arguments` moved into `config`."""
    settings = {name: arguments.pop(name) for name in SETTINGS if name in arguments}
    if "config" in arguments:
        if settings:
            raise TypeError(f"settings in config and as keywords: {sorted(settings)}")
        return arguments
    return {**arguments, "config": engine_config(**settings)}

"""What a pack's templates need of a mode, so that prompts.py need not import
profiles (profiles imports prompts); `profiles.Profile` has it."""

from __future__ import annotations

from typing import Protocol

__all__ = ["Mode"]


class Mode(Protocol):
    """What templates need of a mode; `profiles.Profile` has it (no import: profiles uses us)."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def thinking(self) -> str: ...
    @property
    def tools(self) -> tuple[str, ...]: ...
    @property
    def instructions(self) -> str: ...
    @property
    def source(self) -> str: ...

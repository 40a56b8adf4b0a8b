"""Starting up: how far the slow work is (`LoadProgress`, for the status line's bar), and
why modes-tui could not start, said whole and with the file to fix (`StartupProblem`).

A broken pack or a bad setting stops the app before any model is involved, so the note in
the chat and every message sent afterwards name the pack file or the setting, never "the
model settings".
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from modes_tui.core.errors import DeclarationError, MissingLocalParts, ModesError, SettingsError
from modes_tui.frontend.startup import setting_failure

if TYPE_CHECKING:
    from modes_tui.core.history.events import TurnFailed


@dataclass(frozen=True, slots=True)
class StartupProblem:
    """What stopped the start, and what to do about it."""

    headline: str
    """One line: what is broken (a pack, a setting, something else)."""
    details: str
    """The whole error text, every problem of a pack on its own line."""
    hint: str
    """What to fix, naming the file."""

    @classmethod
    def of(cls, error: BaseException | None) -> StartupProblem:
        """The problem an exception from preparing the app stands for."""
        text = str(error) if isinstance(error, ModesError) else repr(error)
        if isinstance(error, DeclarationError):
            files = sorted({p.file for p in error.problems if p.file})
            pack = f"pack {error.pack!r}" if error.pack else "the pack"
            where = ", ".join(files) if files else pack
            count = len(error.problems)
            return cls(
                headline=f"{pack} is broken ({count} problem{'s' if count != 1 else ''})",
                details=text,
                hint=f"fix {where} in {pack} (`modes-tui profiles --check` lists every "
                "problem), then restart",
            )
        if isinstance(error, MissingLocalParts):
            return cls(
                headline="no model is installed",
                details=text,
                hint="run one of the commands above in a terminal, then restart",
            )
        if isinstance(error, SettingsError):  # the words name the file, line and column
            headline, hint = setting_failure(error)
            return cls(headline=headline, details=text, hint=hint)
        return cls(
            headline=text.splitlines()[0] if text else "an unexpected error",
            details=text,
            hint="this looks like a bug in modes-tui; the note has the whole error",
        )

    def note(self) -> str:
        """The note shown in the chat: plain text, wrapped, nothing clipped."""
        return (
            f"modes-tui could not start: {self.headline}\n\n{self.details}\n\nTo fix: {self.hint}."
        )


def startup_failure(problem: StartupProblem | None, engine_error: str | None) -> TurnFailed:
    """Why a message cannot run: the setup (`problem`) or the model failed, with the fix."""
    from modes_tui.core.history.events import TurnFailed

    if problem is not None:
        return TurnFailed(
            error=f"modes-tui could not start: {problem.headline}",
            kind="startup",
            hint=problem.hint,
            retryable=False,
        )
    return TurnFailed(
        error=f"the model could not start: {engine_error}",
        kind="startup",
        hint="Check the model settings (modes-tui --help), then restart.",
        retryable=False,
    )


@dataclass(frozen=True, slots=True)
class Phase:
    """Where the start-up work is."""

    label: str
    """What is being done, e.g. `assembling gemma-3-270m.gguf: part 2 of 3`."""
    fraction: float
    """0..1 of the whole start-up."""


class LoadProgress:
    """Start-up progress, written by the thread that builds the engine and read by the
    status line on its timer (no cross-thread calls into the UI)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._phase: Phase | None = None

    def report(self, label: str, fraction: float) -> None:
        """Say what is being done now and how far the whole start-up is (0..1)."""
        with self._lock:
            self._phase = Phase(label, max(0.0, min(1.0, fraction)))

    def stage(self, start: float, end: float) -> Callable[[str, float], None]:
        """A reporter for one part of the start-up that maps its own 0..1 into start..end."""

        def report(label: str, fraction: float) -> None:
            self.report(label, start + (end - start) * fraction)

        return report

    @property
    def phase(self) -> Phase | None:
        """The latest phase, or None before any."""
        with self._lock:
            return self._phase

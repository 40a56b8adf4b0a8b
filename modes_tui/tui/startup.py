"""Why modes-tui could not start, said whole and with the file to fix.

A broken pack or a bad setting stops the app before any model is involved, so the note in
the chat and every message sent afterwards name the pack file or the setting, never "the
model settings".
"""

from __future__ import annotations

from dataclasses import dataclass

from modes_tui.core.errors import DeclarationError, ModesError, SettingsError


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
        if isinstance(error, SettingsError):
            return cls(
                headline="a setting is wrong",
                details=text,
                hint="fix the setting named in the note (its file or variable), then restart",
            )
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

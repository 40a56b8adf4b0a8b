"""`/modes` and `/mode NAME`, once for both front ends: what the listing holds, what a setting
does to the control file, and what it means for the next turns.

Each front end draws the rows (the app a Markdown table with the keys, the REPL one line per
mode) and says the new setting in its own words.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from modes_tui.core.control_setting import AUTO, OFF

if TYPE_CHECKING:
    from modes_tui.core.control_setting import ControlReading
    from modes_tui.core.packs.profiles import Pack

__all__ = ["ModeRow", "ModeSetting", "mode_rows", "set_mode", "setting_meaning"]


@dataclass(frozen=True, slots=True)
class ModeRow:
    """One mode as `/modes` lists it."""

    name: str
    description: str
    """The whole description (what the router reads)."""
    thinking: str
    tools: tuple[str, ...]
    fallback: bool
    """Whether the router falls back to it."""
    available: bool
    """Whether it can answer now (its `available:` rule holds)."""

    @property
    def about(self) -> str:
        """The description's first sentence, without its full stop."""
        return self.description.strip().split(". ")[0].rstrip(".")


def mode_rows(pack: Pack) -> list[ModeRow]:
    """Every mode of `pack`, in the pack's order."""
    fallback = pack.router.fallback
    return [
        ModeRow(
            name=profile.name,
            description=profile.description,
            thinking=profile.thinking,
            tools=tuple(profile.tools),
            fallback=profile.name == fallback,
            available=profile.is_available(),
        )
        for profile in pack.profiles
    ]


class ModeSetting(Protocol):
    """The control setting as `/mode` changes it (the control file, or a run's own setting)."""

    def read(self) -> ControlReading:
        """The setting now."""
        ...

    def write(self, mode: str) -> object:
        """Set auto, off or a mode name; raises UnknownMode for a bad name."""
        ...


def set_mode(control: ModeSetting, value: str) -> ControlReading:
    """`/mode VALUE` (a key, the palette): the setting becomes auto, off or a mode; returns
    the reading now in force. Raises UnknownMode (a ModesError) for a name it refuses."""
    control.write(value)
    return control.read()


def setting_meaning(mode: str, pack_option: str = "") -> str:
    """What a mode setting (auto, off, or a mode's name) does to the next turns;
    `pack_option` (` --pack P`) goes into the command that undoes it."""
    if mode == AUTO:
        return "the router picks the mode of every turn"
    if mode == OFF:
        return "no mode: the base prompt and the default model only"
    return (
        f"every turn goes to {mode}; `modes-tui mode auto{pack_option}` hands it back to the router"
    )

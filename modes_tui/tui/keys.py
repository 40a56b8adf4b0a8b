"""Which key forces which mode, and the ids users rebind in `keymap:`.

A profile's own `key` wins; the other modes get free F-keys in roster order. F1 is help,
and F10-F12 are skipped because terminals commonly take them (menu bar, full screen).
Nothing here imports textual, so the REPL and the docs can list the same keys.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

from modes_tui.core.control_setting import AUTO, OFF

if TYPE_CHECKING:
    from modes_tui.core.packs.profiles import Profile

FREE_FUNCTION_KEYS = ("f2", "f3", "f4", "f5", "f6", "f7", "f8", "f9")
"""F-keys handed out to modes without a `key`, in order."""

MODE_BINDING_PREFIX = "mode."


class ModeKey(NamedTuple):
    """A mode and the key that forces it (a named tuple: it loads before the first frame, and
    a frozen dataclass compiles six methods at import)."""

    mode: str
    """The mode's name."""
    key: str | None
    """The key, or None when the F-keys ran out (the palette and shift+tab still work)."""

    @property
    def binding_id(self) -> str:
        """The id a keymap uses to rebind it, e.g. `mode.code`."""
        return f"{MODE_BINDING_PREFIX}{self.mode}"


def mode_keys(profiles: Sequence[Profile]) -> list[ModeKey]:
    """One `ModeKey` per profile, in roster order."""
    taken = {p.key for p in profiles if p.key}
    free = [key for key in FREE_FUNCTION_KEYS if key not in taken]
    result = []
    for profile in profiles:
        key = profile.key
        if key is None and free:
            key = free.pop(0)
        result.append(ModeKey(profile.name, key))
    return result


def next_setting(current: str, modes: Sequence[str]) -> str:
    """The setting after `current` when cycling: auto, each mode in order, then auto again.

    `off` and an unknown name (a mode that went away) continue with the first mode.
    """
    cycle = [AUTO, *modes]
    if current == OFF or current not in cycle:
        return modes[0] if modes else AUTO
    return cycle[(cycle.index(current) + 1) % len(cycle)]


def normal_keymap(keymap: Mapping[str, str], modes: Sequence[str]) -> dict[str, str]:
    """The user's keymap with short names expanded: `auto`, `off`, `cycle` and a bare mode
    name mean `mode.auto`, `mode.off`, `mode.cycle` and `mode.NAME`."""
    short = {"auto", "off", "cycle", *modes}
    return {
        (f"{MODE_BINDING_PREFIX}{name}" if name in short else name): keys
        for name, keys in keymap.items()
    }

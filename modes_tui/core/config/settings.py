"""Typed fields of config.yaml: the one reader for its keys, `models:` and `mcp_servers:`.

A pack folder is read by `core.packs.fields.FieldReader`, which collects every problem so a pack
can be fixed in one pass. A setting stops at its first problem instead (a `SettingsError`):
the app cannot start on a half-read config, and the value may come from a variable or an
option rather than a file. Both readers test values with the predicates here, so "true or
false" or "a whole number" means the same thing in a profile and in config.yaml.

Every message has one shape: `<where>: <key path> must be <expected>, got <value>; <fix>`,
where `<where>` is the file, the variable or the option, and `<fix>` says what to do.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from modes_tui.core.errors import SettingsError, cut_repr


def is_text(value: Any) -> bool:
    """Non-empty text (after stripping)."""
    return isinstance(value, str) and bool(value.strip())


def is_flag(value: Any) -> bool:
    """`true` or `false`, and nothing that merely looks like one (`yes`, 1)."""
    return isinstance(value, bool)


def is_whole(value: Any, minimum: int) -> bool:
    """A whole number of at least `minimum` (YAML's `true` is not 1)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= minimum


def is_number(value: Any, minimum: float, *, above: bool = False, finite: bool = False) -> bool:
    """A number of at least `minimum` (greater than it when `above`; not inf/nan when `finite`)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    if finite and not math.isfinite(value):
        return False
    return value > minimum if above else value >= minimum


def is_scalar(value: Any) -> bool:
    """Text or a number: what an argument or a header value may be written as."""
    return isinstance(value, str | int | float) and not isinstance(value, bool)


class _Unset:
    """No value to show: the message ends at what was expected."""


UNSET: Final = _Unset()


@dataclass(frozen=True, slots=True)
class SettingReader:
    """Checks the fields of one settings mapping; the first problem is a SettingsError."""

    where: str
    """The file, the variable or the option the value came from."""
    key: str = ""
    """The key path of the mapping read (`mcp_servers.git`); empty at the top level."""
    fix: str = ""
    """What to do about a problem, appended after `; ` (empty: nothing appended)."""
    typed: bool = True
    """Show a wrong value with its type (`got int 3`) or as the value only (`got 3`)."""

    def child(self, sub: str) -> SettingReader:
        """The reader of the mapping at `sub` inside this one."""
        return SettingReader(self.where, self.path(sub), self.fix, self.typed)

    def path(self, sub: str = "") -> str:
        """`key.sub` (a `[n]` index is appended without a dot)."""
        if not self.key or not sub:
            return self.key or sub
        return f"{self.key}{sub}" if sub.startswith("[") else f"{self.key}.{sub}"

    def error(self, sub: str, text: str) -> SettingsError:
        """`<where>: <path><text>; <fix>`: `text` starts with its own separator."""
        fix = f"; {self.fix}" if self.fix else ""
        return SettingsError(f"{self.where}: {self.path(sub)}{text}{fix}")

    def problem(self, sub: str, text: str) -> SettingsError:
        """`<where>: <path>: <text>; <fix>`, for what is wrong with the mapping as a whole."""
        head = self.path(sub)
        return self.error(sub, f": {text}" if head else text)

    def wrong(self, sub: str, expected: str, value: Any = UNSET) -> SettingsError:
        """`<path> must be <expected>, got <value>`."""
        return self.error(sub, f" must be {expected}{self.got(value)}")

    def got(self, value: Any) -> str:
        """`, got int 3` (or `, got 3` when not typed); nothing for UNSET."""
        if value is UNSET:
            return ""
        shown = f"{type(value).__name__} {cut_repr(value)}" if self.typed else cut_repr(value)
        return f", got {shown}"

    def unknown_keys(self, data: Mapping[Any, Any], allowed: Any, advice: str) -> None:
        """Refuse the keys of `data` that are not `allowed`, naming them and the `advice`."""
        unknown = sorted(str(k) for k in data if k not in allowed)
        if unknown:
            plural = "s" if len(unknown) > 1 else ""
            names = ", ".join(map(cut_repr, unknown))
            raise self.problem("", f"unknown key{plural} {names}; {advice}")

    def mapping(self, sub: str, value: Any, expected: str) -> Mapping[Any, Any]:
        """`value` if it is a mapping (None is an empty one)."""
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise self.wrong(sub, expected, value)
        return value

    def text(self, sub: str, value: Any, expected: str) -> str:
        """`value` as non-empty text, stripped."""
        if not is_text(value):
            raise self.wrong(sub, expected, value)
        return str(value).strip()

    def flag(self, sub: str, value: Any, expected: str = "true or false") -> bool:
        """`value` as true or false."""
        if not is_flag(value):
            raise self.wrong(sub, expected, value)
        return bool(value)

    def whole(self, sub: str, value: Any, expected: str, minimum: int) -> int:
        """`value` as a whole number of at least `minimum`."""
        if not is_whole(value, minimum):
            raise self.wrong(sub, expected, value)
        return int(value)

    def number(
        self,
        sub: str,
        value: Any,
        expected: str,
        minimum: float,
        *,
        above: bool = False,
        finite: bool = False,
    ) -> float:
        """`value` as a number of at least (or, `above`, more than) `minimum`."""
        if not is_number(value, minimum, above=above, finite=finite):
            raise self.wrong(sub, expected, value)
        return float(value)

    def text_map(self, sub: str, value: Any, expected: str) -> dict[str, str]:
        """A mapping of names to text (numbers written as text); None is empty."""
        entries = self.mapping(sub, value, expected)
        inner = self.child(sub)
        result: dict[str, str] = {}
        for name, item in entries.items():
            if not isinstance(name, str) or not name:
                raise inner.problem("", f"{cut_repr(name)} is not a valid name")
            if not is_scalar(item):
                raise inner.wrong(name, "text", item)
            result[name] = str(item)
        return result

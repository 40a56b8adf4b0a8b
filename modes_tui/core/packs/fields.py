"""The pieces every pack file is read with: YAML, typed fields, and the problems they make.

`FieldReader` collects `Problem`s instead of stopping at the first one, so `load_pack` can
list everything wrong with a pack at once; its type checks are the predicates of
`core.config.settings`, which also reads config.yaml (stopping at the first problem there).
`HistoryWindow` and `Availability` are the value types that both profiles and `router.yaml`
use.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import yaml

from modes_tui.core.config.settings import is_number, is_text, is_whole
from modes_tui.core.errors import Problem, cut_repr
from modes_tui.core.packs.prompts import UnreadablePackFile, read_pack_file
from modes_tui.core.yaml_files import key_place, load_yaml, yaml_problem

T = TypeVar("T")

UNKNOWN_SHOWN = 5
"""Unknown keys named one by one per file; the rest are counted."""


@dataclass(frozen=True, slots=True)
class HistoryWindow:
    """How much earlier conversation someone sees: the last N entries, or all."""

    last: int | None = None
    """Keep only the last N entries; None keeps all."""

    def apply(self, entries: Sequence[Any]) -> list[Any]:
        """The entries this window lets through, oldest first."""
        if self.last is None:
            return list(entries)
        if self.last == 0:
            return []
        return list(entries[-self.last :])

    def to_dict(self) -> dict[str, Any]:
        """`{"last": N}` or `{"last": null}` for all."""
        return {"last": self.last}


@dataclass(frozen=True, slots=True)
class Availability:
    """When a mode may be chosen; the seed's `if:`."""

    env: str | None = None
    """The mode is available only when this environment variable is set and non-empty."""

    def check(self, environ: Mapping[str, str] | None = None) -> bool:
        """Whether the mode is available now."""
        env = os.environ if environ is None else environ
        return not self.env or bool(env.get(self.env))


class FieldReader:
    """Reads the files of one pack folder and collects every problem before giving up."""

    def __init__(self, path: Path) -> None:
        self.path = path
        """The pack folder; problems name files relative to its parent."""
        self.problems: list[Problem] = []
        """Everything found wrong so far."""
        self.texts: dict[str, str] = {}
        """The YAML files read so far, by path: where a problem's key is written."""

    def problem(self, file: Path | str, key: str, message: str) -> None:
        """Note one problem of `file` at `key` (with the key's line and column, when the
        file is YAML this reader read)."""
        text = self.texts.get(str(file))
        place = key_place(text, key) if text is not None and key else ""
        self.problems.append(Problem(self._display(file), key, message, place))

    def _display(self, file: Path | str) -> str:
        path = Path(file)
        try:
            return str(path.relative_to(self.path.parent))
        except ValueError:
            return str(path)

    def read_yaml(self, file: Path) -> dict[str, Any] | None:
        """The mapping in `file`, or None after noting why it is not usable."""
        try:
            text = read_pack_file(file)
            data = load_yaml(text)
        except UnreadablePackFile as error:
            self.problem(file, "", str(error))
            return None
        except yaml.YAMLError as error:
            where, reason = yaml_problem(error)
            self.problem(file, where, f"not valid YAML: {reason}")
            return None
        except (OSError, UnicodeDecodeError) as error:
            self.problem(file, "", f"cannot read: {error}")
            return None
        self.texts[str(file)] = text
        if data is None:
            data = {}
        if not isinstance(data, dict):
            self.problem(
                file, "", f"must be a mapping of keys to values, not a {type(data).__name__}"
            )
            return None
        return data

    def unknown_keys(self, file: Path, data: Mapping[str, Any], allowed: frozenset[str]) -> None:
        """Note each key of `data` that is not `allowed`, with the nearest known one (the
        first `UNKNOWN_SHOWN`, then how many more). A file with no known key at all is the
        wrong file, not a file of typos: one problem, and none of its keys repeated (a
        profile linked to some other file must not print that file line by line)."""
        unknown = [key for key in data if key not in allowed]
        if len(unknown) > 1 and len(unknown) == len(data):
            self.problem(
                file,
                "",
                f"not a file of this kind: none of its {len(unknown)} keys is known here "
                f"(known keys: {', '.join(sorted(allowed))})",
            )
            return
        for key in unknown[:UNKNOWN_SHOWN]:
            hint = closest(str(key), allowed)
            extra = (
                f"; did you mean {cut_repr(hint)}?"
                if hint
                else f"; known keys: {', '.join(sorted(allowed))}"
            )
            self.problem(file, str(key), f"unknown key{extra}")
        if len(unknown) > UNKNOWN_SHOWN:
            more = len(unknown) - UNKNOWN_SHOWN
            self.problem(file, "", f"and {more} more unknown key{'s' if more > 1 else ''}")

    def strings(self, file: Path, data: Mapping[str, Any], key: str) -> tuple[str, ...]:
        """`data[key]` as a list of non-empty texts (stripped)."""
        value = data.get(key, [])
        if value is None:
            return ()
        if not isinstance(value, list):
            self.problem(file, key, "must be a list of strings")
            return ()
        result: list[str] = []
        for index, item in enumerate(value):
            if not is_text(item):
                self.problem(file, f"{key}[{index}]", f"{cut_repr(item)} must be non-empty text")
                continue
            result.append(item.strip())
        return tuple(result)

    def choice(
        self, file: Path, data: Mapping[str, Any], key: str, choices: Sequence[T], default: T
    ) -> T:
        """`data[key]` if it is one of `choices` (YAML's `false` counts as `off`)."""
        value = data.get(key, default)
        for choice in choices:
            if value == choice or (value is False and choice == "off"):
                return choice
        self.problem(file, key, f"{cut_repr(value)} is not one of {', '.join(map(str, choices))}")
        return default

    def checked(
        self, file: Path, data: Mapping[str, Any], key: str, valid: Callable[[Any], bool], what: str
    ) -> Any:
        """`data[key]` if it is missing, null or `valid`; else None after noting it must be `what`."""
        value = data.get(key)
        if value is None or valid(value):
            return value
        self.problem(file, key, f"{cut_repr(value)} must be {what}")
        return None

    def history(self, file: Path, value: Any, key: str) -> HistoryWindow:
        """`all`, null or `{last: N}` as a window."""
        if value == "all" or value is None:
            return HistoryWindow(None)
        if isinstance(value, dict) and set(value) <= {"last"}:
            last = value.get("last")
            if last is None:
                return HistoryWindow(None)
            if is_whole(last, 0):
                return HistoryWindow(last)
        self.problem(file, key, f"{cut_repr(value)} must be `all` or {{last: N}} with N >= 0")
        return HistoryWindow(None)

    def availability(self, file: Path, value: Any) -> Availability:
        """`{env: NAME}` (or nothing) as an availability rule."""
        if value is None:
            return Availability()
        if isinstance(value, dict) and set(value) == {"env"} and isinstance(value["env"], str):
            return Availability(env=value["env"])
        self.problem(file, "available", f"{cut_repr(value)} must be {{env: VARIABLE_NAME}}")
        return Availability()

    def fraction(
        self, file: Path, data: Mapping[str, Any], key: str, default: float | None
    ) -> float | None:
        """`data[key]` as a number from 0 to 1 (null allowed)."""
        value = data.get(key, default)
        if value is None:
            return None
        if not (is_number(value, 0) and value <= 1):
            self.problem(file, key, f"{cut_repr(value)} must be a number from 0 to 1")
            return default
        return float(value)

    def cap(
        self, file: Path, data: Mapping[str, Any], key: str, default: int, where: str
    ) -> int | None:
        """`data[key]` as a length cap of at least 20 characters, or null for none."""
        value = data.get(key, default)
        if value is None:
            return None
        if not is_whole(value, 20):
            self.problem(file, where, f"{cut_repr(value)} must be a whole number >= 20, or null")
            return default
        return value


def closest(word: str, choices: frozenset[str] | set[str]) -> str | None:
    """The choice `word` was most likely meant to be, if one is close enough."""
    matches = difflib.get_close_matches(word, sorted(choices), n=1, cutoff=0.75)
    return matches[0] if matches else None

"""The control file: `<config>/state.json`, the setting that forces a mode from outside.

`{"mode": "auto"}` lets the router decide, `{"mode": "off"}` runs the base prompt and the
default model only, `{"mode": "code"}` forces a mode on every turn. The engine reads it
before every turn (`ControlFile.read`), the TUI watches it (`ControlFile.watch`), and keys,
`/mode` and `modes-tui mode` write it (`ControlFile.write`).

Reading never raises: a file that cannot be used means `auto` plus a warning that names
the file and what was wrong. A *missing* file means `auto` without a warning: a fresh
install has no file, and a warning on every first start would teach people to ignore
warnings. `modes-tui mode` still says where the setting came from ("no control file").

Writes are atomic (`core.files.atomic_write`: temp file, fsync, `os.replace`), so a reader in
another process sees the old file or the new one, never half of either.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator, Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from modes_tui.core.control import AUTO, OFF, ControlReading
from modes_tui.core.errors import ModesError, UnknownMode
from modes_tui.core.files import atomic_write, remove_stale_temps
from modes_tui.core.ports import ControlSource
from modes_tui.core.profiles import NAME_PATTERN

POLL_SECONDS = 0.2
"""How often `watch` looks at the file: well under a second, far from a busy loop."""

_Signature = tuple[int, int, int, int] | None


class ControlFile:
    """The control file at `path`; `modes` lists the mode names a setting may name.

    Without `modes`, any well-formed mode name is accepted (the pack is unknown here);
    the engine and the CLI pass the active pack's names so a stale name reads as `auto`.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        modes: Callable[[], Iterable[str]] | None = None,
        *,
        poll_seconds: float = POLL_SECONDS,
    ) -> None:
        self.path = Path(path)
        self._modes = modes
        self.poll_seconds = poll_seconds

    # ------------------------------------------------------------------ reading

    def read(self) -> ControlReading:
        """The setting now: auto when the file is missing, auto plus a warning when unusable."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return ControlReading(AUTO)
        except OSError as error:
            return self._unusable(f"cannot be read ({error.strerror or error})")
        return self._parse(raw)

    def _parse(self, raw: bytes) -> ControlReading:
        try:
            data = json.loads(raw.decode("utf-8-sig"))
        except UnicodeDecodeError:
            return self._unusable("not UTF-8 text")
        except json.JSONDecodeError as error:
            return self._unusable(
                f"not valid JSON (line {error.lineno}, column {error.colno}: {error.msg})"
            )
        if not isinstance(data, dict):
            return self._unusable(f"a JSON {_json_type(data)}, expected an object")
        if set(data) != {"mode"}:
            extra = sorted(set(data) - {"mode"})
            what = f"unknown keys {', '.join(map(repr, extra))}" if extra else "no 'mode' key"
            return self._unusable(f"{what}; the file holds exactly one key, 'mode'")
        mode = data["mode"]
        if not isinstance(mode, str):
            return self._unusable(f"'mode' is a JSON {_json_type(mode)}, expected a string")
        if mode in (AUTO, OFF):
            return ControlReading(mode)
        valid = self.valid_names()
        if valid is None:
            if NAME_PATTERN.match(mode):
                return ControlReading(mode)
            return self._unusable(f"'mode' is {mode!r}, which is not a mode name")
        if mode not in valid:
            choices = ", ".join([AUTO, OFF, *valid])
            return self._unusable(f"mode {mode!r} is not in the active pack ({choices})")
        return ControlReading(mode)

    def _unusable(self, what: str) -> ControlReading:
        return ControlReading(
            AUTO,
            f"control file {self.path}: {what}; using auto. "
            "Fix it with `modes-tui mode auto` (or a mode name).",
        )

    def valid_names(self) -> list[str] | None:
        """The mode names a setting may name, or None when any name is accepted."""
        return None if self._modes is None else list(self._modes())

    # ------------------------------------------------------------------ writing

    def write(self, mode: str) -> ControlReading:
        """Set the mode atomically; raise UnknownMode (listing valid values) for a bad name."""
        self.validate(mode)
        payload = (json.dumps({"mode": mode}) + "\n").encode("utf-8")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(self.path, payload)
            remove_stale_temps(self.path)
        except OSError as error:
            raise ModesError(
                f"cannot write the control file {self.path}: {error.strerror or error}; "
                "check that its folder is writable"
            ) from error
        return ControlReading(mode)

    def validate(self, mode: str) -> None:
        """Raise UnknownMode unless `mode` is auto, off, or a mode the setting may name."""
        if mode in (AUTO, OFF):
            return
        valid = self.valid_names()
        if valid is None:
            if NAME_PATTERN.match(mode):
                return
            raise UnknownMode(mode, [AUTO, OFF])
        if mode not in valid:
            raise UnknownMode(mode, [AUTO, OFF, *valid])

    # ------------------------------------------------------------------ watching

    def signature(self) -> _Signature:
        """What changes whenever the file is replaced or edited (None: no file)."""
        try:
            stat = os.stat(self.path)
        except OSError:
            return None
        # os.replace gives a new inode; ctime catches in-place edits that keep the size.
        return (stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)

    async def watch(self, *, include_current: bool = False) -> AsyncIterator[ControlReading]:
        """Yield a reading whenever the file changes to a different setting or warning.

        Polls `os.stat` every `poll_seconds` (no busy loop, no dependency, and it works on
        every filesystem, where inotify misses changes made over NFS or by other hosts).
        Cancel the task that iterates to stop; nothing is left running.
        """
        seen = self.signature()
        last = self.read()
        if include_current:
            yield last
        while True:
            await asyncio.sleep(self.poll_seconds)
            now = self.signature()
            if now == seen:
                continue
            seen = now
            reading = self.read()
            if reading != last:
                last = reading
                yield reading


if TYPE_CHECKING:  # mypy proves the engine can read the setting through it

    def _is_a_source(file: ControlFile) -> ControlSource:
        return file


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"

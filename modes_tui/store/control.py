"""The control file: `<config>/state.json`, the setting that forces a mode from outside.

One setting per pack, plus a file-wide one (what the file held before settings were per pack):

    {"mode": "auto", "packs": {"default": "code", "support": "returns"}}

A pack's own entry wins; a pack without one uses the file-wide `mode`; with neither, the
setting is `auto`. A write also keeps when the setting was made, in `since` (same shape,
ISO 8601 UTC times: `{"since": {"packs": {"default": "2026-12-03T14:02:07+00:00"}}}`), so the
app can say "forced: code since yesterday 14:02"; a file without it reads as before, and a
`since` that cannot be read is ignored, never the setting. `auto` lets the router decide, `off` runs the base prompt and the default
model only, a mode name forces that mode on every turn. Both keys are optional: an old file
`{"mode": "code"}` still reads as it did, for every pack. `ControlFile(path, pack=P)` reads
and writes P's entry (`modes-tui mode NAME --pack P`, keys and `/mode` in a window on P), so a
window on another pack is not affected; without a pack it reads and writes the file-wide
`mode`. The engine reads it before every turn (`ControlFile.read`), the TUI watches it
(`ControlFile.watch`: only a change of its own pack's setting is reported).

Reading never raises: a file that cannot be used means `auto` plus a warning that names
the file and what was wrong. A *missing* file means `auto` without a warning: a fresh
install has no file, and a warning on every first start would teach people to ignore
warnings. `modes-tui mode` still says where the setting came from ("no control file").

Writes are atomic (`core.files.atomic_write`: temp file, fsync, `os.replace`), so a reader in
another process sees the old file or the new one, never half of either. A write keeps the
other packs' settings: it takes the file's lock (`core.files.locked`, `.state.json.lock`
beside it), reads the file, changes one entry and replaces the file before letting go, so
any number of writers at once (four `modes-tui mode X --pack P` for four packs) lose
nothing. A pack key that is not a pack name (`../x`, empty) makes the file unusable, with
a warning naming the key; a write drops such keys. The file must
be a regular file: a symlink, a FIFO or a device at its place reads as `auto` plus a warning
and is never written through (`core.files`); it is read with a size limit.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from modes_tui.core.config.control import pack_name_problem
from modes_tui.core.config.ports import ControlSource
from modes_tui.core.control_setting import AUTO, OFF, ControlReading, Source
from modes_tui.core.errors import (
    FileReadError,
    FileTooLargeError,
    FileWriteError,
    ModesError,
    UnknownMode,
)
from modes_tui.core.files import (
    atomic_write,
    locked,
    private_folder,
    read_bytes,
    remove_stale_temps,
)
from modes_tui.core.packs.profiles import NAME_PATTERN

POLL_SECONDS = 0.2
"""How often `watch` looks at the file: well under a second, far from a busy loop."""

_Signature = tuple[int, int, int, int] | None

MODE = "mode"
"""The file-wide setting: every pack without an entry of its own."""
PACKS = "packs"
"""Pack name -> that pack's setting."""
SINCE = "since"
"""When each setting was made: `{"mode": ISO time, "packs": {pack: ISO time}}` (UTC)."""
KEYS_HELP = (
    "the file holds 'mode' (every pack), 'packs' (one setting per pack) and 'since' "
    "(when each was set)"
)


class ControlFile:
    """The control file at `path`, as pack `pack` sees it; `modes` lists the mode names a
    setting may name.

    Without `modes`, any well-formed mode name is accepted (the pack is unknown here);
    the engine and the CLI pass the active pack's names so a stale name reads as `auto`.
    Without `pack`, the file-wide setting is read and written.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        modes: Callable[[], Iterable[str]] | None = None,
        *,
        pack: str | None = None,
        poll_seconds: float = POLL_SECONDS,
    ) -> None:
        self.path = Path(path)
        self._modes = modes
        self.pack = pack
        """Whose setting this is (None: the file-wide one)."""
        self.poll_seconds = poll_seconds

    # ------------------------------------------------------------------ reading

    def read(self) -> ControlReading:
        """The setting now: auto when the file is missing, auto plus a warning when unusable."""
        try:
            raw = read_bytes(self.path, "control")
        except FileNotFoundError:
            return ControlReading(AUTO)
        except FileTooLargeError as error:
            return self._unusable(f"{error.strerror} (it holds one short key)")
        except FileReadError as error:
            return self._unusable(
                f"{error.strerror}, not a regular file",
                fix=f"Remove it (rm {self.path}), then write a new one with",
            )
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
        problem = _shape_problem(data)
        if problem is not None:
            return self._unusable(problem)
        packs = data.get(PACKS, {})
        if self.pack is not None and self.pack in packs:
            reading = self._setting(packs[self.pack], f"{PACKS}.{self.pack}", "pack")
            return _dated(reading, _since(data).get(self.pack))
        if MODE in data:
            return _dated(self._setting(data[MODE], MODE, "file"), _since(data).get(None))
        return ControlReading(AUTO)

    def _setting(self, mode: object, field: str, source: Source) -> ControlReading:
        """The value at `field` checked against the modes a setting may name."""
        if not isinstance(mode, str):
            return self._unusable(f"'{field}' is a JSON {_json_type(mode)}, expected a string")
        if mode in (AUTO, OFF):
            return ControlReading(mode, source=source)
        valid = self.valid_names()
        if valid is None:
            if NAME_PATTERN.match(mode):
                return ControlReading(mode, source=source)
            return self._unusable(f"'{field}' is {mode!r}, which is not a mode name")
        if mode not in valid:
            choices = ", ".join([AUTO, OFF, *valid])
            where = "" if field == MODE else f" ('{field}')"
            return self._unusable(f"mode {mode!r}{where} is not in the active pack ({choices})")
        return ControlReading(mode, source=source)

    def _unusable(self, what: str, *, fix: str = "Fix it with") -> ControlReading:
        option = f" --pack {self.pack}" if self.pack is not None else ""
        return ControlReading(
            AUTO,
            f"control file {self.path}: {what}; using auto. "
            f"{fix} `modes-tui mode auto{option}` (or a mode name).",
        )

    def valid_names(self) -> list[str] | None:
        """The mode names a setting may name, or None when any name is accepted."""
        return None if self._modes is None else list(self._modes())

    # ------------------------------------------------------------------ writing

    def write(self, mode: str) -> ControlReading:
        """Set this pack's mode (or the file-wide one) atomically, keeping the other packs'
        settings; raise UnknownMode (listing valid values) for a bad name."""
        self.validate(mode)
        problem = None if self.pack is None else pack_name_problem(self.pack)
        if problem is not None:  # a --profiles folder named `my pack` reads, but is no key
            raise ModesError(
                f"cannot set a mode for pack {self.pack!r}: it {problem}; the control file "
                f"{self.path} keeps pack names only. Rename the pack's folder"
            )
        try:
            private_folder(self.path.parent)
            with locked(self.path):  # read, change, replace: no other writer in between
                data = self._stored()
                _stamp(data, self.pack, mode)
                if self.pack is None:
                    data[MODE] = mode
                else:
                    data[PACKS] = {**data.get(PACKS, {}), self.pack: mode}
                atomic_write(self.path, (json.dumps(data) + "\n").encode("utf-8"))
            remove_stale_temps(self.path)
        except FileWriteError as error:
            raise ModesError(f"the control file was not changed: {error}") from error
        except OSError as error:
            raise ModesError(
                f"cannot write the control file {self.path}: {error.strerror or error}; "
                "check that its folder is writable"
            ) from error
        return ControlReading(mode, source="file" if self.pack is None else "pack")

    def _stored(self) -> dict[str, Any]:
        """What a write keeps: the settings of the file now, those of a usable shape only
        (an unusable file is replaced, as it always was)."""
        try:
            data = json.loads(read_bytes(self.path, "control").decode("utf-8-sig"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            return {}
        if isinstance(data, dict) and isinstance(data.get(PACKS), dict):
            packs = {k: v for k, v in data[PACKS].items() if pack_name_problem(k) is None}
            data = {**data, PACKS: packs}  # a key that is a path goes; the others stay
        if _shape_problem(data) is not None:
            return {}
        kept: dict[str, Any] = {}
        if isinstance(data.get(MODE), str):
            kept[MODE] = data[MODE]
        packs = {k: v for k, v in data.get(PACKS, {}).items() if isinstance(v, str)}
        if packs:
            kept[PACKS] = packs
        times = _since(data)
        if times:
            kept[SINCE] = _since_data(times)
        return kept

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
            stat = os.lstat(self.path)  # a link swapped in is a change (and a warning)
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


class RunOnlySetting:
    """The control file, with `/mode` lasting for this run only: a REPL reading a pipe.

    A script's `/mode shell` must not force shell on every later session, so `write` keeps
    the setting in memory (checked as the file would check it) and the file is never
    written; until the first `write`, the file's setting applies as usual.
    """

    def __init__(self, file: ControlFile) -> None:
        self.file = file
        """The control file underneath (read until this run sets its own)."""
        self._mode: str | None = None

    def read(self) -> ControlReading:
        """This run's setting once one was set, else the file's."""
        if self._mode is None:
            return self.file.read()
        return ControlReading(self._mode, source="run")

    def write(self, mode: str) -> ControlReading:
        """Set the mode for this run; raise UnknownMode for a bad name (nothing is written)."""
        self.file.validate(mode)
        self._mode = mode
        return self.read()

    async def watch(self) -> AsyncIterator[ControlReading]:
        """The file's changes, for as long as this run has no setting of its own."""
        async for reading in self.file.watch():
            if self._mode is None:
                yield reading


if TYPE_CHECKING:  # mypy proves the engine can read the setting through them

    def _is_a_source(file: ControlFile) -> ControlSource:
        return file

    def _run_is_a_source(setting: RunOnlySetting) -> ControlSource:
        return setting


def _shape_problem(data: object) -> str | None:
    """What is wrong with the file's shape (not its values), or None."""
    if not isinstance(data, dict):
        return f"a JSON {_json_type(data)}, expected an object"
    extra = sorted(set(data) - {MODE, PACKS, SINCE})
    if extra:
        return f"unknown keys {', '.join(map(repr, extra))}; {KEYS_HELP}"
    if not data:
        return f"no 'mode' key and no 'packs' key; {KEYS_HELP}"
    packs = data.get(PACKS, {})
    if not isinstance(packs, dict):
        return f"'packs' is a JSON {_json_type(packs)}, expected an object of pack: setting"
    for key in packs:
        problem = pack_name_problem(key)
        if problem is not None:
            return f"'packs' has the key {key!r}, which {problem}"
    return None


def _since(data: Mapping[str, Any]) -> dict[str | None, str]:
    """When each setting was made (None: the file-wide one). A `since` that is not of the
    expected shape is ignored: a missing time must never cost the user their setting."""
    since = data.get(SINCE)
    if not isinstance(since, dict):
        return {}
    times: dict[str | None, str] = {}
    if _is_time(since.get(MODE)):
        times[None] = since[MODE]
    packs = since.get(PACKS)
    if isinstance(packs, dict):
        times.update({k: v for k, v in packs.items() if isinstance(k, str) and _is_time(v)})
    return times


def _since_data(times: Mapping[str | None, str]) -> dict[str, Any]:
    """The `since` object for `times` (the inverse of `_since`)."""
    data: dict[str, Any] = {}
    if None in times:
        data[MODE] = times[None]
    packs = {k: v for k, v in times.items() if k is not None}
    if packs:
        data[PACKS] = packs
    return data


def _stamp(data: dict[str, Any], pack: str | None, mode: str) -> None:
    """Keep when `pack`'s setting (None: the file-wide one) changes to `mode`; setting the
    same value again keeps the first time (it has been forced since then)."""
    before = data.get(MODE) if pack is None else data.get(PACKS, {}).get(pack)
    times = _since(data)
    if before == mode and pack in times:
        return
    times[pack] = datetime.now(UTC).isoformat(timespec="seconds")
    data[SINCE] = _since_data(times)


def _is_time(value: object) -> bool:
    if not isinstance(value, str) or len(value) > 40:
        return False
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def _dated(reading: ControlReading, since: str | None) -> ControlReading:
    """`reading` with the time its setting was made (a warning's auto has none)."""
    if since is None or reading.warning is not None:
        return reading
    return replace(reading, since=since)


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

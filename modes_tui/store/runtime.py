"""Runtime state: files in the state dir that may be thrown away, and the sweep that does it.

Runtime state is kept apart from the control file (user configuration in the config dir)
and from session logs (in the data dir): the input history of the REPL and the TUI, and
caches such as embeddings. The sweep at start deletes runtime files untouched for a week.

The sweep walks only the runtime locations named here, never the whole state dir: on
macOS platformdirs puts the state, data and config dirs in the same folder, so "every old
file under the state dir" would include config.yaml and the session logs. A second guard
refuses the settings file, the control file, user packs and prompts, and anything in the
sessions folder, whatever the layout.

`sweep_temps` removes what a writer killed before its rename left behind: only this
program's own temp names (`core.files.is_own_temp`: `.<file>.<random>.tmp`,
`.modes-tui-<hex>.tmp`), only older than a minute (a live writer's file is fresh), only in
the folders it writes: the config folder itself (not the user's packs and prompts below
it), and the data and state folders with everything below them. It runs with `sweep`, at
every chat's start.
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from modes_tui.core.files import (
    STALE_TEMP_SECONDS,
    is_own_temp,
    open_append,
    private_folder,
    read_bytes,
)
from modes_tui.core.paths import Dirs

DAY_SECONDS = 24 * 60 * 60


@dataclass(frozen=True, slots=True)
class RuntimeState:
    """Where runtime state lives; nothing here is worth keeping for long."""

    root: Path
    """The state dir."""
    cache: Path
    """Caches (embeddings of examples and the like); rebuilt when missing."""

    @property
    def input_history(self) -> Path:
        """The prompt's input history (one file, shared by the REPL and the TUI)."""
        return self.root / "input_history"

    @property
    def scratch(self) -> Path:
        """Short-lived files of a running app (downloads in progress, exports to preview)."""
        return self.root / "tmp"

    def ensure(self) -> RuntimeState:
        """Create the folders (0700: the input history is what the user typed); return self."""
        for folder in (self.root, self.cache, self.scratch):
            private_folder(folder)
        return self


def read_input_history(path: Path) -> list[str]:
    """The entries of the input history file, newest first (prompt_toolkit's FileHistory
    format: `+`-prefixed lines, entries apart by other lines). A missing file is empty;
    FileReadError for a link or a special file, FileTooLargeError past the limit."""
    try:
        data = read_bytes(path, "history")
    except FileNotFoundError:
        return []
    entries: list[str] = []
    lines: list[str] = []
    for line in data.decode("utf-8", errors="replace").splitlines():
        if line.startswith("+"):
            lines.append(line[1:])
        elif lines:
            entries.append("\n".join(lines))
            lines = []
    if lines:
        entries.append("\n".join(lines))
    return entries[::-1]


def append_input_history(path: Path, entry: str) -> None:
    """Add one entry to the input history file (0600 in a 0700 folder: what the user typed)."""
    private_folder(path.parent)
    lines = [f"\n# {datetime.now()}"] + [f"+{line}" for line in entry.split("\n")]
    fd = open_append(path)
    try:
        os.write(fd, ("\n".join(lines) + "\n").encode("utf-8", errors="replace"))
    finally:
        os.close(fd)


def runtime_state(dirs: Dirs) -> RuntimeState:
    """The runtime state locations of `dirs`."""
    return RuntimeState(root=dirs.state, cache=dirs.cache)


def sweep(dirs: Dirs, max_age_days: float = 7, *, now: float | None = None) -> list[Path]:
    """Delete runtime files not modified for `max_age_days`; return what was removed.

    Folders left empty below the cache and scratch folders go too. Files that vanish or
    cannot be removed meanwhile are skipped: a sweep must never stop the app from starting.
    """
    state = runtime_state(dirs)
    cutoff = (time.time() if now is None else now) - max_age_days * DAY_SECONDS
    protected = [
        _real(path)
        for path in (
            dirs.settings_file,
            dirs.control_file,
            dirs.user_profiles,
            dirs.user_prompts,
            dirs.sessions,
        )
    ]
    removed: list[Path] = []

    def old(path: Path) -> bool:
        try:
            return path.stat(follow_symlinks=False).st_mtime < cutoff
        except OSError:
            return False

    def remove(path: Path) -> None:
        resolved = _real(path)
        if any(resolved.is_relative_to(p) for p in protected):
            return
        with contextlib.suppress(OSError):
            path.unlink()
            removed.append(path)

    removed.extend(sweep_temps(dirs, now=now))
    if state.input_history.is_file() and old(state.input_history):
        remove(state.input_history)
    for root in (state.cache, state.scratch):
        if not root.is_dir():
            continue
        for folder, _subfolders, files in os.walk(root, topdown=False):
            here = Path(folder)
            for name in files:
                path = here / name
                if old(path):
                    remove(path)
            if here != root:
                with contextlib.suppress(OSError):
                    here.rmdir()  # only succeeds when empty
    return removed


def sweep_temps(dirs: Dirs, *, now: float | None = None) -> list[Path]:
    """Delete this program's temp files older than a minute (`STALE_TEMP_SECONDS`) from the
    folders it writes; return what was removed. Never raises: a file that vanishes or
    cannot be removed is skipped."""
    cutoff = (time.time() if now is None else now) - STALE_TEMP_SECONDS
    user_folders = [_real(dirs.user_profiles), _real(dirs.user_prompts)]
    removed: list[Path] = []
    seen: set[Path] = set()
    roots = [(dirs.config, False), (dirs.data, True), (dirs.state, True)]
    for root, below in roots:
        for folder in _folders(root, below=below):
            real = _real(folder)
            if real in seen or any(real.is_relative_to(p) for p in user_folders):
                continue
            seen.add(real)
            removed.extend(_remove_old_temps(folder, cutoff))
    return removed


def _folders(root: Path, *, below: bool) -> list[Path]:
    """`root`, and every folder below it when `below` (links not followed)."""
    if not root.is_dir():
        return []
    if not below:
        return [root]
    return [Path(folder) for folder, _subfolders, _files in os.walk(root)]


def _remove_old_temps(folder: Path, cutoff: float) -> list[Path]:
    removed: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        if not is_own_temp(entry.name):
            continue
        with contextlib.suppress(OSError):
            if (
                entry.is_file(follow_symlinks=False)
                and entry.stat(follow_symlinks=False).st_mtime < cutoff
            ):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
    return removed


def _real(path: Path) -> Path:
    """`path` with symlinks resolved; a symlink loop (e.g. a broken state.json) is no error
    here, where `Path.resolve()` raises RuntimeError."""
    return Path(os.path.realpath(path))

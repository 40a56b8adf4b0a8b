"""The sessions folder: where session logs live, finding one by id, and listing them.

The log itself is written by `store.session_log` and read back by `store.session_reader`.

Layout, in the sessions folder of the data dir:

    <id>.jsonl                 the log: one record per line, first record `meta`
    .summaries/<id>.json       a small summary (title, turns) for the session list

Ids are `YYYYMMDD-HHMMSS-xxxx` (UTC time of creation, then 4 random hex digits), so
sorting ids sorts sessions by age and `latest` needs no file read at all. Files are
created mode 0600: they hold private conversations.

Listing reads the summary cache (`store.session_log` keeps it) or, without one, the first
line of the log (the `meta` record); it never reads past the first line of a log.
"""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from modes_tui.core.errors import SessionError
from modes_tui.core.files import open_regular, read_bytes
from modes_tui.core.paths import Dirs, app_dirs
from modes_tui.store.session_files import SUFFIX, SUMMARIES
from modes_tui.store.titles import renamed_titles

LATEST = "latest"
HEAD_LIMIT = 256 * 1024
"""The longest first line the session list reads; a `meta` record is far shorter."""


def new_session_id(now: datetime | None = None) -> str:
    """`YYYYMMDD-HHMMSS-xxxx`: UTC creation time, then 4 random hex digits."""
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    return f"{moment:%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """One line of the session list, read from the summary or the first line only."""

    id: str
    """The session id; pass it to `load_session`, `modes-tui replay` or `export`."""
    path: Path
    """The log file."""
    created: str | None
    """When the session started (UTC, ISO 8601)."""
    updated: float
    """When the log last changed (seconds since the epoch, from the file system)."""
    title: str | None
    """The first user message's first line, when known."""
    turns: int | None
    """How many user turns, when known without reading the log."""
    pack: str | None = None
    """The pack it was recorded with."""
    model: str | None = None
    """The default model in force when it started."""
    problem: str | None = None
    """Why the summary could not be read, if it could not."""

    def to_dict(self) -> dict[str, Any]:
        """Plain data for `--json`."""
        return {
            "id": self.id,
            "path": str(self.path),
            "created": self.created,
            "updated": datetime.fromtimestamp(self.updated, UTC).isoformat(timespec="seconds"),
            "title": self.title,
            "turns": self.turns,
            "pack": self.pack,
            "model": self.model,
            "problem": self.problem,
        }


def summary_path(log: Path) -> Path:
    """The summary file of the log at `log`."""
    return log.parent / SUMMARIES / (log.name.removesuffix(SUFFIX) + ".json")


# --------------------------------------------------------------------------- finding


def session_ids(dirs: Dirs | None = None) -> list[str]:
    """Every session id in the sessions folder, oldest first (from file names only)."""
    folder = (dirs or app_dirs()).sessions
    try:
        with os.scandir(folder) as entries:
            return sorted(
                entry.name.removesuffix(SUFFIX)
                for entry in entries
                if entry.name.endswith(SUFFIX) and not entry.name.startswith(".")
            )
    except FileNotFoundError:
        return []


def resolve_session(ref: str | os.PathLike[str], dirs: Dirs | None = None) -> Path:
    """The log file for an id, a unique id prefix, `latest`, or a path to a `.jsonl` file."""
    dirs = dirs or app_dirs()
    how_to = "list session ids with `modes-tui sessions`, or use `latest` for the newest"
    text = os.fspath(ref)
    looks_like_path = not isinstance(ref, str) or os.sep in text or text.endswith(SUFFIX)
    if looks_like_path:
        path = Path(text).expanduser()
        if path.is_file() or path.is_symlink() or path.exists():
            return path  # reading it says what is wrong with a link or a special file
        if not isinstance(ref, str) or os.sep in text:
            raise SessionError(f"no session file at {path}; {how_to}")
        text = text.removesuffix(SUFFIX)
    ids = session_ids(dirs)
    folder = dirs.sessions
    if text == LATEST:
        if not ids:
            raise SessionError(
                f"there are no sessions yet in {folder}; start one with `modes-tui` and chat"
            )
        return folder / f"{ids[-1]}{SUFFIX}"
    if text in ids:
        return folder / f"{text}{SUFFIX}"
    matches = [i for i in ids if i.startswith(text)] if text else []
    if len(matches) == 1:
        return folder / f"{matches[0]}{SUFFIX}"
    if matches:
        shown = ", ".join(matches[-5:])
        raise SessionError(
            f"{text!r} matches {len(matches)} sessions (newest: {shown}); give more of the id"
        )
    raise SessionError(f"no session {text!r} in {folder}; {how_to}")


# --------------------------------------------------------------------------- listing


def list_sessions(dirs: Dirs | None = None, limit: int | None = None) -> list[SessionSummary]:
    """Sessions newest first, from summaries or first lines; never reads a whole log."""
    folder = (dirs or app_dirs()).sessions
    logs: dict[str, tuple[Path, float]] = {}
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                name = entry.name
                if name.endswith(SUFFIX) and not name.startswith(".") and entry.is_file():
                    logs[name.removesuffix(SUFFIX)] = (Path(entry.path), entry.stat().st_mtime)
    except FileNotFoundError:
        return []
    ids = sorted(logs, reverse=True)
    if limit is not None:
        ids = ids[:limit]
    summaries = [_summary(session_id, *logs[session_id]) for session_id in ids]
    renamed = renamed_titles(folder)  # the user's titles beat the generated ones
    if renamed:
        summaries = [replace(s, title=renamed[s.id]) if s.id in renamed else s for s in summaries]
    return summaries


def _summary(session_id: str, path: Path, updated: float) -> SessionSummary:
    try:
        data = json.loads(read_bytes(summary_path(path), "summary"))
        if isinstance(data, dict) and data.get("id") == session_id:
            return SessionSummary(
                id=session_id,
                path=path,
                created=_str_or_none(data.get("created")),
                updated=updated,
                title=_str_or_none(data.get("title")),
                turns=data.get("turns") if isinstance(data.get("turns"), int) else None,
                pack=_str_or_none(data.get("pack")),
                model=_str_or_none(data.get("model")),
            )
    except (OSError, ValueError):
        pass  # no summary, or a broken one: the first line of the log says enough
    return _summary_from_head(session_id, path, updated)


def _summary_from_head(session_id: str, path: Path, updated: float) -> SessionSummary:
    def broken(problem: str) -> SessionSummary:
        return SessionSummary(session_id, path, None, updated, None, None, problem=problem)

    try:
        with os.fdopen(open_regular(path), "rb") as handle:
            head = handle.readline(HEAD_LIMIT)
    except OSError as error:
        return broken(f"cannot be read: {error.strerror or error}")
    if not head.strip():
        return broken("empty: nothing was recorded")
    try:
        meta = json.loads(head)
    except ValueError:
        return broken("the first line is not a meta record")
    if not isinstance(meta, dict) or (meta.get("type") or meta.get("kind")) != "meta":
        return broken("the first line is not a meta record")
    return SessionSummary(
        id=session_id,
        path=path,
        created=_str_or_none(meta.get("created")),
        updated=updated,
        title=_str_or_none(meta.get("title")),
        turns=None,
        pack=_str_or_none(meta.get("pack")),
        model=_str_or_none(meta.get("model")),
    )


def _str_or_none(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


__all__ = [
    "LATEST",
    "SUFFIX",
    "SUMMARIES",
    "SessionSummary",
    "list_sessions",
    "new_session_id",
    "resolve_session",
    "session_ids",
    "summary_path",
]

"""Renaming and deleting saved sessions (`modes-tui sessions rename|rm`).

A rename appends a title record to the log (see `store.titles`). Deleting removes the
log and its cached summary and title, and only ever inside the sessions folder: a
session given by a path elsewhere, or a symlink that leads out of the folder, is refused.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

from modes_tui.core.errors import SessionError
from modes_tui.core.history.records import MetaRecord, write_record
from modes_tui.core.paths import Dirs, app_dirs
from modes_tui.store.session_log import SessionLog
from modes_tui.store.session_reader import load_session
from modes_tui.store.sessions import resolve_session, summary_path
from modes_tui.store.titles import check_title, renamed_path, write_renamed


def rename_session(ref: str, title: str, dirs: Dirs | None = None) -> tuple[str, str]:
    """Append a title to session `ref`; return its id and the title as stored."""
    cleaned = check_title(title)
    session = load_session(ref, dirs)
    with SessionLog.resume(session) as log:
        write_record(log, MetaRecord({"title": cleaned, "title_source": "user"}))
    write_renamed(session.path, session.id, cleaned)
    return session.id, cleaned


@dataclass(frozen=True, slots=True)
class DeletedSession:
    """What `delete_session` removed."""

    id: str
    """The session id."""
    path: Path
    """The log file that is gone."""


def session_in_folder(ref: str, dirs: Dirs | None = None) -> Path:
    """The log of `ref`, refusing anything that is not a file in the sessions folder."""
    dirs = dirs or app_dirs()
    path = resolve_session(ref, dirs)
    folder = dirs.sessions.resolve()
    if path.parent.resolve() != folder or path.is_symlink() or not path.is_file():
        raise SessionError(
            f"{path} is not a session in the sessions folder {folder}; only sessions listed "
            "by `modes-tui sessions` can be deleted (give its id)"
        )
    return path


def delete_session(ref: str, dirs: Dirs | None = None) -> DeletedSession:
    """Remove session `ref`'s log, summary and title (inside the sessions folder only)."""
    path = session_in_folder(ref, dirs)
    session_id = path.name.removesuffix(".jsonl")
    try:
        path.unlink()
    except FileNotFoundError:
        raise SessionError(f"session {session_id} is already gone ({path})") from None
    except OSError as error:
        raise SessionError(f"cannot delete {path}: {error.strerror or error}") from error
    for cache in (summary_path(path), renamed_path(path)):
        with contextlib.suppress(OSError):
            os.unlink(cache)
    return DeletedSession(session_id, path)

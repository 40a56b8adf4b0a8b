"""Writing a session log: one append-only JSONL file per session, and its summary.

**Writing** (`SessionLog`): every record is one `os.write` of one line, flushed to the
OS before `record` returns (optionally fsynced too, see `fsync`), with secrets redacted
on the way in. The record schema is `modes_tui.core.history.records`.

**The summary** is a cache, rewritten atomically (temp file + rename) after each user
record: the title is made from the first user messages (`store.titles`), which are not
known when the `meta` line is written, and an append-only log cannot go back and fill it
in. A rename (a later `meta` record) also leaves a sidecar the list reads (`store.titles`). One summary file per
session, rather than one shared index, because two running apps each own their session
and would otherwise overwrite each other's index updates. When the summary is missing
or unreadable, the list falls back to the first line of the log (the `meta` record).
Either way, listing never reads past the first line of a log.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from modes_tui.core.errors import SessionError
from modes_tui.core.files import atomic_write, open_append, open_regular, private_folder
from modes_tui.core.history.ports import SessionWriter
from modes_tui.core.history.records import (
    RECORD_TYPES,
    RESERVED_FIELDS,
    SCHEMA_VERSION,
    MetaRecord,
    RecordType,
    write_record,
)
from modes_tui.core.paths import Dirs, app_dirs
from modes_tui.core.redaction import redact_all
from modes_tui.store.session_reader import TITLE_FROM_TURNS, LoadedSession
from modes_tui.store.sessions import SUFFIX, new_session_id, summary_path
from modes_tui.store.titles import generate_title


def utc_now() -> str:
    """Now, as the `at` of a record: UTC, ISO 8601, milliseconds."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


# --------------------------------------------------------------------------- writing


class SessionLog:
    """The append-only log of one session; implements `core.history.records.SessionWriter`."""

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = False) -> None:
        self.path = Path(path)
        self.id = self.path.name.removesuffix(SUFFIX)
        self.fsync = fsync
        """Also fsync after each record: survives power loss, costs a disk flush per record."""
        self._fd: int | None = None
        self._lock = threading.Lock()
        self._needs_newline = False
        self._summary: dict[str, Any] = {"v": SCHEMA_VERSION, "id": self.id, "turns": 0}
        self._first_users: list[str] = []
        """The first user messages, until one of them makes a title."""

    @classmethod
    def create(
        cls,
        dirs: Dirs | None = None,
        *,
        pack: str | None = None,
        model: str | None = None,
        cwd: str | None = None,
        app_version: str | None = None,
        fsync: bool = False,
        session_id: str | None = None,
        **extra: Any,
    ) -> SessionLog:
        """A new session file with its `meta` record written (`session_id`: a chosen id)."""
        from modes_tui import __version__

        folder = (dirs or app_dirs()).sessions
        try:
            private_folder(folder)
        except OSError as error:
            raise SessionError(
                f"cannot create the sessions folder {folder}: {error.strerror or error}; "
                "check its permissions or set MODES_TUI_HOME to a writable folder"
            ) from error
        if session_id is not None and (not session_id or "/" in session_id or os.sep in session_id):
            raise ValueError(f"a session id is a file name, not {session_id!r}")
        for _ in range(100):
            chosen = session_id or new_session_id()
            path = folder / f"{chosen}{SUFFIX}"
            try:
                # O_EXCL: never a file (or a link) that is there already
                fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                if session_id is not None:
                    raise SessionError(
                        f"session {session_id!r} exists already ({path}); pick another id"
                    ) from None
                continue  # same second, same random suffix: draw again
            except OSError as error:
                raise SessionError(
                    f"cannot create session file {path}: {error.strerror or error}"
                ) from error
            break
        else:  # pragma: no cover - 100 collisions in one second
            raise SessionError(f"could not find a free session id in {folder}; try again")
        log = cls(path, fsync=fsync)
        log._fd = fd
        created = utc_now()
        facts = {
            "id": chosen,
            "created": created,
            "pack": pack,
            "cwd": os.getcwd() if cwd is None else cwd,
            "app_version": __version__ if app_version is None else app_version,
            "model": model,
            "title": extra.pop("title", None),
            **extra,
        }
        write_record(log, MetaRecord(facts))
        return log

    @classmethod
    def resume(cls, session: LoadedSession, *, fsync: bool = False) -> SessionLog:
        """Append to a loaded session again (after `/replay`, to carry on talking)."""
        log = cls(session.path, fsync=fsync)
        try:
            with os.fdopen(open_regular(session.path), "rb") as handle:
                handle.seek(0, os.SEEK_END)
                if handle.tell() > 0:
                    handle.seek(-1, os.SEEK_END)
                    # A torn last line must stay a line of its own, not swallow the next record.
                    log._needs_newline = handle.read(1) != b"\n"
        except OSError as error:
            raise SessionError(
                f"cannot open session file {session.path}: {error.strerror or error}"
            ) from error
        log._summary.update(
            created=session.meta.get("created"),
            pack=session.meta.get("pack"),
            model=session.meta.get("model"),
            title=session.title or None,
            turns=session.turns,
        )
        return log

    def record(self, type: RecordType, turn: int, **fields: Any) -> None:
        """Append one record; it has reached the OS (and the disk, with fsync) on return."""
        if type not in RECORD_TYPES:
            raise ValueError(f"unknown record type {type!r}; one of {', '.join(RECORD_TYPES)}")
        clash = RESERVED_FIELDS & fields.keys()
        if clash:
            raise ValueError(f"fields {sorted(clash)} are set by the log itself")
        record: dict[str, Any] = {"v": SCHEMA_VERSION, "type": type, "at": utc_now(), "turn": turn}
        record.update(redact_all(plain(fields)))  # by name and by value
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=repr)
        try:
            data = line.encode("utf-8") + b"\n"
        except UnicodeEncodeError:
            # A lone surrogate (say, from undecodable terminal input) is not UTF-8; as a
            # \udxxx escape it is valid JSON and reads back as the same string.
            line = json.dumps(record, ensure_ascii=True, separators=(",", ":"), default=repr)
            data = line.encode("ascii") + b"\n"
        with self._lock:
            if self._needs_newline:
                data = b"\n" + data
            try:
                fd = self._open()
                # Appending to a deleted file would lose every record. Checked once a turn
                # (fstat costs ~10 % of an append); the engine warns at the next route.
                if type == "user" and os.fstat(fd).st_nlink == 0:
                    raise SessionError(
                        f"session file {self.path} was deleted while in use (modes-tui "
                        "sessions rm?): this conversation is no longer recorded; restart "
                        "modes-tui to record a new session"
                    )
                write_every_byte(fd, data)
                if self.fsync:
                    os.fsync(fd)
            except OSError as error:
                self._needs_newline = True  # part of the line may be on disk
                raise SessionError(
                    f"cannot write to session file {self.path}: {error.strerror or error}; "
                    "free some disk space or check the folder's permissions"
                ) from error
            self._needs_newline = False
            self._note(type, turn, record)

    def copy(self, records: Iterable[Mapping[str, Any]]) -> None:
        """Append records of another session as they are (their `at` and `turn` kept): a fork."""
        for record in records:
            line = json.dumps(dict(record), ensure_ascii=True, separators=(",", ":"), default=repr)
            with self._lock:
                try:
                    write_every_byte(self._open(), line.encode("ascii") + b"\n")
                except OSError as error:
                    raise SessionError(
                        f"cannot write to session file {self.path}: {error.strerror or error}"
                    ) from error
                self._note(str(record.get("type")), int(record.get("turn") or 0), record)
        if self.fsync and self._fd is not None:
            os.fsync(self._fd)

    def close(self) -> None:
        """Close the file; a later `record` opens it again."""
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def __enter__(self) -> SessionLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def summary_path(self) -> Path:
        """Where this session's summary lives."""
        return summary_path(self.path)

    def _open(self) -> int:
        if self._fd is None:
            self._fd = open_append(self.path)
        return self._fd

    def _note(self, type: str, turn: int, record: Mapping[str, Any]) -> None:
        """Keep the summary current; it changes on meta and user records only."""
        summary = self._summary
        if type == "meta":
            for key in ("created", "pack", "model"):
                if record.get(key) is not None:
                    summary[key] = record[key]
            if record.get("title"):
                summary["title"] = record["title"]
        elif type == "user":
            summary["turns"] = max(int(summary.get("turns") or 0), turn)
            if not summary.get("title") and len(self._first_users) < TITLE_FROM_TURNS:
                self._first_users.append(str(record.get("content") or ""))
                summary["title"] = generate_title(self._first_users)
        else:
            return
        self._write_summary()

    def _write_summary(self) -> None:
        path = self.summary_path
        payload = json.dumps(self._summary).encode("ascii")  # escapes: any title encodes
        # A cache: no fsync (the log is the truth), and failing to write it is no error.
        # 0600 like the log: the title is the user's first message.
        with contextlib.suppress(OSError):
            private_folder(path.parent)
            atomic_write(path, payload, fsync=False)


def write_every_byte(fd: int, data: bytes) -> None:
    """Write all of `data` to `fd`: `os.write` may take only part of it (a full disk, a
    signal), so the rest is written until nothing is left; an OSError is the caller's."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def plain(value: Any) -> Any:
    """Values as JSON-ready data: objects with `to_dict()`, tuples, sets and paths included."""
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, Mapping):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return plain(to_dict())
    if isinstance(value, set | frozenset):
        return sorted(plain(item) for item in value)
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, datetime):
        return value.isoformat()
    return value  # json.dumps falls back to repr(): recorded, never dropped


if TYPE_CHECKING:  # mypy proves the log is what the engine writes to

    def _is_a_writer(log: SessionLog) -> SessionWriter:
        return log


__all__ = ["SessionLog", "plain", "utc_now", "write_every_byte"]

"""Session logs: one append-only JSONL file per session, and reading them back.

Layout, in the sessions folder of the data dir:

    <id>.jsonl                 the log: one record per line, first record `meta`
    .summaries/<id>.json       a small summary (title, turns) for the session list

Ids are `YYYYMMDD-HHMMSS-xxxx` (UTC time of creation, then 4 random hex digits), so
sorting ids sorts sessions by age and `latest` needs no file read at all. Files are
created mode 0600: they hold private conversations.

**Writing** (`SessionLog`): every record is one `os.write` of one line, flushed to the
OS before `record` returns (optionally fsynced too, see `fsync`), with secrets redacted
on the way in. The record schema is `modes_tui.core.records`.

**The summary** is a cache, rewritten atomically (temp file + rename) after each user
record: the title is made from the first user messages (`store.titles`), which are not
known when the `meta` line is written, and an append-only log cannot go back and fill it
in. A rename (a later `meta` record) also leaves a sidecar the list reads (`store.titles`). One summary file per
session, rather than one shared index, because two running apps each own their session
and would otherwise overwrite each other's index updates. When the summary is missing
or unreadable, the list falls back to the first line of the log (the `meta` record).
Either way, listing never reads past the first line of a log.

**Reading** (`load_session`): every complete record is kept. A torn last line (the
writer died mid-record) is reported with its file and line number and skipped; a corrupt
line in the middle is reported and skipped too; nothing around it is lost.

**Schema versions**: each record carries `v`. Older records are migrated on load by the
chain in `MIGRATIONS` (v0 -> v1 -> ...); records from a newer version are kept as they
are and reported once, so an older modes-tui shows what it can and says to upgrade.

Version 0 is the draft layout written before the schema was fixed (kept readable so
early logs replay):

| v0                                             | v1                                        |
|------------------------------------------------|-------------------------------------------|
| no `v`                                         | `"v": 1`                                  |
| `kind`                                         | `type`                                    |
| `ts` (epoch seconds)                           | `at` (UTC ISO 8601)                       |
| no `turn`: a user record starts the next turn  | `turn` on every record (0 for meta)       |
| user `text`                                    | user `content`                            |
| assistant `text`, `reasoning`, `mode`, `model`,| assistant `message` (Message.to_dict())   |
| `tool_calls` at the top level                  |                                           |
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import secrets
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

from modes_tui.core.errors import SessionError
from modes_tui.core.files import atomic_write
from modes_tui.core.paths import Dirs, app_dirs
from modes_tui.core.records import RECORD_TYPES, SCHEMA_VERSION, RecordType, SessionWriter
from modes_tui.store.redaction import redact_secrets
from modes_tui.store.titles import generate_title, renamed_titles

SUFFIX = ".jsonl"
SUMMARIES = ".summaries"
LATEST = "latest"
TITLE_LIMIT = 120
TITLE_FROM_TURNS = 3
"""A generated title comes from the first user message that says something, of this many."""
HEAD_LIMIT = 256 * 1024
"""The longest first line the session list reads; a `meta` record is far shorter."""
RESERVED_FIELDS = frozenset({"v", "type", "at", "turn"})


def utc_now() -> str:
    """Now, as the `at` of a record: UTC, ISO 8601, milliseconds."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def new_session_id(now: datetime | None = None) -> str:
    """`YYYYMMDD-HHMMSS-xxxx`: UTC creation time, then 4 random hex digits."""
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    return f"{moment:%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"


def title_of(text: str) -> str:
    """A one-line title: the first non-blank line, cut to TITLE_LIMIT characters."""
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    return line if len(line) <= TITLE_LIMIT else line[: TITLE_LIMIT - 1] + "…"


# --------------------------------------------------------------------------- values


@dataclass(frozen=True, slots=True)
class SessionProblem:
    """Something in a session file that could not be used as it is."""

    path: Path
    """The session file."""
    line: int | None
    """1-based line number, or None for the file as a whole."""
    message: str
    """What was wrong and what happened to it."""

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else str(self.path)
        return f"{where}: {self.message}"


@dataclass(frozen=True, slots=True)
class LoadedSession:
    """A session read back from its file: every usable record, and what was not usable."""

    id: str
    """The session id (the file name without `.jsonl`)."""
    path: Path
    """The file it came from."""
    meta: Mapping[str, Any]
    """The `meta` record's fields (later `meta` records update them)."""
    records: tuple[dict[str, Any], ...]
    """Every usable record in file order, migrated to the current schema (meta included)."""
    lines: tuple[int, ...]
    """The line number of each record, for messages."""
    problems: tuple[SessionProblem, ...] = ()
    """Torn or corrupt lines, migrations that failed, records from a newer schema."""

    @property
    def turns(self) -> int:
        """The number of the last turn."""
        return max((int(r.get("turn") or 0) for r in self.records), default=0)

    @property
    def title(self) -> str:
        """The user's title, else one made from the first user messages ('' without any)."""
        if self.meta.get("title"):
            return str(self.meta["title"])
        users = (str(r.get("content") or "") for r in self.records if r.get("type") == "user")
        return generate_title(islice(users, TITLE_FROM_TURNS)) or ""

    @property
    def pack(self) -> str | None:
        """The pack the session was recorded with."""
        pack = self.meta.get("pack")
        return str(pack) if pack else None


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


# --------------------------------------------------------------------------- writing


class SessionLog:
    """The append-only log of one session; implements `core.records.SessionWriter`."""

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
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
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
        log.record(
            "meta",
            0,
            id=chosen,
            created=created,
            pack=pack,
            cwd=os.getcwd() if cwd is None else cwd,
            app_version=__version__ if app_version is None else app_version,
            model=model,
            title=extra.pop("title", None),
            **extra,
        )
        return log

    @classmethod
    def resume(cls, session: LoadedSession, *, fsync: bool = False) -> SessionLog:
        """Append to a loaded session again (after `/replay`, to carry on talking)."""
        log = cls(session.path, fsync=fsync)
        try:
            with open(session.path, "rb") as handle:
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
        record.update(redact_secrets(plain(fields)))
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
                _write_all(fd, data)
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
                    _write_all(self._open(), line.encode("ascii") + b"\n")
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
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
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
            path.parent.mkdir(mode=0o700, exist_ok=True)
            atomic_write(path, payload, fsync=False)


def _write_all(fd: int, data: bytes) -> None:
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
        if path.is_file():
            return path
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
        data = json.loads(summary_path(path).read_bytes())
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
        with open(path, "rb") as handle:
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


# --------------------------------------------------------------------------- loading


@dataclass
class _MigrationState:
    """What a migration needs to know about the records before this one."""

    turn: int = 0
    """The turn of the latest record read."""


Migration = Callable[[dict[str, Any], _MigrationState], dict[str, Any]]


def _v0_to_v1(record: dict[str, Any], state: _MigrationState) -> dict[str, Any]:
    """The draft layout (see the module docstring) to schema version 1."""
    out = dict(record)
    kind = out.pop("kind", None)
    out.setdefault("type", kind)
    if "at" not in out:
        stamp = out.pop("ts", None)
        out["at"] = (
            datetime.fromtimestamp(stamp, UTC).isoformat(timespec="milliseconds")
            if isinstance(stamp, int | float) and not isinstance(stamp, bool)
            else ""
        )
    if "turn" not in out:
        if out["type"] == "meta":
            out["turn"] = 0
        elif out["type"] == "user":
            out["turn"] = state.turn + 1
        else:
            out["turn"] = state.turn
    if out["type"] == "user" and "content" not in out:
        out["content"] = out.pop("text", "")
    if out["type"] == "assistant" and "message" not in out:
        message: dict[str, Any] = {"role": "assistant", "content": out.pop("text", "") or ""}
        for key in ("reasoning", "mode", "model", "thinking", "tool_calls", "cancelled"):
            if key in out:
                message[key] = out.pop(key)
        out["message"] = message
    out["v"] = 1
    return out


MIGRATIONS: dict[int, Migration] = {0: _v0_to_v1}
"""Version N -> a function that turns a version N record into a version N+1 record."""


def migrate(record: dict[str, Any], state: _MigrationState) -> dict[str, Any]:
    """A record of an older schema version brought up to SCHEMA_VERSION."""
    version = record.get("v", 0)
    while version < SCHEMA_VERSION:
        step = MIGRATIONS.get(version)
        if step is None:
            raise ValueError(f"no migration from schema version {version}")
        record = step(record, state)
        version = record["v"]
    return record


def load_session(ref: str | os.PathLike[str], dirs: Dirs | None = None) -> LoadedSession:
    """Read a session by id, id prefix, `latest`, or path. Raises SessionError if not found."""
    path = resolve_session(ref, dirs)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise SessionError(f"cannot read session file {path}: {error.strerror or error}") from error
    return parse_session(path, data)


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many objects at once.

    Loading keeps every record, so each automatic collection walks an ever larger heap:
    on a 10,000-record session that was nearly half of the load time. Records are trees
    (no cycles), so reference counting frees them as before; only the cycle hunt waits.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def parse_session(path: Path, data: bytes) -> LoadedSession:
    """The records in `data` (the bytes of the log at `path`), with what could not be used."""
    with gc_paused():
        return _parse_session(path, data)


def _parse_session(path: Path, data: bytes) -> LoadedSession:
    problems: list[SessionProblem] = []
    records: list[dict[str, Any]] = []
    numbers: list[int] = []
    state = _MigrationState()
    newer: dict[int, list[int]] = {}
    unknown_types: dict[str, list[int]] = {}
    lines = data.split(b"\n")
    complete = len(lines) - 1  # the part after the last newline is incomplete, if not empty
    loads = json.loads

    for index, raw in enumerate(lines):
        number = index + 1
        if not raw or raw.isspace():  # isspace, unlike strip, copies nothing
            continue
        try:
            record = loads(raw)
        except ValueError as error:
            if index == complete:
                problems.append(
                    SessionProblem(
                        path,
                        number,
                        f"torn last line ({len(raw)} bytes, no end of line): the writer stopped "
                        "in the middle of a record, e.g. a crash; skipped, every record before "
                        "it is intact",
                    )
                )
            else:
                problems.append(
                    SessionProblem(path, number, f"corrupt line skipped: {_first_line(error)}")
                )
            continue
        if not isinstance(record, dict):
            problems.append(
                SessionProblem(path, number, "not a record (a JSON object expected); skipped")
            )
            continue
        version = record.get("v", 0)
        if version != SCHEMA_VERSION:
            if isinstance(version, bool) or not isinstance(version, int) or version < 0:
                problems.append(
                    SessionProblem(path, number, f"schema version {version!r} is invalid; skipped")
                )
                continue
            if version > SCHEMA_VERSION:
                newer.setdefault(version, []).append(number)
            else:
                try:
                    record = migrate(record, state)
                except (KeyError, TypeError, ValueError) as error:
                    problems.append(
                        SessionProblem(
                            path,
                            number,
                            f"cannot migrate from schema version {version}: {error}; skipped",
                        )
                    )
                    continue
        kind = record.get("type")
        if kind not in RECORD_TYPES:
            unknown_types.setdefault(str(kind), []).append(number)
        turn = record.get("turn")
        if isinstance(turn, int) and not isinstance(turn, bool):
            state.turn = turn
        records.append(record)
        numbers.append(number)

    for version, found in sorted(newer.items()):
        problems.append(
            SessionProblem(
                path,
                found[0],
                f"{len(found)} record(s) written by a newer modes-tui (schema version {version}; "
                f"this one reads up to {SCHEMA_VERSION}): kept as written and shown as far as "
                "they are understood; upgrade modes-tui to read them fully",
            )
        )
    for kind, found in sorted(unknown_types.items()):
        problems.append(
            SessionProblem(
                path,
                found[0],
                f"{len(found)} record(s) of unknown type {kind!r}: kept, not replayed",
            )
        )

    meta: dict[str, Any] = {}
    for record in records:
        if record.get("type") == "meta":
            meta.update({k: v for k, v in record.items() if k not in RESERVED_FIELDS})
    if not records:
        problems.append(
            SessionProblem(path, None, "empty: the session was started but nothing was recorded")
        )
    elif records[0].get("type") != "meta":
        problems.append(SessionProblem(path, numbers[0], "the first record is not a meta record"))
    session_id = path.name.removesuffix(SUFFIX)
    meta.setdefault("id", session_id)
    problems.sort(key=lambda p: (p.line is None, p.line or 0))
    return LoadedSession(
        id=session_id,
        path=path,
        meta=meta,
        records=tuple(records),
        lines=tuple(numbers),
        problems=tuple(problems),
    )


def _first_line(error: BaseException) -> str:
    return str(error).splitlines()[0] if str(error) else type(error).__name__


def records_of_type(session: LoadedSession, *types: str) -> Iterable[dict[str, Any]]:
    """The records of the given types, in file order."""
    wanted = set(types)
    return (record for record in session.records if record.get("type") in wanted)


if TYPE_CHECKING:  # mypy proves the log is what the engine writes to

    def _is_a_writer(log: SessionLog) -> SessionWriter:
        return log


__all__ = [
    "LATEST",
    "MIGRATIONS",
    "LoadedSession",
    "SessionLog",
    "SessionProblem",
    "SessionSummary",
    "list_sessions",
    "load_session",
    "new_session_id",
    "parse_session",
    "resolve_session",
    "session_ids",
]

"""Reading a session log back: every usable record, torn and corrupt lines reported.

**Reading** (`load_session`): every complete record is kept. A torn last line (the
writer died mid-record) is reported with its file and line number and skipped; a corrupt
line in the middle is reported and skipped too; nothing around it is lost.

**Checkpoints** of a streaming answer (`assistant` records with `partial`) after the first of
a round hold only the text that arrived since the one before (`continues`: how many
characters came before). Loading joins each such run into one whole checkpoint, in place
of the last of the run, so replay, resume, search and export see whole answers, a torn
last line loses only the text after the last complete checkpoint, and logs written before
(a whole answer in every checkpoint, no `continues`) read as they always did.

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
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import islice
from pathlib import Path
from typing import Any

from modes_tui.core.errors import SessionError, cut_repr
from modes_tui.core.files import read_bytes
from modes_tui.core.history.records import (
    RECORD_TYPES,
    RESERVED_FIELDS,
    SCHEMA_VERSION,
    SessionRecord,
    parse_record,
)
from modes_tui.core.paths import Dirs, app_dirs
from modes_tui.store.sessions import SUFFIX, resolve_session
from modes_tui.store.titles import generate_title

TITLE_FROM_TURNS = 3
"""A generated title comes from the first user message that says something, of this many."""


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
        data = read_bytes(path, "session")
    except OSError as error:
        raise SessionError(f"cannot read session file {path}: {error.strerror or error}") from error
    return parse_session(path, data)


def load_named_session(ref: str | os.PathLike[str], dirs: Dirs | None = None) -> LoadedSession:
    """`load_session` for a session the user named (export, replay). A file outside the
    sessions folder in which no line is a record (`/etc/passwd`, a text file) is a
    SessionError, not an empty session with a page of skipped lines. A log in the sessions
    folder keeps its report, however damaged: it is the user's own session."""
    dirs = dirs or app_dirs()
    session = load_session(ref, dirs)
    lines = {problem.line for problem in session.problems if problem.line is not None}
    ours = session.path.resolve().parent == dirs.sessions.resolve()
    if not session.records and lines and not ours:
        first = next(problem for problem in session.problems if problem.line is not None)
        raise SessionError(
            f"{session.path} holds no session record: {len(lines)} line(s) could not "
            f"be read (line {first.line}: {first.message}); is it a modes-tui session log? "
            "`modes-tui sessions` lists them"
        )
    return session


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
            problems.append(_unreadable(path, number, raw, error, torn=index == complete))
            continue
        if not isinstance(record, dict):
            problems.append(
                SessionProblem(path, number, "not a record (a JSON object expected); skipped")
            )
            continue
        if record.get("v", 0) != SCHEMA_VERSION:
            upgraded = _upgraded(path, number, record, state, newer, problems)
            if upgraded is None:
                continue
            record = upgraded
        kind = record.get("type")
        if kind not in RECORD_TYPES:
            unknown_types.setdefault(str(kind), []).append(number)
        turn = record.get("turn")
        if isinstance(turn, int) and not isinstance(turn, bool):
            state.turn = turn
        records.append(record)
        numbers.append(number)

    problems += _not_understood(path, newer, unknown_types)
    records, numbers = _join_checkpoints(path, records, numbers, problems)
    return _loaded(path, records, numbers, problems)


def _unreadable(
    path: Path, number: int, raw: bytes, error: ValueError, *, torn: bool
) -> SessionProblem:
    """A line that is not JSON: a torn last line (a crash mid-write), or corruption."""
    if torn:
        return SessionProblem(
            path,
            number,
            f"torn last line ({len(raw)} bytes, no end of line): the writer stopped "
            "in the middle of a record, e.g. a crash; skipped, every record before "
            "it is intact",
        )
    return SessionProblem(path, number, f"corrupt line skipped: {_first_line(error)}")


def _upgraded(
    path: Path,
    number: int,
    record: dict[str, Any],
    state: _MigrationState,
    newer: dict[int, list[int]],
    problems: list[SessionProblem],
) -> dict[str, Any] | None:
    """A record of another schema version: an older one migrated, a newer one kept as
    written (and its line noted in `newer`); None, with a problem, when it cannot be used."""
    version = record.get("v", 0)
    if isinstance(version, bool) or not isinstance(version, int) or version < 0:
        problems.append(
            SessionProblem(path, number, f"schema version {cut_repr(version)} is invalid; skipped")
        )
        return None
    if version > SCHEMA_VERSION:
        newer.setdefault(version, []).append(number)
        return record
    try:
        return migrate(record, state)
    except (KeyError, TypeError, ValueError) as error:
        problems.append(
            SessionProblem(
                path,
                number,
                f"cannot migrate from schema version {version}: {error}; skipped",
            )
        )
        return None


def _not_understood(
    path: Path, newer: dict[int, list[int]], unknown_types: dict[str, list[int]]
) -> list[SessionProblem]:
    """One problem per newer schema version and per unknown record type, at its first line."""
    problems = [
        SessionProblem(
            path,
            found[0],
            f"{len(found)} record(s) written by a newer modes-tui (schema version {version}; "
            f"this one reads up to {SCHEMA_VERSION}): kept as written and shown as far as "
            "they are understood; upgrade modes-tui to read them fully",
        )
        for version, found in sorted(newer.items())
    ]
    problems += [
        SessionProblem(
            path,
            found[0],
            f"{len(found)} record(s) of unknown type {cut_repr(kind)}: kept, not replayed",
        )
        for kind, found in sorted(unknown_types.items())
    ]
    return problems


def _loaded(
    path: Path,
    records: list[dict[str, Any]],
    numbers: list[int],
    problems: list[SessionProblem],
) -> LoadedSession:
    """The session: its meta (every meta record merged), records, and problems by line."""
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


def _join_checkpoints(
    path: Path,
    records: list[dict[str, Any]],
    numbers: list[int],
    problems: list[SessionProblem],
) -> tuple[list[dict[str, Any]], list[int]]:
    """Each run of checkpoints joined into its last record (see the module docstring)."""
    if not any("continues" in record for record in records):
        return records, numbers  # a log without delta checkpoints: nothing to join
    dropped: set[int] = set()
    run: int | None = None  # index of the run's whole checkpoint so far
    for index, record in enumerate(records):
        kind = record.get("type")
        if kind == "assistant" and record.get("partial"):
            if "continues" in record:
                before = records[run] if run is not None else None
                records[index] = _joined(path, numbers[index], before, record, problems)
                if run is not None:
                    dropped.add(run)  # its text is inside this record now
            run = index
        elif kind in ("assistant", "user"):
            run = None
    kept = [i for i in range(len(records)) if i not in dropped]
    return [records[i] for i in kept], [numbers[i] for i in kept]


def _joined(
    path: Path,
    line: int,
    before: dict[str, Any] | None,
    record: dict[str, Any],
    problems: list[SessionProblem],
) -> dict[str, Any]:
    """`record` (a delta checkpoint) with the text of `before` (the run so far) in front."""
    joined = dict(record)
    continues = joined.pop("continues")
    message = joined.get("message")
    head = before.get("message") if before is not None else None
    if not isinstance(message, dict):
        return joined  # the record check reports it
    if not isinstance(head, dict) or before is None or before.get("turn") != record.get("turn"):
        problems.append(
            SessionProblem(
                path, line, "a checkpoint continues one that is missing: only its end is kept"
            )
        )
        return joined
    wanted = continues if isinstance(continues, dict) else {}
    message = dict(message)
    for key in ("content", "reasoning"):
        earlier = str(head.get(key) or "")
        if wanted.get(key, len(earlier)) != len(earlier):
            problems.append(
                SessionProblem(
                    path,
                    line,
                    f"a checkpoint continues at {key} character {wanted.get(key)}, but the ones "
                    f"before hold {len(earlier)}: joined as they are, some text may be missing",
                )
            )
        if earlier or key in message:
            message[key] = earlier + str(message.get(key) or "")
    joined["message"] = message
    return joined


def _first_line(error: BaseException) -> str:
    return str(error).splitlines()[0] if str(error) else type(error).__name__


def records_of_type(session: LoadedSession, *types: str) -> Iterable[dict[str, Any]]:
    """The records of the given types, in file order."""
    wanted = set(types)
    return (record for record in session.records if record.get("type") in wanted)


def typed_records(session: LoadedSession) -> Iterator[SessionRecord]:
    """The records as typed records, in file order; unknown types and broken records left
    out (loading reports the unknown types, replay the broken records)."""
    for raw in session.records:
        try:
            record = parse_record(raw)
        except ValueError:  # RecordError: replay names the field
            continue
        if record is not None:
            yield record


__all__ = [
    "MIGRATIONS",
    "LoadedSession",
    "SessionProblem",
    "gc_paused",
    "load_named_session",
    "load_session",
    "parse_session",
    "records_of_type",
    "typed_records",
]

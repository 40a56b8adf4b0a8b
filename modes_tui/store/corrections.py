"""The corrections store: one append-only JSONL file per pack, `<data>/corrections/<pack>.jsonl`.

Every line is one record with a version `v` and a `type`:

    {"v": 1, "type": "correction", "at": ..., "correction": {...Correction.to_dict()}}
    {"v": 1, "type": "remove", "at": ..., "id": "<correction id>"}
    {"v": 1, "type": "clear", "at": ...}

Nothing is ever rewritten: removing a correction appends a tombstone, clearing appends a
`clear` record that hides everything before it. The live corrections are what is left after
replaying the file in order. This is what makes the file safe to share between two running
apps and `modes-tui corrections` in a third terminal: each appends whole lines with one
`os.write` (O_APPEND), like the session logs (`store.sessions`), and a reader re-reads the
file when its `revision` (inode, size, mtime) changes, so a removal takes effect on the next
route wherever it was made.

A torn last line (a writer killed mid-record) or a corrupt line is skipped and reported in
`warnings` with its file and line; so is a record from a newer version of the store, or of a
type this version does not know. Nothing around a bad line is lost, and the next write
starts on a line of its own.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from modes_tui.core.errors import CorrectionsError, ModesError, cut_repr
from modes_tui.core.files import open_append, private_folder, read_bytes
from modes_tui.core.values.correction import Correction
from modes_tui.store.session_log import utc_now, write_every_byte
from modes_tui.store.session_reader import SessionProblem

STORE_VERSION = 1
"""The record version this modes-tui writes and reads."""
SUFFIX = ".jsonl"
RECORD_TYPES = ("correction", "remove", "clear")
_PACK_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def corrections_path(data_dir: Path, pack: str) -> Path:
    """Where the corrections of `pack` live: `<data>/corrections/<pack>.jsonl`.

    A pack is named after its folder, which may hold any character; a name that is not a
    plain file name (spaces, slashes, a leading dot) gets a slug and a short hash instead,
    so it can neither escape the folder nor share a file with another pack.
    """
    if not pack:
        raise CorrectionsError("a corrections store needs the name of its pack")
    name = pack
    if not _PACK_NAME.match(pack) or len(pack) > 100:
        slug = re.sub(r"[^A-Za-z0-9._-]+", "_", pack).strip("._")[:60] or "pack"
        name = f"{slug}-{hashlib.sha256(pack.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"
    return Path(data_dir) / "corrections" / f"{name}{SUFFIX}"


@dataclass(frozen=True, slots=True)
class _Snapshot:
    """What one read of the file found."""

    revision: str
    """The file's revision when it was read."""
    corrections: tuple[Correction, ...]
    """The live corrections, oldest first."""
    warnings: tuple[str, ...]
    """Lines that were skipped, each naming file and line."""
    ends_with_newline: bool
    """False when the last line is torn: the next write must start a new line."""


class CorrectionStore:
    """The corrections of one pack on disk; a `core.routing.corrections.CorrectionSource`."""

    def __init__(self, path: Path, *, fsync: bool = False) -> None:
        self.path = Path(path)
        self.fsync = fsync
        """Also fsync after each record (survives power loss; costs a disk flush)."""
        self._lock = threading.RLock()
        self._snapshot: _Snapshot | None = None

    @classmethod
    def for_pack(cls, data_dir: Path, pack: str) -> CorrectionStore:
        """The store of `pack` in the data dir (`Dirs.data`)."""
        return cls(corrections_path(data_dir, pack))

    # ----------------------------------------------------------------- reading

    @property
    def revision(self) -> str:
        """Changes with every write, this process's or another's (inode, size, mtime)."""
        try:
            stat = os.lstat(self.path)
        except FileNotFoundError:
            return "absent"
        except OSError as error:
            return f"unreadable:{error.errno}"
        return f"{stat.st_ino}:{stat.st_size}:{stat.st_mtime_ns}"

    def corrections(self) -> Sequence[Correction]:
        """The live corrections, oldest first (re-read only when the file changed)."""
        return self._current().corrections

    @property
    def warnings(self) -> list[str]:
        """Skipped lines of the last read, each as `file:line: what was wrong`."""
        return list(self._current().warnings)

    def get(self, correction_id: str) -> Correction | None:
        """The live correction with this id, if any."""
        return next((c for c in self.corrections() if c.id == correction_id), None)

    def _current(self) -> _Snapshot:
        with self._lock:
            revision = self.revision
            snapshot = self._snapshot
            if snapshot is None or snapshot.revision != revision:
                snapshot = self._read(revision)
                self._snapshot = snapshot
            return snapshot

    def _read(self, revision: str) -> _Snapshot:
        try:
            data = read_bytes(self.path, "corrections")
        except FileNotFoundError:
            return _Snapshot(revision, (), (), True)
        except OSError as error:
            raise CorrectionsError(
                f"cannot read corrections file {self.path}: {error.strerror or error}"
            ) from error
        # `revision` was taken before the read: if the file grew in between, the next look
        # sees a newer revision and reads again, so no change goes unnoticed.
        corrections, warnings = parse_corrections(self.path, data)
        return _Snapshot(revision, corrections, warnings, not data or data.endswith(b"\n"))

    # ----------------------------------------------------------------- writing

    @property
    def refit_path(self) -> Path:
        """Where the embedding backend's last refit outcome is kept: `<pack>.refit.json`."""
        return self.path.with_name(self.path.name.removesuffix(SUFFIX) + ".refit.json")

    def record_refit(self, outcome: dict[str, Any]) -> None:
        """Keep the last refit's outcome (`classifiers.head_refit.RefitOutcome.to_dict`) for
        `modes-tui corrections`; replaced atomically, a failure to write is not an error."""
        from modes_tui.core.files import atomic_file

        try:
            private_folder(self.path.parent)
            with atomic_file(self.refit_path, fsync=False) as handle:
                handle.write(json.dumps(outcome, sort_keys=True).encode("utf-8"))
        except (OSError, ModesError):
            return

    def last_refit(self) -> str | None:
        """The last refit's one-line summary, or None when there is none (or it is unreadable)."""
        try:
            data = json.loads(read_bytes(self.refit_path, "corrections"))
        except (OSError, ValueError, ModesError):
            return None
        summary = data.get("summary") if isinstance(data, dict) else None
        return summary if isinstance(summary, str) else None

    def add(self, correction: Correction) -> Correction:
        """Record one correction; it is on disk (flushed to the OS) when this returns."""
        if not correction.corrected_mode:
            raise CorrectionsError("a correction needs the mode it corrects to")
        self._append({"type": "correction", "correction": correction.to_dict()})
        return correction

    def remove(self, correction_id: str) -> bool:
        """Append a tombstone for a live correction; False (and no write) when there is none."""
        with self._lock:
            if self.get(correction_id) is None:
                return False
            self._append({"type": "remove", "id": correction_id})
            return True

    def clear(self) -> int:
        """Append a `clear` record; returns how many live corrections it hid (0: no write)."""
        with self._lock:
            count = len(self.corrections())
            if count:
                self._append({"type": "clear"})
            return count

    def _append(self, fields: dict[str, Any]) -> None:
        record = {"v": STORE_VERSION, "type": fields.pop("type"), "at": utc_now(), **fields}
        data = encode_record(record)
        with self._lock:
            try:
                private_folder(self.path.parent)
                fd = open_append(self.path, read=True)
            except OSError as error:
                raise CorrectionsError(
                    f"cannot open corrections file {self.path}: {error.strerror or error}; "
                    "check the folder's permissions or set MODES_TUI_HOME to a writable folder"
                ) from error
            try:
                if _ends_torn(fd):
                    # A torn last line must stay a line of its own, not swallow this record.
                    data = b"\n" + data
                write_every_byte(fd, data)
                if self.fsync:
                    os.fsync(fd)
            except OSError as error:
                raise CorrectionsError(
                    f"cannot write to corrections file {self.path}: {error.strerror or error}; "
                    "free some disk space or check the folder's permissions"
                ) from error
            finally:
                os.close(fd)
            self._snapshot = None  # re-read on the next look: another process may have written


def encode_record(record: dict[str, Any]) -> bytes:
    """One JSON line; a lone surrogate (undecodable terminal input) is kept as an escape."""
    try:
        return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        return json.dumps(record, ensure_ascii=True, separators=(",", ":")).encode("ascii") + b"\n"


def _ends_torn(fd: int) -> bool:
    size = os.fstat(fd).st_size
    return size > 0 and os.pread(fd, 1, size - 1) != b"\n"


def parse_corrections(path: Path, data: bytes) -> tuple[tuple[Correction, ...], tuple[str, ...]]:
    """Replay the records in `data` (the bytes of the file at `path`): live corrections, warnings."""
    live: dict[str, Correction] = {}
    problems: list[SessionProblem] = []
    lines = data.split(b"\n")
    complete = len(lines) - 1  # the part after the last newline is torn, if not empty
    for index, raw in enumerate(lines):
        number = index + 1
        if not raw or raw.isspace():
            continue
        try:
            record = json.loads(raw)
        except ValueError as error:
            if index == complete:
                message = (
                    f"torn last line ({len(raw)} bytes, no end of line): a writer stopped in "
                    "the middle of a record; skipped, every record before it is intact"
                )
            else:
                message = f"corrupt line skipped: {str(error).splitlines()[0]}"
            problems.append(SessionProblem(path, number, message))
            continue
        problem = _apply(record, live)
        if problem:
            problems.append(SessionProblem(path, number, problem))
    return tuple(live.values()), tuple(str(problem) for problem in problems)


def _apply(record: Any, live: dict[str, Correction]) -> str | None:
    """Apply one record to the live set; a message when it had to be skipped."""
    if not isinstance(record, dict):
        return "not a record (a JSON object expected); skipped"
    version = record.get("v")
    if version != STORE_VERSION or isinstance(version, bool):
        return (
            f"record version {cut_repr(version)} is not one this modes-tui reads (it reads "
            f"{STORE_VERSION}); skipped: upgrade modes-tui to use it"
        )
    kind = record.get("type")
    if kind == "correction":
        payload = record.get("correction")
        if not isinstance(payload, dict):
            return "correction record without a `correction` object; skipped"
        try:
            correction = Correction.from_dict(payload)
        except (KeyError, TypeError, ValueError) as error:
            return f"unusable correction ({error}); skipped"
        live.pop(correction.id, None)  # the same id again: the later one stands, at the end
        live[correction.id] = correction
    elif kind == "remove":
        live.pop(str(record.get("id")), None)
    elif kind == "clear":
        live.clear()
    else:
        return f"unknown record type {cut_repr(kind)} (one of {', '.join(RECORD_TYPES)}); skipped"
    return None


if TYPE_CHECKING:  # mypy proves the store is what the classifiers read through
    from modes_tui.core.routing.ports import CorrectionSource

    def _is_a_source(store: CorrectionStore) -> CorrectionSource:
        return store


__all__ = ["STORE_VERSION", "CorrectionStore", "corrections_path", "parse_corrections"]

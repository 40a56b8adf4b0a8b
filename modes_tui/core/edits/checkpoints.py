"""Checkpoints: what a file held before a turn changed it, and undoing turns with them.

Before a write, the editor records a `Checkpoint` (the file's previous content, or that it
did not exist, and the digest of what was written) with the turn; the session log keeps it
as a `checkpoint` record. `Checkpoints.plan_undo(n)` gathers the last `n` turns that
changed files (not undone yet): per file, the content before the first of those writes and
the digest after the last. A file whose content is no longer what the turn wrote was
changed by someone else since: the plan marks it `changed`, and `undo` leaves it alone
unless the user said to overwrite it. A file whose path now goes through a symbolic link
(its name or a folder on the way swapped for a link since) is never restored: the link
could lead anywhere inside, `.env` included.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from modes_tui.core.edits.changes import FileState, commit, look
from modes_tui.core.errors import RecordError, ToolError, cut_repr
from modes_tui.core.tools.confined import ConfinedRoot, shown_path

SCHEMA_VERSION = 1
"""`core.records.SCHEMA_VERSION`, which imports this module (a test keeps them equal)."""

__all__ = ["Checkpoint", "CheckpointRecord", "Checkpoints", "Restore", "UndoPlan", "UndoResult"]


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """One file a turn changed: what it held before and what was written."""

    turn: int
    """The user turn that changed it."""
    path: str
    """Its real path under the working directory."""
    before: str | None
    """Its content before the change; None: it did not exist."""
    after_digest: str | None
    """SHA-256 of what was written; None: the change removed it."""
    diff: str
    """The change as a unified diff (terminal-safe)."""
    tool: str = ""
    """The tool that made it (write_file, edit_file)."""
    call_id: str = ""
    """The tool call's id."""

    @classmethod
    def from_dict(cls, turn: int, data: Mapping[str, Any]) -> Checkpoint:
        """A stored checkpoint record's fields; RecordError names a field it cannot use."""
        path, before, after = data.get("path"), data.get("before"), data.get("after_sha256")
        if not isinstance(path, str) or not path:
            raise RecordError("checkpoint", "path", f"must be a file path, not {cut_repr(path)}")
        if before is not None and not isinstance(before, str):
            raise RecordError("checkpoint", "before", "must be text or null")
        if after is not None and not isinstance(after, str):
            raise RecordError("checkpoint", "after_sha256", "must be a hex digest or null")
        return cls(
            turn=turn,
            path=path,
            before=before,
            after_digest=after,
            diff=str(data.get("diff") or ""),
            tool=str(data.get("tool") or ""),
            call_id=str(data.get("call_id") or ""),
        )

    def to_dict(self) -> dict[str, Any]:
        """The record's own fields (the session log adds v, type, at and turn)."""
        return {
            "path": self.path,
            "before": self.before,
            "after_sha256": self.after_digest,
            "diff": self.diff,
            "tool": self.tool,
            "call_id": self.call_id,
        }


@dataclass(frozen=True, slots=True)
class CheckpointRecord:
    """The session log's `checkpoint` record (one of `core.records.SessionRecord`)."""

    checkpoint: Checkpoint
    """The file, its previous content, the digest written and the diff."""
    at: str = ""
    """When it was written (UTC ISO 8601; set by the writer)."""
    kind: ClassVar[Literal["checkpoint"]] = "checkpoint"
    """The record type."""

    @property
    def turn(self) -> int:
        """The turn that changed the file."""
        return self.checkpoint.turn

    def fields(self) -> dict[str, Any]:
        """The record's own fields, as written after v, type, at and turn."""
        return self.checkpoint.to_dict()

    def to_dict(self) -> dict[str, Any]:
        """The JSON object on disk."""
        head = {"v": SCHEMA_VERSION, "type": self.kind, "at": self.at, "turn": self.turn}
        return {**head, **self.fields()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CheckpointRecord:
        """A stored checkpoint object; raises RecordError naming a bad field."""
        turn = data.get("turn", 0)
        if isinstance(turn, bool) or not isinstance(turn, int):
            raise RecordError("checkpoint", "turn", f"must be a whole number, not {cut_repr(turn)}")
        at = data.get("at")
        return cls(Checkpoint.from_dict(turn, data), at if isinstance(at, str) else "")


@dataclass(frozen=True, slots=True)
class Restore:
    """One file an undo puts back."""

    path: str
    """Its real path under the working directory."""
    content: str | None
    """What it held before the turns (None: it did not exist, so it is removed)."""
    expected: str | None
    """The digest of what the turns wrote last."""
    changed: bool
    """Its content is no longer what the turns wrote (someone changed it since)."""


@dataclass(frozen=True, slots=True)
class UndoPlan:
    """What `/undo N` would do."""

    turns: tuple[int, ...]
    """The turns undone, newest first."""
    files: tuple[Restore, ...]
    """The files put back, in the order they were first changed."""

    @property
    def changed(self) -> tuple[str, ...]:
        """Files changed on disk since the turn wrote them (not overwritten without a yes)."""
        return tuple(item.path for item in self.files if item.changed)


@dataclass(frozen=True, slots=True)
class UndoResult:
    """What an undo did."""

    turns: tuple[int, ...]
    """The turns undone."""
    restored: tuple[str, ...] = ()
    """Files put back as they were."""
    removed: tuple[str, ...] = ()
    """Files the turns had created, removed again."""
    kept: tuple[str, ...] = ()
    """Files left alone: changed on disk since, and not to be overwritten."""
    failed: tuple[str, ...] = ()
    """Files that could not be put back, with why."""

    def text(self) -> str:
        """What to tell the user."""
        if not self.turns:
            return "nothing to undo: no turn of this session changed a file"
        which = ", ".join(map(str, sorted(self.turns)))
        lines = [f"undid turn{'s' if len(self.turns) > 1 else ''} {which}:"]
        lines += [f"  restored {path}" for path in self.restored]
        lines += [f"  removed {path} (the turn created it)" for path in self.removed]
        lines += [f"  kept {path}: changed on disk since the turn wrote it" for path in self.kept]
        lines += [f"  ! {problem}" for problem in self.failed]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """For the session log's `undo` event."""
        return {
            "turns": list(self.turns),
            "restored": list(self.restored),
            "removed": list(self.removed),
            "kept": list(self.kept),
            "failed": list(self.failed),
        }


@dataclass
class Checkpoints:
    """Every checkpoint of a session, and which turns were undone."""

    items: list[Checkpoint] = field(default_factory=list)
    """Oldest first."""
    undone: set[int] = field(default_factory=set)
    """Turns already undone (a second /undo goes further back)."""

    def add(self, checkpoint: Checkpoint) -> None:
        """Keep one more checkpoint."""
        self.items.append(checkpoint)

    def load(self, checkpoints: Iterable[Checkpoint], undone: Iterable[int]) -> None:
        """Carry on from a saved session (resume, fork)."""
        self.items = list(checkpoints)
        self.undone = set(undone)

    def turns(self) -> list[int]:
        """Turns that changed files and are not undone, oldest first."""
        return sorted({item.turn for item in self.items if item.turn not in self.undone})

    def of(self, turns: Sequence[int]) -> list[Checkpoint]:
        """The checkpoints of `turns`, oldest first."""
        wanted = set(turns)
        return [item for item in self.items if item.turn in wanted]

    def plan_undo(self, count: int, root: Path) -> UndoPlan:
        """What undoing the last `count` turns that changed files would do."""
        turns = tuple(reversed(self.turns()[-max(1, count) :]))
        first: dict[str, Checkpoint] = {}
        last: dict[str, Checkpoint] = {}
        for item in self.of(turns):
            first.setdefault(item.path, item)
            last[item.path] = item
        with ConfinedRoot(root) as confined:
            files = tuple(
                Restore(
                    path,
                    first[path].before,
                    last[path].after_digest,
                    _changed(confined, path, last[path]),
                )
                for path in first
            )
        return UndoPlan(turns, files)

    def undo(self, plan: UndoPlan, root: Path, *, overwrite: bool = False) -> UndoResult:
        """Put the plan's files back; files changed since are kept unless `overwrite`."""
        restored: list[str] = []
        removed: list[str] = []
        kept: list[str] = []
        failed: list[str] = []
        with ConfinedRoot(root) as confined:
            for item in plan.files:
                if item.changed and not overwrite:
                    kept.append(item.path)
                    continue
                try:
                    _put_back(confined, item, overwrite=overwrite)
                except ToolError as error:
                    failed.append(error.message)
                    continue
                (removed if item.content is None else restored).append(item.path)
        self.undone.update(plan.turns)
        return UndoResult(plan.turns, tuple(restored), tuple(removed), tuple(kept), tuple(failed))


def _changed(root: ConfinedRoot, path: str, last: Checkpoint) -> bool:
    try:
        now = look(root, path)
    except ToolError:
        return True  # a folder or a special file now: not what the turn wrote
    return now.relative != path or now.digest != last.after_digest


def _put_back(root: ConfinedRoot, item: Restore, *, overwrite: bool) -> None:
    """Restore one file at the real path the turn wrote, never through a link put there
    since (`x -> .env` must not make an undo write .env), and by replacing the name (the
    other names of a hard-linked file keep their content)."""
    now = look(root, item.path)
    if now.relative != item.path:
        raise ToolError(
            f"`{shown_path(item.path)}` is now a symbolic link (to `{now.shown}`, or a folder "
            "on its path is); undo writes only the file the turn changed, so it was left alone"
        )
    if not overwrite and now.digest != item.expected:
        raise ToolError(f"`{now.shown}` changed on disk just now; it was left alone")
    commit(root, FileState(item.path, now.relative, now.content, now.digest), item.content)

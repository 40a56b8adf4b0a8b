"""Carrying on a saved session: resume it, fork it, rename the one being recorded.

`prepare_resume(ref)` reads a session back and checks that it can be continued: the
conversation the models will see next is rebuilt by `store.replay` from the same records
the engine wrote (user messages, answers, tool results, partial answers cut by a crash,
`/clear` and retries), so it is exactly the history the models saw. A session written by
a newer modes-tui cannot be continued (its log would mix schema versions); a torn last
line is skipped and said so, and new records start on a line of their own.

`CurrentSession` is the session writer the TUI and the REPL give the engine: it creates
its log at the first record (opening and closing the app leaves no empty session), and
can switch to a saved session (`attach`), to a fork of itself (`fork`), and append a
title (`rename`). New records of a resumed session go to the SAME log, after a `ui_event`
`resumed` record. A fork is a new log whose `meta` names the parent session and turn,
holding copies of the parent's records up to that turn (with their times), so it reads,
replays and resumes on its own even if the parent is deleted.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from modes_tui.core.control_setting import OFF
from modes_tui.core.engine.ports import Restorable
from modes_tui.core.errors import SessionError
from modes_tui.core.files import read_bytes
from modes_tui.core.history.conversation import Conversation
from modes_tui.core.history.records import (
    SCHEMA_VERSION,
    MetaRecord,
    RecordType,
    RouteRecord,
    UiEventRecord,
    UserRecord,
    write_record,
)
from modes_tui.core.paths import Dirs
from modes_tui.core.values.route import Route, RoutedTurn
from modes_tui.store.checkpoints import saved_checkpoints
from modes_tui.store.replay import Replay, replay
from modes_tui.store.session_log import SessionLog
from modes_tui.store.session_reader import (
    LoadedSession,
    load_session,
    parse_session,
    typed_records,
)
from modes_tui.store.titles import check_title, write_renamed

if TYPE_CHECKING:
    from pathlib import Path

FORK_TITLE_CHARS = 60


@dataclass(frozen=True, slots=True)
class Resumption:
    """A saved session, read back and checked, ready to carry on."""

    session: LoadedSession
    """What was read."""
    replay: Replay
    """Its turns as events, for the chat and the route panel."""
    turn: int
    """The last turn's number; the next turn is one more."""
    mode: str | None
    """The mode of the last turn that had one (None: none, or `off`)."""
    routes: tuple[Route, ...]
    """Every recorded routing decision, oldest first."""
    notes: tuple[str, ...]
    """What the user should know: a torn line skipped, an interrupted last turn."""
    routed: tuple[RoutedTurn, ...] = ()
    """What the router decided per turn, so `/wrong` can correct a resumed turn."""

    @property
    def conversation(self) -> Conversation:
        """The history the models saw, as it stood at the end."""
        return self.replay.conversation

    @property
    def id(self) -> str:
        """The session id."""
        return self.session.id

    @property
    def pack(self) -> str | None:
        """The pack the session was recorded with."""
        return self.session.pack

    def restore_into(self, engine: Restorable) -> None:
        """Make `engine` carry on this session, as if it had run its turns."""
        engine.restore(
            self.conversation,
            turn=self.turn,
            mode=self.mode,
            routes=self.routes,
            routed=self.routed,
            checkpoints=saved_checkpoints(self.session, up_to_turn=self.turn),
        )

    def pack_note(self, running: str) -> str | None:
        """A warning when the session was recorded with another pack than `running`."""
        if self.pack is None or self.pack == running:
            return None
        return (
            f"session {self.id} was recorded with pack {self.pack!r}; it continues with pack "
            f"{running!r} (modes-tui --pack {self.pack} --resume {self.id} uses its own pack)"
        )


def prepare_resume(ref: str | os.PathLike[str], dirs: Dirs | None = None) -> Resumption:
    """Read the session `ref` (id, prefix, `latest`, path) and check it can be continued."""
    return _resumption(load_session(ref, dirs))


def _resumption(session: LoadedSession) -> Resumption:
    newer = sorted(
        {v for r in session.records if isinstance(v := r.get("v"), int) and v > SCHEMA_VERSION}
    )
    if newer:
        raise SessionError(
            f"session {session.id} ({session.path}) was written by a newer modes-tui (schema "
            f"version {newer[-1]}; this one writes version {SCHEMA_VERSION}), so it cannot be "
            f"continued here: upgrade modes-tui, or look at it with `modes-tui replay {session.id}`"
        )
    if not any(r.get("type") == "meta" for r in session.records):
        raise SessionError(
            f"session {session.id} ({session.path}) has no meta record, so it is not a "
            "modes-tui session log (or it is empty); nothing to resume"
        )
    replayed = replay(session)
    notes: list[str] = []
    for problem in replayed.problems:
        text = str(problem)
        if "torn last line" in text:
            text = (
                f"{problem.path}:{problem.line}: the last line was cut off mid-record (the app "
                "stopped while writing it); it is skipped, everything before it is resumed, "
                "and new records start on a line of their own"
            )
        notes.append(text)
    turn = session.turns
    mode: str | None = None
    for played in replayed.turns:
        if played.route is not None or played.mode is not None:
            mode = played.mode
    if replayed.turns and replayed.turns[-1].interrupted:
        notes.append(
            f"turn {replayed.turns[-1].turn} had not finished when the log ended; what had "
            "arrived is kept (ctrl+r in the app runs it again)"
        )
    routes = []  # every decision, a retried turn's first one too, as the engine keeps them
    for record in typed_records(session):
        if isinstance(record, RouteRecord) and record.route is not None:
            routes.append(record.route)
    routed = routed_turns(session, replayed.conversation)
    return Resumption(session, replayed, turn, mode, tuple(routes), tuple(notes), routed)


def routed_turns(session: LoadedSession, conversation: Conversation) -> tuple[RoutedTurn, ...]:
    """Per turn, what the router decided and which mode answers it now, as the engine keeps
    them for corrections: the router's route is the first of the turn (or of its latest
    retry; a re-run after `/wrong` is the user's, not the router's), the answering mode the
    last route's. Turns whose user message a `/clear` took out of the history can still be
    corrected, but not answered again (epoch -1)."""
    texts: dict[int, str] = {}
    router_route: dict[int, Route] = {}
    answered: dict[int, str | None] = {}
    awaiting: set[int] = set()  # the next route of these turns is the router's
    corrected: set[int] = set()
    since_clear: list[int] = []
    for record in typed_records(session):
        turn = record.turn
        if turn < 1:
            continue
        if isinstance(record, UserRecord):
            texts[turn] = record.content
            awaiting.add(turn)
            since_clear.append(turn)
        elif isinstance(record, UiEventRecord) and record.event == "clear":
            since_clear = []
        elif isinstance(record, UiEventRecord) and record.event == "retry":
            if turn not in corrected:
                awaiting.add(turn)
        elif isinstance(record, UiEventRecord) and record.event == "correction":
            if record.get("rerun"):
                of = record.get("of")
                corrected.add(of if isinstance(of, int) else turn)
        elif isinstance(record, RouteRecord) and record.route is not None:
            route = record.route
            if turn in awaiting:
                router_route[turn] = route
                awaiting.discard(turn)
            # as the engine counts it: the `off` setting answers with no mode at all
            answered[turn] = None if route.mode_name == OFF and route.forced else route.mode_name
    users = [i for i, message in enumerate(conversation.messages) if message.role == "user"]
    where = dict(zip(reversed(since_clear), reversed(users), strict=False))
    routed = []
    for turn, route in sorted(router_route.items()):
        index = where.get(turn, -1)
        present = index >= 0 and conversation.messages[index].content == texts.get(turn)
        routed.append(
            RoutedTurn(
                turn,
                texts.get(turn, ""),
                route,
                index if present else -1,
                0 if present else -1,
                answered.get(turn),
            )
        )
    return tuple(routed)


def fork_records(session: LoadedSession, turn: int) -> list[dict[str, Any]]:
    """The records of turns 1..`turn` (no meta): what a fork at `turn` starts with."""
    return [
        r
        for r in session.records
        if r.get("type") != "meta" and isinstance(t := r.get("turn"), int) and 0 < t <= turn
    ]


def check_fork_turn(session: LoadedSession, turn: int | None) -> int:
    """The turn to fork at (None: the last); raises SessionError when it is not a turn."""
    last = session.turns
    if last < 1:
        raise SessionError("nothing to fork yet: this session has no turn; send a message first")
    if turn is None:
        return last
    if not 1 <= turn <= last:
        raise SessionError(f"no turn {turn} to fork at: this session has turns 1 to {last}")
    return turn


def fork_title(parent: LoadedSession, turn: int) -> str:
    """`<parent title> (fork at turn N)`, short enough for the session list."""
    suffix = f" (fork at turn {turn})"
    base = parent.title or parent.id
    room = FORK_TITLE_CHARS - len(suffix)
    if len(base) > room:
        base = base[: room - 1].rstrip() + "…"
    return base + suffix


class CurrentSession:
    """The session being recorded (implements `core.history.records.SessionWriter`).

    `create(**meta)` makes a new log (extra `meta` fields: a fork's parent and turn); it
    is called at the first record, or by `fork`.
    """

    def __init__(
        self, create: Callable[..., SessionLog], *, dirs: Dirs | None = None, fsync: bool = False
    ) -> None:
        self._create = create
        self.dirs = dirs
        """Where saved sessions are found (None: the app's data dir)."""
        self.fsync = fsync
        self.log: SessionLog | None = None

    def prepare(self, ref: str) -> Resumption:
        """A saved session, read back and checked (`prepare_resume`); attach it next."""
        return prepare_resume(ref, self.dirs)

    @property
    def id(self) -> str | None:
        """The session id, once its log exists."""
        return self.log.id if self.log is not None else None

    @property
    def path(self) -> Path | None:
        """The log file, once it exists."""
        return self.log.path if self.log is not None else None

    def record(self, type: RecordType, turn: int, **fields: Any) -> None:
        """Append one record (creating the log first)."""
        if self.log is None:
            self.log = self._create()
        self.log.record(type, turn, **fields)

    def close(self) -> None:
        """Close the log, if there is one."""
        if self.log is not None:
            self.log.close()

    def attach(self, resumption: Resumption, *, how: str = "resumed", **fields: Any) -> None:
        """Record into the saved session from now on (after a `ui_event` saying so)."""
        if resumption.id == self.id:
            raise SessionError(
                f"session {resumption.id} is the one you are in already (`modes-tui "
                "sessions` or /sessions lists the others)"
            )
        log = SessionLog.resume(resumption.session, fsync=self.fsync)
        self.close()
        self.log = log
        write_record(log, UiEventRecord(resumption.turn, how, fields))

    def load(self) -> LoadedSession:
        """The session as recorded so far; raises SessionError before the first record."""
        if self.log is None:
            raise SessionError("nothing recorded yet in this session: send a message first")
        try:
            data = read_bytes(self.log.path, "session")
        except OSError as error:
            raise SessionError(
                f"cannot read session file {self.log.path}: {error.strerror or error}"
            ) from error
        return parse_session(self.log.path, data)

    def fork(self, turn: int | None = None) -> Resumption:
        """Start a new session holding turns 1..`turn` of this one (None: all); record there."""
        parent = self.load()
        turn = check_fork_turn(parent, turn)
        log = self._create(parent={"id": parent.id, "turn": turn}, title=fork_title(parent, turn))
        try:
            log.copy(fork_records(parent, turn))
            forked = prepare_resume(log.path)
        except BaseException:
            log.close()
            raise
        self.close()
        self.log = log
        write_record(log, UiEventRecord(turn, "forked", {"parent": parent.id, "parent_turn": turn}))
        return forked

    def rename(self, title: str) -> str:
        """Give the session a title (creating its log if nothing was recorded yet)."""
        cleaned = check_title(title)
        write_record(self, MetaRecord({"title": cleaned, "title_source": "user"}))
        assert self.log is not None
        write_renamed(self.log.path, self.log.id, cleaned)
        return cleaned

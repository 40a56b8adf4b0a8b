"""The turn queue's rules, without an app: running, waiting and editing, and what Enter, up,
esc and the end of a turn do with them. The Pilot tests in test_tui_prompt.py drive the same
rules through keys."""

from __future__ import annotations

from modes_tui.core.history.transcript import TurnTranscript
from modes_tui.tui.turn_queue import Submission, TurnQueue


class Line:
    """The waiting messages, as a list (the app's is the `PendingMessages` widget)."""

    def __init__(self, *texts: str) -> None:
        self.texts = list(texts)

    def __len__(self) -> int:
        return len(self.texts)

    async def add(self, text: str) -> None:
        self.texts.append(text)

    async def take_first(self) -> str | None:
        return self.texts.pop(0) if self.texts else None

    async def take_last(self) -> str | None:
        return self.texts.pop() if self.texts else None


def queue(*waiting: str) -> tuple[TurnQueue, Line, list[bool]]:
    line = Line(*waiting)
    changes: list[bool] = []
    turns = TurnQueue(lambda: line, changed=lambda: changes.append(turns.running))
    return turns, line, changes


async def test_a_message_runs_at_once_when_nothing_runs_and_waits_otherwise() -> None:
    turns, line, changes = queue()
    assert await turns.submit("first") == Submission("run")
    turns.start()
    assert await turns.submit("second") == Submission("wait", waiting=1)
    assert await turns.submit("third") == Submission("wait", waiting=2)
    assert line.texts == ["second", "third"]
    assert await turns.next_waiting() is None  # the turn still runs: nothing starts
    turns.finish()
    assert await turns.next_waiting() == "second"
    assert line.texts == ["third"] and not turns.idle
    assert changes == [True, False]  # the app's keys follow every start and end


async def test_a_message_sent_while_others_wait_joins_them_even_between_turns() -> None:
    turns, line, _ = queue("waiting")
    assert not turns.running
    assert await turns.submit("later") == Submission("wait", waiting=2)
    assert line.texts == ["waiting", "later"]


async def test_an_edit_replaces_its_turn_only_when_nothing_runs_or_waits() -> None:
    last = TurnTranscript(1, "hello")
    turns, _, _ = queue()
    assert turns.recall(last) == "edit" and turns.editing is last
    assert await turns.submit("hello again") == Submission("replace", replacing=last)
    assert turns.editing is None

    turns.recall(last)
    turns.start()  # a turn started meanwhile (a correction): the edit waits as a message
    assert await turns.submit("hello again") == Submission("wait", waiting=1)
    assert turns.editing is None


async def test_up_takes_back_a_waiting_message_before_it_edits() -> None:
    last = TurnTranscript(1, "hello")
    turns, line, _ = queue("waiting")
    assert turns.recall(last) == "take back" and turns.editing is None
    assert await turns.take_back() == "waiting" and line.texts == []
    assert turns.recall(last) == "edit"


def test_up_edits_nothing_while_a_turn_runs_or_once_the_turn_was_replaced() -> None:
    last = TurnTranscript(1, "hello")
    turns, _, _ = queue()
    assert turns.recall(None) is None  # no turn on screen (none yet, or /clear)
    turns.start()
    assert turns.recall(last) is None
    turns.finish()
    last.superseded_by = 2
    assert turns.recall(last) is None and turns.editing is None


def test_esc_drops_an_edit_while_idle_and_stops_a_running_turn() -> None:
    last = TurnTranscript(1, "hello")
    turns, _, _ = queue()
    assert not turns.can_cancel and turns.cancel() is None
    turns.recall(last)
    assert turns.can_cancel
    assert turns.cancel() == "edit" and turns.editing is None
    turns.start()
    assert turns.can_cancel and turns.cancel() == "turn"
    assert turns.running  # the turn ends when its worker does, not at esc


def test_only_a_failed_or_cancelled_last_turn_is_retried_and_never_while_one_runs() -> None:
    from modes_tui.core.history.events import TurnFailed

    turns, _, _ = queue()
    last = TurnTranscript(1, "hello")
    assert not turns.can_retry(None) and not turns.can_retry(last)
    last.apply(TurnFailed(error="boom", kind="connection", hint="", retryable=True))
    assert turns.can_retry(last)
    turns.start()
    assert not turns.can_retry(last)


def test_unsent_names_a_draft_and_waiting_messages_and_ignores_spaces() -> None:
    from modes_tui.tui.turn_queue import unsent

    assert unsent("", 0) == ""
    assert unsent("  \n ", 0) == ""
    assert unsent("draft", 0) == "your draft"
    assert unsent("", 1) == "1 waiting message"
    assert unsent("x", 3) == "your draft and 3 waiting messages"

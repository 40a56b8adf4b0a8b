"""Stopping a running turn at once, whatever it waits on (routing, a model, a guard, a tool).

`cancel()` may come from another thread or while the caller holds an event; the turn checks
at its next step. No task is created per step: the turn's own task is cancelled only while
it waits inside `step` or `stream`, and that cancellation is taken back (`uncancel`), so a
cancellation from the caller's side still propagates as usual.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncGenerator, Awaitable
from typing import Any, TypeVar

from modes_tui.core.engine.state import StopRequested
from modes_tui.core.model.ports import ChatModel
from modes_tui.core.model.wire import ModelEvent, ModelRequest

__all__ = ["TurnSlot", "TurnStopper"]

T = TypeVar("T")


class TurnStopper:
    """Where a turn stops when the user cancels it; one per engine, reset per turn."""

    def __init__(self) -> None:
        self.requested = False
        """The user asked to stop the running turn."""
        self.delivered = False
        """The turn's task was cancelled for it (to be taken back)."""
        self.awaiting: asyncio.Task[Any] | None = None
        """The turn's task, while it waits inside `step` or `stream`."""

    def reset(self) -> None:
        """Forget any cancel: a turn starts or ends."""
        self.requested = False
        self.delivered = False
        self.awaiting = None

    def checkpoint(self) -> None:
        """Stop here if a cancel was asked for while the caller held an event."""
        if self.requested:
            raise StopRequested

    def cancel_now(self) -> None:
        """Ask the turn to stop; runs on the turn's own loop."""
        self.requested = True
        # Only while the turn waits in one of its own awaits (`step`) does the cancel go to
        # the task running the turn; at a `yield` the caller's code is running, and the flag
        # is enough: the turn checks it as soon as it resumes.
        if self.awaiting is not None and not self.delivered:
            self.delivered = True
            self.awaiting.cancel()

    def _take_back(self, task: asyncio.Task[Any] | None) -> bool:
        """Undo a cancel() delivered to `task`; True when nobody else cancelled it too."""
        if not self.delivered or task is None:
            return False
        self.delivered = False
        return task.uncancel() == 0

    async def step(self, work: Awaitable[T]) -> T:
        """Await `work` so that `cancel()` stops it at once, whatever it waits on.

        No task is created: the turn's own task waits, and `cancel()` cancels that task only
        while it is suspended right here, then takes the cancellation back (`uncancel`), so
        a cancellation from the caller's side still propagates as usual.
        """
        if self.requested:
            close = getattr(work, "close", None)
            if close is not None:
                close()  # never started: close it so it is not reported as never awaited
            raise StopRequested
        task = asyncio.current_task()
        self.awaiting = task
        try:
            result = await work
        except asyncio.CancelledError:
            if self._take_back(task):
                raise StopRequested from None
            raise
        finally:
            self.awaiting = None
        if self._take_back(task):  # the work swallowed the cancellation
            raise StopRequested
        return result

    async def stream(
        self, model: ChatModel, request: ModelRequest
    ) -> AsyncGenerator[ModelEvent, None]:
        """The model's events; `cancel()` stops the stream mid-chunk (`step`, inlined)."""
        stream = model.stream(request)
        task = asyncio.current_task()
        try:
            while True:
                if self.requested:
                    raise StopRequested
                self.awaiting = task
                try:
                    event = await anext(stream)
                except StopAsyncIteration:
                    return
                except asyncio.CancelledError:
                    if self._take_back(task):
                        raise StopRequested from None
                    raise
                finally:
                    self.awaiting = None
                if self.delivered and self._take_back(task):
                    raise StopRequested
                yield event
        finally:
            close = getattr(stream, "aclose", None)
            if close is not None:
                await close()


class TurnSlot:
    """The one turn an engine runs at a time, and where to reach it to stop it."""

    def __init__(self) -> None:
        self.running = False
        """A turn is in progress."""
        self.stopper = TurnStopper()
        """Where the running turn stops when cancelled."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: int | None = None

    def enter(self) -> None:
        """Take the slot for a starting turn (on the turn's own loop)."""
        if self.running:
            raise RuntimeError("a turn is already running; cancel it or wait for it to end")
        self.running = True
        self.stopper.reset()
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()

    def leave(self) -> None:
        """Free the slot: the turn ended, however it ended."""
        self.running = False
        self.stopper.reset()

    def cancel(self) -> None:
        """Stop the running turn, if any; safe from any thread."""
        if not self.running:
            return
        if self._loop is not None and threading.get_ident() != self._thread:
            self._loop.call_soon_threadsafe(self.stopper.cancel_now)
        else:
            self.stopper.cancel_now()

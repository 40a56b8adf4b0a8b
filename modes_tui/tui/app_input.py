"""The prompt: sending, queueing while a turn runs, recalling and editing messages."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import on
from textual.widgets import TextArea

from modes_tui.core.control import OFF
from modes_tui.frontend.commands import CommandError, OneShot, is_command, parse_command
from modes_tui.tui.app_commands import CommandsApp
from modes_tui.tui.pending import PendingMessages
from modes_tui.tui.prompt import PromptInput
from modes_tui.tui.render import plural

if TYPE_CHECKING:
    from modes_tui.core.transcript import TurnTranscript


class InputApp(CommandsApp):
    """What the prompt does with Enter, up and esc."""

    @on(PromptInput.Submitted, "#prompt")
    async def _submitted(self, event: PromptInput.Submitted) -> None:
        text = event.value
        if not text.strip():
            return
        if is_command(text):
            try:
                command = parse_command(text, self.settings())
            except CommandError as error:
                self.status.error(self._command_error(error))
                self._give_back(text)  # to be fixed
                return
            if not isinstance(command, OneShot):
                self.prompt.remember(text)
                self._clear_error()
                await self.run_command(command)
                return
        self.prompt.remember(text)
        editing, self._editing = self._editing, None
        idle = not self._turn_running and not len(self.pending)
        if editing is not None and idle:
            self.send_line(text, replacing=editing)  # `/MODE text` too: Enter replaces it
            return
        if self._turn_running or len(self.pending):
            # queued as typed (`//x`, `/code x`): what runs, or comes back with up, is the line
            await self.pending.add(text)
            waiting = len(self.pending)
            self.notify_waiting(waiting)
        else:
            self._clear_error()
            self.send_line(text)

    def _give_back(self, text: str) -> None:
        """Put a line that was not sent back into the prompt, before anything typed since
        Enter (the prompt emptied itself at Enter)."""
        typed = self.prompt.value
        self.prompt.value = f"{text}\n{typed}" if typed else text

    def _command_error(self, error: CommandError) -> str:
        """The error as shown: before the pack is in, `/code text` cannot be told from a typo."""
        if self.started:
            return str(error)
        return f"{error} (modes-tui is still starting: `/MODE text` works once the modes load)"

    def _clear_error(self) -> None:
        """An error stays on screen until the user sends something else (typing does not
        clear it: a mistyped command keeps its hint in view while it is fixed)."""
        if self.status.has_class("-error"):
            self.status.idle()

    def notify_waiting(self, waiting: int) -> None:
        """Say that sent messages wait for the running turn (the rows show them)."""
        self.status.busy(
            f"{plural(waiting, 'message')} waiting · they run in order when this turn ends"
        )

    @on(TextArea.Changed, "#prompt")
    def _typing(self) -> None:
        if self._editing is not None and not self.prompt.value:
            self._stop_editing()
            self.status.idle()

    def _recall(self) -> bool:
        """Up in an empty prompt: take back the newest waiting message, else edit the last
        message (resending it replaces that turn). False lets up walk the history."""
        if len(self.pending):
            self.call_later(self._take_back_waiting)
            return True
        last = self.records[-1] if self.records else None
        if last is None or self._turn_running or last.superseded_by is not None:
            return False
        if self.chat.view(last.number) is None:
            return False  # cleared away (/clear): there is no turn on screen to replace
        self._editing = last
        self.prompt.recall(typed_line(last))
        self.status.idle(f"Editing turn {last.number} · Enter replaces it · esc keeps it")
        return True

    async def _take_back_waiting(self) -> None:
        text = await self.pending.take_last()
        if text is not None:
            self.prompt.value = text
            self.status.idle("Took a waiting message back: Enter queues it again.")

    @on(PendingMessages.EditRequested)
    def _edit_waiting(self, event: PendingMessages.EditRequested) -> None:
        event.stop()
        draft = self.prompt.value
        # Nothing typed is lost: a draft already in the prompt stays, after the message.
        self.prompt.value = event.text + (f"\n{draft}" if draft.strip() else "")
        self.prompt.focus()
        self.status.idle("The waiting message is back in the prompt: Enter queues it again.")

    @on(PendingMessages.Removed)
    def _waiting_removed(self, event: PendingMessages.Removed) -> None:
        event.stop()
        self.prompt.focus()  # the clicked ✕ is gone: the keys go to the prompt, not nowhere


def typed_line(record: TurnTranscript) -> str:
    """The line that sends `record`'s message again as it was sent: `/MODE text` for a
    one-shot, `//x` for a message that starts with a slash, else the message itself."""
    route = record.route
    if route is not None and route.one_shot and route.mode_name != OFF:
        return f"/{route.mode_name} {record.user_text}"
    if record.user_text.startswith("/"):
        return f"/{record.user_text}"
    return record.user_text

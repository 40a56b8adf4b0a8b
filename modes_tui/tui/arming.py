"""A dialog that opens on its own needs a deliberate answer: arming.

A confirmation (run this tool? enter this mode? pass the budget?) pops up while the user
may be typing their next message, and the `y` of "yes you may see my yaml file" or the
`n` of "and in Go?" would answer it. So a dialog opens unarmed: its buttons are disabled,
no key answers it, and every key that reaches it (typed before it opened and still queued,
or typed since) goes to the prompt behind it, in order, so the sentence being typed is
kept. It arms once no key has come for `ANSWER_ARMING_SECONDS`: each early key starts the
wait again, so someone typing on without looking never answers it mid-sentence. Then the
buttons are enabled, the hint names the answer keys, and y / n / Esc / Enter / clicks work.

A click before arming does nothing (the buttons are disabled): a click aimed at what the
dialog just covered is no more an answer than a typed key. The clock is injected, so tests
decide when a dialog arms instead of sleeping. A key typed before the dialog opened is
early even when a busy app reads it late: Textual stamps every key when it reads it.

Armed is not for ever. Someone who read the question for a while and then types on ("lately",
"can") must not answer it with the `y` or `n` inside a word: once armed, only the answer keys
(y, n, Esc, Enter on the focused button, Tab between the buttons) answer; any other printable
key (or backspace, or a paste) goes to the prompt like an early key, the dialog is unarmed
again and says "a question is waiting: y or n", and the next keys of the word fall inside the
new wait. So an answer is a lone answer key after a quiet moment. Every other key (the global
ones: shift+tab, ctrl+e, the mode keys, the palette's ctrl+p) does nothing while a dialog is
open.

A lone key is only known to be lone once the next one has not come: the `y` of "you know",
typed after reading the question for a while, is the first letter of a word. So an answer
letter (y, n, a digit or another printable answer key) is held for `ANSWER_HOLD_SECONDS`
before it answers, and the hint says so; a key that edits the message within that time
makes it a word (the held letter and the key go to the prompt, in order, and the dialog
waits again), Enter answers with the held letter at once, Esc refuses. Esc and Enter on a
button answer at once, as they start no word.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import ClassVar, Generic, TypeVar

from rich.text import Text
from textual import events
from textual.screen import ModalScreen
from textual.widgets import Button, Static, TextArea

from modes_tui.core.engine.questions import ANSWER_ARMING_SECONDS

Clock = Callable[[], float]
"""Seconds from any fixed point (`time.monotonic`)."""

NEW_LINE_KEYS = frozenset({"enter", "shift+enter", "ctrl+j", "alt+enter", "ctrl+enter"})
"""Keys that end a line: in the prompt they would send, so early ones become a line break."""

UNARMED_HINT = "Keys typed now go to your message; the answer keys work after a pause in typing."
WAITING_HINT = (
    "A question is waiting: y or n (after a pause in typing). What you type goes to your message."
)
"""Shown when a key that is not an answer came while the dialog was armed."""

ANSWER_HOLD_SECONDS = 0.5
"""How long an answer letter waits for a next letter that would make it a word (a typist's
keys come 0.1-0.3 s apart)."""
HELD_HINT = "{key}: answering… (typing on sends it to your message instead)"

ANSWER_KEYS = frozenset({"y", "n", "escape", "enter", "tab"})
"""Keys an armed dialog lets through: its answers, Enter on the focused button, Tab to the
other button. Any other key goes to the prompt (printable) or does nothing (global keys)."""


class EarlyKeys:
    """Keys that reached an unarmed dialog, put into the prompt as the user meant them.

    Printable keys are inserted at the prompt's cursor; backspace deletes there; a key that
    would send becomes a line break before the next text (an early Enter must not send a
    message, nor answer); every other key (arrows, tab, Esc) is dropped.
    """

    def __init__(self, prompt: TextArea | None) -> None:
        self.prompt = prompt
        self._line_break = False
        self.kept = ""
        """What went to the prompt, for the dialog's own record."""

    def key(self, event: events.Key) -> None:
        """Take one key the dialog must not answer with."""
        if event.key in NEW_LINE_KEYS:
            self._line_break = bool(self.kept) or bool(self.prompt and self.prompt.text)
        elif event.key == "backspace":
            if self._line_break:
                self._line_break = False
            elif self.prompt is not None:
                self.prompt.action_delete_left()
                self.kept = self.kept[:-1]
        elif event.is_printable and event.character:
            self.text(event.character)

    def text(self, text: str) -> None:
        """Insert `text` (a typed character or a paste) after any pending line break."""
        if self._line_break:
            text, self._line_break = "\n" + text, False
        self.kept += text
        if self.prompt is not None:
            self.prompt.insert(text)


Answer = TypeVar("Answer")
"""What a dialog answers: yes or no (`bool`), or a mode's name (the doubt dialog)."""


class ArmedDialog(ModalScreen[Answer], Generic[Answer]):
    """A dialog that ignores keys and clicks until it is armed (see the module)."""

    DEFAULT_CSS = """
    ArmedDialog #answer-hint { color: $text-muted; margin-top: 1; }
    """

    ANSWER_HINT: ClassVar[str] = ""
    """The keys that answer, shown once armed."""
    FOCUS_WHEN_ARMED: ClassVar[str] = ""
    """The id of the button focused once armed (the safe answer)."""
    WAITING: ClassVar[str] = WAITING_HINT
    """Shown when a key that is not an answer came while armed."""

    def answer_keys(self) -> frozenset[str]:
        """The keys that answer once armed (any other goes to the prompt or does nothing)."""
        return ANSWER_KEYS

    def __init__(
        self,
        *,
        clock: Clock = time.monotonic,
        arming: float = ANSWER_ARMING_SECONDS,
        prompt: TextArea | None = None,
    ) -> None:
        super().__init__()
        self._clock = clock
        self._arming = arming
        self._opened_stamp = float("inf")
        """The time Textual stamped on the dialog's Mount: a key stamped earlier was typed
        before the dialog existed, however late the app gets to it."""
        self._quiet_since: float | None = None
        """When the dialog opened, or the last early key came: arming counts from here."""
        self.armed = False
        """True once keys and clicks answer the dialog."""
        self.early = EarlyKeys(prompt)
        """The keys sent back to the prompt while unarmed."""
        self._palette_was = True
        """Whether the command palette was on before the dialog turned it off."""
        self._last_key_stamp = float("-inf")
        """The time Textual stamped on the last key that went to the prompt."""
        self._stamped = clock is time.monotonic
        """Whether keys' own stamps count (the real clock): see `_quiet_before`."""
        self._held: events.Key | None = None
        """An answer letter waiting to see whether a word follows it."""

    def answer_hint(self) -> str:
        """The keys that answer, shown once the dialog is armed."""
        return self.ANSWER_HINT

    def hint(self) -> Static:
        """The line under the question: wait, then which keys answer."""
        return Static(UNARMED_HINT, id="answer-hint")

    def on_mount(self, event: events.Mount) -> None:
        # the palette's key is the app's own priority binding: off while a question is open
        self._palette_was = self.app.use_command_palette
        self.app.use_command_palette = False
        self._quiet_since = self._clock()
        self._opened_stamp = event.time
        for button in self.query(Button):
            button.disabled = True
        self._check_armed()

    def on_unmount(self) -> None:
        self.app.use_command_palette = self._palette_was

    def _remaining(self) -> float:
        if self._quiet_since is None:
            return self._arming
        return self._arming - (self._clock() - self._quiet_since)

    def _check_armed(self) -> None:
        """Arm when the time is up, else look again when it should be."""
        if self.armed:
            return
        remaining = self._remaining()
        if remaining <= 0:
            self._arm()
        else:
            self.set_timer(remaining, self._check_armed)

    def _arm(self) -> None:
        self.armed = True
        for button in self.query(Button):
            button.disabled = False
        self.query_one("#answer-hint", Static).update(self.answer_hint())
        if self.FOCUS_WHEN_ARMED:
            self.query_one(f"#{self.FOCUS_WHEN_ARMED}", Button).focus()

    def answers_now(self) -> bool:
        """Whether input may answer: armed already, or the time just ran out."""
        if not self.armed and self._quiet_since is not None and self._remaining() <= 0:
            self._arm()
        return self.armed

    def _disarm(self) -> None:
        """A key that is not an answer came while armed: the user is typing again."""
        self.armed = False
        for button in self.query(Button):
            button.disabled = True
        self.query_one("#answer-hint", Static).update(Text(self.WAITING))
        self._quiet_since = self._clock()
        self._check_armed()

    def _quiet_before(self, event: events.Key) -> bool:
        """Whether no key came for the arming time before `event`, by the keys' own stamps.

        The timer arms the dialog by the time keys are handled; a busy app handles the keys of
        a word late and far apart, so a `y` typed 80 ms after an `l` could look like one after
        a pause. Textual stamps each key when the terminal delivers it: with the real clock
        those stamps decide. A test's clock has no stamps; the time a key is handled stands in.
        """
        return not self._stamped or event.time - self._last_key_stamp >= self._arming

    def on_key(self, event: events.Key) -> None:
        # The screen sees a key before the app checks the dialog's bindings (y, n, Esc):
        # stopping it here is what keeps an early key from answering.
        if self._held is not None and self._follows_held(event):
            return
        if event.time >= self._opened_stamp and self.answers_now():
            answers = self.answer_keys()
            if event.key in answers and self._quiet_before(event):
                if self._typed(event):  # a letter: the first of a word, or an answer?
                    event.stop()
                    event.prevent_default()
                    self._hold(event)
                return
            event.stop()
            event.prevent_default()
            if event.key not in answers and not self._typed(event):
                return  # a global key (shift+tab, ctrl+e, a mode key): nothing while open
            self._disarm()  # a word is being typed: its letters go to the prompt
        event.stop()
        event.prevent_default()
        self._to_prompt(event)

    def _to_prompt(self, event: events.Key) -> None:
        self._quiet_since = self._clock()
        self._last_key_stamp = max(self._last_key_stamp, event.time)
        self.early.key(event)

    def _hold(self, event: events.Key) -> None:
        self._held = event
        self.query_one("#answer-hint", Static).update(Text(HELD_HINT.format(key=event.key)))
        self.set_timer(ANSWER_HOLD_SECONDS, lambda: self._release(event))

    def _release(self, held: events.Key) -> None:
        """No key followed the held letter: it answers."""
        if self._held is not held:
            return  # a word took it, or Enter or Esc answered
        self._held = None
        self.call_later(self._answer_with, held.key)

    async def _answer_with(self, key: str) -> None:
        """Run what `key` is bound to on this dialog, as Textual would have (the keymap's
        keys included): the dialog's chain of bindings, nearest first."""
        for namespace, bindings in self._modal_binding_chain:
            for binding in bindings.key_to_bindings.get(key, ()):
                if await self.app.run_action(binding.action, namespace):
                    return

    def _follows_held(self, event: events.Key) -> bool:
        """A key while a letter is held: a word (both go to the prompt), Enter (the letter
        answers now), Esc (it refuses: the letter is dropped). True when `event` was taken."""
        held = self._held
        assert held is not None
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self._release(held)
            return True
        if self._typed(event):
            event.stop()
            event.prevent_default()
            self._held = None
            self._disarm()
            self._to_prompt(held)
            self._to_prompt(event)
            return True
        self._held = None  # Esc answers as it always does; other keys leave the letter out
        if self.armed:
            self.query_one("#answer-hint", Static).update(self.answer_hint())
        return False

    @staticmethod
    def _typed(event: events.Key) -> bool:
        """A key that edits the message: a character, or backspace."""
        return bool(event.is_printable and event.character) or event.key == "backspace"

    def on_paste(self, event: events.Paste) -> None:
        # a paste is never an answer, armed or not: it goes to the message
        event.stop()
        event.prevent_default()
        if self.armed:
            self._disarm()
        self._quiet_since = self._clock()
        self._last_key_stamp = max(self._last_key_stamp, event.time)
        self.early.text(event.text)

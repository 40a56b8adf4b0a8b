"""The correction picker: which mode should have answered this turn?

A small modal list of the pack's modes, each with the router's probability for the turn
beside it; the mode that answered is marked and cannot be picked. Enter (or a click, or the
mode's number) chooses; Esc closes without correcting. The app does the rest.

Letters find a mode by name: each one typed narrows to the first mode whose name starts with
what was typed ("sh" -> shell), shown in the hint; backspace takes one back. Once a letter
has been typed, a digit is part of the name being typed, not a pick: the `2` of "ipv2",
typed into a picker opened by mistake, never answers a turn again in mode 2. Enter with a
name that matches no mode does nothing but say so. Keys of the picker's own (1-9, Esc, or
letters a user's keymap gave them) keep their action while no name is being typed; the
arrows end a name, and Enter then picks the row they chose.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from modes_tui.core.history.transcript import TurnTranscript
from modes_tui.core.values.numbers import two_places
from modes_tui.route_format import bar

PICK_KEYS = "123456789"
MOVES = frozenset({"up", "down", "home", "end", "pageup", "pagedown"})
"""Keys that choose a row by hand: they end a name being typed."""
HINT = "enter or 1-9: answer the turn again in that mode · letters: find a mode · esc: close"


def mode_choices(
    modes: Sequence[str], probabilities: Mapping[str, float] | None
) -> list[tuple[str, float | None]]:
    """The modes to offer, most probable first (roster order without probabilities)."""
    known = probabilities or {}
    order = {name: index for index, name in enumerate(modes)}
    return sorted(
        ((name, known.get(name)) for name in modes),
        key=lambda item: (-(item[1] or 0.0), order[item[0]]),
    )


class CorrectScreen(ModalScreen[str | None]):
    """Pick the mode that should have answered a turn; dismissed with its name, or None."""

    DEFAULT_CSS = """
    CorrectScreen { align: center middle; }
    CorrectScreen > Vertical {
        width: 72;
        height: auto;
        max-height: 80%;
        border: thick $accent;
        background: $surface;
        padding: 1 2;
    }
    CorrectScreen #correct-title { text-style: bold; }
    CorrectScreen #correct-text { color: $text-muted; margin-bottom: 1; }
    CorrectScreen OptionList { height: auto; max-height: 16; border: none; padding: 0; }
    CorrectScreen #correct-hint { color: $text-muted; margin-top: 1; }
    """

    BINDINGS: ClassVar = [
        Binding("escape", "dismiss_none", "Close", id="correct.close"),
        *[
            Binding(key, f"pick({int(key) - 1})", show=False, id=f"correct.pick{key}")
            for key in PICK_KEYS
        ],
    ]

    def __init__(
        self, record: TurnTranscript, modes: Sequence[str], fallback: str | None = None
    ) -> None:
        super().__init__()
        self.record = record
        self.fallback = fallback
        """The pack's fallback: picking it says "none of these modes" (a negative example)."""
        routed = record.routed_route
        decision = routed.decision if routed is not None else None
        self.routed_mode = routed.mode_name if routed is not None and not routed.forced else None
        self.answered = record.mode
        self.choices = mode_choices(modes, decision.probabilities if decision else None)
        self.typed = ""
        """The start of a mode's name typed so far (letters find a mode)."""

    def compose(self) -> ComposeResult:
        record = self.record
        with Vertical():
            yield Static(
                f"Turn {record.number} answered in {self.answered or 'no mode'}: "
                "which mode should have answered?",
                id="correct-title",
            )
            shown = record.user_text if len(record.user_text) <= 120 else record.user_text[:119]
            yield Static(Text(f"“{shown}”"), id="correct-text")
            yield OptionList(*self._options(), id="correct-modes")
            yield Static(Text(HINT), id="correct-hint")

    def _options(self) -> list[Option]:
        width = max((len(name) for name, _ in self.choices), default=4)
        options = []
        for index, (name, probability) in enumerate(self.choices):
            key = PICK_KEYS[index] if index < len(PICK_KEYS) else " "
            line = Text(f"{key}  {name:<{width}}  ", style="bold" if name != self.answered else "")
            if probability is not None:
                line.append_text(bar(probability, 12))
                line.append(f" {two_places(probability)}")
            else:
                line.append(" " * 17)
            marks = []
            if name == self.routed_mode:
                marks.append("router's pick")
            if name == self.answered:
                marks.append("answered")
            if marks:
                line.append(f"  ({', '.join(marks)})", style="dim")
            if name == self.fallback:
                line.append("  · fallback: none of these", style="dim")
            options.append(Option(line, id=name, disabled=name == self.answered))
        return options

    def on_mount(self) -> None:
        modes = self.query_one("#correct-modes", OptionList)
        modes.focus()
        first = next((i for i, (n, _) in enumerate(self.choices) if n != self.answered), None)
        if first is not None:
            modes.highlighted = first

    def on_key(self, event: events.Key) -> None:
        """Letters (and, after one, digits) find a mode by name; see the module."""
        character = event.character if event.is_printable else None
        if event.key in MOVES:
            if self.typed:  # the row is chosen by hand now: Enter picks it
                self.typed = ""
                self._show_found()
            return
        if event.key == "backspace" and self.typed:
            self.typed = self.typed[:-1]
        elif event.key == "enter" and self.typed and self._found() is None:
            pass  # nothing matches: Enter must not pick what happens to be highlighted
        elif character and (self.typed or not (character.isspace() or self._bound(event.key))):
            self.typed += character.lower()
        else:
            return  # a key of this screen's (1-9, Esc, or the user's keymap), Enter, Tab
        event.stop()
        event.prevent_default()
        self._show_found()

    def _bound(self, key: str) -> bool:
        """Whether `key` is one of this screen's keys (Textual applies the keymap to the
        binding chain it builds, not to the screen's own map)."""
        return any(
            key in keys.key_to_bindings for node, keys in self._binding_chain if node is self
        )

    def _found(self) -> int | None:
        """The index of the first mode that can be picked whose name starts with `typed`."""
        return next(
            (
                index
                for index, (name, _) in enumerate(self.choices)
                if name.startswith(self.typed) and name != self.answered
            ),
            None,
        )

    def _show_found(self) -> None:
        hint = self.query_one("#correct-hint", Static)
        if not self.typed:
            hint.update(Text(HINT))
            return
        found = self._found()
        if found is None:
            hint.update(
                Text(f"no mode to pick starts with “{self.typed}” · backspace · esc: close")
            )
            return
        self.query_one("#correct-modes", OptionList).highlighted = found
        name = self.choices[found][0]
        hint.update(
            Text(f"“{self.typed}”: {name} · enter: answer the turn again in it · esc: close")
        )

    @on(OptionList.OptionSelected, "#correct-modes")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_pick(self, index: int) -> None:
        """Choose the mode with this number."""
        if index < len(self.choices) and self.choices[index][0] != self.answered:
            self.dismiss(self.choices[index][0])

    def action_dismiss_none(self) -> None:
        """Close without correcting."""
        self.dismiss(None)

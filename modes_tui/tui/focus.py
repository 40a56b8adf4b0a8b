"""Moving around by keyboard: Tab walks the conversation's parts, and a character typed
away from the prompt is typed into it.

Tab goes prompt → chat → route panel (when shown) → prompt: the parts, not each widget in
them (a long chat has a fold per turn, and the panel would be dozens of Tabs away). After a
click anywhere (the chat, the panel, the header), what is typed next lands in the prompt.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from textual import events
from textual.widget import Widget

if TYPE_CHECKING:
    from textual.widgets import TextArea  # loaded with the editor, after the first frame


def next_part(focused: Widget | None, parts: Sequence[Widget]) -> Widget:
    """Focus the part after the one holding the focus (the first when none does)."""
    shown = [part for part in parts if part.focusable and _displayed(part)]
    at = next(
        (
            i
            for i, part in enumerate(shown)
            if focused is not None and part in focused.ancestors_with_self
        ),
        -1,
    )
    target = shown[(at + 1) % len(shown)]
    target.focus()
    return target


def type_into(prompt: TextArea, focused: Widget | None, event: events.Key) -> None:
    """A printable key pressed while the focus is elsewhere: into the prompt, focused."""
    if event.is_printable and event.character and focused is not prompt:
        event.stop()
        event.prevent_default()
        prompt.focus()
        prompt.insert(event.character)


def _displayed(widget: Widget) -> bool:
    """Neither the widget nor a container of it is out of the layout (`display: none`)."""
    return all(node.display for node in widget.ancestors_with_self if isinstance(node, Widget))

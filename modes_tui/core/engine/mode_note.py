"""The note that tells the answering model the mode changed, and how to drop an echo of it.

When a turn's mode differs from the mode of the last reply the model can see, the request
carries a short note (`[Mode changed from chat to shell: ...]`) at the end of its system
part, so the model does not keep acting in the previous mode. The note is for the model
only: it is never stored in the history and must never reach the screen.

A base model (the embedded one reads the request as a plain transcript) tends to copy text
it has just seen, so a provider that streams such a model's words filters them through
`NoteEchoFilter`, which removes any copy of the note, even one split across chunks.
"""

from __future__ import annotations

NOTE_PREFIX = "[Mode changed from "
"""How every mode-change note begins (and how an echo of one is recognised)."""
NOTE_END = "]"
NO_MODE = "no mode"
"""How the note names the absence of a mode (`off`, or before the first mode)."""


def mode_change_note(previous: str | None, current: str | None) -> str:
    """The note for a turn whose mode differs from the previous reply's."""
    return (
        f"{NOTE_PREFIX}{previous or NO_MODE} to {current or NO_MODE}: follow this turn's "
        f"instructions, not the style or tools of earlier replies.{NOTE_END}"
    )


def strip_note_echoes(text: str) -> str:
    """`text` without any copy of a mode-change note (whole text at once)."""
    echo = NoteEchoFilter()
    return echo.feed(text) + echo.finish()


class NoteEchoFilter:
    """Removes copies of the mode-change note from streamed text.

    Text that could still turn out to be the start of a note is held back until it is
    clear; a note that never closes (the model stopped mid-note) is dropped at the end.
    Whitespace right after a removed note goes too, so an answer does not start blank.
    """

    def __init__(self) -> None:
        self._held = ""
        self._in_note = False
        self._after_note = False

    def feed(self, text: str) -> str:
        """The part of `text` (plus anything held back) that is safe to show now."""
        data = self._held + text
        self._held = ""
        shown: list[str] = []
        while data:
            if self._in_note:
                end = data.find(NOTE_END)
                if end < 0:
                    return "".join(shown)  # still inside the note: drop what came
                data = data[end + len(NOTE_END) :]
                self._in_note = False
                self._after_note = True
                continue
            if self._after_note:
                stripped = data.lstrip()
                if not stripped:
                    return "".join(shown)
                data = stripped
                self._after_note = False
            start = data.find(NOTE_PREFIX)
            if start >= 0:
                shown.append(data[:start])
                data = data[start + len(NOTE_PREFIX) :]
                self._in_note = True
                continue
            # Hold back a tail that may be the beginning of a note split across chunks.
            keep = _prefix_overlap(data)
            shown.append(data[: len(data) - keep])
            self._held = data[len(data) - keep :]
            break
        return "".join(shown)

    def finish(self) -> str:
        """What was held back at the end of the stream (an unfinished note is dropped)."""
        held, self._held = self._held, ""
        return "" if self._in_note else held


def _prefix_overlap(text: str) -> int:
    """The length of the longest tail of `text` that is a proper prefix of the note."""
    for size in range(min(len(text), len(NOTE_PREFIX) - 1), 0, -1):
        if NOTE_PREFIX.startswith(text[-size:]):
            return size
    return 0

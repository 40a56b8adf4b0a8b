"""Text from outside (model answers, tool output, provider errors, session files) made safe
to put on a terminal.

Such text can carry control characters and escape sequences that a terminal would obey:
clear the screen (`ESC[2J`), set the window title (OSC 0), write the clipboard (OSC 52),
ring the bell, move the cursor back over what was shown (backspace, a lone carriage
return), or reorder what is displayed (Unicode bidi overrides, as in "Trojan Source").
`terminal_safe` removes all of them and keeps everything else, newlines and tabs included.
The REPL prints, and the TUI renders, nothing from outside without it; the session log and
JSON output keep the text as it came (JSON escapes what a terminal would act on).

Rules:
- complete escape sequences (CSI, OSC, DCS, SOS, PM, APC, two-character ESC forms, and their
  8-bit C1 forms) are removed whole, so no `[2J` residue is left;
- a sequence that is not complete (e.g. split across two streamed chunks) loses only its
  introducer, so it cannot swallow the text after it; what remains is plain text;
- other C0 controls except `\\n` and `\\t`, DEL, and C1 controls (U+0080-U+009F) are removed;
  CRLF becomes LF and a lone CR is removed (it would let later text overwrite a line);
- the bidi embedding, override and isolate controls (U+202A-U+202E, U+2066-U+2069) are
  removed; the plain direction marks (U+200E, U+200F) that right-to-left text needs stay;
- invisible characters that hide text or make two different texts look the same are
  removed: zero-width space (U+200B), word joiner and invisible operators (U+2060-U+2064),
  the BOM (U+FEFF), U+180E, interlinear annotations (U+FFF9-U+FFFB) and the tag characters
  (U+E0000-U+E007F, "ASCII smuggling"). The zero-width (non-)joiners (U+200C, U+200D) stay
  between two non-ASCII characters, where emoji sequences (👩‍💻) and Indic and Persian
  scripts need them, and are removed next to ASCII or at an end (`r\u200dm` shows `rm`);
- secret values registered with `core.redaction.remember_secret` (configured API keys and
  headers) are replaced by `[redacted]`, so the screen never shows one.

Removed, not replaced by a visible mark: what was removed was never text for the reader (a
colour, a title, a clipboard write), and a mark per byte would bury the answer in noise.
Rich markup (`[bold]`) is not touched here: printed text shows it as typed, and the TUI
puts outside text into `rich.text.Text` objects, which never parse markup.
"""

from __future__ import annotations

import json
import re
from typing import Any

from modes_tui.core.redaction import redact_values, secret_started_at_end

_BIDI_CONTROLS = "\u202a-\u202e\u2066-\u2069"
_INVISIBLE = "\u200b\u2060-\u2064\ufeff\u180e\ufff9-\ufffb\U000e0000-\U000e007f"
_JOINERS = "\u200c\u200d"

# The string controls (OSC, DCS, SOS, PM, APC) end with BEL or ST (ESC \ or 8-bit 0x9c).
_STRING_BODY = r"[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)"
# The patterns are kept as text and compiled on first use, through `re`'s own cache: this
# module loads before the app's first frame, and compiling them all costs about 1 ms there.
_SEQUENCE = "|".join(
    (
        r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]",  # CSI: parameters, intermediates, final
        rf"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f]){_STRING_BODY}",  # OSC, DCS, SOS, PM, APC
        r"\x1b[ -/]*[0-~]",  # two-character forms (ESC c resets, ESC 7 saves the cursor)
    )
)
_CONTROL = rf"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI_CONTROLS}{_INVISIBLE}]"
_NOTICED = rf"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI_CONTROLS}{_INVISIBLE}{_JOINERS}]"
"""Every character `terminal_safe` acts on; most text has none and is returned as it is."""
_LOOSE_JOINER = rf"(?:(?<=[\x00-\x7f])|\A)[{_JOINERS}]+|[{_JOINERS}]+(?=[\x00-\x7f]|\Z)"
"""A joiner that joins nothing but ASCII or an end: it only hides a character boundary."""
_JSON_UNSAFE = rf"[\x7f-\x9f{_BIDI_CONTROLS}{_INVISIBLE}{_JOINERS}]"


def terminal_safe(text: str) -> str:
    """`text` as a terminal may show it: every control character, escape sequence, hiding
    invisible character and registered secret value removed (see the module docstring)."""
    text = redact_values(text)
    if re.search(_NOTICED, text) is None:
        return text
    text = text.replace("\r\n", "\n")
    text = re.sub(_SEQUENCE, "", text)
    text = re.sub(_CONTROL, "", text)
    return re.sub(_LOOSE_JOINER, "", text)


_CUT_SEQUENCE = (
    "(?:"
    + "|".join(
        (
            r"(?:\x1b\[|\x9b)[0-?]*[ -/]*",  # CSI without its final byte yet
            r"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*\x1b?",  # string, no end yet
            r"\x1b[ -/]*",  # a lone ESC, or ESC and intermediates
            rf"[^\x00-\x7f]?[{_JOINERS}]+",  # a joiner (and what it joins) before the rest
        )
    )
    + r")\Z"
)
HELD_AT_MOST = 1024
"""The longest cut sequence a stream holds back; beyond it the text is released (inert)."""


class TerminalStream:
    """`terminal_safe` for text that arrives in chunks.

    A sequence cut at a chunk's end is held back until the next chunk completes it, so it
    is removed whole instead of leaving its body (`0;title`) on screen; so is an end that
    could begin a registered secret, so a key cut in pieces is still redacted whole. Call
    `flush()` when the stream ends.
    """

    def __init__(self) -> None:
        self._held = ""

    def feed(self, text: str) -> str:
        """The safe part of what is held plus `text` that can be shown now."""
        data = self._held + text
        cut = re.search(_CUT_SEQUENCE, data)
        start = len(data)
        if cut is not None and len(data) - cut.start() <= HELD_AT_MOST:
            start = cut.start()
        # a key echoed by a model arrives in pieces: keep its start until it is whole
        start = min(start, len(data) - secret_started_at_end(data))
        self._held = data[start:]
        return terminal_safe(data[:start])

    def flush(self) -> str:
        """What was held back, made safe (an unfinished sequence loses its introducer)."""
        held, self._held = self._held, ""
        return terminal_safe(held)


def decode_typed(raw: bytes, where: str) -> tuple[str, list[str]]:
    """Bytes the user piped in (a stdin line) as text, and what had to change to make it so.

    Nothing is dropped silently: bytes that are not UTF-8 become U+FFFD (the rest of the
    line stays), NUL bytes are removed (no model API takes them), and each change is named
    with `where` (e.g. `stdin line 3`) so the user can fix the input.
    """
    notes: list[str] = []
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        text = raw.decode("utf-8", errors="replace")
        notes.append(
            f"{where} is not valid UTF-8 (byte 0x{raw[error.start]:02x} at offset "
            f"{error.start}); the bytes that are not were read as \ufffd"
        )
    if "\0" in text:
        notes.append(f"{where} holds {text.count(chr(0))} NUL byte(s); they were removed")
        text = text.replace("\0", "")
    return text, notes


def json_terminal_safe(line: str) -> str:
    """A line of JSON (C0 already escaped by `json.dumps`) with DEL, C1, bidi controls and
    hiding invisible characters escaped as `\\uXXXX` too (the same value for a parser,
    inert on a terminal), and registered secret values redacted."""
    line = redact_values(line)
    return re.sub(_JSON_UNSAFE, _json_escape, line)


def _json_escape(found: re.Match[str]) -> str:
    code = ord(found.group())
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    high, low = divmod(code - 0x10000, 0x400)  # JSON spells astral characters as a pair
    return f"\\u{0xD800 + high:04x}\\u{0xDC00 + low:04x}"


def dumps_terminal_safe(value: Any) -> str:
    """`json.dumps` for a terminal: Unicode kept readable, anything a terminal obeys escaped."""
    return json_terminal_safe(json.dumps(value, ensure_ascii=False, default=str))

"""Every error modes-tui raises on purpose, under one root.

    ModesError                    root: a message for the user and a short title
    ├── DeclarationError          a pack (profiles, router.yaml, prompts) is broken; lists every problem
    ├── SettingsError             config.yaml, an environment variable or an option is wrong
    ├── UnknownMode               a mode name that the pack does not have or that is unavailable
    ├── ContractError             a classifier returned something that is not a Decision
    ├── RoutingDecisionError      a model's routing answer could not be parsed (stage, raw_output)
    ├── ProviderError             a model call failed (kind, provider message, hint)
    ├── MissingLocalParts         the embedded model or the router's encoder is not installed
    ├── ToolError                 a tool refused or failed in a way the model should read
    ├── SessionError              a session file is missing or unreadable
    │   └── RecordError           one record of a session does not have the fields its type needs
    ├── FileWriteError            a file could not be replaced atomically (also an OSError)
    ├── FileReadError             a file is not a regular file (a link, FIFO, device) or cannot be read
    │   └── FileTooLargeError     a file is larger than what modes-tui reads of that kind
    ├── CorrectionsError          the corrections store cannot be read or written
    ├── CompactionRefused         `/compact` cannot run now, or has nothing to summarise
    ├── CorrectionRefused         a turn cannot be corrected as asked (none yet, running, same mode)
    └── ImpossibleTurn            a turn ordered with parts its kind cannot have (a caller's bug)

The core raises; the edges (TUI, REPL, CLI) show `str(error)` and never a traceback.
"""

from __future__ import annotations

import difflib
import re
import reprlib
from collections.abc import Sequence
from typing import Literal, NamedTuple

SHOWN_AT_MOST = 60
"""How many characters of a value an error message quotes."""

_BOUNDED = reprlib.Repr()  # Python 3.11 takes no keyword arguments here
_BOUNDED.maxlevel = 2
_BOUNDED.maxlist = _BOUNDED.maxtuple = _BOUNDED.maxdict = _BOUNDED.maxset = 4
_BOUNDED.maxstring = _BOUNDED.maxother = 70


def suggest(word: str, choices: Sequence[str], *, quote: bool = True) -> str:
    """The closest of `choices` to a mistyped `word`, as `did you mean 'code'?` (`--search`
    unquoted with `quote=False`); empty when none is close (stdlib difflib's 0.6 ratio)."""
    close = difflib.get_close_matches(word, [str(choice) for choice in choices], n=1)
    if not close:
        return ""
    return f"did you mean {close[0]!r}?" if quote else f"did you mean {close[0]}?"


def cut_repr(value: object, limit: int = SHOWN_AT_MOST) -> str:
    """`repr(value)` for an error message: at most `limit` characters, then `…`.

    Built with `reprlib`, which stops at a few items per level and two levels deep, so the
    cost does not grow with the value (a file may hold a huge or deeply nested one).
    """
    if isinstance(value, str) and len(value) > limit:
        return repr(value[:limit]) + "…"
    text = _BOUNDED.repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


class ModesError(Exception):
    """Root of every error modes-tui raises on purpose."""

    title = "Error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class MissingLocalParts(ModesError):
    """A model or encoder this run needs is one of the local parts, and they are not
    installed here; the message says what is missing and how to get a model."""

    title = "No model installed"


class Problem(NamedTuple):
    """One thing wrong in a pack: where it is and what would fix it (a named tuple: this
    module loads before the app's first frame, where a frozen dataclass compiles six methods)."""

    file: str
    """The file that holds the problem (relative to the pack when possible)."""
    field: str
    """The key path inside that file, e.g. `examples[3]` or `fallback`."""
    message: str
    """What is wrong and what would fix it."""
    place: str = ""
    """Where in the file the field is written (`line 3, column 1`), when known."""

    def __str__(self) -> str:
        where = f"{self.file}: {self.field}" if self.field else self.file
        at = f" ({self.place})" if self.place else ""
        return f"{where}: {self.message}{at}"


class DeclarationError(ModesError):
    """A pack is broken. Carries every problem found, not just the first."""

    title = "Broken pack"

    def __init__(self, problems: Sequence[Problem], pack: str = "") -> None:
        self.problems = tuple(problems)
        self.pack = pack
        head = f"pack {pack!r} has" if pack else "the declaration has"
        count = len(self.problems)
        lines = [f"{head} {count} problem{'s' if count != 1 else ''}:"]
        lines += [f"  - {problem}" for problem in self.problems]
        super().__init__("\n".join(lines))


class SettingsError(ModesError):
    """A setting is wrong: names the file or variable, the key, and the fix."""

    title = "Bad setting"


class UnknownMode(ModesError, KeyError):
    """A mode name that is not in the pack, or not available right now."""

    title = "Unknown mode"

    def __init__(self, name: str, available: Sequence[str]) -> None:
        self.name = name
        self.available = tuple(available)
        choices = ", ".join(self.available) or "(none)"
        hint = suggest(name, self.available)
        if hint:
            super().__init__(f"unknown mode {name!r}: {hint} (available modes: {choices})")
        else:
            super().__init__(f"unknown mode {name!r}; available modes: {choices}")

    def __str__(self) -> str:  # KeyError would otherwise add quotes
        return self.message


class ContractError(ModesError):
    """A classifier broke its contract (did not return a well-formed Decision)."""

    title = "Classifier contract"


class RoutingDecisionError(ModesError):
    """A routing model's answer was not a usable decision; the raw text is kept."""

    title = "Unusable routing answer"

    def __init__(
        self, message: str, *, stage: Literal["json-parse", "shape"], raw_output: str
    ) -> None:
        super().__init__(message)
        self.stage = stage
        self.raw_output = raw_output


ProviderErrorKind = Literal[
    "timeout",
    "rate_limit",
    "auth",
    "connection",
    "bad_stream",
    "server_error",
    "crashed",
    "context_too_long",
    "not_found",
    "bad_request",
    "unknown",
]


_OBJECT_REPR = re.compile(r"\s*(?:\w+:)?<[^<>\n]*\bat 0x[0-9a-fA-F]+>")


def without_object_reprs(text: str) -> str:
    """`text` without Python object reprs (`ssl:<ssl.SSLContext object at 0x7f...>`): a
    library's message may embed one, and it means nothing to the user."""
    return _OBJECT_REPR.sub("", text)


class ProviderError(ModesError):
    """A model call failed. Keeps the provider's own words and adds a hint."""

    title = "Model call failed"

    def __init__(
        self, kind: ProviderErrorKind, provider_message: str, *, hint: str = "", model: str = ""
    ) -> None:
        provider_message = without_object_reprs(provider_message)
        self.kind = kind
        self.provider_message = provider_message
        self.hint = hint
        self.model = model
        where = f" ({model})" if model else ""
        text = f"{kind.replace('_', ' ')}{where}: {provider_message}"
        if hint:
            text += f"\nhint: {hint}"
        super().__init__(text)


class ToolError(ModesError):
    """A tool failed in a way that the model is allowed to read."""

    title = "Tool failed"


class SessionError(ModesError):
    """A session could not be found or read."""

    title = "Session"


class RecordError(SessionError, ValueError):
    """A session record lacks a field its type needs, or holds the wrong kind of value."""

    title = "Session record"

    def __init__(self, kind: str, field: str, reason: str) -> None:
        super().__init__(f"{kind} record: field {field!r} {reason}")
        self.kind = kind
        """The record type (user, route, ...)."""
        self.field = field
        """The field at fault."""
        self.reason = reason
        """What is wrong with it, e.g. "is missing"."""


class FileWriteError(ModesError, OSError):
    """A file could not be written; the old file (if any) is untouched.

    Also an `OSError`, so callers that treat a cache write as optional keep doing so.
    """

    title = "Cannot write"

    def __init__(self, message: str, *, path: str, cause: OSError) -> None:
        super().__init__(message)
        self.path = path
        self.errno = cause.errno
        self.strerror = cause.strerror

    def __str__(self) -> str:
        return self.message


class FileReadError(ModesError, OSError):
    """A file the app reads or appends to is not a regular file, or cannot be read.

    Also an `OSError` (with `strerror` the short reason), so code that treats a file as
    optional (a cache, a summary) keeps doing so, and `f"...: {error.strerror}"` reads well.
    """

    title = "Cannot use file"

    def __init__(self, message: str, *, path: str, reason: str) -> None:
        super().__init__(message)
        self.path = path
        """The file at fault."""
        self.strerror = reason
        """What is wrong with it, e.g. "is a symlink (to /dev/zero)"."""

    def __str__(self) -> str:
        return self.message


class FileTooLargeError(FileReadError):
    """A file is larger than the limit for its kind (a control file is not a gigabyte)."""

    title = "File too large"

    def __init__(self, message: str, *, path: str, size: int, limit: int) -> None:
        super().__init__(
            message, path=path, reason=f"is {size:,} bytes, over the {limit:,}-byte limit"
        )
        self.size = size
        """Its size in bytes (at least, for a file still growing)."""
        self.limit = limit
        """The most the app reads of that kind of file."""


class CorrectionsError(ModesError):
    """The corrections store of a pack cannot be read or written."""

    title = "Corrections"


class CompactionRefused(ModesError):
    """`/compact` cannot run now (a turn runs) or has nothing to summarise."""


class CorrectionRefused(ModesError):
    """A turn cannot be corrected as asked: there is none yet, one is running, or the mode
    is the one that already answered it."""

    title = "Cannot correct"


class ImpossibleTurn(ModesError, ValueError):
    """A `TurnOrder` whose parts do not fit its kind (a retry with a correction plan, a new
    turn without text): a bug in the caller, refused before anything is changed."""

    title = "Impossible turn"

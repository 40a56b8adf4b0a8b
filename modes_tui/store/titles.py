"""Session titles: made locally from the first user messages, or set by the user.

**Generated titles** never call a model: the first message that says something gets its
greetings and politeness taken off ("hi", "please", "can you"), its first sentence kept
(for a pasted traceback, the error line), and is cut to `TITLE_CHARS` at a word boundary.
A message that is only filler ("hi!", "thanks") gives no title, so the next one is used.

**Renames** are appended to the log as a `meta` record carrying `title` and
`title_source: "user"` (later meta records update the session's meta when it is read
back, so the log stays append-only and the truth). The session list must not read whole
logs, so a rename also writes a small sidecar, `.summaries/<id>.title.json`: the list
finds every sidecar with one `scandir` of the summaries folder and opens only those. A
sidecar beats the per-session summary because a running app rewrites that summary from
its own memory and would put the old title back; nothing but a rename writes a sidecar.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Iterable
from pathlib import Path

from modes_tui.core.errors import SessionError
from modes_tui.core.files import atomic_write, private_folder, read_bytes
from modes_tui.store.session_files import SUFFIX, SUMMARIES

TITLE_CHARS = 50
"""Generated titles are at most this long (a cut one ends in …)."""
RENAMED_SUFFIX = ".title.json"
TITLE_MAX = 200
"""The longest title a user may set."""

# Leading words that carry no topic. Longest first, so "can you please" goes as a whole.
_FILLER = sorted(
    (
        "hi there",
        "hello there",
        "hey there",
        "hi",
        "hello",
        "hey",
        "yo",
        "hiya",
        "greetings",
        "good morning",
        "good afternoon",
        "good evening",
        "thanks",
        "thank you",
        "ok so",
        "okay so",
        "ok",
        "okay",
        "so",
        "well",
        "um",
        "uh",
        "please",
        "pls",
        "plz",
        "kindly",
        "can you",
        "could you",
        "would you",
        "will you",
        "can u",
        "could u",
        "can you please",
        "could you please",
        "would you please",
        "would you mind",
        "would you be able to",
        "are you able to",
        "i was wondering if you could",
        "i was wondering if",
        "i wonder if you could",
        "i need you to",
        "i want you to",
        "i'd like you to",
        "i would like you to",
        "help me",
        "please help me",
        "can you help me",
        "could you help me",
        "can you help me to",
        "help me to",
        "quick question",
        "a quick question",
        "question",
        "just",
        "assistant",
        "modes-tui",
    ),
    key=len,
    reverse=True,
)
_FILLER_RE = re.compile(
    r"^(?:" + "|".join(re.escape(f) for f in _FILLER) + r")(?![\w'])[\s,.!:;-]*", re.IGNORECASE
)
_ERROR_LINE = re.compile(r"^\s*((?:[\w.]+\.)?\w*(?:Error|Exception|Warning|Fault)\b.*)$", re.M)
_FENCE = re.compile(r"^\s*```")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")
_TRAILING = " \t,;:.!?-–—"
_DANGLING = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "on",
        "in",
        "at",
        "to",
        "for",
        "with",
        "and",
        "or",
        "but",
        "from",
        "by",
        "into",
        "about",
        "as",
        "is",
        "are",
        "my",
        "your",
    ]
)


def generate_title(messages: Iterable[str], limit: int = TITLE_CHARS) -> str | None:
    """A short title from the first user messages that say something; None if none does."""
    for message in messages:
        title = _title_of_one(message, limit)
        if title:
            return title
    return None


def _title_of_one(text: str, limit: int) -> str | None:
    error = _error_line(text)
    line = error if error is not None else _first_prose_line(text)
    if line is None:
        return None
    if error is None:
        line = _strip_filler(line)
        line = _SENTENCE_END.split(line, maxsplit=1)[0]
        line = _strip_filler(line)  # "Hi. Can you ..." has filler in its second sentence too
    line = re.sub(r"\s+", " ", line).strip(_TRAILING + "`*_#>")
    if not re.search(r"\w", line):
        return None
    return _cut(line, limit)  # the user's own casing: "git rebase", not "Git rebase"


def _strip_filler(line: str) -> str:
    line = line.strip()
    while True:
        shorter = _FILLER_RE.sub("", line, count=1).lstrip()
        if shorter == line:
            break
        line = shorter
    # Politeness at the end carries no topic either.
    line = re.sub(r"[\s,]+(?:please|pls|thanks|thank you|thx)[\s.!?]*$", "", line, flags=re.I)
    # After the first sentence went, a leftover greeting like "Hi!" is nothing.
    return line


def _error_line(text: str) -> str | None:
    """The exception line of a pasted traceback (its last one: what actually went wrong)."""
    if "Traceback (most recent call last)" not in text and not re.search(
        r"^\s+at |^\s+File \"", text, re.M
    ):
        return None
    found = _ERROR_LINE.findall(text)
    return found[-1].strip() if found else None


def _first_prose_line(text: str) -> str | None:
    """The first non-blank line outside code fences (else the first line of code)."""
    in_code = False
    first_code: str | None = None
    for raw in text.splitlines():
        if _FENCE.match(raw):
            in_code = not in_code
            continue
        line = raw.strip()
        if not line:
            continue
        if in_code:
            first_code = first_code or line
            continue
        if re.search(r"\w", _strip_filler(line)):
            return line
    return first_code


def _cut(text: str, limit: int) -> str:
    """At most `limit` characters, cut at a word boundary, with … when cut."""
    if len(text) <= limit:
        return text
    room = text[: limit - 1]
    space = room.rfind(" ")
    if space >= limit // 2:
        room = room[:space]
        # "… leaves falling on a…" reads worse than "… leaves falling…"
        words = room.split(" ")
        while len(words) > 3 and words[-1].lower() in _DANGLING:
            words.pop()
        room = " ".join(words)
    return room.rstrip(_TRAILING) + "…"


# --------------------------------------------------------------------------- renames


def check_title(title: str) -> str:
    """A title as the user typed it, tidied; raises SessionError for an empty or long one."""
    cleaned = " ".join(title.split())
    if not cleaned:
        raise SessionError("a title cannot be empty: give some words, e.g. /rename parser bug")
    if len(cleaned) > TITLE_MAX:
        raise SessionError(
            f"a title is at most {TITLE_MAX} characters (this one has {len(cleaned)}); shorten it"
        )
    return cleaned


def renamed_path(log: Path) -> Path:
    """The sidecar that holds the user's title for the log at `log`."""
    return log.parent / SUMMARIES / (log.name.removesuffix(SUFFIX) + RENAMED_SUFFIX)


def write_renamed(log: Path, session_id: str, title: str) -> None:
    """Write the sidecar atomically (a cache: failing to write it is not an error)."""
    path = renamed_path(log)
    payload = json.dumps({"id": session_id, "title": title}, ensure_ascii=False).encode()
    with contextlib.suppress(OSError):
        private_folder(path.parent)
        atomic_write(path, payload, fsync=False)


def renamed_titles(sessions_folder: Path) -> dict[str, str]:
    """Session id -> the user's title, for every renamed session (one scandir, then reads)."""
    found: dict[str, str] = {}
    try:
        with os.scandir(sessions_folder / SUMMARIES) as entries:
            names = [e.name for e in entries if e.name.endswith(RENAMED_SUFFIX)]
    except OSError:
        return found
    for name in names:
        session_id = name.removesuffix(RENAMED_SUFFIX)
        try:
            data = json.loads(read_bytes(sessions_folder / SUMMARIES / name, "summary"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("id") == session_id and data.get("title"):
            found[session_id] = str(data["title"])
    return found

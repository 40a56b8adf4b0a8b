"""Framing: a message's request, split from what it quotes or pastes.

"translate this into French: 'git push --force'" asks for a translation; the command is
only the material. `split_message` finds the material and leaves the request:

    form        what it looks like
    fenced      a ``` or ~~~ block
    quoted      a '...', "...", `...` or curly-quoted span of at least `QUOTE_MIN_CHARS`
    introduced  the lines after a first line that ends in ":" ("summarise this log:\\n...")
                or the rest of a line after a short introducer ("proofread: ...",
                "fix the grammar in this: ...")
    pasted      indented lines, or lines that read as a log, a traceback or code

Each piece keeps only its kind (`kind_of`: code, log, command, prose - a cheap reading of
the text's shape, no model) and its length; the request keeps a "…" where each piece was.
The router routes the request and counts the kinds only as weak evidence
(`core.routing.quoted`), so the quoted text never decides the mode on its own.

A message that IS a command line (`is_command_line`: `echo "hi" >> notes.txt`,
`grep -rn foo src/ | wc -l`) is marked `command_line`: it asks for the terminal whatever
prose its arguments quote, and the router counts that as strong evidence. A request that
only quotes a command ("translate this: 'git push'") is not one.

Short quotes stay in the request ("what does 'per se' mean", `items[::-1]`): they are
words of the sentence, not material. Only the first `SCAN_LIMIT` characters are read; the
rest of a huge paste counts as one more pasted piece, measured, never scanned.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

QuotedKind = Literal["code", "log", "command", "prose"]
QuotedForm = Literal["fenced", "quoted", "introduced", "pasted"]
RoutedOn = Literal["request", "message"]

SCAN_LIMIT = 8_000
"""Characters of a message the split reads; a longer tail is one pasted piece."""
KIND_SAMPLE = 1_500
"""Characters of a piece that `kind_of` reads."""
QUOTE_MIN_CHARS = 12
"""A quoted span shorter than this is a word of the sentence, not material."""
REQUEST_SHOWN = 160
"""Characters of the request kept on the route (for the panel and the log)."""
PLACEHOLDER = "…"

_FENCE = re.compile(r"(```|~~~)[^\n]*\n?(.*?)(?:\1|\Z)", re.DOTALL)
# Leftmost quote of any kind; a single quote opens only after a non-word character, so
# "don't" and "it's" are apostrophes, not quotes. No quote spans its own mark, which keeps
# the scan linear on a line full of apostrophes.
_QUOTE = re.compile(
    r"`([^`\n]+)`"
    r'|"([^"\n]+)"'
    r"|“([^”\n]+)”"
    r"|‘([^’\n]+)’"
    r"|(?<![\w'])'(?=\S)([^'\n]+)(?<=\S)'(?![\w])"
)
# A head announces material when it points at it ("this", "the following", "below") or
# asks for an edit of it ("proofread:"); a noun alone ("Error: ...", "Note: ...") is the
# material's own label, not a request.
_INTRO_WORDS = re.compile(r"\b(?:this|these|that|it|following|below|here|here's|attached)\b")
_EDIT_VERB = re.compile(
    r"^(?:please\s+)?(?:proofread|translate|summari[sz]e|explain|fix|rewrite|rephrase|shorten|"
    r"edit|correct|check|polish|review|simplify|expand|paraphrase|tl;?dr)\b"
)
_INTRO_MAX_WORDS = 12
_INLINE_INTRO = re.compile(r"^(?P<head>[^\n:]{1,120}?):[ \t]+(?P<body>[^\n]{8,})$")

# Line shapes that a person pastes rather than types.
_LOG_LINE = re.compile(
    r"^\s*(?:Traceback \(most recent call last\)|File \"[^\"]+\", line \d+|at [\w.$<>]+\(|"
    r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d|\[\d{2}:\d{2}|(?:[A-Z]\w*)?(?:Error|Exception|Warning)\b[:\[]|"
    r"error\[E\d+\]|panic:|-->|\|)"
)
_LOG_WORDS = re.compile(
    r"Traceback \(most recent call last\)|\b(?:[A-Z]\w*(?:Error|Exception))\b|"
    r"\b(?:ERROR|WARN|WARNING|FATAL|CRITICAL|DEBUG|INFO)\b|\berror\[E\d+\]|"
    r"^\s*at [\w.$<>]+\(|^\s*File \"|\bpanic:|\bsegmentation fault\b|\bexit code \d+",
    re.MULTILINE,
)
_COMMAND_NAMES = (
    "git docker kubectl ls cd rm cp mv tar find grep sed awk chmod chown ssh scp "
    "rsync curl wget npm npx yarn pnpm pip pip3 apt apt-get brew dnf yum pacman "
    "systemctl journalctl sudo make cat echo ps kill killall du df mkdir touch ln "
    "head tail less xargs export source crontab ping dig nc lsof top htop mount "
    "umount zip unzip gzip python python3 node go cargo helm terraform ffmpeg openssl "
    "gpg history which whereis man tee sort uniq wc "
)
_COMMANDS = frozenset(_COMMAND_NAMES.split())
# Command names that are also English words: a command only with a shell mark beside them.
_WORDLIKE_NAMES = (
    "make find sort head tail source man history which top go python python3 node "
    "export touch kill cat echo less mount ping dig tee uniq wc zip cd ls "
)
_WORDLIKE_COMMANDS = frozenset(_WORDLIKE_NAMES.split())
_SHELL_COMPOUND = re.compile(
    r"for\s+\w+\s+in\s.+\bdo\b.+\bdone\b|(?:while|until)\s.+;\s*do\b.+\bdone\b|if\s.+\bthen\b.+\bfi\b"
)
"""A shell loop or test typed on one line or a few ("for f in *.txt; do echo $f; done")."""
_SHELL_MARK = re.compile(r"\s--?\w|>>?|\||&&|(?:^|\s)(?:/|~/|\./)\w|\*\.\w|\$\w")
_CODE_WORDS = re.compile(
    r"^\s*(?:def|class|return|import|from|function|const|let|var|fn|pub|impl|struct|enum|"
    r"public|private|static|void|int|package|func|#include|if|for|while|try|catch|except)\b"
    r"|=>|->|::|\+\+|&&|\|\||[;{}]\s*$|\w\(.*\)|\w\[.*\]|==|!=",
    re.MULTILINE,
)
# Words a person types around a command, not in one: a question, a request, a pronoun.
_PROSE_WORDS = re.compile(
    r"\b(?:how|what|why|when|which|where|who|should|could|would|can|does|did|is|are|"
    r"please|help|I|I'm|my|me|you|your|it's|that's|say|says|said|shows|keeps|fails|failing|"
    r"broke|broken|instead)\b"
    r"|\?\s*$|,\s+[A-Za-z]"
)
_SPANS = re.compile(r'`[^`\n]*`|"[^"\n]*"|\'[^\'\n]*\'|“[^”\n]*”|‘[^’\n]*’')
_CHAINED = re.compile(r"\s*(?:&&|\|\||;|\|)\s*")
COMMAND_LINE_MAX_LINES = 3
"""A longer run of lines is a script or a paste, not a line typed at a prompt."""
_BARE_COMMAND_MAX_WORDS = 3
"""A command with no shell mark (flag, pipe, redirect, path) is one only this short
("git status", "npm run build", not "docker logs say OOMKilled"), and only with none of
`_SENTENCE_WORDS`."""
_SENTENCE_WORDS = re.compile(r"\b(?:the|a|an|in|on|with|for|to|of|and|or|vs|versus|not|no)\b")
_SYMBOLS = re.compile(r"[{}()\[\];=<>*/\\|$&^%#@~]")
_LETTERS = re.compile(r"[A-Za-z]")


@dataclass(frozen=True, slots=True)
class Quoted:
    """One piece of material the message quotes or pastes: its kind and size, not its text."""

    kind: QuotedKind
    """code, log (errors, tracebacks, program output), command (a terminal line) or prose."""
    chars: int
    """Its length in characters."""
    form: QuotedForm = "quoted"
    """How it was marked: fenced, quoted, introduced or pasted."""

    def to_dict(self) -> dict[str, Any]:
        """`{"kind", "chars", "form"}`."""
        return {"kind": self.kind, "chars": self.chars, "form": self.form}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Quoted:
        """The inverse of to_dict."""
        kind = data.get("kind")
        form = data.get("form")
        return cls(
            kind if kind in ("code", "log", "command", "prose") else "prose",
            int(data.get("chars") or 0),
            form if form in ("fenced", "quoted", "introduced", "pasted") else "quoted",
        )


@dataclass(frozen=True, slots=True)
class Framing:
    """A message split into its request and what it quotes (see the module docstring)."""

    request: str
    """The request, with "…" where each quoted piece was (at most `REQUEST_SHOWN` chars
    on a route; the router routes the whole request)."""
    quoted: tuple[Quoted, ...]
    """The pieces split off, in order."""
    routed_on: RoutedOn = "request"
    """What the classifier read: the request, or the whole message (a request with no
    words of its own, or a backend that reads framing itself)."""
    command_line: bool = False
    """The message is itself a command line (`is_command_line`), quotes and all."""

    def to_dict(self) -> dict[str, Any]:
        """Plain data for logs, sessions and `--json` (never the quoted text)."""
        request = self.request
        if len(request) > REQUEST_SHOWN:
            request = request[: REQUEST_SHOWN - 1] + PLACEHOLDER
        data: dict[str, Any] = {
            "request": request,
            "quoted": [piece.to_dict() for piece in self.quoted],
            "routed_on": self.routed_on,
        }
        if self.command_line:
            data["command_line"] = True
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Framing:
        """The inverse of to_dict."""
        quoted = data.get("quoted") or ()
        routed_on: RoutedOn = "message" if data.get("routed_on") == "message" else "request"
        return cls(
            str(data.get("request") or ""),
            tuple(Quoted.from_dict(q) for q in quoted if isinstance(q, Mapping)),
            routed_on,
            data.get("command_line") is True,
        )

    def explain(self) -> str:
        """`routed on the request "translate this: …"; quoted: command (38 chars)`."""
        pieces = ", ".join(f"{q.kind} ({q.chars} chars)" for q in self.quoted)
        request = self.to_dict()["request"]
        if self.command_line:
            said = f"; quoted: {pieces}" if pieces else ""
            return f"the message is a command line{said}"
        if self.routed_on == "message":
            return f"routed on the whole message; quoted: {pieces}"
        return f'routed on the request "{request}"; quoted: {pieces}'


# --------------------------------------------------------------------------- kinds


def kind_of(text: str) -> QuotedKind:
    """What a quoted piece is, from its shape alone: log, command, code or prose."""
    sample = text[:KIND_SAMPLE].strip()
    if not sample:
        return "prose"
    if _LOG_WORDS.search(sample):
        return "log"
    lines = [line.strip() for line in sample.splitlines() if line.strip()]
    first = lines[0].removeprefix("$ ").removeprefix("# ")
    head = first.split(maxsplit=1)[0].lower() if first.split() else ""
    wordlike = head in _WORDLIKE_COMMANDS and not _SHELL_MARK.search(first)
    loop = _SHELL_COMPOUND.match(" ".join([first, *lines[1:]]))
    if (head in _COMMANDS and len(lines) <= 3 and not wordlike) or loop:
        return "command"
    letters = len(_LETTERS.findall(sample))
    symbols = len(_SYMBOLS.findall(sample))
    code_marks = len(_CODE_WORDS.findall(sample))
    if code_marks >= 2 or symbols > max(3, letters // 8):
        return "code"
    return "prose"


def is_command_line(text: str) -> bool:
    """Whether `text` is itself a line (or up to three) typed at a shell prompt.

    Every line starts with a known command (after an optional `$ ` prompt or `sudo`); a
    command that is also an English word ("find", "echo", "make") needs a shell mark
    beside it (a flag, a pipe, a redirect, a path, `&&`); a bare command is short and
    reads as no sentence ("git status", not "git merge vs rebase"). Whatever the line quotes
    is an argument and is not read; the words outside the quotes must not read as prose
    ("git push says rejected, what now?").
    """
    if len(text) > KIND_SAMPLE:
        return False
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines or len(lines) > COMMAND_LINE_MAX_LINES:
        return False
    return all(_is_one_command_line(line) for line in lines)


def _is_one_command_line(line: str) -> bool:
    bare = _SPANS.sub(" ARG ", line.removeprefix("$ ").removeprefix("sudo "))
    if _PROSE_WORDS.search(bare):
        return False
    parts = [part for part in _CHAINED.split(bare) if part.strip()]
    if not parts:
        return False
    marked = bool(_SHELL_MARK.search(f" {bare}"))
    for part in parts:
        words = part.split()
        if words[0] == "sudo" and len(words) > 1:
            words = words[1:]
        head = words[0].lower()
        if head not in _COMMANDS:
            return False
        if head in _WORDLIKE_COMMANDS and not marked:
            return False
    if marked:
        return True
    return len(bare.split()) <= _BARE_COMMAND_MAX_WORDS and not _SENTENCE_WORDS.search(bare)


# --------------------------------------------------------------------------- the split


def split_message(message: str) -> Framing | None:
    """The request and the quoted pieces of `message`; None when nothing is quoted and the
    message is no command line."""
    command_line = is_command_line(message)
    if command_line and not _may_quote(message):
        return Framing(message, (), "request", command_line=True)
    if len(message) < QUOTE_MIN_CHARS or not _may_quote(message):
        return None
    scanned, overflow = message[:SCAN_LIMIT], message[SCAN_LIMIT:]
    pieces: list[Quoted] = []
    request = _FENCE.sub(_taker(pieces, "fenced", 1), scanned)
    request = _introduced_lines(request, pieces)
    request = _pasted_lines(request, pieces)
    request = _QUOTE.sub(_taker(pieces, "quoted", QUOTE_MIN_CHARS), request)
    request = _introduced_inline(request, pieces)
    if overflow:
        pieces.append(Quoted(kind_of(overflow), len(overflow), "pasted"))
    if not pieces:
        return Framing(message, (), "request", command_line=True) if command_line else None
    request = " ".join(request.split())
    own_words = re.sub(re.escape(PLACEHOLDER), " ", request).split()
    routed_on: RoutedOn = "request" if own_words else "message"
    return Framing(request, tuple(pieces), routed_on, command_line)


def _may_quote(message: str) -> bool:
    """A cheap pre-check: any quote mark, colon or line break at all."""
    return any(mark in message for mark in ("'", '"', "`", "“", "‘", ":", "\n", "~~~"))


def _taker(
    pieces: list[Quoted], form: QuotedForm, min_chars: int
) -> Callable[[re.Match[str]], str]:
    """A `re.sub` callback that records each long enough match as a piece."""

    def take(match: re.Match[str]) -> str:
        groups = [g for g in match.groups() if g is not None]
        body = groups[-1] if groups else match.group(0)
        if form == "fenced":
            body = match.group(2)
        if len(body.strip()) < min_chars:
            return match.group(0) if form != "fenced" else f" {PLACEHOLDER} "
        pieces.append(Quoted(kind_of(body), len(body), form))
        return f" {PLACEHOLDER} "

    return take


def _is_introducer(head: str) -> bool:
    """A short head that announces material: "translate this into French", "proofread"."""
    text = head.strip().lower()
    if not text or len(text.split()) > _INTRO_MAX_WORDS:
        return False
    return bool(_INTRO_WORDS.search(text) or _EDIT_VERB.match(text))


def _introduced_lines(text: str, pieces: list[Quoted]) -> str:
    """ "summarise this log:\\n<lines>": the lines after an introducing first line."""
    first, newline, rest = text.partition("\n")
    if not newline or not first.rstrip().endswith(":") or not _is_introducer(first[:-1]):
        return text
    body = rest.replace(PLACEHOLDER, "").strip()
    if not body:
        return text
    pieces.append(Quoted(kind_of(rest), len(rest.strip()), "introduced"))
    return f"{first} {PLACEHOLDER}"


def _pasted_lines(text: str, pieces: list[Quoted]) -> str:
    """Runs of indented or log-shaped lines, when some typed line is left around them."""
    lines = text.split("\n")
    if len(lines) < 2:
        return text
    marks = [bool(line.strip()) and _looks_pasted(line) for line in lines]
    typed = [
        line
        for line, pasted in zip(lines, marks, strict=True)
        if not pasted and line.replace(PLACEHOLDER, "").strip()
    ]
    if not any(marks) or not typed:
        return text
    kept: list[str] = []
    run: list[str] = []
    for line, pasted in zip(lines, marks, strict=True):
        if pasted:
            run.append(line)
            continue
        if run:
            _close_run(run, pieces, kept)
        kept.append(line)
    if run:
        _close_run(run, pieces, kept)
    return "\n".join(kept)


def _close_run(run: list[str], pieces: list[Quoted], kept: list[str]) -> None:
    body = "\n".join(run)
    pieces.append(Quoted(kind_of(body), len(body.strip()), "pasted"))
    kept.append(PLACEHOLDER)
    run.clear()


def _looks_pasted(line: str) -> bool:
    return line.startswith(("    ", "\t")) or bool(_LOG_LINE.match(line))


def _introduced_inline(text: str, pieces: list[Quoted]) -> str:
    """ "proofread: the text" on one line: the rest after a short introducing head."""
    if "\n" in text.strip():
        return text
    match = _INLINE_INTRO.match(text.strip())
    if match is None or not _is_introducer(match.group("head")):
        return text
    body = match.group("body")
    # "…: '<a note>'. what commands do i run": the quote is taken; what follows it is typed
    if body.lstrip().startswith(PLACEHOLDER) or len(body.replace(PLACEHOLDER, "").strip()) < (
        QUOTE_MIN_CHARS
    ):
        return text
    pieces.append(Quoted(kind_of(body), len(body), "introduced"))
    return f"{match.group('head')}: {PLACEHOLDER}"

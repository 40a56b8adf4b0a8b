"""First messages that say what to do but not to what: "fix it", "make this shorter",
"is that right?", "compare them".

Mid-conversation these are follow-ups (`follow_up`) and stay with the turn they continue.
As the first message (nothing before it, nothing quoted or pasted) they point at nothing,
so no mode has anything to work on, and the embedding head reads them like the pack's
examples that say "tighten this up" (write at 0.98). The router sends such a message to
the fallback, whose answer can ask what "it" is, and says why in the route's reason.

`points_at_nothing` is lexical and narrow on purpose: every word must be a pointer (it,
this, those, the last one), a verb any mode could do (fix, improve, change, explain) or a
filler (please, can you, again, better, wrong), and at least one pointer must be there. A
word of the message's own ("debug this", "translate it", "git status", "poem about rain")
is something to route on, and the rule stays out.

`names_no_object` is the same for a bare request of at most `BARE_WORDS` words with no
pointer at all: "shorter", "try again", "explain more". A verb that belongs to a mode
("translate", "summarise", "debug") is left alone: alone, it announces the task, and the
text to work on can follow in that mode.
"""

from __future__ import annotations

import re


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


POINTERS = _words(
    "it its it's this that these those them they one ones above same thing things stuff "
    "last previous other first second"
)
"""Words that point at something said or shown before."""

ANY_MODE_VERBS = _words(
    "fix fixed improve change make do does did done redo undo use check help finish "
    "continue compare clean simplify shorten lengthen expand review update edit rewrite "
    "rephrase try retry repeat handle tweak adjust look go work works working run convert "
    "sort explain correct"
)
"""Verbs that every mode's work can take: they name no mode's subject."""

FILLERS = _words(
    "please pls can could would will you u i me my we just now again instead more less "
    "better worse shorter longer faster slower simpler smaller bigger cleaner right ok okay "
    "wrong good fine the a an up out with for on at to of in into but and so then what "
    "what's whats why how is are was were be doesn't dont don't isn't not no there here "
    "something some bit little way version once all"
)
"""Words that ask, soften or connect without saying what about."""

_KNOWN = POINTERS | ANY_MODE_VERBS | FILLERS

MOST_WORDS = 8
"""Longer messages carry a subject of their own even when every word is common."""

_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
_MATERIAL = re.compile(r"[0-9`\"<>{}\[\]=/\\|$#@]")
"""Digits, code, paths, quotes: something to work on is there."""


def _plain_words(message: str) -> list[str] | None:
    """The message's words, lower-cased, when it holds nothing to work on but words (None
    when it has digits, code, a path or quotes, or no word at all)."""
    text = message.lower().replace("\u2019", "'")
    if _MATERIAL.search(text):
        return None
    return _WORD.findall(text) or None


def points_at_nothing(message: str) -> str | None:
    """The pointer word of a message made only of pointers, verbs any mode could do and
    fillers (None when any other word is there, or no pointer, or it is long)."""
    words = _plain_words(message)
    if words is None or len(words) > MOST_WORDS:
        return None
    pointer = next((word for word in words if word in POINTERS), None)
    if pointer is None:
        return None
    return pointer if all(word in _KNOWN for word in words) else None


BARE_WORDS = 3
"""A request with no pointer names no object only when it is this short ("explain more")."""

_ACTIONS = (
    ANY_MODE_VERBS - _words("do does did done use look go work works working handle run sort")
) | _words(
    "more less better worse shorter longer faster slower simpler smaller bigger cleaner again"
)
"""What a bare request asks for: a verb any mode could do, or more, less, shorter, again. Not
the verbs that also make a statement or a phrase of their own ("we are done", "work out",
"look up") or name a command ("sort", "run"): those are left to the classifier."""


def names_no_object(message: str) -> str | None:
    """The first action word of a short message made only of verbs any mode could do and
    fillers, with no pointer and nothing else ("shorter", "try again"); None otherwise."""
    words = _plain_words(message)
    if words is None or len(words) > BARE_WORDS or not all(word in _KNOWN for word in words):
        return None
    if any(word in POINTERS for word in words):
        return None  # `points_at_nothing` names it
    return next((word for word in words if word in _ACTIONS), None)


def nothing_to_route_on(message: str) -> str | None:
    """Why a first message gives no mode anything to work on (the route's reason), or None
    when it names something of its own."""
    said: str | None = points_at_nothing(message)
    if said is not None:
        what = "points at something"
    elif names_no_object(message) is not None:
        said, what = " ".join(_plain_words(message) or ()), "says what to do but not to what"
    else:
        return None
    return f"“{said}” {what}, and nothing came before it: nothing to route on"

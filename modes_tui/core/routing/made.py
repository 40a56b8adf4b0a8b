"""What a request asks to be made decides over what it is about.

"write a go function that estimates pi by throwing random darts" asks for code about
probability; "draft an email to the caretaker about the lift" asks for prose about a
building. The encoder reads the whole sentence, and the words of its subject (pi, darts,
the lift) often outweigh the few that name what is wanted. A request that opens with a verb
of making and an object naming a kind of thing made (`_ARTIFACT`), followed by a clause
about that object ("write a go function" | "that estimates pi ..."), is therefore also read
by its head alone (`made_head`). Where the two readings disagree, or agree with the head
the surer, the head's counts as far as it is sure of its mode (`weigh_made`): nothing at
0.8, all at 0.95, the span in which a pronoun yields to a message's own words
(`follow_up.carried`). A sure head decides, and lifts a whole reading of its own mode that
the subject left unsure; an unsure one ("write a bash loop", code at 0.76) leaves the
decision to the whole message.
A message that only names the thing it wants ("tweet announcing our launch") asks for it as
if with "write" (`imperative.named_thing`). A request that states two quantities or more
and asks for one ("each pot is 15cm wide … how many pots fit?") asks for a problem worked
out whatever its subject (`worked_problem`): its head is a fixed text (`WORKED`). These two
heads are read off the message's shape, not asked for in words: they count at most 0.8
(`TENTATIVE_MOST`), and not against a whole request sure of another mode (0.8 or more).
Pure functions; `steps.QuotedStep.made` asks the classifier.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from modes_tui.core.routing.classifiers.head import NEAR_IDENTICAL
from modes_tui.core.routing.follow_up import PRONOUN_YIELDS, sureness
from modes_tui.core.routing.imperative import CODE_MADE, OPENER, TEXT_MADE, named_thing
from modes_tui.core.values.numbers import two_places

if TYPE_CHECKING:
    from modes_tui.core.values.route import Decision

_ASKING = (
    r"(?:(?:please|pls|hey|hi|hello|can you|could you|would you|will you|i need you to|"
    r"help me)\b[\s,:;.!-]*)*"
)
_MAKING = (
    r"(?:write|draft|compose|create|generate|make|build|code|implement|produce|prepare|"
    r"put together|sketch|come up with)"
)
_ARTIFACT = (
    rf"{CODE_MADE}|{TEXT_MADE}|"
    r"program|module|app|application|game|cli|bot|macro|interface|library|plugin|extension|"
    r"handler|middleware|simulation"
)
"""What a request may ask to be made: nouns whose kind the pack can tell from the head alone.
A container ("a list", "a table", "an example", "a one-liner", "a plan", "a proof") says
nothing of its kind by itself ("make a list" reads as a list comprehension), so a request for
one has no head and is read whole."""
_OBJECT = (
    rf"(?:a|an|the|some|one|two|three|four|five|\d+)\s+(?:[\w'+#./-]+\s+){{0,3}}?"
    rf"(?:{_ARTIFACT})s?"
)
_ABOUT = (
    r"that|which|who|to|for|about|on|of|in|with|from|where|when|so|using|explaining|"
    r"describing|announcing|telling|asking|listing|showing|comparing|covering|mentioning|"
    r"summari[sz]ing"
)
_HEAD = re.compile(
    rf"^{OPENER}{_ASKING}(?P<verb>{_MAKING})\s+(?:(?:me|us)\s+)?(?P<object>{_OBJECT})"
    rf"(?=\s+(?:{_ABOUT})\s+\S)"
)


_RECAST = re.compile(
    rf"^{OPENER}{_ASKING}(?:{_MAKING}|turn|put|rewrite|redo|convert|recast|format|wrap)\s+"
    r"(?:it|that|this|them|those|these)(?:\s+[a-z]+)?\s+(?:(?:as|into|in|to)\s+)?"
    rf"(?P<object>{_OBJECT})(?=\s+(?:{_ABOUT}|instead|please|too)\b|\s*[.!?]*$)"
)
"""The last turn's material made into a thing of a kind: "write it as a python script",
"turn that into a short email to my landlord", "make it a rust function instead"."""


_INTO_EXISTING = re.compile(rf"^{OPENER}{_ASKING}put\s+\S+(?:\s+[a-z]+)?\s+in(?:to)?\s+the\b")
""""put it in the summary too": into a thing that exists already, not made into one."""


WORKED = "work out how many from these numbers"
"""What a problem stated in numbers asks for, read in the pack's words."""
_QUANTITY = re.compile(
    r"(?<![\w.])(?!(?:19|20)\d\d\b)\d+(?:[.,/]\d+)?"
    r"(?:cm|mm|m|km|kg|g|l|ml|h|hrs?|min|s|k|%)?(?![\w.])"
)
"""A quantity: not a year, a version ("22.04", "3.12.1") or a number glued to a name ("m3")."""
_RATE = re.compile(
    r"\b(?:each|per|every|apiece|times|a (?:day|week|month|year|hour|minute|second|night|"
    r"piece|head|guest|person)|an hour)\b|%|/(?:h|hr|day|week|month|s|min)\b"
)
"""How quantities combine in a word problem: "each", "per", "a week", "at 4%"."""
_ASKS_A_QUANTITY = re.compile(
    r"\b(?:how (?:many|much|long|far|often|fast|big|heavy|high|deep|wide)|"
    r"what(?:'s| is| will be| would be) the (?:total|average|sum|difference|cost|price))\b"
)
TENTATIVE_MOST = 0.8
"""The most a head read off the message's shape (`named_thing`, `worked_problem`) counts for,
against all for an explicit request ("write a polite email")."""


def worked_problem(request: str) -> bool:
    """Whether `request` states at least two quantities, how they combine, and asks for one
    ("each pot is 15cm wide and i want 5cm between them. how many pots fit?"): a problem to
    work out whatever its subject (pots on a windowsill, not gardening). A fact with numbers
    in it ("how long is ubuntu 20.04 supported", "how many mg of caffeine in 2 shots") is
    not one."""
    text = request.lower()
    return (
        len(_QUANTITY.findall(text)) >= 2
        and _RATE.search(text) is not None
        and _ASKS_A_QUANTITY.search(text) is not None
    )


def made_head(request: str) -> str | None:
    """The head of `head_of`, without whether it is tentative."""
    found = head_of(request)
    return found[0] if found else None


def head_of(request: str) -> tuple[str, bool] | None:
    """The verb of making and its object when the object names a kind of thing made and a
    clause about it follows ("write a go function" of "write me a go function that estimates
    pi"), or the thing the last turn's material is to be made into ("write a python script"
    of "write it as a python script instead"), or what a message that only names a thing or
    states a problem in numbers asks for; else None. The flag says the head was read off the
    message's shape (`named_thing`, `worked_problem`): tentative, so `weigh_made` counts it
    less."""
    text = " ".join(request.lower().split())
    if found := _HEAD.match(text):
        return f"{found.group('verb')} {found.group('object')}", False
    if (found := _RECAST.match(text)) and not _INTO_EXISTING.match(text):
        return f"write {found.group('object')}", False
    if thing := named_thing(text):
        return f"write {thing}", True
    if worked_problem(text):
        return WORKED, True
    return None


def weigh_made(
    decision: Decision, head: Decision, text: str, *, tentative: bool = False
) -> Decision:
    """`decision` (on the whole request) with the reading of its head `head` (of `text`)
    weighed in where the two disagree, or where they agree and the head is surer ("write a
    polite email" at 0.99 of a request whose topic, a mortgage, pulls the whole to 0.62):
    the head's probabilities count as much as its top one (how sure it is of its mode), the
    whole request's for the rest; a `tentative` head at most `TENTATIVE_MOST`, and not at all
    against a whole request sure of another mode (0.8 or more). The in-scope chance
    is the larger of the two readings' (a request for something a mode makes is in scope
    whatever it is about)."""
    whole, own = dict(decision.probabilities or {}), dict(head.probabilities or {})
    if not whole or not own or decision.confidence is None or head.confidence is None:
        return decision
    if head.mode_name is None:
        return decision
    if head.mode_name == decision.mode_name and head.confidence <= decision.confidence:
        return decision  # they agree, and the head is no surer: nothing to add
    said = decision.evidence
    if said is not None and said.kind == "correction" and said.similarity >= NEAR_IDENTICAL:
        return decision  # the user said where this very message belongs
    if tentative and head.mode_name != decision.mode_name and decision.confidence >= PRONOUN_YIELDS:
        return decision  # a shape read in a request whose words are sure of another mode
    weight = sureness(max(own.values()), PRONOUN_YIELDS)
    if tentative:
        weight = min(weight, TENTATIVE_MOST)
    if weight <= 0:
        return decision
    pooled = {
        name: weight * own.get(name, 0.0) + (1.0 - weight) * whole.get(name, 0.0)
        for name in dict.fromkeys([*whole, *own])
    }
    mode = max(pooled, key=lambda name: pooled[name])
    gate = max(_gate(decision, whole), _gate(head, own))
    confidence = round(pooled[mode] * gate, 4)
    asks = f"asks for what '{text}' makes" if text != WORKED else "states a problem in numbers"
    note = (
        f"{asks} ({head.mode_name} {two_places(head.confidence)}); "
        f"the whole request read {decision.mode_name} {two_places(decision.confidence)}"
    )
    source = head if mode == head.mode_name else decision
    reason = f"{source.reason}; {note}" if source.reason else note
    return replace(
        decision,
        mode_name=mode,
        confidence=confidence,
        reason=reason,
        probabilities={name: round(p, 4) for name, p in pooled.items()},
        evidence=source.evidence,
    )


def _gate(decision: Decision, probabilities: dict[str, float]) -> float:
    """The decision's in-scope chance: its confidence over its top probability."""
    top = probabilities.get(decision.mode_name or "", 0.0)
    if decision.confidence is None or top <= 0:
        return 0.0
    return min(decision.confidence / top, 1.0)

"""Follow-ups: how much a message leans on the turn before it, read from the message alone.

"and in Go?", "make it shorter", "why?", "what about tuples?", "thanks": each means
nothing without the previous turn, so it belongs to the mode that answered that turn.
"write a 300-word essay about tea" carries everything it needs and may go anywhere.

`follow_up_score` reads cues a person would read: an opening that continues ("and",
"but", "what about", "same for"), a word that points back ("it", "that", "those",
"again", "instead", "too"), a request to change the last answer ("make it", "shorter",
"more detail"), a bare acknowledgement ("thanks", "ok"), a lone "why?"; and against
them, words that announce a new subject ("new question", "unrelated", "by the way").
Cues combine as independent chances (`1 - prod(1 - w)`); length damps them, because
a long message carries its own subject even when it says "it". The score is lexical on
purpose: it costs microseconds, works for every classifier backend, and its cues can be
quoted in the route panel.

Five readings keep the cues honest: a verb with an object of its own ("restart the nginx
service", "purge old docker images") is a request, not an elliptic fragment
(`core.routing.imperative`); a pronoun that is not the message's subject ("simulate it in
python") carries the last turn's subject but yields its mode to words sure of another
(`carried`); so does the pull of a few words that point nowhere, from a higher sureness
("squash last three commits" after a haiku, shell 0.99 alone: `FollowUp.short`); a statement
that asks nothing ("I'm on python 3.13") keeps its closeness to the last turn
(`FollowUp.statement`); and an opener that orders the turns ("ok now", "next", "then")
before a complete request does not make it lean back.

The router (`core.routing`) turns the score into a prior for the current mode:

    confidence'(current) = f + (1 - f) * confidence(current)

and leaves every other mode's confidence as the classifier gave it, so another mode
takes a follow-up only when it is surer than the conversation is, and the fallback
threshold is applied to confidence' (after the conversation, not before). With an embedding
backend, `f` also holds the message's closeness in meaning to the recent turns
(`core.routing.continuity`, combined by `continued`), so "the logs say OOMKilled" after a
container question stays without any cue word.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from modes_tui.core.routing.imperative import DISCOURSE as _DISCOURSE
from modes_tui.core.routing.imperative import named_thing, on_its_object, orders
from modes_tui.core.values.framing import PLACEHOLDER
from modes_tui.core.values.numbers import two_places

if TYPE_CHECKING:
    from modes_tui.core.routing.continuity import Continuity

_ACK = re.compile(
    r"^(?:(?:ok(?:ay)?|k|great|cool|nice|perfect|awesome|brilliant|excellent|good|"
    r"thanks?(?: you)?(?: so much| a lot)?|thx|ty|cheers|got it|makes sense|that works|"
    r"that helps|that helped|sounds good|fine|yes|yep|yeah|no|nope|sure|right|"
    r"exactly|i see|interesting|wow|amazing|lovely|much appreciated)[\s!.,:;)]*)+$"
)
_WORD = re.compile(r"[a-z0-9']+")

_CLAUSE = (
    r"(?! (?:(?:the|a|an|my|your|our|their|his|her|its|every|each|all|no|any|some|there|"
    r"both|neither|either)\b|\d))"
)
"""After "show that" or "check that": not a clause's subject. "show that the sum of the angles
is 180 degrees" states what to show; "show that again" points back."""

# (pattern, weight, cue name). Weights are chances that the cue alone makes a follow-up.
_OPENERS: tuple[tuple[re.Pattern[str], float, str], ...] = tuple(
    (re.compile(pattern), weight, name)
    for pattern, weight, name in (
        (r"^(?:and|but|or|also|plus|then)\b", 0.7, "opens with a continuation"),
        (r"^(?:what|how) about\b", 0.85, "'what about'"),
        (r"^(?:same|likewise|ditto)\b|\bthe same (?:for|in|with|but)\b", 0.8, "'the same'"),
        (
            r"^(?:why|how come|really|huh|wait)\b(?:\W+\w+){0,5}\W*$",
            0.6,
            "asks about the last answer",
        ),
        (r"^(?:now|next|ok(?:ay)?,? (?:now|and|but|so)|so)\b", 0.45, "carries on"),
        (r"^(?:can|could|would) you (?:also|now|then|just)\b", 0.6, "asks for more of it"),
        (r"^(?:can|could|would) you (?:add|drop|remove|skip|keep)\b", 0.45, "asks for a change"),
        (r"^what if\b", 0.55, "'what if'"),
        (
            rf"^(?:try|do|show) (?:it|this|again|another|one more)\b|^(?:try|do) that\b|"
            rf"^show that\b{_CLAUSE}",
            0.7,
            "asks again",
        ),
        (r"^(?:instead|otherwise|alternatively|actually)\b", 0.6, "revises the request"),
        (r"^(?:in|with|for|using|without|on) \w+(?: \w+)?\??$", 0.7, "an elliptical phrase"),
    )
)
_REFERS_BACK = "refers back"
_BACK: tuple[tuple[re.Pattern[str], float, str], ...] = tuple(
    (re.compile(pattern), weight, name)
    for pattern, weight, name in (
        (
            r"\b(?:it|its|it's|those|these|them|they|their|one|ones|he|she|him|her|his)\b",
            0.5,
            _REFERS_BACK,
        ),
        # "that" as a pronoun ("is that O(n)?", "explain that"), not as a relative
        # ("a method that checks"); "this" mostly points at pasted text, not back.
        (
            r"\b(?:do|explain|fix|change|try|use|run|make|turn|is|does|was|did|about|"
            r"with|like|to) that\b|\bthat(?= (?:is|was|does|did|do|will|would|works?|part|"
            rf"line|one|bit|off|on|again|too|in)\b|\s*[?.!]*$)|\bcheck that\b{_CLAUSE}",
            0.35,
            _REFERS_BACK,
        ),
        (
            r"\b(?:show|walk me through|break down|give) (?:me )?(?:the|your|how|an?)\b",
            0.4,
            "asks for more of the answer",
        ),
        (r"\b(?:again|instead|too|as well|also|either|anymore|still)\b", 0.45, "builds on it"),
        (
            r"\b(?:shorter|longer|simpler|clearer|faster|slower|smaller|bigger|more|less|fewer)\b",
            0.35,
            "asks for a change",
        ),
        # A verb that reworks the last answer, with no object of its own ("explain that",
        # "shorten it", "keep going"); "explain pointers" names its own subject.
        (
            r"\b(?:make|rewrite|rephrase|shorten|expand|simplify|tweak|change|fix|adjust|"
            r"redo|translate|convert|explain|elaborate|continue|go on|keep going)\b"
            r"(?= (?:it|that|this|them|those|these|again|more|less|further|a bit|the same|"
            r"part|line|one|shorter|longer|simpler|into|in|to|for|with)\b|\s*[?.!]*$)",
            0.25,
            "reworks something",
        ),
        (
            r"\b(?:above(?! \d)|earlier|your answer|you said|you wrote|the first one|"
            r"the second one|the last one|the other one)\b",
            0.6,
            "points at the last answer",
        ),
        (r"\b(?:example|examples|how so|else)\b", 0.3, "asks about it"),
        # "give me 3 more", "a few more, shorter": more of what the last answer gave
        (
            r"(?:^|\b(?:give me|gimme|make|write|need|want|show me|list|generate|suggest|try|"
            r"and|any|got|how about)\s+)(?:\d+|a few|a couple(?: of)?|some|two|three|four|five|"
            r"ten) more\b"
            r"(?=\s*(?:[,.!?;]|$|please|like (?:that|this|these|those|it|them)))",
            0.5,
            "asks for more of the same",
        ),
        # "add that i speak spanish", "mention that we close at 5": a clause to put into
        # the text being written, which only the last turn can be ("say that … in german"
        # asks for a translation)
        (
            r"^(?:(?:and|also|please|pls|can you|could you|now)\s+)*(?:add|mention|include|"
            r"state|point out|stress|emphasi[sz]e|clarify) that (?=(?:i|i'm|i've|we|we're|you|"
            r"he|she|they|it|it's|the|my|our|his|her|their|there|this|all|every|no)\b)",
            0.6,
            "adds to the text",
        ),
    )
)
_NEW_TOPIC = re.compile(
    r"\b(?:new (?:question|topic|task|thing)|different (?:question|topic|thing)|unrelated|"
    r"change of (?:subject|topic)|by the way|btw|switching (?:gears|topics)|"
    r"another (?:question|topic|thing)|something else|on another note|separate question)\b"
)
# A message that opens with a request of its own (a question word, an auxiliary, an
# imperative) can stand alone; a short fragment that opens with none ("only the last hour",
# "six dice", "recursive version") is elliptic: it continues the turn before it.
_REQUEST_OPENER = re.compile(
    r"^(?:how|what|what's|whats|why|when|where|who|whom|whose|which|is|are|am|was|were|can|"
    r"could|would|should|shall|do|does|did|will|won't|please|pls|write|make|give|show|tell|"
    r"find|list|explain|describe|create|draft|translate|summari[sz]e|fix|help|implement|"
    r"generate|compare|calculate|compute|convert|install|run|set|add|remove|delete|kill|"
    r"check|plan|estimate|recommend|suggest|solve|prove|define|i|i'm|im|i've|my|let's|lets|"
    r"hi|hello|hey|if|debug|refactor|review|proofread|rewrite|edit|build|start|stop|open|"
    r"create|update|upgrade|search|count|sort|merge|split|parse|read|send|reply|book)\b"
)
_SEQUENCING_OPENER = re.compile(
    r"^(?:(?:ok(?:ay)?|alright|right|so|then|now|next|after that)\b[\s,:;.!-]*)+$"
)
"""An opener that orders the turns ("ok now", "next", "then") without pointing back; "and",
"but", "also" add to the turn instead."""
_SEQUENCING = {"carries on", "opens with a continuation"}
_PRONOUN_SUBJECT = re.compile(
    r"^(?!do (?:it|that)\b)(?:(?:how|why|what|when|where|who|which)\W+){0,2}"
    r"(?:(?:is|are|was|were|does|do|did|can|could|will|would|should|has|have|had)\W+)?"
    r"(?:it|its|it's|they|they're|their|that|that's|those|these|he|she|his|her)\b"
)
# Words that ask for something wherever they stand; a message with none of them, no question
# mark and no request opener but a subject ("I", "my") only states something.
_ASKS = re.compile(
    r"\b(?:need|needs|want|wants|i'd like|help|please|pls|can(?!'t)|could|would|how|what|"
    r"why|whether)\b|\?"
)
_SUBJECT_OPENER = re.compile(
    r"^(?:i|i'm|im|i've|my|we|we're|our|he|she|his|her|they|their|it|it's|its|there)\b"
)
_PAST = re.compile(r"\b[a-z]{3,}ed\b")
_NOUN_SUBJECT = re.compile(r"^(?:the|this|these|those|a|an|your|our|their|one|some|all|each)\b")
# A statement with a finite verb of its own ("git rebase went wrong", "the build failed",
# "my laptop keeps crashing") says what happened: it stands alone, however short.
_FINITE_VERB = re.compile(
    r"\b(?:is|are|was|were|has|have|had|isn't|aren't|wasn't|weren't|doesn't|don't|didn't|"
    r"won't|can't|cannot|went|broke|got|gets|keeps|kept|says|said|shows|showed|failed|"
    r"crashed|died|hangs|hung|stopped|started|happened|changed|returned|threw|throws|"
    r"\w+n't)\b"
)
ELLIPTIC_WORDS = 7
"""Up to this many words, a message with no request of its own reads as elliptic."""
ELLIPTIC_WEIGHT = 0.45
SHORT_WORDS = 4
"""Up to this many words a message says too little to stand alone (the lone-word cue)..."""
TERSE_ORDER_WEIGHT = 0.3
"""...and an order with an object of its own that short leans this much ("drop the hashtags")."""
MEDIUM_WORDS = 7
"""Past this many words a message names some of its own subject: cues count 60%."""
LONG_WORDS = 14
"""Past this many words a message usually carries its own subject: cues count 40%."""


@dataclass(frozen=True, slots=True)
class FollowUp:
    """How much a message leans on the previous turn, and why."""

    score: float
    """0 (stands alone) .. 1 (means nothing without the previous turn)."""
    cues: tuple[str, ...] = ()
    """The cues that raised (or zeroed) the score, for the panel."""
    stands_alone: bool = False
    """No cue at all, and longer than an elliptic fragment: a request complete in itself,
    which closeness in meaning to the last turn does not pull back (`continued`)."""
    statement: bool = False
    """It asks nothing: no question, no request verb, no imperative ("the server is behind a
    corporate VPN"). Close in meaning to the turn before, it gives that turn's context."""
    pronoun: float = 0.0
    """The part of `score` that only a back-pointing pronoun gave when it is not the message's
    subject ("turn it into", "a story about it"): it carries the last turn's subject over, not
    its mode (`carried`)."""
    short: float = 0.0
    """The part of `score` that only its few words gave, when it has two words or more,
    nothing in it points back and it is no statement with a subject or a verb that tells what
    happened ("squash last three commits", not "budget is tight"): sure words pick
    (`carried`)."""

    def explain(self) -> str:
        """`0.82: 'what about', refers back` for the route's reason."""
        return f"{self.score:.2f}" + (f": {', '.join(self.cues)}" if self.cues else "")


def follow_up_score(message: str) -> FollowUp:
    """How much `message` reads as a follow-up of the previous turn (see the module doc)."""
    text = " ".join(message.lower().split())
    words = _WORD.findall(text)
    if not words:
        return FollowUp(0.0)
    if _NEW_TOPIC.search(text):
        return FollowUp(0.0, ("announces a new subject",), stands_alone=True)
    if _ACK.match(text):
        return FollowUp(1.0, ("acknowledges the last answer",))
    weights: list[float] = []
    cues: list[str] = []
    for pattern, weight, name in (*_OPENERS, *_BACK):
        if pattern.search(text):
            weights.append(weight)
            cues.append(name)
    # A pronoun that is a verb's object or follows a preposition ("simulate it in python", "a
    # story about it") carries the last turn's subject into a new request and yields to the
    # words' mode; as the subject ("it should skip archived folders", "is it too late") it is
    # the thing the last turn was about, and the message asks about it there.
    # what follows "ok now", "next", "then": the request itself, read as if it opened there
    rest = _DISCOURSE.sub("", text, count=1)
    on_it = on_its_object(rest)
    carried_over = _PRONOUN_SUBJECT.match(rest) is None
    pronouns = [
        w for w, cue in zip(weights, cues, strict=True) if carried_over and cue == _REFERS_BACK
    ]
    # "…" stands for material the message quotes (`core.values.framing`): "this" points at
    # it, and the message carries its own subject however few words its request has.
    material = PLACEHOLDER in message
    # a verb with an object of its own is a request however short ("restart the nginx
    # service"), though a terse one leans a little; its back-pointing words still count
    # above ("make it shorter")
    ordered = orders(rest) or named_thing(rest) is not None
    short_cues = [f"{len(words)} word{'s' if len(words) != 1 else ''}", "no request of its own"]
    if len(words) <= SHORT_WORDS and not material:
        # a terse order with an object ("drop the hashtags") may be about the last answer
        weights.append(TERSE_ORDER_WEIGHT if ordered else 0.4)
        cues.append(short_cues[0])
    if (
        len(words) <= ELLIPTIC_WORDS
        and not material
        and not _REQUEST_OPENER.match(rest)
        and not ordered
        and not _FINITE_VERB.search(text)
    ):
        weights.append(ELLIPTIC_WEIGHT)
        cues.append("no request of its own")
        if on_it:
            pronouns.append(ELLIPTIC_WEIGHT)  # its object is the pronoun: the same pull
    remaining = 1.0
    for weight in weights:
        remaining *= 1.0 - weight
    without = remaining  # the same product without the pronouns' factors
    for weight in pronouns:
        without /= 1.0 - weight
    damping = 1.0
    if material or len(words) > LONG_WORDS:
        damping = 0.4
    elif len(words) > MEDIUM_WORDS:
        damping = 0.6
    score = (1.0 - remaining) * damping
    pronoun = score - (1.0 - without) * damping
    # says something has a subject of its own or a verb that tells what happened
    says = any(p.search(rest) for p in (_SUBJECT_OPENER, _NOUN_SUBJECT, _FINITE_VERB, _PAST))
    statement = (
        says
        and not material
        and not _ASKS.search(text)
        and not ordered
        and not on_it
        and (_SUBJECT_OPENER.match(rest) is not None or not _REQUEST_OPENER.match(rest))
    )
    # "ok now write an email to my team about it": the opener orders the turns, and what
    # follows is a request complete in itself
    sequenced = (
        _SEQUENCING_OPENER.match(text[: len(text) - len(rest)]) is not None
        and set(cues) <= _SEQUENCING
        and len(_WORD.findall(rest)) > ELLIPTIC_WORDS
    )
    alone = len(words) > ELLIPTIC_WORDS and not statement and (not weights or sequenced)
    # a statement with a subject or a verb that tells what happened keeps its closeness
    # (below; "underrated" alone makes no statement of "name underrated switch games"), and
    # a pronoun has its own yield
    said = statement and any(p.search(rest) for p in (_SUBJECT_OPENER, _NOUN_SUBJECT, _FINITE_VERB))
    only_short = cues and set(cues) <= set(short_cues) and not pronouns and not said
    short = score if len(words) > 1 and only_short else 0.0
    return FollowUp(
        round(score, 4),
        tuple(dict.fromkeys(cues)),
        alone,
        statement,
        round(pronoun, 4),
        round(short, 4),
    )


# --------------------------------------------------------------------------- weighing

FOLLOW_UP_SHOWN = 0.5
"""From this follow-up score on, a route that stayed says so in its reason..."""
FOLLOW_UP_LIFT = 0.05
"""... when the conversation raised its confidence by at least this much."""
UNSURE_ELSEWHERE = 0.5
"""Up to this confidence in another mode, the message alone does not pull away from the turn
it is close to in meaning..."""
SURE_ELSEWHERE = 0.95
"""... and from this one on, it pulls away fully: closeness in meaning no longer counts."""


@dataclass(frozen=True, slots=True)
class Weighed:
    """A classifier's decision as plain values, before or after the conversation."""

    mode: str
    """The chosen mode."""
    confidence: float
    """Its confidence, 0..1."""
    probabilities: Mapping[str, float] | None = None
    """A probability per mode, when known."""
    reason: str | None = None
    """Why, for the panel."""
    follow_up: float = 0.0
    """The message's follow-up score."""


def weigh(
    decision: Weighed, message: str, current: str, continuity: Continuity | None = None
) -> Weighed | None:
    """The decision with `current` (the mode of the previous turn) weighed in, or None when
    the classifier's own decision stands as it is (see the module docstring); `continuity`
    (the message's closeness to the recent turns, `core.routing.continuity`) adds to the shape."""
    follow = follow_up_score(message)
    confidence = _confidences(decision)
    f = continued(follow, continuity, confidence, current)
    boosted = round(min(1.0, f + (1.0 - f) * confidence.get(current, 0.0)), 4)
    top = decision.mode
    # The message alone counts as much as it stands alone: another mode takes a follow-up
    # only when its own confidence, so discounted, still beats the conversation's.
    if top != current and (1.0 - f) * confidence.get(top, 0.0) >= boosted:
        return None
    probabilities = None
    if decision.probabilities is not None:
        probabilities = {
            name: (1.0 - f) * p + (f if name == current else 0.0)
            for name, p in decision.probabilities.items()
        }
        probabilities.setdefault(current, f)
    reason = decision.reason
    # Say so when the conversation changed the mode, or lifted its confidence noticeably.
    lifted = f >= FOLLOW_UP_SHOWN and boosted - decision.confidence >= FOLLOW_UP_LIFT
    if top != current or lifted:
        reason = _follow_reason(current, follow, decision, continuity)
    return replace(
        decision,
        mode=current,
        confidence=boosted,
        probabilities=probabilities,
        reason=reason,
        follow_up=f,
    )


def leaning(
    decision: Weighed, message: str, current: str, continuity: Continuity | None = None
) -> float:
    """How much the message leans on the turn before it, shape and closeness together (the
    `f` that `weigh` uses), also for a message that moved away."""
    return continued(follow_up_score(message), continuity, _confidences(decision), current)


def _confidences(decision: Weighed) -> dict[str, float]:
    """The confidence a route to each mode would have: its probability times the share of
    the top probability that the decision's confidence kept (the in-scope chance)."""
    probabilities = decision.probabilities or {}
    top = probabilities.get(decision.mode, 0.0)
    if top <= 0:
        return {decision.mode: decision.confidence}
    gate = decision.confidence / top
    return {name: p * gate for name, p in probabilities.items()}


PRONOUN_YIELDS = 0.8
"""From this confidence of the message's own words in a mode, a pronoun's pull back to the
last turn's mode weakens; from `SURE_ELSEWHERE` on it is gone (`carried`)."""
SHORT_YIELDS = 0.9
"""The same for the pull of few words alone (`FollowUp.short`): from 0.9, gone from 0.95."""


def sureness(confidence: float, unsure: float = UNSURE_ELSEWHERE) -> float:
    """How surely a message's own words send it to a mode at `confidence`: 0 up to `unsure`,
    1 from `SURE_ELSEWHERE` on."""
    sure = (confidence - unsure) / (SURE_ELSEWHERE - unsure)
    return min(max(sure, 0.0), 1.0)


def carried(follow: FollowUp, confidence: float) -> float:
    """The follow-up score of a message whose own words pick a mode at `confidence`: a
    pronoun carries the last turn's subject over, but where the words are sure of a mode
    they pick it ("write it as a python script instead" after a sum), so the pronoun's part
    of the score counts only as far as they are unsure; so does the pull of a few words that
    point nowhere ("squash last three commits" after a haiku), from a higher sureness."""
    pronoun = follow.pronoun * sureness(confidence, PRONOUN_YIELDS)
    return max(follow.score - pronoun - follow.short * sureness(confidence, SHORT_YIELDS), 0.0)


def continued(
    follow: FollowUp, continuity: Continuity | None, confidence: Mapping[str, float], current: str
) -> float:
    """The chance that the message continues the turn: its shape's, and its closeness's as
    far as the message does not stand alone, combined as independent chances.

    Standing alone: a complete request (`FollowUp.stands_alone`), or a message its own words
    send surely elsewhere: `1 - shape` times how far the surest other mode's confidence is
    from `UNSURE_ELSEWHERE` (counts nothing) to `SURE_ELSEWHERE` (counts fully).
    """
    elsewhere = max((c for name, c in confidence.items() if name != current), default=0.0)
    sure = sureness(elsewhere)
    shape = carried(follow, elsewhere)
    if continuity is None or continuity.chance <= 0 or follow.stands_alone:
        return round(shape, 4)
    # a statement asks nothing of another mode: its words' sureness does not cancel closeness
    close = continuity.chance * (1.0 - (1.0 - shape) * (0.0 if follow.statement else sure))
    return round(1.0 - (1.0 - shape) * (1.0 - close), 4)


def _follow_reason(
    current: str, follow: FollowUp, alone: Weighed, continuity: Continuity | None
) -> str:
    said = f"alone: {alone.mode} {two_places(alone.confidence)}"
    if alone.mode == current and alone.reason:
        said = alone.reason
    if continuity is None or continuity.chance <= 0:
        return f"Follow-up of {current} ({follow.explain()}); {said}"
    shape = f"; shape {follow.explain()}" if follow.score > 0 or follow.cues else ""
    return f"Follow-up of {current}: {continuity.explain()}{shape}; {said}"

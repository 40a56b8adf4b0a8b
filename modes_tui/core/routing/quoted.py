"""Weak evidence beside a request's decision: what a message quotes counts by its kind.

The router routes a message's request (`core.values.framing`). When the request is decisive,
each quoted kind (code, log, command, prose) counts a little, through what the pack's own
classifier says of that kind's description; when the request says little on its own, the
whole message (or the request's own kind, when the request is itself a command) is pooled with
it, and so it is when the request only asks about its material ("what does … do exactly?").
A request that opens with a verb that only ever works on text ("summarise", "proofread",
"paraphrase": `QuotedEvidence.text_verb`) is pooled with that verb's own reading the same way,
so "summarise this stack trace for a bug report: …" is a summary whatever "stack trace" says.
A message that is itself a command line (`Framing.command_line`) is strong evidence: the
command kind's reading, sharpened, counts `WEIGHT_COMMAND_LINE` whatever the request's words
say. `core.routing.steps.QuotedStep` asks the classifier; this module does the arithmetic.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from modes_tui.core.values.framing import PLACEHOLDER, Framing, QuotedKind, kind_of

KIND_TEXTS: Mapping[QuotedKind, str] = {
    "code": "a piece of source code from a program",
    "log": "an error message and stack trace printed by a program",
    "command": "a command typed in a terminal",
    "prose": "a sentence of plain everyday text",
}
"""What the classifier is asked about each kind (once per pack): its answer is the kind's
evidence, so the evidence follows the pack's own modes."""
DECISIVE = 0.75
"""A request classified at this confidence or more decides; the kinds count `WEIGHT_KINDS`."""
WEIGHT_KINDS = 0.1
"""The kinds' weight beside a decisive request."""
REQUEST_LEAN = 0.5
"""Below `DECISIVE` the request says too little on its own ("explain: …", "what does …
do?"): the whole message's decision is pooled with it, each weighted by its confidence,
the request's times this."""
WEIGHT_COMMAND_LINE = 0.8
"""The command kind's weight when the message is itself a command line (`echo "…" >>
notes.txt`): its words say little (an argument may quote a request for another mode),
its shape says the terminal."""
IN_SCOPE_AS_COMMAND = 0.5
"""A command line takes the command kind's in-scope chance when it is at least this: the
pack has a mode for commands (the default pack's is 1.00, the support pack's 0.11)."""
SHARPEN_COMMAND_LINE = 4.0
"""The command kind's reading is a description's, soft by nature ("a command typed in a
terminal" is shell 0.74 on the default pack); for a command line it is raised to this power
and renormalised, so the mode it leans to is the one it means."""


ABOUT_MAX_WORDS = 8
"""A request that asks about its material ("what does … do?", "explain this: …") with at
most this many words of its own says what to do with the material, not which mode: the
whole message decides with it, as with a request below `DECISIVE`."""
_ASKS_ABOUT = re.compile(
    r"^(?:please\s+)?(?:what\s+(?:does|do|is|are)|what's|explain|why\s+(?:does|do|is)|"
    r"how\s+does|what\s+happens)\b"
)


_TEXT_VERB = re.compile(
    r"^(?:please\s+|can you\s+|could you\s+)?"
    r"(?P<verb>summari[sz]e|proofread|paraphrase|rephrase|reword|tl;?dr)\b"
)
"""Verbs that only ever ask for work on text: their reading says what the request wants done
whatever the material is ("summarise this stack trace: …" is a summary)."""
_TONE_VERB = re.compile(
    r"^(?:please\s+|can you\s+|could you\s+)?"
    r"(?:(?P<verb>soften|tone down)\b|make\s+(?:this|it|that|these|them)(?:\s+[\w-]+){0,3}?"
    r"\s+sound\b)"
)
"""Verbs that rework a text's tone when the material is prose ("make this sound friendlier for
the group chat: '…'", read as "rephrase"); on code or a command they mean something else
("make this sound play on a loop: `…`", "soften this shadow: `box-shadow: …`")."""


class QuotedEvidence:
    """The quoted pieces' kinds as weak evidence beside the request's own decision."""

    def __init__(self, framing: Framing) -> None:
        self.framing = framing

    def kinds(self) -> list[QuotedKind]:
        """The kinds quoted, each once, largest share first."""
        sizes: dict[QuotedKind, int] = {}
        for piece in self.framing.quoted:
            sizes[piece.kind] = sizes.get(piece.kind, 0) + max(piece.chars, 1)
        return sorted(sizes, key=lambda kind: -sizes[kind])

    def own_kind(self) -> QuotedKind:
        """The kind of the request itself ("echo … >> notes.txt" is a command)."""
        return kind_of(self.framing.request.replace(PLACEHOLDER, " "))

    def asks_about(self) -> bool:
        """Whether the request only asks about its material ("what does … do exactly?")."""
        request = self.framing.request.strip().lower()
        words = request.replace(PLACEHOLDER, " ").split()
        return len(words) <= ABOUT_MAX_WORDS and bool(_ASKS_ABOUT.match(request))

    def text_verb(self) -> str | None:
        """The request's opening verb when it only ever asks for work on text."""
        request = self.framing.request.strip().lower()
        if found := _TEXT_VERB.match(request):
            return found.group("verb")
        prose = all(piece.kind == "prose" for piece in self.framing.quoted)
        if prose and self.framing.quoted and (found := _TONE_VERB.match(request)):
            return found.group("verb") or "rephrase"
        return None

    def text_of(self, kind: QuotedKind) -> str:
        """What the classifier is asked about `kind`."""
        return KIND_TEXTS[kind]

    def weigh(
        self,
        mode: str,
        confidence: float,
        probabilities: Mapping[str, float] | None,
        evidence: Sequence[Mapping[str, float]],
        *,
        whole: bool = False,
        own: QuotedKind | None = None,
        command_line: bool = False,
        kind_gate: float = 0.0,
        verb: str | None = None,
    ) -> tuple[str, float, dict[str, float], str] | None:
        """(mode, confidence, probabilities, note) with the evidence mixed in, or None when
        there is nothing to mix. `evidence` is one distribution per kind (`kinds()` order),
        or with `whole` the classifier's distribution for the whole message, or with
        `command_line` the command kind's.

        The confidence keeps the request's in-scope chance (its confidence over its top
        probability), except that a command line is in scope when the pack takes commands:
        its in-scope chance is at least `kind_gate`, the command kind's. "df -h" is near no
        example of the default pack (in scope 0.76, so it fell back at 0.68 although shell
        had 0.90), yet its shape says terminal as surely as "git status"; on a pack with no
        mode for commands the kind's own chance is below `IN_SCOPE_AS_COMMAND` and changes
        nothing."""
        evidence = [e for e in evidence if e]
        if not probabilities or not evidence:
            return None
        shares = [1.0] if whole or command_line else self._shares()
        mixed_evidence: dict[str, float] = {}
        for share, probs in zip(shares, evidence, strict=False):
            for name, p in probs.items():
                mixed_evidence[name] = mixed_evidence.get(name, 0.0) + share * p
        w = WEIGHT_KINDS
        if command_line:
            mixed_evidence = _sharpened(mixed_evidence, SHARPEN_COMMAND_LINE)
            w = WEIGHT_COMMAND_LINE
        if whole:  # each opinion counts as sure as it is; the request by half again
            sure = max(mixed_evidence.values(), default=0.0)
            w = sure / (sure + REQUEST_LEAN * confidence) if sure > 0 else 0.0
        names = set(probabilities) | set(mixed_evidence)
        if whole:  # two opinions of the same message: pooled geometrically, so a mode
            # that either one rules out stays out
            floor = 1e-4
            pooled = {
                n: max(probabilities.get(n, 0.0), floor) ** (1 - w)
                * max(mixed_evidence.get(n, 0.0), floor) ** w
                for n in names
            }
            total = sum(pooled.values())
            mixed = {n: p / total for n, p in pooled.items()}
        else:
            mixed = {
                n: (1 - w) * probabilities.get(n, 0.0) + w * mixed_evidence.get(n, 0.0)
                for n in names
            }
        top = max(sorted(mixed), key=lambda n: mixed[n])
        gate = confidence / probabilities[mode] if probabilities.get(mode) else 1.0
        raised = command_line and kind_gate >= IN_SCOPE_AS_COMMAND and kind_gate > gate + 0.01
        if raised:
            gate = kind_gate
        said = "the whole message" if whole else f"quoted {', '.join(self.kinds())}"
        if own is not None:
            said = f"the request reads as {own}"
        if verb is not None:
            said = f"its verb “{verb}”"
        note = f"routed on the request; {said} counted at {w:.2f}"
        if command_line:
            note = f"the message is a command line; command counted at {w:.2f}"
            if raised:
                note += f", in scope as a command ({gate:.2f})"
        return top, round(min(1.0, mixed[top] * gate), 4), _rounded(mixed), note

    def _shares(self) -> list[float]:
        sizes: dict[QuotedKind, int] = {}
        for piece in self.framing.quoted:
            sizes[piece.kind] = sizes.get(piece.kind, 0) + max(piece.chars, 1)
        total = sum(sizes.values()) or 1
        return [sizes[kind] / total for kind in self.kinds()]


def _sharpened(probabilities: Mapping[str, float], power: float) -> dict[str, float]:
    raised = {name: max(p, 0.0) ** power for name, p in probabilities.items()}
    total = sum(raised.values())
    return {name: p / total for name, p in raised.items()} if total > 0 else dict(probabilities)


def _rounded(probabilities: Mapping[str, float]) -> dict[str, float]:
    return {name: round(p, 4) for name, p in probabilities.items()}

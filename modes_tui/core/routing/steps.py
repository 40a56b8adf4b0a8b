"""The router's steps after the classifier answered: the quoted material's kinds as weak
evidence (`core.values.framing`) and the conversation (`core.routing.follow_up`, with the
message's closeness in meaning to the recent turns from `core.routing.continuity`).

Both take the classifier's `Decision` and give back one (built with `dataclasses.replace`,
so this module needs the type only for checking); the router applies the outcome table to
what they leave.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from modes_tui.core.routing.follow_up import Weighed, leaning, weigh
from modes_tui.core.routing.made import head_of, weigh_made
from modes_tui.core.routing.quoted import DECISIVE, KIND_TEXTS, QuotedEvidence
from modes_tui.core.values.framing import Framing, QuotedKind
from modes_tui.core.values.numbers import two_places

if TYPE_CHECKING:
    from modes_tui.core.packs.profiles import Profile
    from modes_tui.core.routing.continuity import Continuity
    from modes_tui.core.routing.ports import Classifier
    from modes_tui.core.values.entry import HistoryEntry
    from modes_tui.core.values.route import Decision


class QuotedStep:
    """Weak evidence beside a request's decision: a decisive request keeps it, the quoted
    kinds only nudging (each kind's description classified once per classifier and pack);
    a request that says little alone ("explain: …") is pooled with the whole message."""

    def __init__(self, inputs: Mapping[str, Any], validate: Callable[[object], Decision]) -> None:
        self.inputs = inputs
        self.validate = validate
        self._readings: dict[tuple[int, str, tuple[str, ...]], tuple[dict[str, float], float]] = {}

    async def weigh(
        self,
        decision: Decision,
        framing: Framing,
        chosen: Classifier,
        modes: tuple[Profile, ...],
        seen: tuple[str, list[HistoryEntry]],
    ) -> Decision:
        """`decision` (on the request) with the evidence weighed in."""
        evidence = QuotedEvidence(framing)
        if framing.command_line:  # the message is a terminal line, whatever it quotes
            kind = await self._kind(chosen, "command", modes)
            return weigh_quoted(
                decision, evidence, [kind], command_line=True, kind_gate=self._gate(chosen, modes)
            )
        verb = evidence.text_verb()
        if verb is not None:  # "summarise this stack trace: …": the verb says what is wanted
            read = await self._verb(chosen, verb, modes)
            return weigh_quoted(decision, evidence, [read], whole=True, verb=verb)
        weak = decision.confidence is not None and decision.confidence < DECISIVE
        if weak or evidence.asks_about():
            # The request itself a command or code ("echo … >> notes.txt"): its own kind
            # says more than its words; otherwise the whole message does.
            own = evidence.own_kind()
            if own != "prose":
                kind = await self._kind(chosen, own, modes)
                return weigh_quoted(decision, evidence, [kind], whole=True, own=own)
            whole = await self._decide(chosen, *seen, modes)
            return weigh_quoted(
                decision,
                evidence,
                [dict(whole.probabilities or {})],
                whole=True,
                whole_reason=(whole.mode_name, whole.reason),
            )
        kinds = [await self._kind(chosen, kind, modes) for kind in evidence.kinds()]
        return weigh_quoted(decision, evidence, kinds)

    async def made(
        self,
        decision: Decision,
        request: str,
        chosen: Classifier,
        modes: tuple[Profile, ...],
        *,
        framed: bool,
    ) -> Decision:
        """`decision` (on `request`) with the reading of what the request asks to be made
        weighed in (`core.routing.made`), for the backends that route the request (`framed`);
        a model reads the whole request itself."""
        found = head_of(request) if framed else None
        if found is None or decision.mode_name is None:
            return decision
        head, tentative = found
        read = await self._decide(chosen, head, [], modes)
        return weigh_made(decision, read, head, tentative=tentative)

    def texts_for(self, framing: Framing, chosen: Classifier) -> list[str]:
        """The fixed texts `weigh` may classify for `framing` (a kind's description, "<verb>
        this text") that `chosen` has not read yet, for `Router.prepare` to encode ahead."""
        evidence = QuotedEvidence(framing)
        verb = evidence.text_verb()
        if framing.command_line or verb is not None:
            texts = [KIND_TEXTS["command"] if framing.command_line else f"{verb} this text"]
        else:
            own = evidence.own_kind()
            kinds = [*evidence.kinds(), *([own] if own != "prose" else [])]
            texts = [KIND_TEXTS[kind] for kind in dict.fromkeys(kinds)]
        # a copy first (taken whole, under the GIL): a route may add a reading meanwhile
        read = {text for (who, text, _) in list(self._readings) if who == id(chosen)}
        return [text for text in texts if text not in read]

    async def _kind(
        self, chosen: Classifier, kind: QuotedKind, modes: tuple[Profile, ...]
    ) -> Mapping[str, float]:
        return (await self._reading(chosen, KIND_TEXTS[kind], modes))[0]

    async def _verb(
        self, chosen: Classifier, verb: str, modes: tuple[Profile, ...]
    ) -> Mapping[str, float]:
        return (await self._reading(chosen, f"{verb} this text", modes))[0]

    async def _reading(
        self, chosen: Classifier, text: str, modes: tuple[Profile, ...]
    ) -> tuple[dict[str, float], float]:
        """What the classifier says of a fixed `text` (a kind's description, "<verb> this
        text"): its probabilities and in-scope chance, asked once per classifier and pack."""
        key = (id(chosen), text, tuple(p.name for p in modes))
        if key not in self._readings:
            read = await self._decide(chosen, text, [], modes)
            probabilities = dict(read.probabilities or {})
            top = probabilities.get(read.mode_name or "", 0.0)
            gate = read.confidence / top if read.confidence is not None and top > 0 else 0.0
            self._readings[key] = (probabilities, min(gate, 1.0))
        return self._readings[key]

    def _gate(self, chosen: Classifier, modes: tuple[Profile, ...]) -> float:
        """The pack's in-scope chance for the command kind (read by `_kind` before)."""
        return self._readings[(id(chosen), KIND_TEXTS["command"], tuple(p.name for p in modes))][1]

    async def _decide(
        self,
        chosen: Classifier,
        text: str,
        history: list[HistoryEntry],
        modes: tuple[Profile, ...],
    ) -> Decision:
        result = chosen.classify(text, history, modes, "", self.inputs)
        if inspect.isawaitable(result):
            result = await result
        return self.validate(result)


def weigh_quoted(
    decision: Decision,
    evidence: QuotedEvidence,
    kinds: Sequence[Mapping[str, float]],
    *,
    whole: bool = False,
    own: QuotedKind | None = None,
    command_line: bool = False,
    kind_gate: float = 0.0,
    whole_reason: tuple[str | None, str | None] = (None, None),
    verb: str | None = None,
) -> Decision:
    """The request's decision with `kinds` (the classifier's probabilities for each quoted
    kind's description) mixed in at the evidence's weight. `kind_gate`, for a command
    line, is the pack's in-scope chance for the command kind (see `QuotedEvidence.weigh`).
    `whole_reason` is the whole message's (mode, reason), when it was classified: if the
    weighing moves to that mode, its reason is the evidence; the request's nearest example
    is never shown as the reason for another mode."""
    if decision.mode_name is None or decision.confidence is None:
        return decision
    weighed = evidence.weigh(
        decision.mode_name,
        decision.confidence,
        decision.probabilities,
        kinds,
        whole=whole,
        own=own,
        command_line=command_line,
        kind_gate=kind_gate,
        verb=verb,
    )
    if weighed is None:
        return decision
    mode, confidence, probabilities, note = weighed
    reason = f"{decision.reason}; {note}" if decision.reason else note
    if mode != decision.mode_name:  # the request's nearest example was evidence for another
        moved_by = whole_reason[1] if whole_reason[0] == mode else None  # mode
        reason = f"{moved_by}; {note}" if moved_by else note
    return replace(
        decision,
        mode_name=mode,
        confidence=confidence,
        reason=reason,
        probabilities=probabilities,
    )


def in_conversation(
    decision: Decision,
    message: str,
    current: str | None,
    names: set[str],
    continuity: Continuity | None = None,
) -> tuple[Decision, float | None, Decision | None]:
    """(the decision with the previous turn's mode weighed in, the follow-up score, the
    classifier's own decision when the mode changed); see `core.routing.follow_up.weigh`.
    `continuity` is the message's closeness to the recent turns of `current`, when measured.

    Unchanged, with no score, when no available mode answered the previous turn, or the
    classifier chose no mode or scored no confidence (nothing to weigh the conversation against).
    A request that moves to another mode says how unlike the last turn it is, when measured.
    """
    if current not in names or decision.mode_name is None or decision.confidence is None:
        return decision, None, None
    asked = Weighed(
        decision.mode_name, decision.confidence, decision.probabilities, decision.reason
    )
    weighed = weigh(asked, message, current, continuity)
    if weighed is None:
        score = leaning(asked, message, current, continuity)
        if continuity is not None and decision.mode_name != current:
            note = f"a new request ({continuity.compared()})"
            reason = f"{decision.reason}; {note}" if decision.reason else note
            decision = replace(decision, reason=reason)
        return decision, score, None
    kept = replace(
        decision,
        mode_name=weighed.mode,
        confidence=weighed.confidence,
        reason=weighed.reason,
        probabilities=weighed.probabilities,
    )
    return kept, weighed.follow_up, decision if weighed.mode != decision.mode_name else None


def outweighed(alone: Decision, pulled: Decision) -> str:
    """The reason of a message's own route when the conversation's pull back to the last
    turn's mode (`pulled`) fell below the fallback threshold (`router.routed_alone`)."""
    pull = "" if pulled.confidence is None else f" ({two_places(pulled.confidence)})"
    note = f"the follow-up of {pulled.mode_name}{pull} fell below the threshold"
    return f"{alone.reason}; {note}" if alone.reason else note

"""The router's steps after the classifier answered: the quoted material's kinds as weak
evidence (`core.routing.framing`) and the conversation (`core.routing.follow_up`).

Both take the classifier's `Decision` and give back one (built with `dataclasses.replace`,
so this module needs the type only for checking); the router applies the outcome table to
what they leave.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from modes_tui.core.routing.follow_up import Weighed, follow_up_score, weigh

if TYPE_CHECKING:
    from modes_tui.core.routing.framing import QuotedEvidence
    from modes_tui.core.routing.router import Decision


def weigh_quoted(
    decision: Decision,
    evidence: QuotedEvidence,
    kinds: Sequence[Mapping[str, float]],
    *,
    whole: bool = False,
) -> Decision:
    """The request's decision with `kinds` (the classifier's probabilities for each quoted
    kind's description) mixed in at the evidence's weight."""
    if decision.mode_name is None or decision.confidence is None:
        return decision
    weighed = evidence.weigh(
        decision.mode_name, decision.confidence, decision.probabilities, kinds, whole=whole
    )
    if weighed is None:
        return decision
    mode, confidence, probabilities, note = weighed
    reason = f"{decision.reason}; {note}" if decision.reason else note
    return replace(
        decision,
        mode_name=mode,
        confidence=confidence,
        reason=reason,
        probabilities=probabilities,
    )


def in_conversation(
    decision: Decision, message: str, current: str | None, names: set[str]
) -> tuple[Decision, float | None, Decision | None]:
    """(the decision with the previous turn's mode weighed in, the follow-up score, the
    classifier's own decision when the mode changed); see `core.routing.follow_up.weigh`.

    Unchanged, with no score, when no available mode answered the previous turn, or the
    classifier chose no mode or scored no confidence (nothing to weigh the conversation against).
    """
    if current not in names or decision.mode_name is None or decision.confidence is None:
        return decision, None, None
    weighed = weigh(
        Weighed(decision.mode_name, decision.confidence, decision.probabilities, decision.reason),
        message,
        current,
    )
    if weighed is None:
        return decision, follow_up_score(message).score, None
    kept = replace(
        decision,
        mode_name=weighed.mode,
        confidence=weighed.confidence,
        reason=weighed.reason,
        probabilities=weighed.probabilities,
    )
    return kept, weighed.follow_up, decision if weighed.mode != decision.mode_name else None

"""The router: which mode takes this turn, who decided, how sure, and why.

`Router.route` reads the conversation, filters and truncates what the classifier sees,
asks the classifier, and applies the outcome table (first rule that applies):

| situation                                       | decided_by | reason                                  |
|-------------------------------------------------|------------|-----------------------------------------|
| forced by key, `/mode`, or the control file     | caller     | Mode requested by caller                |
| only the fallback is available                  | fallback   | No other mode available                 |
| classifier raised or broke the contract         | fallback   | Classifier failed: <Class>: <first line>|
| classifier chose no mode at all                 | fallback   | No mode chosen                          |
| decision names an unknown or unavailable mode   | fallback   | Unknown mode <name>                     |
| threshold on, confidence missing                | fallback   | Confidence not scored                   |
| threshold on, confidence below it               | fallback   | Below confidence threshold              |
| otherwise                                       | classifier | the decision's reason                   |
| (mid-turn) the mode's model handed over         | model      | the model's reason (`switch_mode`)      |

Before the threshold rules, the conversation (`core.routing.follow_up`): when a mode answered the
previous turn, the message's follow-up score `f` raises that mode's confidence to
`f + (1 - f) * confidence`; another mode keeps the decision only if its own confidence,
discounted by how little the message stands alone (`(1 - f) * confidence`), still beats
that. A follow-up ("and in Go?") stays in the current mode unless another mode is clearly
surer; a self-contained request (f near 0) switches as it would have, at its own confidence. The threshold rules
then read the decision as the conversation left it. When the conversation changed the
mode, the route is marked sticky, its reason starts `Follow-up of <mode>`, and `alone`
keeps what the classifier said of the message alone.

Then stickiness: a classifier decision that would switch away from the current mode must
beat it by `sticky` in the probabilities, or the current mode keeps the turn (marked).
The decision's reason is for people and logs; it never goes back into any prompt.
"""

from __future__ import annotations

import inspect
import math
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from modes_tui.core.errors import ContractError, RoutingDecisionError, UnknownMode
from modes_tui.core.history.conversation import Message
from modes_tui.core.routing.evidence import Evidence
from modes_tui.core.routing.follow_up import Weighed, follow_up_score, weigh
from modes_tui.core.routing.input import (
    HistoryEntry,
    MessageLike,
    cut_middle,
    cut_tail,
    split_transcript,
)

if TYPE_CHECKING:  # profiles pulls in YAML and Jinja2, which the app's first frame can do without
    from modes_tui.core.packs.profiles import Pack, Profile
    from modes_tui.core.routing.ports import Classifier

DecidedBy = Literal["caller", "classifier", "fallback", "model"]

REASON_FORCED = "Mode requested by caller"
REASON_ONLY_FALLBACK = "No other mode available"
REASON_NO_MODE = "No mode chosen"
REASON_NOT_SCORED = "Confidence not scored"
REASON_BELOW = "Below confidence threshold"
ERROR_TEXT_LIMIT = 200


@dataclass(frozen=True, slots=True)
class Decision:
    """What a classifier answered."""

    mode_name: str | None
    """The chosen mode, or None when the classifier chose none."""
    confidence: float | None
    """0..1, or None for "not scored"."""
    reason: str | None = None
    """Why, in the classifier's words (panel and log only)."""
    probabilities: Mapping[str, float] | None = None
    """A probability per mode, when the backend has a distribution."""
    evidence: Evidence | None = None
    """The nearest example, correction or description that decided (embedding backend)."""

    def to_dict(self) -> dict[str, Any]:
        """String keys; `probabilities` and `evidence` omitted when None."""
        data: dict[str, Any] = {
            "mode_name": self.mode_name,
            "confidence": self.confidence,
            "reason": self.reason,
        }
        if self.probabilities is not None:
            data["probabilities"] = dict(self.probabilities)
        if self.evidence is not None:
            data["evidence"] = self.evidence.to_dict()
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Decision:
        """The inverse of to_dict."""
        probabilities = data.get("probabilities")
        evidence = data.get("evidence")
        return cls(
            mode_name=data.get("mode_name"),
            confidence=data.get("confidence"),
            reason=data.get("reason"),
            probabilities=dict(probabilities) if probabilities is not None else None,
            evidence=Evidence.from_dict(evidence) if isinstance(evidence, Mapping) else None,
        )

    def ranked(self) -> list[tuple[str, float]]:
        """Modes by probability, highest first (empty without probabilities)."""
        if not self.probabilities:
            return []
        return sorted(self.probabilities.items(), key=lambda item: (-item[1], item[0]))


@dataclass(frozen=True, slots=True)
class ClassifierInfo:
    """Which backend ran, and on which model."""

    with_: str
    """The backend: keyword, embedding, chat, judge, cascade, custom."""
    model: str | None = None
    """The model or encoder it used."""

    def to_dict(self) -> dict[str, Any]:
        """`{"with": ..., "model": ...}`."""
        return {"with": self.with_, "model": self.model}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ClassifierInfo:
        """The inverse of to_dict."""
        return cls(str(data.get("with", "custom")), data.get("model"))


class RecordedError(Exception):
    """An error read back from a log: its class name and message, nothing live."""

    def __init__(
        self, type_name: str, message: str, extra: Mapping[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.type_name = type_name
        self.extra = dict(extra or {})


def error_to_dict(error: BaseException) -> dict[str, Any]:
    """An exception as plain data, keeping a routing error's stage and raw output."""
    if isinstance(error, RecordedError):
        return {"type": error.type_name, "message": str(error), **error.extra}
    data: dict[str, Any] = {"type": type(error).__name__, "message": str(error)}
    if isinstance(error, RoutingDecisionError):
        data["stage"] = error.stage
        data["raw_output"] = error.raw_output
    return data


@dataclass(frozen=True, slots=True)
class Route:
    """The router's answer for one turn: a value you can show, log, replay and test."""

    mode_name: str
    """The mode that takes the turn."""
    decided_by: DecidedBy
    """caller (forced), classifier, fallback, or model (a hand-off mid-turn)."""
    reason: str | None
    """Why this mode (see the outcome table)."""
    decision: Decision | None = None
    """The classifier's decision, or None when none ran."""
    duration_ms: float | None = None
    """Time spent classifying; None on caller-decided routes."""
    classifier: ClassifierInfo | None = None
    """Which backend ran; None when none was called."""
    error: BaseException | None = None
    """What a failed classifier raised."""
    runner_up: str | None = None
    """The second most likely mode, when probabilities are known."""
    sticky: bool = False
    """Stickiness kept the current mode against a narrow winner."""
    stages: tuple[Decision, ...] = ()
    """Every decision a multi-stage backend (cascade) made, in order."""
    one_shot: bool = False
    """The caller chose the mode for this message only (`/MODE text`), not for what follows."""
    at: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="milliseconds"))
    """When the route was decided (UTC, ISO 8601)."""
    follow_up: float | None = None
    """How much the message leaned on the previous turn (0..1); None without one."""
    alone: Decision | None = None
    """The classifier's decision on the message alone, when the conversation changed it."""

    @property
    def confidence(self) -> float | None:
        """The decision's confidence, if any."""
        return self.decision.confidence if self.decision is not None else None

    @property
    def forced(self) -> bool:
        """The caller chose the mode."""
        return self.decided_by == "caller"

    def to_dict(self) -> dict[str, Any]:
        """String keys, plain values: for logs, sessions and `--json`."""
        data: dict[str, Any] = {
            "mode_name": self.mode_name,
            "decided_by": self.decided_by,
            "reason": self.reason,
            "decision": self.decision.to_dict() if self.decision is not None else None,
            "duration_ms": None if self.duration_ms is None else round(self.duration_ms, 3),
            "classifier": self.classifier.to_dict() if self.classifier is not None else None,
            "error": error_to_dict(self.error) if self.error is not None else None,
            "runner_up": self.runner_up,
            "sticky": self.sticky,
            "at": self.at,
        }
        if self.stages:
            data["stages"] = [stage.to_dict() for stage in self.stages]
        if self.one_shot:  # only when set: older readers and records stay as they were
            data["one_shot"] = True
        if self.follow_up is not None:
            data["follow_up"] = self.follow_up
        if self.alone is not None:
            data["alone"] = self.alone.to_dict()
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Route:
        """The inverse of to_dict (errors come back as RecordedError)."""
        error_data = data.get("error")
        error = None
        if error_data:
            extra = {k: v for k, v in error_data.items() if k not in {"type", "message"}}
            error = RecordedError(
                str(error_data.get("type")), str(error_data.get("message")), extra
            )
        decision = data.get("decision")
        classifier = data.get("classifier")
        follow_up = data.get("follow_up")
        alone = data.get("alone")
        return cls(
            mode_name=str(data["mode_name"]),
            decided_by=data["decided_by"],
            reason=data.get("reason"),
            decision=Decision.from_dict(decision) if decision else None,
            duration_ms=data.get("duration_ms"),
            classifier=ClassifierInfo.from_dict(classifier) if classifier else None,
            error=error,
            runner_up=data.get("runner_up"),
            sticky=bool(data.get("sticky", False)),
            stages=tuple(Decision.from_dict(s) for s in data.get("stages") or ()),
            one_shot=data.get("one_shot") is True,
            at=str(data.get("at") or ""),
            follow_up=float(follow_up) if isinstance(follow_up, int | float) else None,
            alone=Decision.from_dict(alone) if isinstance(alone, Mapping) else None,
        )


def trace_of(classifier: object) -> ClassifierInfo:
    """What a classifier says it is, or `custom`."""
    trace = getattr(classifier, "trace", None)
    if callable(trace):
        info = trace()
        if isinstance(info, ClassifierInfo):
            return info
    return ClassifierInfo("custom", None)


# --------------------------------------------------------------------------- the router

ErrorHook = Callable[[BaseException], None]
_UNSET: Any = object()


class Router:
    """Decides which mode takes each turn of one pack."""

    def __init__(
        self,
        pack: Pack,
        classifier: Classifier,
        *,
        inputs: Mapping[str, Any] | None = None,
        on_error: ErrorHook | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.pack = pack
        self.classifier = classifier
        self.inputs = dict(inputs or {})
        self.on_error = on_error
        self._environ = environ

    @property
    def config(self) -> Any:
        """The pack's router.yaml."""
        return self.pack.router

    @property
    def modes(self) -> tuple[Profile, ...]:
        """The modes available on this call."""
        return self.pack.available(self._environ)

    def force(self, name: str) -> Route:
        """A route the caller decided: no classifier runs, availability still applies."""
        available = self.modes
        if name not in {p.name for p in available}:
            raise UnknownMode(name, [p.name for p in available])
        return Route(name, "caller", REASON_FORCED)

    def view(self, transcript: Iterable[MessageLike]) -> tuple[str, list[HistoryEntry]]:
        """What the classifier reads of `transcript`: the routed message and the history
        window, filtered and cut as router.yaml says (a correction records exactly this)."""
        message, history = split_transcript(transcript)
        config = self.pack.router
        history = [
            HistoryEntry(h.role, cut_tail(h.content, config.truncate_history_entry))
            for h in config.history.apply(history)
        ]
        return cut_middle(message, config.truncate_message), history

    async def route(
        self,
        conversation: Iterable[MessageLike],
        messages: Iterable[MessageLike] | None = None,
        classifier: Classifier | None = None,
        *,
        current_mode: str | None = _UNSET,
    ) -> Route:
        """Route the latest user message.

        `messages` replaces the transcript the classifier reads; `classifier` replaces the
        pack's classifier for this call; `current_mode` (default: the mode of the latest
        assistant message) is what stickiness protects.
        """
        source = list(conversation) if messages is None else list(messages)
        message, history = self.view(source)
        if current_mode is _UNSET:
            current_mode = _last_mode(list(conversation))
        config = self.pack.router

        # `auto_enter: never` modes are reachable only by forcing: the classifier never sees them
        available = tuple(p for p in self.modes if p.auto_enter != "never")
        fallback = config.fallback
        if not [p for p in available if p.name != fallback]:
            return Route(fallback, "fallback", REASON_ONLY_FALLBACK)

        chosen = classifier or self.classifier
        info = trace_of(chosen)
        started = time.perf_counter()
        try:
            result = chosen.classify(message, history, available, config.instructions, self.inputs)
            if inspect.isawaitable(result):
                result = await result
            decision = validate_decision(result)
        except Exception as error:  # noqa: BLE001 - any classifier failure routes to the fallback
            duration = (time.perf_counter() - started) * 1000
            if self.on_error is not None:
                self.on_error(error)  # whatever it raises escapes on purpose
            return Route(
                fallback,
                "fallback",
                failure_reason(error),
                duration_ms=duration,
                classifier=trace_of(chosen),
                error=error,
            )
        duration = (time.perf_counter() - started) * 1000
        info = trace_of(chosen)  # a backend may resolve its model while classifying
        stages = tuple(getattr(chosen, "last_stages", ()) or ())
        ranked = decision.ranked()
        runner_up = next((name for name, p in ranked if name != decision.mode_name and p > 0), None)
        common: dict[str, Any] = {
            "decision": decision,
            "duration_ms": duration,
            "classifier": info,
            "runner_up": runner_up,
            "stages": stages,
        }
        names = {p.name for p in available}
        decision, follow_up, alone = in_conversation(decision, message, current_mode, names)
        if follow_up is not None:
            common.update(decision=decision, follow_up=follow_up, alone=alone)
            if alone is not None:
                ranked = decision.ranked()
                common["runner_up"] = next(
                    (n for n, p in ranked if n != decision.mode_name and p > 0), None
                )
        threshold = config.below_confidence
        if decision.mode_name is None:
            return Route(fallback, "fallback", REASON_NO_MODE, **common)
        if decision.mode_name not in names:
            return Route(fallback, "fallback", f"Unknown mode {decision.mode_name}", **common)
        if threshold is not None and decision.confidence is None:
            return Route(fallback, "fallback", REASON_NOT_SCORED, **common)
        if (
            threshold is not None
            and decision.confidence is not None
            and decision.confidence < threshold
        ):
            return Route(fallback, "fallback", REASON_BELOW, **common)
        held = self._sticky(decision, current_mode, names)
        if held is not None:
            common["runner_up"] = decision.mode_name
            return Route(held, "classifier", _sticky_reason(decision, held), sticky=True, **common)
        return Route(
            decision.mode_name,
            "classifier",
            decision.reason,
            sticky=alone is not None,
            **common,
        )

    def _sticky(self, decision: Decision, current: str | None, names: set[str]) -> str | None:
        """The current mode if stickiness keeps it against `decision`, else None."""
        margin = self.pack.router.sticky
        if not margin or current is None or current not in names or decision.mode_name == current:
            return None
        probabilities = decision.probabilities or {}
        chosen = decision.mode_name
        if chosen is None or current not in probabilities or chosen not in probabilities:
            return None
        lead = probabilities[chosen] - probabilities[current]
        return current if lead < margin else None


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
    kept = Decision(weighed.mode, weighed.confidence, weighed.reason, weighed.probabilities)
    return kept, weighed.follow_up, decision if weighed.mode != decision.mode_name else None


def _sticky_reason(decision: Decision, held: str) -> str:
    probabilities = decision.probabilities or {}
    lead = probabilities.get(decision.mode_name or "", 0.0) - probabilities.get(held, 0.0)
    return f"Sticky: kept {held}; {decision.mode_name} led by only {lead:.2f}"


def _last_mode(entries: list[MessageLike]) -> str | None:
    for entry in reversed(entries):
        if isinstance(entry, Message) and entry.role == "assistant" and entry.mode:
            return entry.mode
        if isinstance(entry, Mapping) and entry.get("role") == "assistant" and entry.get("mode"):
            return str(entry["mode"])
    return None


def failure_reason(error: BaseException) -> str:
    """`Classifier failed: <Class>: <first line of the message, at most 200 chars>`."""
    text = str(error).strip().splitlines()[0] if str(error).strip() else ""
    if len(text) > ERROR_TEXT_LIMIT:
        text = text[: ERROR_TEXT_LIMIT - 1] + "…"
    name = error.type_name if isinstance(error, RecordedError) else type(error).__name__
    return f"Classifier failed: {name}: {text}" if text else f"Classifier failed: {name}"


def validate_decision(result: object) -> Decision:
    """Check the classifier contract; raise ContractError when it is broken."""
    if not isinstance(result, Decision):
        raise ContractError(f"classifier returned {type(result).__name__}, expected a Decision")
    if result.mode_name is not None and not isinstance(result.mode_name, str):
        raise ContractError(
            f"Decision.mode_name must be a string or None, got {type(result.mode_name).__name__}"
        )
    confidence = result.confidence
    if confidence is not None:
        if isinstance(confidence, bool) or not isinstance(confidence, int | float):
            raise ContractError(
                f"Decision.confidence must be a number or None, got {type(confidence).__name__}"
            )
        if math.isnan(confidence) or not 0 <= confidence <= 1:
            raise ContractError(f"Decision.confidence must be from 0 to 1, got {confidence}")
    if result.reason is not None and not isinstance(result.reason, str):
        raise ContractError(
            f"Decision.reason must be text or None, got {type(result.reason).__name__}"
        )
    probabilities = result.probabilities
    if probabilities is not None:
        if not isinstance(probabilities, Mapping):
            raise ContractError("Decision.probabilities must be a mapping of mode name to number")
        for key, value in probabilities.items():
            if (
                not isinstance(key, str)
                or isinstance(value, bool)
                or not isinstance(value, int | float)
            ):
                raise ContractError("Decision.probabilities must map mode names to numbers")
            if math.isnan(value) or not 0 <= value <= 1:
                raise ContractError(
                    f"Decision.probabilities[{key!r}] must be from 0 to 1, got {value}"
                )
    return result

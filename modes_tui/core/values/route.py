"""The router's answer as a value: the turn's `Route`, the classifier's `Decision` and which
backend ran (`ClassifierInfo`); each one reads and writes plain data (`to_dict`, `from_dict`)
for logs, sessions and replays.

These values sit below history (events, records and the transcript carry a `Route`), so that
history never imports the router; `core.routing.router` builds them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from modes_tui.core.values.doubt import Unsure
from modes_tui.core.values.evidence import Evidence
from modes_tui.core.values.framing import Framing
from modes_tui.core.values.recorded import RecordedError, error_to_dict

DecidedBy = Literal["caller", "classifier", "fallback", "model"]
"""Who chose the mode: the caller (forced), the classifier, the fallback, or the model."""


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
    framing: Framing | None = None
    """The message's request and what it quotes (kinds and sizes), when it quotes anything."""
    unsure: Unsure | None = None
    """The router's doubt (pick and runner-up), when it was unsure (`ask_below`)."""

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
        if self.framing is not None:
            data["framing"] = self.framing.to_dict()
        if self.unsure is not None:
            data["unsure"] = self.unsure.to_dict()
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
        framing, unsure = data.get("framing"), data.get("unsure")
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
            framing=Framing.from_dict(framing) if isinstance(framing, Mapping) else None,
            unsure=Unsure.from_dict(unsure) if isinstance(unsure, Mapping) else None,
        )


@dataclass(frozen=True, slots=True)
class RoutedTurn:
    """What the router decided for one user turn, kept so the turn can be corrected."""

    turn: int
    """The 1-based user turn."""
    text: str
    """What the user typed."""
    route: Route
    """The router's route (a re-run's route never replaces it)."""
    user_index: int
    """Where the user message sits in the conversation."""
    epoch: int
    """The conversation's generation; `/clear` starts a new one."""
    answered: str | None
    """The mode that answers the turn now (None: no mode)."""

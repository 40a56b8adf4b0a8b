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

First the framing (`core.values.framing`): for the embedding and keyword backends the
classifier reads the request, not what the message quotes; the quoted kinds count as weak
evidence (`steps.weigh_quoted`) and the split is kept on the route (`framing`). It reads
the request without an opener ("ok and how do i …": `imperative.request_of`); the
conversation step below reads the whole message, opener and all.
Before the threshold rules, the conversation (`core.routing.follow_up`, `steps.in_conversation`):
a follow-up stays in the mode that answered the previous turn unless another mode is clearly
surer; a self-contained request switches at its own confidence. A follow-up is read from the
message's shape and, when the classifier can embed, its closeness in meaning to the user's
recent turns in that mode (`core.routing.continuity`). When the conversation changed
the mode, the route is sticky, its reason starts `Follow-up of <mode>`, and `alone` keeps the
classifier's own decision. Then stickiness: a switch must beat the current mode by `sticky`.
Last, doubt (`core.values.doubt`): under `ask_below`, or with the runner-up within
`ask_margin`, the route carries `unsure` (pick and runner-up).
The decision's reason is for people and logs; it never goes back into any prompt.
"""

from __future__ import annotations

import inspect
import math
import time
from collections.abc import Callable, Container, Iterable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from modes_tui.core.errors import ContractError, UnknownMode
from modes_tui.core.history.conversation import Message
from modes_tui.core.routing.continuity import (
    latest_answer,
    measure,
    recent_turns,
    vector_source,
    warm_answer,
)
from modes_tui.core.routing.imperative import request_of
from modes_tui.core.routing.input import MessageLike, cut_middle, cut_tail, split_transcript
from modes_tui.core.routing.made import made_head
from modes_tui.core.routing.steps import QuotedStep, in_conversation, outweighed
from modes_tui.core.routing.vague import nothing_to_route_on
from modes_tui.core.values.doubt import doubt
from modes_tui.core.values.entry import HistoryEntry
from modes_tui.core.values.framing import split_message
from modes_tui.core.values.recorded import failure_reason
from modes_tui.core.values.route import ClassifierInfo, Decision, Route

if TYPE_CHECKING:  # profiles pulls in YAML and Jinja2, which the app's first frame can do without
    from modes_tui.core.packs.profiles import Pack, Profile
    from modes_tui.core.routing.continuity import Continuity
    from modes_tui.core.routing.ports import Classifier

FRAMING_BACKENDS = frozenset({"embedding", "keyword"})
"""Backends that route the request alone; a model (chat, judge) reads the whole message."""

REASON_FORCED = "Mode requested by caller"
REASON_ONLY_FALLBACK = "No other mode available"
REASON_NO_MODE = "No mode chosen"
REASON_NOT_SCORED = "Confidence not scored"
REASON_BELOW = "Below confidence threshold"


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
        self._quoted = QuotedStep(self.inputs, validate_decision)

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

    def answered(self, answer: str) -> None:
        """A turn ended with `answer`: its start is encoded ahead, for the next message's
        follow-up check (`continuity.warm_answer`)."""
        warm_answer(self.classifier, answer)

    def prepare(self, conversation: Iterable[MessageLike], draft: str) -> None:
        """Encode ahead, in the caller's thread, what routing `draft` after `conversation`
        reads that no earlier route encoded: the message, its request and the quoted step's
        fixed texts when it quotes material, what it asks to be made (`made_head`), and the
        previous user message whole. The app and the REPL call it while the user types
        (`TurnEngine.prepare`), so the route after Enter finds the vectors cached instead of
        waking a CPU that idled while the user typed. Best effort: nothing happens when the
        classifier cannot embed or is not loaded."""
        source = vector_source(self.classifier)
        draft_vectors = getattr(source, "draft_vectors", None)
        if source is None or draft_vectors is None or not draft.strip():
            return
        message, history = self.view([*conversation, Message("user", draft)])
        framing = split_message(message)
        texts = [message]
        framed = trace_of(self.classifier).with_ in FRAMING_BACKENDS
        request = message
        if framing is not None and framed and framing.routed_on == "request":
            request = framing.request
            texts = [*self._quoted.texts_for(framing, self.classifier), request, message]
        stripped = request_of(request) if framed else request
        if stripped != request:  # the classifier reads the request without its opener
            texts = [stripped if text == request else text for text in texts]
            request = stripped
        head = made_head(request) if framed else None
        texts = [*([head] if head else []), *texts]
        draft_vectors(texts)  # the message last: the newest draft, the last to go
        previous = next(
            (h.content for h in reversed(history) if h.role == "user" and h.content.strip()), None
        )
        if previous is not None:
            source.turn_vectors([previous])

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
        framing = split_message(message)
        if framing is not None and info.with_ not in FRAMING_BACKENDS:
            framing = replace(framing, routed_on="message")  # a model reads the framing itself
        routed = (
            framing.request if framing is not None and framing.routed_on == "request" else message
        )
        if info.with_ in FRAMING_BACKENDS:
            routed = request_of(routed)  # "ok and how do i …": the request, not its opener
        started = time.perf_counter()
        try:
            result = chosen.classify(routed, history, available, config.instructions, self.inputs)
            if inspect.isawaitable(result):
                result = await result
            decision = validate_decision(result)
            if framing is not None and framing.routed_on == "request":
                decision = await self._quoted.weigh(
                    decision, framing, chosen, available, (message, history)
                )
            decision = await self._quoted.made(
                decision, routed, chosen, available, framed=info.with_ in FRAMING_BACKENDS
            )
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
                framing=framing,
            )
        duration = (time.perf_counter() - started) * 1000
        info = trace_of(chosen)  # a backend may resolve its model while classifying
        stages = tuple(getattr(chosen, "last_stages", ()) or ())
        common: dict[str, Any] = {
            "decision": decision,
            "duration_ms": duration,
            "classifier": info,
            "runner_up": _runner_up(decision),
            "stages": stages,
            "framing": framing,
        }
        # Only for the embedding head, which reads "fix it" like a pack's "fix this up"
        # examples: a keyword pack's author said what "fix" means, and a model reads it itself.
        vague = framing is None and info.with_ == "embedding"
        nothing = nothing_to_route_on(message) if vague else None
        if nothing is not None and not split_transcript(source)[1]:
            # "fix it" or "shorter" as the first message: no mode has anything to work on
            return Route(fallback, "fallback", nothing, **common)
        names = {p.name for p in available}
        continuity = None
        # A turn the fallback took is one no mode was sure of: being close to it says nothing
        # for any mode, and what falls below the threshold should still fall back.
        if current_mode in names and current_mode != fallback and decision.mode_name is not None:
            turns = recent_turns(source, current_mode)
            continuity = await measure(
                chosen,
                routed,
                turns,
                self._routed_text(info.with_),
                answer=latest_answer(source, current_mode),
            )
        route = self._in_conversation(decision, message, current_mode, names, continuity, common)
        decision = route.decision or decision
        if route.decided_by == "fallback" and route.reason != REASON_BELOW:
            return route
        unsure = doubt(
            decision.mode_name or fallback,
            decision.confidence,
            decision.probabilities,
            ask_below=config.ask_below,
            ask_margin=config.ask_margin,
            runs=route.mode_name,
            fell_below=config.below_confidence if route.decided_by == "fallback" else None,
        )
        return replace(route, unsure=unsure) if unsure is not None else route

    def _routed_text(self, backend: str) -> Callable[[str], str]:
        """What the classifier read of an earlier user message (as `route` cut and split it),
        so the message's vector is the one cached when that turn was routed."""
        limit = self.pack.router.truncate_message

        def routed(text: str) -> str:
            text = cut_middle(text, limit)
            if backend not in FRAMING_BACKENDS:
                return text
            framing = split_message(text)
            return request_of(
                framing.request if framing is not None and framing.routed_on == "request" else text
            )

        return routed

    def _in_conversation(
        self,
        decision: Decision,
        message: str,
        current_mode: str | None,
        names: set[str],
        continuity: Continuity | None,
        common: dict[str, Any],
    ) -> Route:
        """The route with the conversation weighed in (`steps.in_conversation`) and the
        outcome table applied; a pull back under the threshold yields to the message's own
        route (`routed_alone`)."""
        decision, follow_up, alone = in_conversation(
            decision, message, current_mode, names, continuity
        )
        if follow_up is not None:
            common.update(decision=decision, follow_up=follow_up, alone=alone)
            if alone is not None:
                common["runner_up"] = _runner_up(decision)
        route = self._outcome(decision, current_mode, names, common, sticky=alone is not None)
        if route.reason == REASON_BELOW:
            return routed_alone(route, self.pack.router.below_confidence, names) or route
        return route

    def _outcome(
        self,
        decision: Decision,
        current_mode: str | None,
        names: set[str],
        common: dict[str, Any],
        *,
        sticky: bool,
    ) -> Route:
        """The outcome table's rules after the classifier answered (see the module doc)."""
        fallback = self.pack.router.fallback
        threshold = self.pack.router.below_confidence
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
        return Route(decision.mode_name, "classifier", decision.reason, sticky=sticky, **common)

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


def routed_alone(
    route: Route, threshold: float | None, names: Container[str] | None = None
) -> Route | None:
    """The message's own route, when the conversation pulled it back to the last turn's mode
    (`route.alone` is the message's own decision, `route.decision` the pulled one) at a
    confidence under `threshold` and the message alone clears it; else None.

    A pull not sure enough to route the turn does not stop the route the message makes on
    its own: "then show me how to run it with cron" after a function goes to shell, not to
    the fallback. `eval` judges its routes the same way. `names`: the modes available."""
    alone, pulled = route.alone, route.decision
    if threshold is None or alone is None or pulled is None or alone.mode_name is None:
        return None
    if names is not None and alone.mode_name not in names:
        return None
    if alone.confidence is None or alone.confidence < threshold:
        return None
    if pulled.confidence is not None and pulled.confidence >= threshold:
        return None
    decision = replace(alone, reason=outweighed(alone, pulled))
    return replace(
        route,
        mode_name=alone.mode_name,
        decided_by="classifier",
        reason=decision.reason,
        decision=decision,
        alone=None,
        runner_up=pulled.mode_name,
        sticky=False,
        unsure=None,
    )


def _runner_up(decision: Decision) -> str | None:
    return next((n for n, p in decision.ranked() if n != decision.mode_name and p > 0), None)


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

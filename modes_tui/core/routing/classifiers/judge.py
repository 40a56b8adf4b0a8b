"""The judge backend: one single-token answer, read through its log probabilities.

The call itself (routing prompt, fixed user turn, timeout) is `ModelClassifier`'s
(`model_classifier`); this module owns how the answer is asked for and read.

Each available mode gets a one-letter label (A, B, C, ... in roster order). The model is
asked, with `build_routing_prompt`, to answer with the label only: `max_tokens=1`,
`temperature=0`, `logprobs=True`, `top_logprobs=10`. The first generated token's
candidates are mapped to labels (surrounding whitespace ignored; several candidates may
map to one label and add up), and the probabilities are renormalised over the labels:

    p_m = exp(lp_m) / sum_k exp(lp_k)        labels missing from top_logprobs get 0

`confidence` is the concentration of that distribution on the chosen mode, i.e. the
renormalised top probability `max_m p_m`. It is read from the model's own distribution,
not self-reported. A model that does not return logprobs is refused when the classifier is
built (`DeclarationError`), not at the first route.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from modes_tui.core.errors import DeclarationError, Problem, RoutingDecisionError
from modes_tui.core.model.ports import ChatModel
from modes_tui.core.model.wire import Completion
from modes_tui.core.packs.profiles import Profile
from modes_tui.core.routing.classifiers.model_classifier import (
    DEFAULT_TIMEOUT,
    AnswerShape,
    ModelClassifier,
)
from modes_tui.core.routing.ports import CorrectionSource
from modes_tui.core.values.numbers import two_places
from modes_tui.core.values.route import Decision

LABELS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
TOP_LOGPROBS = 10
USER_TURN = "Route the latest message in the data above. Answer with the label only."


def labels_for(modes: Sequence[Profile]) -> dict[str, str]:
    """label -> mode name, in roster order."""
    if len(modes) > len(LABELS):
        raise ValueError(f"the judge backend labels at most {len(LABELS)} modes, got {len(modes)}")
    return {LABELS[i]: mode.name for i, mode in enumerate(modes)}


def answer_format(labels: Mapping[str, str]) -> str:
    """The last rule: which label stands for which mode."""
    pairs = ", ".join(f"{label} = {name}" for label, name in labels.items())
    return (
        f"Answer with exactly one capital letter, the label of the chosen mode, and nothing "
        f"else. Labels: {pairs}."
    )


def distribution(
    top_logprobs: Sequence[Mapping[str, float]], labels: Mapping[str, str], raw: str
) -> dict[str, float]:
    """Probabilities per mode from the first token's candidates (see the module docstring)."""
    if not top_logprobs or not top_logprobs[0]:
        raise RoutingDecisionError(
            "the judge answer came without logprobs", stage="shape", raw_output=raw
        )
    mass: dict[str, float] = {}
    for token, logprob in top_logprobs[0].items():
        label = token.strip()
        if label in labels and isinstance(logprob, int | float) and not math.isnan(logprob):
            mass[labels[label]] = mass.get(labels[label], 0.0) + math.exp(logprob)
    total = sum(mass.values())
    if total <= 0:
        seen = ", ".join(repr(t) for t in list(top_logprobs[0])[:10])
        raise RoutingDecisionError(
            f"no mode label among the answer's top tokens ({seen})",
            stage="shape",
            raw_output=raw,
        )
    return {name: mass.get(name, 0.0) / total for name in labels.values()}


class JudgeClassifier(ModelClassifier):
    """Routes by the label distribution of a one-token answer."""

    backend = "judge"

    def __init__(
        self,
        model: ChatModel,
        model_id: str,
        *,
        top_logprobs: int = TOP_LOGPROBS,
        timeout: float | None = DEFAULT_TIMEOUT,
        check_support: bool = True,
        corrections: CorrectionSource | None = None,
    ) -> None:
        super().__init__(model, model_id, timeout=timeout, corrections=corrections)
        self.top_logprobs = top_logprobs
        if check_support and not model.capabilities(model_id).logprobs:
            raise DeclarationError(
                [
                    Problem(
                        "router.yaml",
                        "model",
                        f"the judge backend needs token logprobs and {model_id!r} does not "
                        "return them; pick a model that does (e.g. an OpenAI or Gemini "
                        "model) or use `classifier: chat`",
                    )
                ]
            )

    def answer_shape(self, modes: Sequence[Profile]) -> AnswerShape:
        """One capital letter, with the first token's top candidates and their logprobs."""
        return AnswerShape(
            answer_format=answer_format(labels_for(modes)),
            user_turn=USER_TURN,
            max_tokens=1,
            extra={"logprobs": True, "top_logprobs": self.top_logprobs},
        )

    def read_answer(self, completion: Completion, modes: Sequence[Profile]) -> Decision:
        """The label distribution becomes the decision."""
        labels = labels_for(modes)
        raw = completion.text + (
            f"\n[top_logprobs: {dict(completion.top_logprobs[0])}]"
            if completion.top_logprobs
            else ""
        )
        probabilities = distribution(completion.top_logprobs, labels, raw)
        best = max(probabilities, key=lambda name: probabilities[name])
        label = next(k for k, v in labels.items() if v == best)
        confidence = probabilities[best]
        return Decision(
            best,
            round(confidence, 4),
            f"label {label} ({two_places(confidence)} of the label probability)",
            {name: round(p, 4) for name, p in probabilities.items()},
        )

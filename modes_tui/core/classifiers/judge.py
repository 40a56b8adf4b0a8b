"""The judge backend: one single-token answer, read through its log probabilities.

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
from typing import Any

from modes_tui.core.classifiers.chat import call_with_timeout
from modes_tui.core.corrections import EMPTY_CORRECTIONS, CorrectionSource
from modes_tui.core.errors import DeclarationError, Problem, RoutingDecisionError
from modes_tui.core.learning import Similarity, similar_corrections
from modes_tui.core.ports import ChatModel
from modes_tui.core.profiles import Profile
from modes_tui.core.routing import ClassifierInfo, Decision
from modes_tui.core.routing_input import HistoryEntry
from modes_tui.core.routing_prompt import build_routing_prompt
from modes_tui.core.wire import ModelRequest

LABELS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
TOP_LOGPROBS = 10
DEFAULT_TIMEOUT = 30.0
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


class JudgeClassifier:
    """Routes by the label distribution of a one-token answer."""

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
        self.model = model
        self.model_id = model_id
        self.corrections = corrections if corrections is not None else EMPTY_CORRECTIONS
        """The most similar of these go into the prompt as labelled examples."""
        self.similarity: Similarity | None = None
        """How "most similar" is measured when an encoder is at hand (else lexically)."""
        self.top_logprobs = top_logprobs
        self.timeout = timeout
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

    def request(
        self,
        message: str,
        history: Sequence[HistoryEntry],
        modes: Sequence[Profile],
        instructions: str,
    ) -> ModelRequest:
        """The exact request `classify` sends."""
        prompt = build_routing_prompt(
            message,
            history,
            modes,
            instructions,
            answer_format=answer_format(labels_for(modes)),
            corrections=similar_corrections(
                message, self.corrections.corrections(), modes, similarity=self.similarity
            ),
        )
        return ModelRequest(
            model=self.model_id,
            messages=(
                {"role": "system", "content": prompt},
                {"role": "user", "content": USER_TURN},
            ),
            temperature=0.0,
            max_tokens=1,
            extra={"logprobs": True, "top_logprobs": self.top_logprobs},
        )

    async def classify(
        self,
        message: str,
        history: Sequence[HistoryEntry],
        modes: Sequence[Profile],
        instructions: str,
        inputs: Mapping[str, Any],
    ) -> Decision:
        """One call; the label distribution becomes the decision."""
        labels = labels_for(modes)
        request = self.request(message, history, modes, instructions)
        completion = await call_with_timeout(self.model, request, self.timeout)
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
            f"label {label} ({confidence:.2f} of the label probability)",
            {name: round(p, 4) for name, p in probabilities.items()},
        )

    def trace(self) -> ClassifierInfo:
        """`judge` with the configured model id."""
        return ClassifierInfo("judge", self.model_id)

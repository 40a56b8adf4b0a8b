"""What the model-backed routing backends (`chat`, `judge`) share: one call to a chat model.

This module owns the call's frame: the system prompt is `build_routing_prompt` (roster,
conversation and the most similar corrections as data, rules last), the user turn is a fixed
line (so nothing the user wrote has the last word), `temperature=0`, and the call goes
through the `ChatModel` port under a timeout that becomes a `ProviderError("timeout")`.

A backend fills in two steps and nothing else:
- `answer_shape(modes)`: how the answer is asked for (the last rule of the prompt, the user
  turn, the token cap and the provider parameters such as `response_format` or `logprobs`);
- `read_answer(completion, modes)`: how the reply becomes a `Decision`, raising
  `RoutingDecisionError` when it cannot.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from modes_tui.core.errors import ProviderError
from modes_tui.core.model.ports import ChatModel
from modes_tui.core.model.wire import Completion, ModelRequest
from modes_tui.core.packs.profiles import Profile
from modes_tui.core.routing.corrections import EMPTY_CORRECTIONS
from modes_tui.core.routing.learning import Similarity, similar_corrections
from modes_tui.core.routing.ports import CorrectionSource
from modes_tui.core.routing.prompt import build_routing_prompt
from modes_tui.core.values.entry import HistoryEntry
from modes_tui.core.values.route import ClassifierInfo, Decision

DEFAULT_TIMEOUT = 30.0


@dataclass(frozen=True, slots=True)
class AnswerShape:
    """How one backend asks for its answer: the parts of the request that differ."""

    answer_format: str
    """The prompt's last rule: what to answer and in which form."""
    user_turn: str
    """The fixed user message after the system prompt."""
    max_tokens: int
    """The answer's token cap."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Provider parameters that constrain or expose the answer (response_format, logprobs)."""


class ModelClassifier(ABC):
    """Routes with one call to `model_id` through a `ChatModel`; subclasses shape and read it."""

    backend: ClassVar[str]
    """The backend's name in router.yaml and in the trace."""

    def __init__(
        self,
        model: ChatModel,
        model_id: str,
        *,
        timeout: float | None = DEFAULT_TIMEOUT,
        corrections: CorrectionSource | None = None,
    ) -> None:
        self.model = model
        self.model_id = model_id
        self.timeout = timeout
        self.corrections = corrections if corrections is not None else EMPTY_CORRECTIONS
        """The most similar of these go into the prompt as labelled examples."""
        self.similarity: Similarity | None = None
        """How "most similar" is measured when an encoder is at hand (else lexically)."""

    @abstractmethod
    def answer_shape(self, modes: Sequence[Profile]) -> AnswerShape:
        """How the answer is asked for, given the available modes."""

    @abstractmethod
    def read_answer(self, completion: Completion, modes: Sequence[Profile]) -> Decision:
        """The decision in the model's reply; RoutingDecisionError when there is none."""

    def request(
        self,
        message: str,
        history: Sequence[HistoryEntry],
        modes: Sequence[Profile],
        instructions: str,
    ) -> ModelRequest:
        """The exact request `classify` sends."""
        shape = self.answer_shape(modes)
        prompt = build_routing_prompt(
            message,
            history,
            modes,
            instructions,
            answer_format=shape.answer_format,
            corrections=similar_corrections(
                message, self.corrections.corrections(), modes, similarity=self.similarity
            ),
        )
        return ModelRequest(
            model=self.model_id,
            messages=(
                {"role": "system", "content": prompt},
                {"role": "user", "content": shape.user_turn},
            ),
            temperature=0.0,
            max_tokens=shape.max_tokens,
            extra=shape.extra,
        )

    async def classify(
        self,
        message: str,
        history: Sequence[HistoryEntry],
        modes: Sequence[Profile],
        instructions: str,
        inputs: Mapping[str, Any],
    ) -> Decision:
        """One call; the backend reads the decision from the reply."""
        request = self.request(message, history, modes, instructions)
        completion = await call_with_timeout(self.model, request, self.timeout)
        return self.read_answer(completion, modes)

    def trace(self) -> ClassifierInfo:
        """The backend's name with the configured model id."""
        return ClassifierInfo(self.backend, self.model_id)


async def call_with_timeout(
    model: ChatModel, request: ModelRequest, timeout: float | None
) -> Completion:
    """`model.complete(request)`, cut off after `timeout` seconds as a ProviderError."""
    if timeout is None:
        return await model.complete(request)
    try:
        return await asyncio.wait_for(model.complete(request), timeout)
    except TimeoutError:
        raise ProviderError(
            "timeout",
            f"no routing answer within {timeout:g} s",
            hint="the router model is slow or unreachable; the turn went to the fallback mode",
            model=request.model,
        ) from None

"""The chat backend: one structured-output call to a chat model.

The system prompt is `build_routing_prompt` (roster and conversation as JSON data, rules
last). The user turn is a fixed line, so nothing the user wrote has the last word. The
answer is a JSON object constrained by a schema (`response_format`): `mode` (an enum of the
available names), `confidence` (0..1, the model's own self-report: it tells a hedge from a
clear call but it is not calibrated; tune `below_confidence` per model) and `reason`
(shown in the panel and the log, never fed back into a prompt).

Validation, strictest first:
- not JSON (after removing a Markdown code fence) -> RoutingDecisionError(stage="json-parse")
- not an object, `mode` missing or not text, `confidence` or `reason` of the wrong type,
  `confidence` outside 0..1 -> RoutingDecisionError(stage="shape")
- a `mode` that is not available is passed on as is: the router answers "Unknown mode <x>"
- a missing `confidence` is passed on as None: the router answers "Confidence not scored"
"""

from __future__ import annotations

import asyncio
import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from modes_tui.core.corrections import EMPTY_CORRECTIONS, CorrectionSource
from modes_tui.core.errors import ProviderError, RoutingDecisionError
from modes_tui.core.learning import Similarity, similar_corrections
from modes_tui.core.ports import ChatModel
from modes_tui.core.profiles import Profile
from modes_tui.core.routing import ClassifierInfo, Decision
from modes_tui.core.routing_input import HistoryEntry
from modes_tui.core.routing_prompt import build_routing_prompt
from modes_tui.core.wire import ModelRequest

ANSWER_FORMAT = (
    'Answer with one JSON object and nothing else: {"mode": one of the mode names above, '
    '"confidence": a number from 0 to 1 saying how sure you are, "reason": one short sentence}.'
)
USER_TURN = "Route the latest message in the data above. Answer with the JSON object only."
DEFAULT_TIMEOUT = 30.0
MAX_TOKENS = 300
_FENCE = re.compile(r"^\s*```(?:json)?\s*\n?(.*?)\n?\s*```\s*$", re.DOTALL | re.IGNORECASE)


def selection_schema(names: Sequence[str]) -> dict[str, Any]:
    """The JSON schema of the answer: `mode` is an enum of `names`."""
    return {
        "type": "object",
        "properties": {
            "mode": {"type": "string", "enum": list(names)},
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
            "reason": {"type": "string"},
        },
        "required": ["mode", "confidence", "reason"],
        "additionalProperties": False,
    }


def response_format(names: Sequence[str]) -> dict[str, Any]:
    """The `response_format` parameter (OpenAI's structured outputs, which litellm maps)."""
    return {
        "type": "json_schema",
        "json_schema": {"name": "route", "strict": True, "schema": selection_schema(names)},
    }


def parse_selection(raw: str) -> Decision:
    """Parse and validate the model's answer (see the module docstring)."""
    fenced = _FENCE.match(raw)
    text = fenced.group(1) if fenced else raw
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, ValueError) as error:
        raise RoutingDecisionError(
            f"the routing answer is not JSON ({error})", stage="json-parse", raw_output=raw
        ) from None

    def shape(problem: str) -> RoutingDecisionError:
        return RoutingDecisionError(
            f"the routing answer has the wrong shape: {problem}", stage="shape", raw_output=raw
        )

    if not isinstance(data, dict):
        raise shape(f"expected a JSON object, got {type(data).__name__}")
    mode = data.get("mode")
    if not isinstance(mode, str) or not mode.strip():
        raise shape("`mode` is missing or not text")
    confidence = data.get("confidence")
    if confidence is not None:
        if isinstance(confidence, bool) or not isinstance(confidence, int | float):
            raise shape(f"`confidence` must be a number from 0 to 1, got {confidence!r}")
        if math.isnan(confidence) or not 0 <= confidence <= 1:
            raise shape(f"`confidence` must be from 0 to 1, got {confidence}")
        confidence = float(confidence)
    reason = data.get("reason")
    if reason is not None and not isinstance(reason, str):
        raise shape(f"`reason` must be text, got {type(reason).__name__}")
    return Decision(mode.strip(), confidence, reason)


class ChatClassifier:
    """Routes with one structured-output call to `model_id` through a `ChatModel`."""

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

    def request(
        self,
        message: str,
        history: Sequence[HistoryEntry],
        modes: Sequence[Profile],
        instructions: str,
    ) -> ModelRequest:
        """The exact request `classify` sends."""
        names = [mode.name for mode in modes]
        prompt = build_routing_prompt(
            message,
            history,
            modes,
            instructions,
            answer_format=ANSWER_FORMAT,
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
            max_tokens=MAX_TOKENS,
            extra={"response_format": response_format(names)},
        )

    async def classify(
        self,
        message: str,
        history: Sequence[HistoryEntry],
        modes: Sequence[Profile],
        instructions: str,
        inputs: Mapping[str, Any],
    ) -> Decision:
        """Ask the model; parse and validate its JSON answer."""
        request = self.request(message, history, modes, instructions)
        completion = await call_with_timeout(self.model, request, self.timeout)
        return parse_selection(completion.text)

    def trace(self) -> ClassifierInfo:
        """`chat` with the configured model id."""
        return ClassifierInfo("chat", self.model_id)


async def call_with_timeout(model: ChatModel, request: ModelRequest, timeout: float | None) -> Any:
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

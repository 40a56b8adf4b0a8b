"""The chat backend: one structured-output call to a chat model.

The call itself (routing prompt, fixed user turn, timeout) is `ModelClassifier`'s
(`model_classifier`); this module owns how the answer is asked for and read. The answer
is a JSON object constrained by a schema (`response_format`): `mode` (an enum of the
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

import json
import math
import re
from collections.abc import Sequence
from typing import Any

from modes_tui.core.errors import RoutingDecisionError
from modes_tui.core.model.wire import Completion
from modes_tui.core.packs.profiles import Profile
from modes_tui.core.routing.classifiers.model_classifier import (
    DEFAULT_TIMEOUT,
    AnswerShape,
    ModelClassifier,
    call_with_timeout,
)
from modes_tui.core.values.route import Decision

__all__ = [
    "ANSWER_FORMAT",
    "DEFAULT_TIMEOUT",
    "MAX_TOKENS",
    "USER_TURN",
    "ChatClassifier",
    "call_with_timeout",
    "parse_selection",
    "response_format",
    "selection_schema",
]

ANSWER_FORMAT = (
    'Answer with one JSON object and nothing else: {"mode": one of the mode names above, '
    '"confidence": a number from 0 to 1 saying how sure you are, "reason": one short sentence}.'
)
USER_TURN = "Route the latest message in the data above. Answer with the JSON object only."
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


class ChatClassifier(ModelClassifier):
    """Routes with one structured-output call to `model_id` through a `ChatModel`."""

    backend = "chat"

    def answer_shape(self, modes: Sequence[Profile]) -> AnswerShape:
        """A JSON object whose `mode` is constrained to the available names."""
        return AnswerShape(
            answer_format=ANSWER_FORMAT,
            user_turn=USER_TURN,
            max_tokens=MAX_TOKENS,
            extra={"response_format": response_format([mode.name for mode in modes])},
        )

    def read_answer(self, completion: Completion, modes: Sequence[Profile]) -> Decision:
        """Parse and validate the model's JSON answer."""
        return parse_selection(completion.text)

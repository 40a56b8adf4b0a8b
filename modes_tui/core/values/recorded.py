"""Errors as a route keeps them: a failed classifier's exception as plain data, read back
from a log as a `RecordedError`, and the fallback reason that names it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from modes_tui.core.errors import RoutingDecisionError

ERROR_TEXT_LIMIT = 200
"""Characters of an error's first line kept in a fallback reason."""


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


def failure_reason(error: BaseException) -> str:
    """`Classifier failed: <Class>: <first line of the message, at most 200 chars>`."""
    text = str(error).strip().splitlines()[0] if str(error).strip() else ""
    if len(text) > ERROR_TEXT_LIMIT:
        text = text[: ERROR_TEXT_LIMIT - 1] + "…"
    name = error.type_name if isinstance(error, RecordedError) else type(error).__name__
    return f"Classifier failed: {name}: {text}" if text else f"Classifier failed: {name}"

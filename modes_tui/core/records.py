"""What a session log holds: record types, their fields, and the schema version.

The engine writes records through a `SessionWriter`; `modes_tui.store.sessions` is the
real one (append-only JSONL), tests may use a list. Every record is a JSON object with
`v` (schema version), `type`, `at` (UTC ISO 8601) and `turn` (1-based user turn; 0 for meta).

| type        | fields besides v, type, at, turn                                         |
|-------------|--------------------------------------------------------------------------|
| meta        | id, created, pack, cwd, app_version, model, title                        |
| user        | content                                                                  |
| route       | route (Route.to_dict()), setting (auto/off/mode), warnings               |
| request     | request (ModelRequest.to_dict(), secrets redacted), mode, round, notes,  |
|             | fallback {from, kind, error} (when a fallback model took over)           |
| assistant   | message (Message.to_dict()), usage {prompt_tokens, completion_tokens,   |
|             | cost}, error (str, when the turn failed), cost (the turn's ledger entry: |
|             | models, tokens, cost, baseline_cost, baseline_model; also on a cancel)   |
| tool_result | call (ToolCall.to_dict()), outcome, result, duration_ms                  |
| ui_event    | event (forced_mode, cancel, clear, retry, ...), plus its own fields;     |
|             | `correction`: of (turn), answered_mode, corrected_mode, rerun,           |
|             | correction (Correction.to_dict() or null), note; `correction_undone`: id |
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

SCHEMA_VERSION = 1

RecordType = Literal["meta", "user", "route", "request", "assistant", "tool_result", "ui_event"]
RECORD_TYPES: tuple[RecordType, ...] = (
    "meta",
    "user",
    "route",
    "request",
    "assistant",
    "tool_result",
    "ui_event",
)


class SessionWriter(Protocol):
    """Where the engine writes what happened, one record at a time."""

    def record(self, type: RecordType, turn: int, **fields: Any) -> None:
        """Append one record; it is on disk (flushed) when this returns."""
        ...

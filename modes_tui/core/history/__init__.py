"""What happened: the engine's events, the conversation, the session records,
the cost ledger, and the fold of a turn's events into a transcript.

    compaction.py    What fitting a conversation into a model's window leaves behind: the
                     summary that stands for older turns, and how a request was fitted
    conversation.py  The conversation every mode shares: messages, tool calls and their results
    events.py        What a turn tells the outside world: a closed union of frozen event
                     dataclasses
    ledger.py        The cost ledger: what each turn cost, the session's total, and what routing
                     saved
    ports.py         Where the engine writes what happened: the session log
                     (`store.session_log`), or a list of records in tests
    records.py       What a session log holds: record types, their fields, and the schema
                     version
    record_fields.py What every record shares: the schema version, its shape on disk, and
                     reading a stored record's fields
    safe_events.py   A turn's events made safe for the screen: the text each one shows goes
                     through `terminal_safe` (see `terminal_text`), and streamed deltas through
                     a `TerminalStream`
    transcript.py    One fold over a turn's events: what the turn said, in one record

Other packages import a public name from the module that defines it
(`from modes_tui.core.history.<module> import <name>`);
`__all__` lists those names and is the package's public surface: a name not in it,
or starting with `_`, is private to the package (tests/test_architecture.py).
"""

from __future__ import annotations

from importlib import import_module

__all__ = [
    "RECORD_TYPES",
    "RESERVED_FIELDS",
    "SCHEMA_VERSION",
    "AssistantRecord",
    "Compaction",
    "ContextReport",
    "Conversation",
    "ConversationCompacted",
    "CostLedger",
    "Message",
    "MetaRecord",
    "ModeChanged",
    "ReasoningDelta",
    "RecordType",
    "RequestBuilt",
    "RequestRecord",
    "Reroute",
    "RouteDecided",
    "RouteRecord",
    "SessionRecord",
    "SessionWriter",
    "SummaryRecord",
    "Superseded",
    "TerminalEvents",
    "TextDelta",
    "ToolActivity",
    "ToolCall",
    "ToolCallFinished",
    "ToolCallRequested",
    "ToolOutcome",
    "ToolResultRecord",
    "Trigger",
    "TurnCancelled",
    "TurnCorrected",
    "TurnEvent",
    "TurnFailed",
    "TurnFinished",
    "TurnTranscript",
    "UiEventRecord",
    "Usage",
    "UserRecord",
    "baseline",
    "budget_from_text",
    "check_budget",
    "fold_turn",
    "money",
    "parse_record",
    "safe_events",
    "session_costs",
    "write_record",
]

_HOMES = {
    "Compaction": "compaction",
    "ContextReport": "compaction",
    "Trigger": "compaction",
    "Conversation": "conversation",
    "Message": "conversation",
    "ToolCall": "conversation",
    "ConversationCompacted": "events",
    "ModeChanged": "events",
    "ReasoningDelta": "events",
    "RequestBuilt": "events",
    "RouteDecided": "events",
    "TextDelta": "events",
    "ToolCallFinished": "events",
    "ToolCallRequested": "events",
    "ToolOutcome": "events",
    "TurnCancelled": "events",
    "TurnCorrected": "events",
    "TurnEvent": "events",
    "TurnFailed": "events",
    "TurnFinished": "events",
    "Usage": "events",
    "CostLedger": "ledger",
    "baseline": "ledger",
    "budget_from_text": "ledger",
    "check_budget": "ledger",
    "money": "ledger",
    "session_costs": "ledger",
    "SessionWriter": "ports",
    "AssistantRecord": "records",
    "MetaRecord": "records",
    "RECORD_TYPES": "records",
    "RESERVED_FIELDS": "records",
    "RecordType": "records",
    "RequestRecord": "records",
    "RouteRecord": "records",
    "SCHEMA_VERSION": "records",
    "SessionRecord": "records",
    "SummaryRecord": "records",
    "ToolResultRecord": "records",
    "UiEventRecord": "records",
    "UserRecord": "records",
    "parse_record": "records",
    "write_record": "records",
    "TerminalEvents": "safe_events",
    "safe_events": "safe_events",
    "Reroute": "transcript",
    "Superseded": "transcript",
    "ToolActivity": "transcript",
    "TurnTranscript": "transcript",
    "fold_turn": "transcript",
}
"""Public name -> the module that defines it."""


def __getattr__(name: str) -> object:
    """A public name, imported from its module on first use (nothing loads eagerly)."""
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_HOMES[name]}"), name)

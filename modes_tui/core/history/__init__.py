"""What happened in a session: events, conversation, records, costs, a turn's transcript.

The engine's events, the shared conversation, the session records, the cost ledger, and the
fold of a turn's events into a transcript.

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

Public names: `__all__`, imported from the module that defines them (see core/__init__.py).
"""

from __future__ import annotations

from .compaction import Compaction, ContextReport, Trigger
from .conversation import Conversation, Message
from .events import (
    ConversationCompacted,
    ModeChanged,
    ReasoningDelta,
    RequestBuilt,
    RouteDecided,
    TextDelta,
    ToolCallFinished,
    ToolCallRequested,
    ToolOutcome,
    TurnCancelled,
    TurnCorrected,
    TurnEvent,
    TurnFailed,
    TurnFinished,
    Usage,
)
from .ledger import CostLedger, baseline, budget_from_text, check_budget, money, session_costs
from .ports import SessionWriter
from .record_fields import RESERVED_FIELDS, SCHEMA_VERSION
from .records import (
    RECORD_TYPES,
    AssistantRecord,
    MetaRecord,
    RecordType,
    RequestRecord,
    RouteRecord,
    SessionRecord,
    SummaryRecord,
    ToolResultRecord,
    UiEventRecord,
    UserRecord,
    parse_record,
    write_record,
)
from .safe_events import TerminalEvents, safe_events
from .transcript import Reroute, Superseded, ToolActivity, TurnTranscript, fold_turn

__all__ = ["Compaction", "ContextReport", "Conversation", "Message", "Trigger"]
__all__ += ["ConversationCompacted", "ModeChanged", "ReasoningDelta", "RequestBuilt"]
__all__ += ["RouteDecided", "TextDelta", "ToolCallFinished", "ToolCallRequested", "ToolOutcome"]
__all__ += ["TurnCancelled", "TurnCorrected", "TurnEvent", "TurnFailed", "TurnFinished", "Usage"]
__all__ += ["CostLedger", "baseline", "budget_from_text", "check_budget", "money", "session_costs"]
__all__ += ["RESERVED_FIELDS", "SCHEMA_VERSION", "SessionWriter"]
__all__ += ["RECORD_TYPES", "AssistantRecord", "MetaRecord", "RecordType", "RequestRecord"]
__all__ += ["RouteRecord", "SessionRecord", "SummaryRecord", "ToolResultRecord", "UiEventRecord"]
__all__ += ["TerminalEvents", "UserRecord", "parse_record", "safe_events", "write_record"]
__all__ += ["Reroute", "Superseded", "ToolActivity", "TurnTranscript", "fold_turn"]

"""The model seam: what the core asks of a model and what crosses between them.

It sits low (above config, below tools) because the engine's rounds, the routing backends and a
tool's schema all speak it, and none of them may import another to reach it.

    ports.py  `ChatModel`, the port every model adapter fills, and `ModelCapabilities`
    wire.py   `ModelRequest`, the model's stream events, `ToolSpec`, `ToolCall`, `Completion`

Public names: `__all__`, imported from the module that defines them (see core/__init__.py).
"""

from __future__ import annotations

from .ports import UNKNOWN_CAPABILITIES, ChatModel, ModelCapabilities
from .wire import (
    Completion,
    ModelEvent,
    ModelRequest,
    ReasoningChunk,
    TextChunk,
    ToolCall,
    ToolCallChunk,
    ToolSpec,
    UsageReport,
)

__all__ = ["UNKNOWN_CAPABILITIES", "ChatModel", "ModelCapabilities"]
__all__ += ["Completion", "ModelEvent", "ModelRequest", "ReasoningChunk", "TextChunk", "ToolCall"]
__all__ += ["ToolCallChunk", "ToolSpec", "UsageReport"]

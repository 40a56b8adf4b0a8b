"""Tool names a profile may list. The engine's tool registry lives beside this."""

from __future__ import annotations

BUILTIN_TOOL_NAMES = frozenset(
    {
        "read_file",
        "list_files",
        "search_files",
        "run_command",
        "find_order",
        "list_orders",
        "track_shipment",
        "create_return",
        "create_ticket",
    }
)


def known_tool_names() -> frozenset[str]:
    """Every tool name a profile may list."""
    return BUILTIN_TOOL_NAMES

"""Tools: schemas from signatures and docstrings, argument checks, the registry."""

from __future__ import annotations

import enum
from typing import Any, Literal

import pytest

from modes_tui.core.edits import session_tools
from modes_tui.core.tools.registry import (
    BUILTIN_TOOL_NAMES,
    ToolRegistry,
    check_arguments,
    known_tool_names,
    schema_of,
    tool,
)


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


def test_schema_comes_from_the_signature_and_the_docstring() -> None:
    @tool
    def search(
        query: str,
        limit: int = 10,
        exact: bool = False,
        tags: list[str] | None = None,
        sort: Literal["new", "old"] = "new",
        colour: Colour = Colour.RED,
    ) -> list[str]:
        """Search the notes.

        Finds notes whose text matches.

        Args:
            query: What to look for,
                over several lines.
            limit: How many results at most.
            tags: Only notes with these tags.
        """
        return []

    assert search.name == "search"
    assert search.description == "Search the notes.\n\nFinds notes whose text matches."
    params = search.parameters
    assert params["required"] == ["query"]
    assert params["additionalProperties"] is False
    props = params["properties"]
    assert props["query"] == {
        "type": "string",
        "description": "What to look for, over several lines.",
    }
    assert props["limit"] == {
        "type": "integer",
        "description": "How many results at most.",
        "default": 10,
    }
    assert props["exact"] == {"type": "boolean", "default": False}
    assert props["tags"] == {
        "type": "array",
        "items": {"type": "string"},
        "description": "Only notes with these tags.",
    }
    assert props["sort"] == {"enum": ["new", "old"], "type": "string", "default": "new"}
    assert props["colour"] == {"enum": ["red", "blue"], "type": "string", "default": "red"}
    assert search.spec.to_dict()["function"]["name"] == "search"


def test_a_tool_needs_a_docstring_and_json_types() -> None:
    def nodoc(x: str) -> str:
        return x

    with pytest.raises(TypeError, match="docstring"):
        tool(nodoc)

    def odd(x: complex) -> str:
        """Odd."""
        return ""

    with pytest.raises(TypeError, match="parameter 'x'"):
        tool(odd)

    def star(*args: str) -> str:
        """Star."""
        return ""

    with pytest.raises(TypeError, match=r"\*args"):
        tool(star)


@pytest.mark.parametrize(
    ("annotation", "expected"),
    [
        (float, {"type": "number"}),
        (dict[str, int], {"type": "object", "additionalProperties": {"type": "integer"}}),
        (int | str, {"anyOf": [{"type": "integer"}, {"type": "string"}]}),
        (tuple[int, ...], {"type": "array", "items": {"type": "integer"}}),
        (Any, {}),
    ],
)
def test_schema_of_common_types(annotation: Any, expected: dict[str, Any]) -> None:
    assert schema_of(annotation) == expected


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({"query": "x"}, None),
        ({}, "missing required argument 'query'"),
        ({"query": 3}, "argument 'query' must be a string, got an integer"),
        ({"query": "x", "limit": True}, "argument 'limit' must be an integer, got a boolean"),
        ({"query": "x", "limit": 2.5}, "argument 'limit' must be an integer, got a number"),
        ({"query": "x", "sort": "sideways"}, "argument 'sort' must be one of 'new', 'old'"),
        ({"query": "x", "tags": ["a", 1]}, "argument 'tags' item 1 must be a string"),
        ({"query": "x", "nope": 1}, "unknown argument 'nope'"),
        ({"query": "x", "tags": None}, None),
    ],
)
def test_arguments_are_checked_against_the_schema(
    arguments: dict[str, Any], problem: str | None
) -> None:
    @tool
    def search(
        query: str,
        limit: int = 10,
        tags: list[str] | None = None,
        sort: Literal["new", "old"] = "new",
    ) -> str:
        """Search."""
        return ""

    found = check_arguments(search.parameters, arguments)
    if problem is None:
        assert found is None
    else:
        assert found is not None and problem in found


async def test_sync_and_async_tools_are_invoked() -> None:
    @tool
    def double(x: int) -> int:
        """Double it."""
        return 2 * x

    @tool(name="triple", needs_confirmation=True)
    async def triple_it(x: int) -> int:
        """Triple it."""
        return 3 * x

    assert await double.invoke({"x": 2}) == 4
    assert await triple_it.invoke({"x": 2}) == 6
    assert triple_it.name == "triple" and triple_it.needs_confirmation


def test_the_registry_holds_tools_by_name() -> None:
    def ping() -> str:
        """Ping."""
        return "pong"

    registry = ToolRegistry()
    registry.add(ping)
    assert "ping" in registry and len(registry) == 1
    with pytest.raises(ValueError, match="already registered"):
        registry.add(ping)
    assert [t.name for t in registry.select(["nope", "ping"])] == ["ping"]


def test_the_default_registry_has_every_name_a_profile_may_list(tmp_path: Any) -> None:
    registry = session_tools(tmp_path)  # default_registry plus the edit tools (issue 23)
    assert registry.names() == BUILTIN_TOOL_NAMES == known_tool_names()
    assert registry.get("run_command") is not None
    assert registry.get("run_command").needs_confirmation  # type: ignore[union-attr]
    assert not registry.get("read_file").needs_confirmation  # type: ignore[union-attr]

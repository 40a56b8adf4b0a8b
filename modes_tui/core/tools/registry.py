"""Tools: plain Python functions the model may call, and the registry that holds them.

A tool's JSON schema comes from its signature (type hints, defaults) and its docstring
(the text before `Args:` describes the tool; each `name: text` line under `Args:` describes
a parameter), so a tool is written once, as ordinary code:

    @tool
    def find_order(order_id: str) -> dict[str, Any]:
        '''Look up one order by its number.

        Args:
            order_id: The order number, e.g. NW-10234.
        '''

A tool reports a problem the model should read by raising `ToolError`; any other exception
is a bug, reaches the model as a generic error, and is logged in full (see `core/engine/tool_calls.py`).
The built-in tools live in `workspace.py` (files and commands); a pack brings its own through
`python:` references (`core/packs/tools.py`); `toolbox.default_registry` puts them together.
"""

from __future__ import annotations

import asyncio
import enum
import inspect
import re
import types
import typing
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Union, get_args, get_origin, overload

from modes_tui.core.errors import ToolError
from modes_tui.core.model.wire import ToolSpec

BUILTIN_TOOL_NAMES = frozenset(
    {
        "read_file",
        "list_files",
        "search_files",
        "run_command",
        "write_file",
        "edit_file",
        "switch_mode",
    }
)


def known_tool_names() -> frozenset[str]:
    """Every built-in tool name a profile may list (a pack's own tools come on top)."""
    return BUILTIN_TOOL_NAMES


@dataclass(frozen=True, slots=True)
class Tool:
    """One callable tool: what the model sees and the function that runs."""

    name: str
    """The name the model calls it by."""
    description: str
    """What it does (from the docstring)."""
    parameters: Mapping[str, Any]
    """JSON schema of its arguments (from the signature)."""
    function: Callable[..., Any]
    """The function; sync functions run in a worker thread, async ones on the loop."""
    needs_confirmation: bool = False
    """The user is asked before every call (run_command)."""
    timeout: float | None = None
    """Seconds before the engine stops waiting; None uses the engine's limit."""
    source: str = "built-in"
    """Where it comes from: `built-in`, `pack:<pack>` for a pack's own, or `mcp:<server>`."""

    @property
    def spec(self) -> ToolSpec:
        """The tool as the model sees it."""
        return ToolSpec(self.name, self.description, self.parameters)

    def check_arguments(self, arguments: Mapping[str, Any]) -> str | None:
        """Why `arguments` do not fit the schema, or None when they do."""
        return check_arguments(self.parameters, arguments)

    async def invoke(self, arguments: Mapping[str, Any]) -> Any:
        """Run the function with `arguments` (already checked)."""
        if inspect.iscoroutinefunction(self.function):
            return await self.function(**arguments)
        result = await asyncio.to_thread(self.function, **arguments)
        if inspect.isawaitable(result):
            return await result
        return result


ToolFunction = Callable[..., Any] | Callable[..., Awaitable[Any]]


@overload
def tool(function: ToolFunction, /) -> Tool: ...
@overload
def tool(
    *,
    name: str | None = None,
    needs_confirmation: bool = False,
    timeout: float | None = None,
) -> Callable[[ToolFunction], Tool]: ...
def tool(
    function: ToolFunction | None = None,
    /,
    *,
    name: str | None = None,
    needs_confirmation: bool = False,
    timeout: float | None = None,
) -> Tool | Callable[[ToolFunction], Tool]:
    """Make a `Tool` of a function, its schema derived from its signature and docstring."""

    def build(fn: ToolFunction) -> Tool:
        description, parameters = describe(fn)
        return Tool(
            name=name or fn.__name__,
            description=description,
            parameters=parameters,
            function=fn,
            needs_confirmation=needs_confirmation,
            timeout=timeout,
        )

    return build(function) if function is not None else build


# --------------------------------------------------------------------------- schemas

_SECTION = re.compile(
    r"^\s*(Args|Arguments|Parameters|Returns|Raises|Yields|Examples?|Notes?):\s*$"
)
_ARG_LINE = re.compile(r"^(\s*)(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


def describe(fn: Callable[..., Any]) -> tuple[str, dict[str, Any]]:
    """(description, parameters schema) of `fn`; TypeError for a signature with no schema."""
    doc = inspect.getdoc(fn) or ""
    description, arg_docs = _parse_docstring(doc)
    if not description:
        raise TypeError(f"tool {fn.__name__!r} needs a docstring saying what it does")
    try:
        hints = typing.get_type_hints(fn)
    except (NameError, TypeError) as error:
        raise TypeError(f"tool {fn.__name__!r}: cannot read its type hints ({error})") from error
    properties: dict[str, Any] = {}
    required: list[str] = []
    for parameter in inspect.signature(fn).parameters.values():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            raise TypeError(f"tool {fn.__name__!r}: *args and **kwargs have no JSON schema")
        if parameter.kind is parameter.POSITIONAL_ONLY:
            raise TypeError(f"tool {fn.__name__!r}: positional-only parameters cannot be named")
        annotation = hints.get(parameter.name, Any)
        try:
            schema = schema_of(annotation)
        except TypeError as error:
            raise TypeError(
                f"tool {fn.__name__!r}, parameter {parameter.name!r}: {error}"
            ) from None
        if parameter.name in arg_docs:
            schema["description"] = arg_docs[parameter.name]
        if parameter.default is inspect.Parameter.empty:
            required.append(parameter.name)
        elif parameter.default is not None and _is_json(parameter.default):
            schema["default"] = (
                parameter.default.value
                if isinstance(parameter.default, enum.Enum)
                else parameter.default
            )
        properties[parameter.name] = schema
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        parameters["required"] = required
    return description, parameters


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """The text before the first section, and the `Args:` descriptions by name."""
    description_lines: list[str] = []
    args: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    indent: int | None = None
    for line in doc.splitlines():
        header = _SECTION.match(line)
        if header:
            section = header.group(1)
            current, indent = None, None
            continue
        if section is None:
            description_lines.append(line)
            continue
        if section not in {"Args", "Arguments", "Parameters"} or not line.strip():
            continue
        match = _ARG_LINE.match(line)
        line_indent = len(line) - len(line.lstrip())
        if match and (indent is None or line_indent <= indent):
            indent = line_indent
            current = match.group(2).lstrip("*")
            args[current] = match.group(3).strip()
        elif current is not None:
            args[current] = f"{args[current]} {line.strip()}".strip()
    paragraphs = "\n".join(description_lines).strip().split("\n\n")
    description = "\n\n".join(" ".join(p.split()) for p in paragraphs if p.strip())
    return description, args


_SCALARS: tuple[tuple[Any, str], ...] = (
    (str, "string"),
    (bool, "boolean"),
    (int, "integer"),
    (float, "number"),
    (type(None), "null"),
)
"""Python types that are one JSON type (checked by identity: bool is not int here)."""


def schema_of(annotation: Any) -> dict[str, Any]:
    """The JSON schema of a type hint (str, int, float, bool, Literal, Enum, list, dict, X | None)."""
    if annotation is Any or annotation is inspect.Parameter.empty:
        return {}
    for scalar, name in _SCALARS:
        if annotation is scalar:
            return {"type": name}
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return _enum_schema([member.value for member in annotation])
    origin = get_origin(annotation)
    args = get_args(annotation)
    if origin is Literal:
        return _enum_schema(list(args))
    if origin in (Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        if len(options) == 1:
            return schema_of(options[0])
        return {"anyOf": [schema_of(a) for a in options]}
    if annotation in (list, tuple, set, frozenset) or origin in (
        list,
        tuple,
        set,
        frozenset,
        Sequence,
        Iterable,
    ):
        items = args[0] if args else Any
        return {"type": "array", "items": schema_of(items)}
    if annotation is dict or origin in (dict, Mapping):
        schema: dict[str, Any] = {"type": "object"}
        if len(args) == 2 and args[1] is not Any:
            schema["additionalProperties"] = schema_of(args[1])
        return schema
    raise TypeError(f"{annotation!r} has no JSON schema; use str, int, float, bool, Literal, list")


def _enum_schema(values: list[Any]) -> dict[str, Any]:
    kinds = {type(v) for v in values}
    schema: dict[str, Any] = {"enum": list(values)}
    if kinds == {str}:
        schema["type"] = "string"
    elif kinds <= {int} and bool not in kinds:
        schema["type"] = "integer"
    return schema


def _is_json(value: Any) -> bool:
    if isinstance(value, enum.Enum):
        return _is_json(value.value)
    if isinstance(value, str | int | float | bool):
        return True
    if isinstance(value, list | tuple):
        return all(_is_json(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_json(v) for k, v in value.items())
    return False


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}


def check_arguments(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> str | None:
    """Why `arguments` do not fit a tool's `schema` (the subset `describe` makes), or None."""
    properties: Mapping[str, Any] = schema.get("properties", {})
    problems: list[str] = []
    for name in schema.get("required", ()):
        if name not in arguments:
            problems.append(f"missing required argument {name!r}")
    # JSON Schema allows unlisted arguments unless told otherwise; our own schemas say
    # `additionalProperties: false`, MCP servers' schemas often say nothing.
    closed = schema.get("additionalProperties", True) is False
    for name, value in arguments.items():
        if name not in properties:
            if not closed:
                continue
            known = ", ".join(properties) or "none"
            problems.append(f"unknown argument {name!r} (arguments: {known})")
            continue
        problem = _check_value(properties[name], value)
        if problem:
            problems.append(f"argument {name!r} {problem}")
    return "; ".join(problems) or None


def _check_value(schema: Mapping[str, Any], value: Any) -> str | None:
    if "enum" in schema and value not in schema["enum"]:
        return f"must be one of {', '.join(map(repr, schema['enum']))}, got {value!r}"
    if "anyOf" in schema:
        if value is None or all(_check_value(option, value) for option in schema["anyOf"]):
            return None if value is None else "does not match any allowed type"
        return None
    kind = schema.get("type")
    if kind is None or value is None:
        return None  # optional arguments may be null
    if isinstance(kind, list):  # {"type": ["string", "integer"]}: any of them will do
        options = [_check_value({**schema, "type": option}, value) for option in kind]
        if all(options):
            return f"must be one of the types {', '.join(map(str, kind))}, got {_json_name(value)}"
        return None
    allowed = _JSON_TYPES.get(kind, (object,))
    if isinstance(value, bool) and kind in {"integer", "number"}:
        return f"must be {_article(kind)}, got a boolean"
    if not isinstance(value, allowed):
        return f"must be {_article(kind)}, got {_json_name(value)}"
    if kind == "array" and "items" in schema and isinstance(value, list):
        for index, item in enumerate(value):
            problem = _check_value(schema["items"], item)
            if problem:
                return f"item {index} {problem}"
    return None


def _article(kind: str) -> str:
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"


def _json_name(value: Any) -> str:
    for name, kinds in _JSON_TYPES.items():
        if isinstance(value, kinds) and not (isinstance(value, bool) and name != "boolean"):
            return _article(name)
    return type(value).__name__


# --------------------------------------------------------------------------- registry


class ToolRegistry:
    """Every tool the engine can offer, by name; a mode offers only the ones it lists."""

    def __init__(self, tools: Iterable[Tool] = (), *, editor: Any = None) -> None:
        self.tools: dict[str, Tool] = {}
        """Name -> tool."""
        self.editor = editor
        """The `core.edits.Editor` behind write_file and edit_file, if they are here: the
        engine binds it to its session (checkpoints, the turn) and its policy guard."""
        for item in tools:
            self.add(item)

    def add(self, item: Tool | ToolFunction) -> Tool:
        """Register a tool (a plain function is turned into one); a name may be used once."""
        built = item if isinstance(item, Tool) else tool(item)
        if built.name in self.tools:
            raise ValueError(f"a tool called {built.name!r} is already registered")
        self.tools[built.name] = built
        return built

    def get(self, name: str) -> Tool | None:
        """The tool called `name`, or None."""
        return self.tools.get(name)

    def names(self) -> frozenset[str]:
        """Every registered name."""
        return frozenset(self.tools)

    def select(self, names: Iterable[str]) -> tuple[Tool, ...]:
        """The registered tools among `names`, in that order (unknown names are skipped)."""
        return tuple(self.tools[name] for name in names if name in self.tools)

    def __contains__(self, name: object) -> bool:
        return name in self.tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(self.tools.values())

    def __len__(self) -> int:
        return len(self.tools)


__all__ = [
    "BUILTIN_TOOL_NAMES",
    "Tool",
    "ToolError",
    "ToolRegistry",
    "check_arguments",
    "describe",
    "known_tool_names",
    "schema_of",
    "tool",
]

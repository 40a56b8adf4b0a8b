"""A tool call and its result as a person would write them down.

The command (or the path, or the query) is the title: `$ ls -la`, `read_file src/a.py`,
`search_files "TODO" in src`; the result is its lines, not the JSON the model reads:
`{"exit_code": 1, "output": "one\\ntwo\\n"}` is the lines `one` and `two` with
"failed: exit code 1". One formatter for the TUI's cards, the REPL's lines and the exported
Markdown, so the three say the same. A turn that ended with no text and no tool call gets
one note, `EMPTY_ANSWER`, in the TUI and the REPL alike.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from modes_tui.core.terminal_text import terminal_safe

EMPTY_ANSWER = "the model's answer has no text"
"""Under a finished turn with no text and no tool call (`TurnTranscript.said_nothing`)."""
TITLE_ARGUMENT = {
    "run_command": "command",
    "read_file": "path",
    "list_files": "path",
    "search_files": "pattern",
    "write_file": "path",
    "edit_file": "path",
}
"""The argument a known tool's title shows first (the others follow it)."""
SHOWN_AS = {"search_files": {"path": "in"}}
"""Arguments shown with a word rather than `name=value`: `search_files "x" in src`."""
LINE_LIMIT = 400
"""Characters of one output line shown in a preview (the whole in the inspector, exports)."""


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool gave back, as lines a person reads."""

    lines: tuple[str, ...]
    """The output's lines (a command's output, a file's text, a listing...)."""
    status: str
    """What became of the call: `ok`, `ok · exit code 0`, `failed: exit code 2`,
    `failed: timed out (stopped after 5 seconds)`, `cancelled: refused`, `error`."""
    failed: bool
    """The call failed, even if the tool itself worked (a command exiting non-zero)."""


@dataclass(frozen=True, slots=True)
class Folded:
    """The first lines of an output, and how many more there are."""

    lines: tuple[str, ...]
    hidden: int

    @property
    def note(self) -> str:
        """`… 3 more lines` ('' when nothing is hidden)."""
        if not self.hidden:
            return ""
        return f"… {self.hidden} more line{'s' if self.hidden != 1 else ''}"


def tool_title(name: str, arguments: Mapping[str, Any]) -> str:
    """The call as a person would write it: `$ ls -la`, `read_file a.py (start_line=3)`
    (terminal-safe: a model wrote it)."""
    return terminal_safe(_title(name, arguments))


def _title(name: str, arguments: Mapping[str, Any]) -> str:
    first = TITLE_ARGUMENT.get(name)
    if first is None and len(arguments) == 1:
        first = next(iter(arguments))
    words = SHOWN_AS.get(name, {})
    head = name
    if first is not None and first in arguments:
        value = arguments[first]
        if name == "run_command" and isinstance(value, str):
            head = f"$ {value}"
        else:
            head = f"{name} {_quoted(value) if name == 'search_files' else _value(value)}"
    rest = {k: v for k, v in arguments.items() if k != first}
    for key, word in words.items():
        if key in rest:
            head += f" {word} {_value(rest.pop(key))}"
    if rest:
        head += " (" + ", ".join(f"{k}={_value(v)}" for k, v in rest.items()) + ")"
    return head


def _value(value: Any) -> str:
    """A string as written (quoted when it holds a space or is empty); anything else as JSON."""
    if isinstance(value, str) and value and not any(c.isspace() for c in value):
        return value
    return _quoted(value)


def _quoted(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def tool_result(outcome: str | None, result: str) -> ToolResult:
    """The result's lines and status. A JSON result is unpacked: a command's output and exit
    code, a message, each field on a line of its own; anything else is its text's lines.
    Terminal-safe: JSON's `\\u001b` is an escape character once decoded, and is removed."""
    found = _result(outcome, result)
    return ToolResult(
        tuple(terminal_safe(line) for line in found.lines),
        terminal_safe(found.status),
        found.failed,
    )


def _result(outcome: str | None, result: str) -> ToolResult:
    outcome = outcome or ""
    try:
        value = json.loads(result)
    except (TypeError, ValueError):
        return ToolResult(tuple(result.splitlines()), outcome, outcome not in ("", "ok"))
    if isinstance(value, dict):
        return _from_fields(outcome, value)
    if isinstance(value, str):
        lines: tuple[str, ...] = tuple(value.splitlines())
    elif isinstance(value, list):
        lines = tuple(line for item in value for line in _item_lines(item))
    else:
        lines = (_quoted(value),)
    return ToolResult(lines, outcome, outcome not in ("", "ok"))


def _item_lines(item: Any) -> list[str]:
    return item.splitlines() if isinstance(item, str) else [_quoted(item)]


def _from_fields(outcome: str, fields: dict[str, Any]) -> ToolResult:
    """A command's `{exit_code, output, timed_out}`, a refusal's `{cancelled, reason}`, or
    any other object: its text field as lines, the others as `name: value`."""
    fields = dict(fields)
    status, failed = outcome, outcome not in ("", "ok")
    code = fields.pop("exit_code", None)
    timed_out = fields.pop("timed_out", None)
    if fields.get("cancelled") is True:
        fields.pop("cancelled")
        reason = fields.pop("reason", None)
        status, failed = ("cancelled: " + str(reason)) if reason else "cancelled", True
    if timed_out:
        why = f" ({timed_out})" if isinstance(timed_out, str) else ""
        status, failed = f"failed: timed out{why}", True
    elif isinstance(code, int) and not isinstance(code, bool):
        if code != 0:
            status, failed = f"failed: exit code {code}", True
        else:
            status = f"{outcome or 'ok'} · exit code 0"
    lines: list[str] = []
    for key in ("output", "content", "text", "error", "message"):
        text = fields.get(key)
        if isinstance(text, str):
            del fields[key]
            lines += text.splitlines()
            break
    for key, value in fields.items():
        if isinstance(value, str) and "\n" in value:
            lines += [f"{key}:", *(f"  {line}" for line in value.splitlines())]
        else:
            lines.append(f"{key}: {value if isinstance(value, str) else _quoted(value)}")
    return ToolResult(tuple(lines), status, failed)


def fold(lines: Sequence[str], limit: int, *, width: int = LINE_LIMIT) -> Folded:
    """At most `limit` lines, each cut at `width` characters (with `…`)."""
    shown = tuple(line if len(line) <= width else line[:width] + "…" for line in lines[:limit])
    return Folded(shown, max(0, len(lines) - limit))

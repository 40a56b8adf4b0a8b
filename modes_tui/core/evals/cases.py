"""Eval files: JSON Lines of messages and the mode each should route to.

    {"text": "why does this loop never end", "mode": "code", "history": [...]}

`mode` is a mode name, or null when the router should fall back (the message belongs to no
mode). `history` (optional) is the conversation before the message: `{"role", "content"}`
objects (an assistant entry may carry `"mode"`, which stickiness reads) or plain strings.
`group` (optional) labels the line for the per-case report (`eval --json`).
`previous_mode` (optional) is the mode that answered the turn before the message, when the
history does not say it (an assistant entry's `"mode"` does). A case whose expected mode is
the previous mode is a follow-up; one with a previous mode and another expectation is a
switch (`modes-tui eval` scores them apart).
`read_eval_file` checks every line and raises one `EvalFileError` listing the bad ones.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from modes_tui.core.errors import ModesError, cut_repr
from modes_tui.core.files import read_text

MAX_REPORTED_PROBLEMS = 20
"""Bad lines listed in full; the rest are counted."""


class EvalFileError(ModesError):
    """An eval file has bad lines; lists each with its file and line number."""

    title = "Bad eval file"

    def __init__(self, path: str, problems: Sequence[tuple[int, str]]) -> None:
        self.path = path
        self.problems = tuple(problems)
        shown = [
            f"  {path}:{line}: {message}" for line, message in problems[:MAX_REPORTED_PROBLEMS]
        ]
        more = len(problems) - len(shown)
        if more > 0:
            shown.append(f"  ... and {more} more")
        count = len(problems)
        head = f"{path} has {count} bad line{'s' if count != 1 else ''}:"
        super().__init__("\n".join([head, *shown]))


@dataclass(frozen=True, slots=True)
class EvalCase:
    """One line of an eval file."""

    text: str
    """The user message to route."""
    mode: str | None
    """The expected mode, or None when a fallback is expected."""
    history: tuple[Mapping[str, Any] | str, ...] = ()
    """The conversation before the message."""
    line: int = 0
    """Its line number in the file (1-based)."""
    previous_mode: str | None = None
    """The mode that answered the previous turn (`previous_mode`, else the history's last
    assistant `mode`); None when nothing answered before."""
    group: str | None = None
    """A label the file gives the line (`group`), reported per case by `eval --json`."""

    @property
    def kind(self) -> str | None:
        """`follow-up` (expects the previous mode), `switch` (expects another), or None."""
        if self.previous_mode is None:
            return None
        return "follow-up" if self.mode == self.previous_mode else "switch"

    def conversation(self) -> list[Mapping[str, Any] | str]:
        """History plus the message, as the router reads it."""
        return [*self.history, {"role": "user", "content": self.text}]

    def route_options(self) -> dict[str, Any]:
        """`Router.route` keywords: the previous mode, when the line names one."""
        return {} if self.previous_mode is None else {"current_mode": self.previous_mode}


def read_eval_file(path: str | Path, modes: Iterable[str] | None = None) -> list[EvalCase]:
    """Parse and check an eval file; raise one EvalFileError listing every bad line.

    With `modes`, an expected mode that is not among them is a bad line too.
    """
    shown = str(path)
    known = set(modes) if modes is not None else None
    try:
        text = read_text(Path(path), "pack", follow=True)
    except FileNotFoundError:
        raise ModesError(f"{shown}: no such file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ModesError(f"{shown}: cannot read: {error}") from None
    cases: list[EvalCase] = []
    problems: list[tuple[int, str]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as error:
            problems.append((number, f"not valid JSON ({error.msg} at column {error.colno})"))
            continue
        problem = _check_case(data, known)
        if problem:
            problems.append((number, problem))
            continue
        history = tuple(
            entry if isinstance(entry, str) else dict(entry) for entry in data.get("history") or ()
        )
        previous = data.get("previous_mode") or _last_assistant_mode(history)
        group = data.get("group")
        cases.append(EvalCase(data["text"], data.get("mode"), history, number, previous, group))
    if problems:
        raise EvalFileError(shown, problems)
    if not cases:
        raise ModesError(
            f'{shown}: no cases; write one JSON object per line, e.g. {{"text": "hi", "mode": "chat"}}'
        )
    return cases


def _check_case(data: Any, known: set[str] | None) -> str | None:
    """What is wrong with one case line (None: nothing), field by field."""
    if not isinstance(data, dict):
        return f'must be a JSON object like {{"text": ..., "mode": ...}}, not {type(data).__name__}'
    unknown = sorted(set(data) - {"text", "mode", "history", "previous_mode", "group"})
    if unknown:
        return f"unknown key {cut_repr(unknown[0])}; keys are text, mode, history, previous_mode, group"
    if data.get("group") is not None and not isinstance(data["group"], str):
        return f"`group` must be text, not {cut_repr(data['group'])}"
    previous = data.get("previous_mode")
    if previous is not None:
        problem = _check_mode_name("previous_mode", previous, known, "a mode name")
        if problem:
            return problem
    text = data.get("text")
    if not isinstance(text, str) or not text.strip():
        return "`text` must be non-empty text"
    if "mode" not in data:
        return "`mode` is missing; give a mode name, or null when the router should fall back"
    if data["mode"] is not None:
        problem = _check_mode_name("mode", data["mode"], known, "a mode name or null")
        if problem:
            return problem
    return _check_history(data.get("history", []))


def _check_mode_name(key: str, value: Any, known: set[str] | None, expected: str) -> str | None:
    """A mode named by `key`: text, and a mode of the pack when the pack is known."""
    if not isinstance(value, str):
        return f"`{key}` must be {expected}, not {cut_repr(value)}"
    if known is not None and value not in known:
        return f"`{key}` {cut_repr(value)} is not a mode of this pack (modes: {', '.join(sorted(known))})"
    return None


def _check_history(history: Any) -> str | None:
    """`history`: absent or null, or a list of texts and {role, content} objects."""
    if history is None:
        return None
    if not isinstance(history, list):
        return "`history` must be a list of {role, content} objects"
    for index, entry in enumerate(history):
        if isinstance(entry, str):
            continue
        if (
            not isinstance(entry, dict)
            or entry.get("role") not in {"user", "assistant", "system"}
            or not isinstance(entry.get("content"), str)
        ):
            return f'`history[{index}]` must be {{"role": "user"|"assistant", "content": text}}'
    return None


def _last_assistant_mode(history: Sequence[Mapping[str, Any] | str]) -> str | None:
    for entry in reversed(history):
        if isinstance(entry, Mapping) and entry.get("role") == "assistant":
            mode = entry.get("mode")
            if isinstance(mode, str) and mode:
                return mode
    return None

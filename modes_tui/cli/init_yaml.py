"""config.yaml as text for `modes-tui init`: new settings merged in, the user's lines kept.

Re-writing a user's file through a YAML writer would drop their comments and re-wrap every
value, and the diff init shows would be the whole file. Instead the file's top-level blocks
are kept as written: new aliases are appended to a block-style `models:`, `roles:` is written
anew (it is short, and `fast`/`strong` change in it), a missing key is appended. The result
is parsed back and must equal the intended settings; when it does not (a flow-style
mapping, an odd layout), the whole file is written by the YAML writer instead.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

TOP_KEY = re.compile(r"^([A-Za-z_][\w.-]*)\s*:")
BLOCK_START = re.compile(r"^([A-Za-z_][\w.-]*)\s*:\s*(#.*)?$")
"""A top-level key whose value follows on the next lines (block style)."""


def dump(data: Mapping[str, Any], indent: int = 0) -> str:
    """YAML for `data`, one value per line (never wrapped), indented by `indent` spaces."""
    import yaml

    text = yaml.safe_dump(dict(data), sort_keys=False, allow_unicode=False, width=float("inf"))
    pad = " " * indent
    return "".join(pad + line if line.strip() else line for line in text.splitlines(True))


def blocks(lines: list[str]) -> dict[str, tuple[int, int]]:
    """Top-level key -> (first line, end line) of its block (end: exclusive, trailing blank
    and comment lines left to the next block)."""
    starts = [(i, m.group(1)) for i, line in enumerate(lines) if (m := TOP_KEY.match(line))]
    found: dict[str, tuple[int, int]] = {}
    for number, (start, key) in enumerate(starts):
        end = starts[number + 1][0] if number + 1 < len(starts) else len(lines)
        while end - 1 > start and (not lines[end - 1].strip() or lines[end - 1].startswith("#")):
            end -= 1
        found[key] = (start, end)
    return found


def merged_text(
    old_text: str, merged: Mapping[str, Any], added_models: Mapping[str, Any], header: str
) -> str:
    """`old_text` with `merged`'s default_model, models and roles in it, its other lines kept;
    the whole of `merged` written anew when the lines cannot carry it."""
    from modes_tui.core.yaml_files import load_yaml

    before = load_yaml(old_text) or {}
    lines = old_text.splitlines(True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    found = blocks(lines)
    edits: list[tuple[int, int, str]] = []  # (start, end, replacement), applied bottom-up
    tail: list[str] = []
    models = found.get("models")
    if added_models and models is not None and BLOCK_START.match(lines[models[0]]):
        edits.append((models[1], models[1], dump(added_models, indent=2)))
    elif added_models and models is not None:
        edits.append((models[0], models[1], dump({"models": merged["models"]})))
    elif added_models:
        tail.append(dump({"models": merged["models"]}))
    for key in ("roles", "default_model"):
        if key not in merged or before.get(key) == merged[key]:
            continue  # unchanged: their lines stay as written
        if key in found:
            start, end = found[key]
            edits.append((start, end, dump({key: merged[key]})))
        else:
            tail.append(dump({key: merged[key]}))
    for start, end, text in sorted(edits, reverse=True):
        lines[start:end] = [text]
    result = "".join(lines) + "".join(tail)
    try:
        if load_yaml(result) == dict(merged):
            return result
    except Exception:  # noqa: BLE001 - any doubt: write the whole file anew
        pass
    return header + dump(merged)

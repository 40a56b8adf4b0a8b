"""YAML as modes-tui reads it: safe types only, and aliases that cannot explode.

An alias (`*name`) repeats a node that an anchor (`&name`) named. Nine anchors of nine
aliases each expand to 9**9 (387 million) strings, in a file of a few hundred bytes: a
"billion laughs". Walking such a value (validating it, or building its `repr` for an error
message) takes minutes and all the memory there is.

Aliases themselves are ordinary YAML: people use anchors to share a block of headers between
two models, and PyYAML's own `safe_dump` writes `&id001`/`*id001` whenever a value appears
twice. So the loader keeps them and bounds what they expand to instead: while composing, it
counts the values the document holds once every alias is expanded (linear in the file, each
node counted once through a memo) and stops at the first node past `MAX_EXPANDED_VALUES`,
naming its line, before anything is built. An alias to a node that contains it (a recursive
value, which no validator can walk) is refused the same way.

A key written twice in one mapping is an error too, naming both lines: YAML would keep the
last silently, so a second `models:` block would quietly replace the first. (A key a merge
`<<: *base` brings in may be set again: that is what merging is for.)

Every YAML file modes-tui reads (config.yaml, profiles, router.yaml) goes through `load_yaml`.
"""

from __future__ import annotations

import re
from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError
from yaml.error import Mark
from yaml.events import AliasEvent
from yaml.nodes import CollectionNode, MappingNode, Node, ScalarNode, SequenceNode

MAX_EXPANDED_VALUES = 100_000
"""How many values (scalars, lists, mappings) a document may hold with its aliases expanded.
A real config or profile holds a few hundred; a bomb passes this at its third level."""

ALIASES_TOO_LARGE = (
    f"aliases (*name) expand this document past {MAX_EXPANDED_VALUES:,} values; "
    "write the repeated parts out, or repeat them less"
)
"""The problem named when aliases make a document too large."""

ALIAS_RECURSIVE = "an alias (*name) refers to a value that contains it; write the value out"
"""The problem named when an alias makes a value contain itself."""

_MERGE = "tag:yaml.org,2002:merge"


class _BoundedAliasLoader(yaml.SafeLoader):
    """`yaml.SafeLoader` that counts the expanded size of every node it composes."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._expanded: dict[int, int] = {}

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        if self.check_event(AliasEvent):
            mark = self.peek_event().start_mark
            target = super().compose_node(parent, index)
            if target is not None and id(target) not in self._expanded:
                # anchored but not finished: the alias sits inside the value it names
                raise ComposerError(None, None, ALIAS_RECURSIVE, mark)
            return target  # counted when it was composed; its size is added by the parent
        node = super().compose_node(parent, index)
        if node is None:
            return node
        size = 1 + sum(self._expanded[id(child)] for child in _children(node))
        if size > MAX_EXPANDED_VALUES:
            raise ComposerError(None, None, ALIASES_TOO_LARGE, node.start_mark)
        self._expanded[id(node)] = size
        return node

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, MappingNode):
            _refuse_duplicates(node)
        return super().construct_mapping(node, deep=deep)


def _refuse_duplicates(node: MappingNode) -> None:
    """`ConstructorError` at the second of two equal keys of `node`, naming the first's line."""
    seen: dict[tuple[str, str], Mark] = {}
    for key, _ in node.value:
        if not isinstance(key, ScalarNode) or key.tag == _MERGE:
            continue
        first = seen.setdefault((key.tag, key.value), key.start_mark)
        if first is key.start_mark:
            continue
        again = key.start_mark
        where = (
            f"on line {first.line + 1} and on line {again.line + 1}"
            if first.line != again.line
            else f"on line {again.line + 1}, at columns {first.column + 1} and {again.column + 1}"
        )
        raise ConstructorError(
            None,
            None,
            f"the key {key.value!r} is written twice, {where}; keep one "
            "(YAML would silently use the last)",
            again,
        )


def _children(node: Node) -> list[Node]:
    if isinstance(node, MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, CollectionNode):
        return list(node.value)
    return []


def load_yaml(text: str) -> Any:
    """The value of the YAML document `text`; `yaml.YAMLError` (with `problem` and
    `problem_mark`) when it is not valid YAML or its aliases expand too far."""
    return yaml.load(text, Loader=_BoundedAliasLoader)


def yaml_problem(error: yaml.YAMLError) -> tuple[str, str]:
    """Where and what is wrong: (`line 3, column 8`, `aliases (*name) expand ...`);
    the place is empty when the parser did not say."""
    mark = getattr(error, "problem_mark", None)
    reason = str(getattr(error, "problem", None) or str(error).splitlines()[0])
    where = "" if mark is None else f"line {mark.line + 1}, column {mark.column + 1}"
    return where, reason


def yaml_refusal(path: object, error: Exception) -> str:
    """`<path>: not valid YAML at line 3, column 8: <what>; fix or move it, then run init
    again`, for any failure `load_yaml` raised (`init` reads config.yaml this way)."""
    if isinstance(error, yaml.YAMLError):
        where, reason = yaml_problem(error)
    else:
        where, reason = "", type(error).__name__
    return (
        f"{path}: not valid YAML at {where or 'its end'}: {reason}; "
        "fix or move it, then run init again"
    )


def key_place(text: str, field: str) -> str:
    """Where the key path `field` (`models.fast.model`, `examples[3]`) is written in the
    YAML document `text`: `line 3, column 5`; empty when it is not there or the text does
    not parse (the place is a help, never a second error)."""
    try:
        node = yaml.compose(text, Loader=_BoundedAliasLoader)
    except yaml.YAMLError:
        return ""
    mark = None
    for part in re.findall(r"\[\d+\]|[^.\[\]]+", field):
        mark, node = _step(node, part)
        if mark is None:
            return ""
    return "" if mark is None else f"line {mark.line + 1}, column {mark.column + 1}"


def _step(node: Node | None, part: str) -> tuple[Mark | None, Node | None]:
    """The place of `part` (a key, or `[index]`) in `node`, and the node it leads to."""
    if isinstance(node, MappingNode) and not part.startswith("["):
        for key, value in node.value:
            if isinstance(key, ScalarNode) and key.value == part:
                return key.start_mark, value
    if isinstance(node, SequenceNode):
        index = int(part.strip("[]")) if part.startswith("[") else -1
        if 0 <= index < len(node.value):
            return node.value[index].start_mark, node.value[index]
    return None, None

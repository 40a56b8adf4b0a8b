"""YAML as modes-tui reads it: safe types only, and no aliases.

An alias (`*name`) repeats a node that an anchor (`&name`) named. Nine anchors of nine
aliases each expand to 9**9 (387 million) strings, in a file of a few hundred bytes: a
"billion laughs". Walking such a value (validating it, or building its `repr` for an error
message) takes minutes and all the memory there is. No file of ours needs aliases, so the
loader refuses the first one with the file's line and column, before anything is built.
Every YAML file modes-tui reads (config.yaml, profiles, router.yaml) goes through
`load_yaml`.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.events import AliasEvent
from yaml.nodes import Node

ALIAS_REFUSED = "aliases (*name) are not allowed; write the value out in full"
"""The problem named when a file uses an alias."""


class _NoAliasLoader(yaml.SafeLoader):
    """`yaml.SafeLoader` that refuses aliases before composing them."""

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        if self.check_event(AliasEvent):
            event = self.peek_event()
            raise ComposerError(None, None, ALIAS_REFUSED, event.start_mark)
        return super().compose_node(parent, index)


def load_yaml(text: str) -> Any:
    """The value of the YAML document `text`; `yaml.YAMLError` (with `problem` and
    `problem_mark`) when it is not valid YAML or uses an alias."""
    return yaml.load(text, Loader=_NoAliasLoader)


def yaml_problem(error: yaml.YAMLError) -> tuple[str, str]:
    """Where and what is wrong: (`line 3, column 8`, `aliases (*name) are not allowed; ...`);
    the place is empty when the parser did not say."""
    mark = getattr(error, "problem_mark", None)
    reason = str(getattr(error, "problem", None) or str(error).splitlines()[0])
    where = "" if mark is None else f"line {mark.line + 1}, column {mark.column + 1}"
    return where, reason

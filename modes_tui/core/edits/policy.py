"""What a mode may do: its `permissions:` per tool and its `paths:`, read from its profile.

```yaml
permissions:            # allow | ask | deny per tool; the first rule that names it wins
  read_file: allow
  write_file: ask
  run_command: deny
  github__*: ask        # MCP tools are <server>__<tool>: a pattern covers a server
  default: ask          # every tool no rule names (omit it for the shipped default)
paths:
  write: ["src/**", "tests/**"]      # the only places the mode may write (omit: anywhere)
  deny: [".env", "**/*.pem", ".git/**"]   # nobody may read or write these
  hard_links: allow     # hard-linked files may be used (omit: refused, see core.tools.access)
hand_off: [code, shell]   # the modes switch_mode may hand a turn to (omit: any other)
```

Without a rule, a tool that asks by its nature (`run_command`, `write_file`, `edit_file`)
asks, and every other tool (reads inside the working directory, a pack's own tools) is
allowed: the shipped default. Every `paths:` rule is matched against the REAL path of the
file a tool opens (links inside the working directory followed): a link `g -> .git` is
judged as `.git`, `src/out -> ..` as the top. Without `paths: deny:` the mode gets `DEFAULT_DENY`; writing
`deny: []` opens everything (inside the working directory: nothing leaves it anyway).
An exact tool name wins over a pattern; patterns are tried in the order written.

`read_policy` turns a profile's mapping into a `Policy` and lists what is wrong as
(key, message) pairs; `core.profiles` reports them with the file (`profiles --check`).
"""

from __future__ import annotations

import difflib
import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from modes_tui.core.edits.globs import PathGlobs, check_glob
from modes_tui.core.errors import cut_repr
from modes_tui.core.tools.access import FileRules, literal_globs

__all__ = [
    "ASKS_BY_NATURE",
    "DEFAULT_DENY",
    "PERMISSIONS",
    "Permission",
    "Policy",
    "Rule",
    "hand_off_problems",
    "read_policy",
]

Permission = Literal["allow", "ask", "deny"]
PERMISSIONS: tuple[Permission, ...] = ("allow", "ask", "deny")
DEFAULT_DENY = (".env", ".env.*", "**/*.pem", "**/*.key", ".git/**")
"""What no mode may read or write unless its profile says otherwise (`paths: deny:`)."""
PATH_KEYS = ("write", "deny", "hard_links")
HARD_LINK_VALUES = ("allow", "deny")
ASKS_BY_NATURE = frozenset({"run_command", "write_file", "edit_file"})
"""Built-in tools that ask first unless a rule says otherwise (a tool's `needs_confirmation`)."""


@dataclass(frozen=True, slots=True)
class Rule:
    """Where a permission came from, for the panel, the log and `modes-tui tools`."""

    permission: Permission
    """allow, ask or deny."""
    source: str
    """`permissions.<key>` of the profile, or `default` (the shipped default)."""


@dataclass(frozen=True, slots=True)
class Policy:
    """A mode's permissions per tool and the paths it may write or nobody may touch."""

    tools: tuple[tuple[str, Permission], ...] = ()
    """`permissions:` entries (name or pattern, permission) in the order written."""
    default: Permission | None = None
    """`permissions: default:`; None: the shipped default (ask for tools that ask)."""
    write: PathGlobs = field(default_factory=PathGlobs)
    """`paths: write:`; empty: the mode may write anywhere in the working directory."""
    deny: PathGlobs = field(default_factory=lambda: PathGlobs(DEFAULT_DENY))
    """`paths: deny:`: nobody may read or write what these cover."""
    hand_off: tuple[str, ...] | None = None
    """`hand_off:`: the modes `switch_mode` may hand a turn to (None: any other mode)."""
    hard_links: bool = False
    """`paths: hard_links: allow`: hard-linked files may be read and written (a file that
    is the same as a literal deny path, e.g. `.env`, stays refused)."""

    def rule(self, tool: str, *, asks: bool) -> Rule:
        """The permission for `tool` (`asks`: it asks by its nature) and where it comes from."""
        for name, permission in self.tools:
            if name == tool:
                return Rule(permission, f"permissions.{name}")
        for name, permission in self.tools:
            if _is_pattern(name) and fnmatch.fnmatchcase(tool, name):
                return Rule(permission, f"permissions.{name}")
        if self.default is not None:
            return Rule(self.default, "permissions.default")
        return Rule("ask" if asks else "allow", "default")

    def denied(self, *paths: str) -> str | None:
        """The `deny:` glob that covers any of `paths`, or None."""
        return self.deny.match(*paths)

    def may_write(self, path: str) -> bool:
        """Whether `write:` lets the mode write the real path `path` (no `write:`: anywhere).

        One path, the real one: a name that matches while its real path does not
        (`src/out/x` with `src/out -> ..`) must not pass."""
        return not self.write or self.write.match(path) is not None

    def file_rules(self) -> FileRules:
        """The `paths:` rules as the file tools apply them to the file they opened."""
        return FileRules(
            denied=self.deny.match,
            write_globs=self.write.globs,
            writable=self.may_write if self.write else None,
            hard_links=self.hard_links,
            deny_literals=literal_globs(self.deny.globs),
        )

    def summary(self) -> dict[str, Any]:
        """Plain data for `--json`, the inspector and the session log."""
        rules = {name: permission for name, permission in self.tools}
        if self.default is not None:
            rules["default"] = self.default
        return {
            "permissions": rules,
            "paths": {
                "write": list(self.write.globs),
                "deny": list(self.deny.globs),
                "hard_links": "allow" if self.hard_links else "deny",
            },
            "hand_off": None if self.hand_off is None else list(self.hand_off),
        }

    def lines(self, tools: Iterable[str]) -> list[str]:
        """What the mode may do, for people: each tool's permission and rule, then paths."""
        shown = [f"{name}: {self._shown_rule(name)}" for name in tools]
        return [*shown, self.paths_text()]

    def _shown_rule(self, name: str) -> str:
        rule = self.rule(name, asks=name in ASKS_BY_NATURE)
        return f"{rule.permission} ({rule.source})"

    def paths_text(self) -> str:
        """One line: where the mode may write and what nobody may touch."""
        write = ", ".join(self.write.globs) if self.write else "anywhere in the working directory"
        deny = ", ".join(self.deny.globs) or "nothing"
        links = " · hard links allowed" if self.hard_links else ""
        return f"writes: {write} · denied: {deny}{links}"


def _is_pattern(name: str) -> bool:
    return any(char in name for char in "*?[")


Problems = list[tuple[str, str]]
"""(key, message) pairs; the caller adds the file."""


def read_policy(data: Mapping[str, Any], known_tools: Iterable[str]) -> tuple[Policy, Problems]:
    """A profile's `permissions:` and `paths:` as a Policy, and what is wrong with them."""
    problems: Problems = []
    tools, default = _permissions(data.get("permissions"), frozenset(known_tools), problems)
    write, deny, hard_links = _paths(data.get("paths"), problems)
    hand_off = _hand_off(data.get("hand_off"), problems)
    policy = Policy(
        tools=tools,
        default=default,
        write=PathGlobs(write),
        deny=PathGlobs(DEFAULT_DENY if deny is None else deny),
        hand_off=hand_off,
        hard_links=hard_links,
    )
    return policy, problems


def _hand_off(raw: Any, problems: Problems) -> tuple[str, ...] | None:
    if raw is None:
        return None
    if not isinstance(raw, list) or not all(isinstance(name, str) for name in raw):
        problems.append(("hand_off", "must be a list of mode names (the modes it may hand to)"))
        return None
    return tuple(raw)


def hand_off_problems(profiles: Iterable[Any]) -> list[tuple[str, str, str]]:
    """(file, key, message) for each `hand_off:` entry that names no mode of the pack."""
    found = list(profiles)
    names = {profile.name for profile in found}
    problems: list[tuple[str, str, str]] = []
    for profile in found:
        for index, name in enumerate(profile.policy.hand_off or ()):
            if name not in names or name == profile.name:
                why = (
                    "is this mode itself" if name == profile.name else "is not a mode of this pack"
                )
                problems.append(
                    (
                        profile.source,
                        f"hand_off[{index}]",
                        f"{cut_repr(name)} {why}; modes: {', '.join(sorted(names))}",
                    )
                )
    return problems


def _permissions(
    raw: Any, known: frozenset[str], problems: Problems
) -> tuple[tuple[tuple[str, Permission], ...], Permission | None]:
    if raw is None:
        return (), None
    if not isinstance(raw, Mapping):
        problems.append(("permissions", "must be a mapping of tool names to allow, ask or deny"))
        return (), None
    rules: list[tuple[str, Permission]] = []
    default: Permission | None = None
    for key, value in raw.items():
        where = f"permissions.{key}"
        permission = _permission(value)
        if permission is None:
            problems.append((where, f"{cut_repr(value)} is not one of allow, ask, deny"))
            continue
        if key == "default":
            default = permission
            continue
        problem = _tool_key(key, known)
        if problem:
            problems.append((where, problem))
            continue
        rules.append((key, permission))
    return tuple(rules), default


def _permission(value: Any) -> Permission | None:
    if value is False:  # YAML reads a bare `no`/`off` as false
        return "deny"
    for permission in PERMISSIONS:
        if value == permission:
            return permission
    return None


def _tool_key(key: Any, known: frozenset[str]) -> str | None:
    """Why `key` cannot name a tool in `permissions:`, or None."""
    if not isinstance(key, str) or not key.strip():
        return f"{cut_repr(key)} is not a tool name"
    if key in known or _is_pattern(key) or "__" in key:
        return None  # `server__tool`: MCP tools are known only once their server runs
    hint = difflib.get_close_matches(key, sorted(known), n=1)
    extra = f"; did you mean {cut_repr(hint[0])}?" if hint else ""
    return (
        f"unknown tool {cut_repr(key)}{extra} (known: {', '.join(sorted(known))}; "
        "MCP tools are written <server>__<tool> or <server>__*)"
    )


def _paths(raw: Any, problems: Problems) -> tuple[tuple[str, ...], tuple[str, ...] | None, bool]:
    if raw is None:
        return (), None, False
    if not isinstance(raw, Mapping):
        problems.append(
            (
                "paths",
                "must be a mapping with `write:` and/or `deny:` lists of globs "
                "(and `hard_links: allow` or `deny`)",
            )
        )
        return (), None, False
    for key in raw:
        if key not in PATH_KEYS:
            problems.append(
                (
                    f"paths.{key}",
                    "unknown key; paths takes `write:`, `deny:` and `hard_links:`",
                )
            )
    write = _globs(raw.get("write"), "paths.write", problems) or ()
    deny = _globs(raw.get("deny"), "paths.deny", problems)
    return write, deny, _hard_links(raw.get("hard_links", "deny"), problems)


def _hard_links(value: Any, problems: Problems) -> bool:
    if isinstance(value, bool):  # YAML reads a bare `yes`/`no` as true/false
        return value
    if value in HARD_LINK_VALUES:
        return value == "allow"
    problems.append(
        (
            "paths.hard_links",
            f"{cut_repr(value)} is not allow or deny (allow lets the mode read and write "
            "files with more than one name; the default, deny, refuses them)",
        )
    )
    return False


def _globs(raw: Any, where: str, problems: Problems) -> tuple[str, ...] | None:
    if raw is None:
        return None
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list):
        problems.append((where, f"must be a list of globs, not {type(raw).__name__}"))
        return None
    globs: list[str] = []
    for index, glob in enumerate(raw):
        problem = check_glob(glob) if isinstance(glob, str) else "is not text"
        if problem:
            problems.append((f"{where}[{index}]", f"{cut_repr(glob)} {problem}"))
            continue
        globs.append(glob.strip())
    return tuple(globs)

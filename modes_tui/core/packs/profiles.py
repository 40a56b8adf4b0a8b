"""Packs: a folder of mode profiles plus `router.yaml`, and the prompts that go with them.

`load_pack` reads everything, validates everything at once and raises a single
`DeclarationError` listing every problem with its file and field. A loaded `Pack` is
immutable; the router and the engine only read it. `router.yaml` is read by
`router_config.py`, the fields every pack file shares by `fields.py`, and the pack's
own Python tools (`tools:` in router.yaml) are resolved by `tools.py`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from modes_tui.core.config.settings import is_number, is_whole
from modes_tui.core.edits.policy import Policy, hand_off_problems, read_policy
from modes_tui.core.errors import DeclarationError, Problem, cut_repr
from modes_tui.core.packs.fields import Availability, FieldReader, HistoryWindow, closest
from modes_tui.core.packs.prompts import (
    PromptSet,
    TemplateProblem,
    UnreadablePackFile,
    read_pack_file,
)
from modes_tui.core.packs.router_config import RouterConfig, read_router
from modes_tui.core.packs.tools import PackTools, PackToolsError, resolve, tool_names
from modes_tui.core.paths import Dirs, app_dirs, shipped_dir
from modes_tui.core.tools.registry import Tool, known_tool_names

Thinking = Literal["off", "low", "medium", "high"]
AutoEnter = Literal["allow", "confirm", "never"]
AUTO_ENTER: tuple[AutoEnter, ...] = ("allow", "confirm", "never")
THINKING_LEVELS: tuple[Thinking, ...] = ("off", "low", "medium", "high")
NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_-]*$")
RESERVED_NAMES = frozenset({"auto", "off"})

PROFILE_KEYS = frozenset(
    {
        "name",
        "description",
        "examples",
        "keywords",
        "model",
        "thinking",
        "temperature",
        "max_tokens",
        "tools",
        "mcp",
        "history",
        "key",
        "available",
        "instructions",
        "fallback_models",
        "auto_enter",
        "permissions",
        "paths",
        "hand_off",
    }
)


_TEMPERATURE = lambda value: is_number(value, 0) and value <= 2  # noqa: E731
_POSITIVE = lambda value: is_whole(value, 1)  # noqa: E731


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


@dataclass(frozen=True, slots=True)
class Profile:
    """One mode: the configuration of a single turn."""

    name: str
    """The mode's name, unique in its pack."""
    description: str
    """What the router reads: what belongs to this mode, from the user's side."""
    examples: tuple[str, ...] = ()
    """Utterances that belong here (embedding classifier, evals)."""
    keywords: tuple[str, ...] = ()
    """Words that trigger this mode in the keyword classifier."""
    model: str = "default"
    """A litellm model id, or "default" for the configured default model."""
    thinking: Thinking = "off"
    """Reasoning effort requested from models that support it."""
    temperature: float | None = None
    """Sampling temperature; None leaves the provider's default."""
    max_tokens: int | None = None
    """Cap on the answer's length; None leaves the provider's default."""
    tools: tuple[str, ...] = ()
    """Names of the tools this mode may call."""
    mcp: tuple[str, ...] = ()
    """Names of the MCP servers (settings' `mcp_servers`) whose tools this mode gets too."""
    history: HistoryWindow = field(default_factory=lambda: HistoryWindow(20))
    """What the answering model sees of the shared history."""
    key: str | None = None
    """A direct key that forces this mode in the TUI."""
    available: Availability = field(default_factory=Availability)
    """When the mode may be chosen."""
    instructions: str = ""
    """The mode's instructions template (Jinja2 source), appended to the base prompt."""
    source: str = ""
    """The file the profile came from, for messages."""
    fallback_models: tuple[str, ...] = ()
    """Models tried in order when the mode's model fails with a retryable error."""
    auto_enter: AutoEnter = "allow"
    """allow: the router may pick it; confirm: ask first; never: only by forcing it."""
    policy: Policy = field(default_factory=Policy)
    """What the mode may do: `permissions:` per tool and `paths:` (see core.edits.policy)."""

    def is_available(self, environ: Mapping[str, str] | None = None) -> bool:
        """Whether the router may choose this mode now."""
        return self.available.check(environ)

    def summary(self) -> dict[str, Any]:
        """A plain description for listings and JSON output."""
        return {
            "name": self.name,
            "description": self.description,
            "model": self.model,
            "thinking": self.thinking,
            "tools": list(self.tools),
            "mcp": list(self.mcp),
            "key": self.key,
            "examples": len(self.examples),
            "available": self.is_available(),
            "fallback_models": list(self.fallback_models),
            "auto_enter": self.auto_enter,
            "policy": self.policy.summary(),
        }


@dataclass(frozen=True, slots=True)
class Pack:
    """A loaded, validated pack of modes."""

    name: str
    """The pack's name (its folder name)."""
    path: Path
    """The folder the profiles came from."""
    profiles: tuple[Profile, ...]
    """Every mode, in a stable order (file name order)."""
    router: RouterConfig
    """How the router decides."""
    prompts: PromptSet
    """The base system prompt and the per-mode templates."""
    tools: tuple[PackTools, ...] = ()
    """The pack's own Python tools (router.yaml `tools:`), beside the built-in ones."""

    @property
    def names(self) -> tuple[str, ...]:
        """Every mode's name, in order."""
        return tuple(profile.name for profile in self.profiles)

    def get(self, name: str) -> Profile | None:
        """The profile called `name`, or None."""
        for profile in self.profiles:
            if profile.name == name:
                return profile
        return None

    def available(self, environ: Mapping[str, str] | None = None) -> tuple[Profile, ...]:
        """The profiles the router may choose now."""
        return tuple(p for p in self.profiles if p.is_available(environ))

    @property
    def fallback(self) -> Profile:
        """The fallback profile (validated to exist)."""
        profile = self.get(self.router.fallback)
        assert profile is not None  # load_pack guarantees it
        return profile

    def make_tools(self) -> list[Tool]:
        """The pack's own tools, fresh for one session (factories are called again)."""
        made: list[Tool] = []
        for index, source in enumerate(self.tools):
            try:
                made += source.make()
            except PackToolsError as error:  # it worked at load; the factory is not repeatable
                problem = Problem("router.yaml", f"tools[{index}]", str(error))
                raise DeclarationError([problem], pack=self.name) from None
        return made


# --------------------------------------------------------------------------- finding packs


def pack_dirs(dirs: Dirs | None = None) -> list[Path]:
    """Folders that hold packs, highest priority first: user packs, then shipped ones."""
    dirs = dirs or app_dirs()
    return [dirs.user_profiles, shipped_dir("profiles")]


def available_packs(dirs: Dirs | None = None) -> dict[str, Path]:
    """Every pack name mapped to its folder; a user pack shadows a shipped one."""
    found: dict[str, Path] = {}
    for root in pack_dirs(dirs):
        if not root.is_dir():
            continue
        for child in sorted(root.iterdir()):
            if child.is_dir() and child.name not in found and (child / "router.yaml").exists():
                found[child.name] = child
    return found


def resolve_pack(
    name: str | None = None,
    profiles_dir: str | os.PathLike[str] | None = None,
    dirs: Dirs | None = None,
) -> Path:
    """The folder of the pack to load: `profiles_dir` if given, else the named pack."""
    if profiles_dir is not None:
        path = Path(profiles_dir).expanduser()
        if not path.is_dir():
            raise DeclarationError(
                [Problem(str(path), "", "no such folder; --profiles takes a pack folder")]
            )
        return path
    name = name or "default"
    packs = available_packs(dirs)
    if name not in packs:
        known = ", ".join(sorted(packs)) or "(none)"
        raise DeclarationError(
            [Problem(name, "", f"no pack called {cut_repr(name)}; known packs: {known}")], pack=name
        )
    return packs[name]


def load_pack(
    name: str | None = None,
    profiles_dir: str | os.PathLike[str] | None = None,
    *,
    dirs: Dirs | None = None,
    known_tools: frozenset[str] | None = None,
    known_servers: frozenset[str] | None = None,
) -> Pack:
    """Load and validate a pack; raise one DeclarationError listing every problem.

    `known_servers` are the configured MCP server names (settings, which the caller has);
    with them, a profile's `mcp:` naming another server is a problem. None skips that
    check: the engine then notes an unconfigured server on the turn instead.
    """
    dirs = dirs or app_dirs()
    path = resolve_pack(name, profiles_dir, dirs)
    if known_tools is None:
        known_tools = known_tool_names()
    return _PackReader(path, dirs, known_tools, known_servers).read()


# --------------------------------------------------------------------------- validation


class _PackReader(FieldReader):
    """Reads one pack folder and collects every problem before giving up."""

    def __init__(
        self,
        path: Path,
        dirs: Dirs,
        known_tools: frozenset[str],
        known_servers: frozenset[str] | None = None,
    ) -> None:
        super().__init__(path)
        self.dirs = dirs
        self.known_tools = known_tools
        self.known_servers = known_servers
        self.tools_unresolved = False
        """A router.yaml tools reference failed: its names are unknown, so a profile's
        unknown tool is not reported (it may be one of them); the failure itself is."""

    def read(self) -> Pack:
        router_file = self.path / "router.yaml"
        router_data = self.read_yaml(router_file) if router_file.exists() else None
        if router_data is None and not router_file.exists():
            self.problem(
                router_file, "", "missing; every pack needs a router.yaml (at least `fallback:`)"
            )
        profile_files = sorted(
            p
            for p in self.path.iterdir()
            if p.suffix in {".yaml", ".yml"} and p.name != "router.yaml"
        )
        if not profile_files:
            self.problem(self.path, "", "no profiles; add one <mode>.yaml per mode")
        tools = self._pack_tools(router_file, router_data or {})

        prompt_roots = [
            self.dirs.user_prompts / self.path.name,
            shipped_dir("prompts") / self.path.name,
        ]
        local_prompts = self.path / "prompts"
        if local_prompts.is_dir():
            prompt_roots.insert(0, local_prompts)

        profiles: list[Profile] = []
        seen: dict[str, Path] = {}
        for file in profile_files:
            data = self.read_yaml(file)
            if data is None:
                continue
            profile = self._profile(file, data, prompt_roots)
            if profile is None:
                continue
            if profile.name in seen:
                self.problem(
                    file,
                    "name",
                    f"duplicate mode name {cut_repr(profile.name)} (also in {seen[profile.name].name}); rename one",
                )
                continue
            seen[profile.name] = file
            profiles.append(profile)

        modes = {p.name: p.auto_enter for p in profiles}
        router = read_router(self, router_file, router_data or {}, modes)
        self._check_keys(profiles)
        for source, key, message in hand_off_problems(profiles):
            self.problem(source, key, message)
        prompts = PromptSet.discover(prompt_roots, [p.name for p in profiles])
        for template_problem in prompts.check(profiles):
            self._template_problem(template_problem)
        if self.problems:
            raise DeclarationError(self.problems, pack=self.path.name)
        return Pack(self.path.name, self.path, tuple(profiles), router, prompts, tools)

    def _pack_tools(self, file: Path, data: Mapping[str, Any]) -> tuple[PackTools, ...]:
        """router.yaml `tools:`: resolve each reference; their names become known tools."""
        references = self.strings(file, data, "tools")
        resolved: list[PackTools] = []
        owner: dict[str, str] = {}
        for index, reference in enumerate(references):
            try:
                source = resolve(reference, self.path, f"pack:{self.path.name}")
            except PackToolsError as error:
                self.problem(file, f"tools[{index}]", str(error))
                self.tools_unresolved = True
                continue
            clashes = [n for n in source.names if n in self.known_tools or n in owner]
            for name in clashes:
                other = owner.get(name, "a built-in tool")
                self.problem(
                    file,
                    f"tools[{index}]",
                    f"{reference}: tool {cut_repr(name)} is already {other}; rename one of them",
                )
            if clashes:
                continue
            owner.update({name: f"given by {reference}" for name in source.names})
            resolved.append(source)
        self.known_tools = self.known_tools | tool_names(resolved)
        return tuple(resolved)

    def _template_problem(self, problem: TemplateProblem) -> None:
        self.problem(problem.file, problem.field, problem.message)

    def _profile(
        self, file: Path, data: Mapping[str, Any], prompt_roots: list[Path]
    ) -> Profile | None:
        self.unknown_keys(file, data, PROFILE_KEYS)
        name = self._name(file, data)
        # keyword arguments run in the order written: problems are listed in file-key order
        return Profile(
            name=name,
            description=self._description(file, data, name, prompt_roots),
            examples=self.strings(file, data, "examples"),
            keywords=tuple(k.lower() for k in self.strings(file, data, "keywords")),
            model=self._model(file, data),
            thinking=self.choice(file, data, "thinking", THINKING_LEVELS, "off"),
            temperature=_float(
                self.checked(file, data, "temperature", _TEMPERATURE, "a number from 0 to 2")
            ),
            max_tokens=self.checked(file, data, "max_tokens", _POSITIVE, "a positive whole number"),
            tools=self._tools(file, data),
            mcp=self._servers(file, data),
            history=self.history(file, data.get("history", {"last": 20}), "history"),
            key=self._key(file, data),
            available=self.availability(file, data.get("available")),
            instructions=self._instructions(file, data),
            source=str(file),
            fallback_models=self.strings(file, data, "fallback_models"),
            auto_enter=self.choice(file, data, "auto_enter", AUTO_ENTER, "allow"),
            policy=self._policy(file, data),
        )

    def _name(self, file: Path, data: Mapping[str, Any]) -> str:
        name = data.get("name", file.stem)
        if not isinstance(name, str) or not NAME_PATTERN.match(name):
            self.problem(
                file,
                "name",
                f"{cut_repr(name)} is not a valid mode name (lowercase letters, digits, - or _)",
            )
            return file.stem
        if name in RESERVED_NAMES:
            self.problem(
                file,
                "name",
                f"{cut_repr(name)} is reserved (auto and off are control values); rename it",
            )
        return name

    def _description(
        self, file: Path, data: Mapping[str, Any], name: str, prompt_roots: list[Path]
    ) -> str:
        description = data.get("description")
        if description is None:
            description = self._description_file(name, prompt_roots)
        if not isinstance(description, str) or not description.strip():
            self.problem(
                file,
                "description",
                "missing; say what belongs to this mode (from the user's side) in `description:` "
                f"or prompts/{self.path.name}/{name}/description.md",
            )
            return ""
        return " ".join(description.split())

    def _description_file(self, name: str, prompt_roots: list[Path]) -> str | None:
        for root in prompt_roots:
            candidate = root / name / "description.md"
            if candidate.exists():
                try:
                    return read_pack_file(candidate)
                except UnreadablePackFile as error:
                    self.problem(candidate, "", str(error))
                    return "(unreadable)"  # reported once, not again as missing
        return None

    def _model(self, file: Path, data: Mapping[str, Any]) -> str:
        model = data.get("model", "default")
        if not isinstance(model, str) or not model.strip():
            self.problem(file, "model", "must be a litellm model id or `default`")
            return "default"
        return model.strip()

    def _tools(self, file: Path, data: Mapping[str, Any]) -> tuple[str, ...]:
        tools = self.strings(file, data, "tools")
        for index, tool in enumerate(tools):
            if tool not in self.known_tools and not self.tools_unresolved:
                hint = closest(tool, self.known_tools)
                extra = f"; did you mean {cut_repr(hint)}?" if hint else ""
                self.problem(
                    file,
                    f"tools[{index}]",
                    f"unknown tool {cut_repr(tool)}{extra} (known: {', '.join(sorted(self.known_tools))})",
                )
        return tools

    def _key(self, file: Path, data: Mapping[str, Any]) -> str | None:
        key = data.get("key")
        if key is None:
            return None
        if not isinstance(key, str) or not key.strip():
            self.problem(file, "key", f"{cut_repr(key)} must be a key name such as f2 or ctrl+k")
            return None
        return key.strip().lower()

    def _instructions(self, file: Path, data: Mapping[str, Any]) -> str:
        instructions = data.get("instructions", "")
        if not isinstance(instructions, str):
            self.problem(file, "instructions", "must be text (a Jinja2 template)")
            return ""
        return instructions

    def _policy(self, file: Path, data: Mapping[str, Any]) -> Policy:
        policy, problems = read_policy(data, self.known_tools)
        for key, message in problems:
            self.problem(file, key, message)
        return policy

    def _servers(self, file: Path, data: Mapping[str, Any]) -> tuple[str, ...]:
        names = self.strings(file, data, "mcp")
        for index, name in enumerate(names):
            if self.known_servers is not None and name not in self.known_servers:
                configured = ", ".join(sorted(self.known_servers)) or "none"
                self.problem(
                    file,
                    f"mcp[{index}]",
                    f"no MCP server called {cut_repr(name)} in the settings (configured: {configured}); "
                    "add it under mcp_servers in config.yaml or remove it here",
                )
        return names

    def _check_keys(self, profiles: list[Profile]) -> None:
        seen: dict[str, str] = {}
        for profile in profiles:
            if profile.key is None:
                continue
            if profile.key in seen:
                self.problem(
                    profile.source,
                    "key",
                    f"{cut_repr(profile.key)} is also the key of mode {cut_repr(seen[profile.key])}; pick another",
                )
            seen[profile.key] = profile.name

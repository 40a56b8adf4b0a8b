"""Packs: a folder of mode profiles plus `router.yaml`, and the prompts that go with them.

`load_pack` reads everything, validates everything at once and raises a single
`DeclarationError` listing every problem with its file and field. A loaded `Pack` is
immutable; the router and the engine only read it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from modes_tui.core.errors import DeclarationError, Problem
from modes_tui.core.paths import Dirs, app_dirs, shipped_dir
from modes_tui.core.prompts import PromptSet, TemplateProblem

Thinking = Literal["off", "low", "medium", "high"]
AutoEnter = Literal["allow", "confirm", "never"]
AUTO_ENTER: tuple[AutoEnter, ...] = ("allow", "confirm", "never")
THINKING_LEVELS: tuple[Thinking, ...] = ("off", "low", "medium", "high")
CLASSIFIERS = ("keyword", "embedding", "chat", "judge", "cascade")
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
    }
)
ROUTER_KEYS = frozenset(
    {
        "classifier",
        "model",
        "encoder",
        "fallback",
        "below_confidence",
        "history",
        "truncate",
        "sticky",
        "instructions",
        "cascade",
    }
)
CASCADE_KEYS = frozenset({"first", "then", "below"})


@dataclass(frozen=True, slots=True)
class HistoryWindow:
    """How much earlier conversation someone sees: the last N entries, or all."""

    last: int | None = None
    """Keep only the last N entries; None keeps all."""

    def apply(self, entries: Sequence[Any]) -> list[Any]:
        """The entries this window lets through, oldest first."""
        if self.last is None:
            return list(entries)
        if self.last == 0:
            return []
        return list(entries[-self.last :])

    def to_dict(self) -> dict[str, Any]:
        """`{"last": N}` or `{"last": null}` for all."""
        return {"last": self.last}


@dataclass(frozen=True, slots=True)
class Availability:
    """When a mode may be chosen; the seed's `if:`."""

    env: str | None = None
    """The mode is available only when this environment variable is set and non-empty."""

    def check(self, environ: Mapping[str, str] | None = None) -> bool:
        """Whether the mode is available now."""
        env = os.environ if environ is None else environ
        return not self.env or bool(env.get(self.env))


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
        }


@dataclass(frozen=True, slots=True)
class CascadeConfig:
    """A cheap classifier first, a stronger one only when the first is unsure."""

    first: str
    """The cheap backend."""
    then: str
    """The backend asked when the first one's confidence is below `below`."""
    below: float
    """The first backend's own threshold."""


@dataclass(frozen=True, slots=True)
class RouterConfig:
    """`router.yaml`: how the router decides."""

    classifier: str = "embedding"
    """keyword | embedding | chat | judge | cascade | python:pkg.mod:obj"""
    model: str = "default"
    """The model for the chat and judge backends."""
    encoder: str = "local/all-MiniLM-L6-v2"
    """The encoder for the embedding backend (local, or any litellm embedding model)."""
    fallback: str = ""
    """The mode used whenever the classifier is ignored."""
    below_confidence: float | None = None
    """Route to the fallback below this confidence; None accepts any confidence."""
    history: HistoryWindow = field(default_factory=lambda: HistoryWindow(6))
    """What the classifier sees of the history."""
    truncate_message: int | None = 30_000
    """Cap in characters on the routed message (head and tail kept)."""
    truncate_history_entry: int | None = 2_000
    """Cap in characters on each history entry (head kept)."""
    sticky: float = 0.0
    """Keep the current mode unless another beats it by this margin."""
    instructions: str = ""
    """Routing guidance (trusted text) given to every backend."""
    cascade: CascadeConfig | None = None
    """The two stages of the cascade backend."""


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
            [Problem(name, "", f"no pack called {name!r}; known packs: {known}")], pack=name
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
        from modes_tui.core.tools import known_tool_names

        known_tools = known_tool_names()
    return _PackReader(path, dirs, known_tools, known_servers).read()


# --------------------------------------------------------------------------- validation


class _PackReader:
    """Reads one pack folder and collects every problem before giving up."""

    def __init__(
        self,
        path: Path,
        dirs: Dirs,
        known_tools: frozenset[str],
        known_servers: frozenset[str] | None = None,
    ) -> None:
        self.path = path
        self.dirs = dirs
        self.known_tools = known_tools
        self.known_servers = known_servers
        self.problems: list[Problem] = []

    def problem(self, file: Path | str, key: str, message: str) -> None:
        self.problems.append(Problem(self._display(file), key, message))

    def _display(self, file: Path | str) -> str:
        path = Path(file)
        try:
            return str(path.relative_to(self.path.parent))
        except ValueError:
            return str(path)

    def read(self) -> Pack:
        router_file = self.path / "router.yaml"
        router_data = self._read_yaml(router_file) if router_file.exists() else None
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
            data = self._read_yaml(file)
            if data is None:
                continue
            profile = self._profile(file, data, prompt_roots)
            if profile is None:
                continue
            if profile.name in seen:
                self.problem(
                    file,
                    "name",
                    f"duplicate mode name {profile.name!r} (also in {seen[profile.name].name}); rename one",
                )
                continue
            seen[profile.name] = file
            profiles.append(profile)

        router = self._router(router_file, router_data or {}, profiles)
        self._check_keys(profiles)
        prompts = PromptSet.discover(prompt_roots, [p.name for p in profiles])
        for template_problem in prompts.check(profiles):
            self._template_problem(template_problem)
        if self.problems:
            raise DeclarationError(self.problems, pack=self.path.name)
        return Pack(self.path.name, self.path, tuple(profiles), router, prompts)

    def _template_problem(self, problem: TemplateProblem) -> None:
        self.problem(problem.file, problem.field, problem.message)

    def _read_yaml(self, file: Path) -> dict[str, Any] | None:
        try:
            data = yaml.safe_load(file.read_text(encoding="utf-8"))
        except yaml.YAMLError as error:
            mark = getattr(error, "problem_mark", None)
            where = f"line {mark.line + 1}" if mark is not None else ""
            reason = getattr(error, "problem", None) or str(error).splitlines()[0]
            self.problem(file, where, f"not valid YAML: {reason}")
            return None
        except (OSError, UnicodeDecodeError) as error:
            self.problem(file, "", f"cannot read: {error}")
            return None
        if data is None:
            data = {}
        if not isinstance(data, dict):
            self.problem(
                file, "", f"must be a mapping of keys to values, not a {type(data).__name__}"
            )
            return None
        return data

    def _unknown_keys(self, file: Path, data: Mapping[str, Any], allowed: frozenset[str]) -> None:
        for key in data:
            if key not in allowed:
                hint = _closest(str(key), allowed)
                extra = (
                    f"; did you mean {hint!r}?"
                    if hint
                    else f"; known keys: {', '.join(sorted(allowed))}"
                )
                self.problem(file, str(key), f"unknown key{extra}")

    def _profile(
        self, file: Path, data: Mapping[str, Any], prompt_roots: list[Path]
    ) -> Profile | None:
        self._unknown_keys(file, data, PROFILE_KEYS)
        before = len(self.problems)
        name = data.get("name", file.stem)
        if not isinstance(name, str) or not NAME_PATTERN.match(name):
            self.problem(
                file,
                "name",
                f"{name!r} is not a valid mode name (lowercase letters, digits, - or _)",
            )
            name = file.stem
        elif name in RESERVED_NAMES:
            self.problem(
                file, "name", f"{name!r} is reserved (auto and off are control values); rename it"
            )

        description = data.get("description")
        if description is None:
            for root in prompt_roots:
                candidate = root / name / "description.md"
                if candidate.exists():
                    description = candidate.read_text(encoding="utf-8")
                    break
        if not isinstance(description, str) or not description.strip():
            self.problem(
                file,
                "description",
                "missing; say what belongs to this mode (from the user's side) in `description:` "
                f"or prompts/{self.path.name}/{name}/description.md",
            )
            description = ""

        examples = self._strings(file, data, "examples")
        keywords = tuple(k.lower() for k in self._strings(file, data, "keywords"))
        model = data.get("model", "default")
        if not isinstance(model, str) or not model.strip():
            self.problem(file, "model", "must be a litellm model id or `default`")
            model = "default"
        thinking = data.get("thinking", "off")
        if thinking is False:
            thinking = "off"
        if thinking not in THINKING_LEVELS:
            self.problem(
                file, "thinking", f"{thinking!r} is not one of {', '.join(THINKING_LEVELS)}"
            )
            thinking = "off"
        temperature = data.get("temperature")
        if temperature is not None and (
            isinstance(temperature, bool)
            or not isinstance(temperature, int | float)
            or not 0 <= temperature <= 2
        ):
            self.problem(file, "temperature", f"{temperature!r} must be a number from 0 to 2")
            temperature = None
        max_tokens = data.get("max_tokens")
        if max_tokens is not None and (
            isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens <= 0
        ):
            self.problem(file, "max_tokens", f"{max_tokens!r} must be a positive whole number")
            max_tokens = None
        tools = self._strings(file, data, "tools")
        for index, tool in enumerate(tools):
            if tool not in self.known_tools:
                hint = _closest(tool, self.known_tools)
                extra = f"; did you mean {hint!r}?" if hint else ""
                self.problem(
                    file,
                    f"tools[{index}]",
                    f"unknown tool {tool!r}{extra} (known: {', '.join(sorted(self.known_tools))})",
                )
        mcp = self._servers(file, data)
        history = self._history(file, data.get("history", {"last": 20}), "history")
        key = data.get("key")
        if key is not None and (not isinstance(key, str) or not key.strip()):
            self.problem(file, "key", f"{key!r} must be a key name such as f2 or ctrl+k")
            key = None
        available = self._availability(file, data.get("available"))
        instructions = data.get("instructions", "")
        if not isinstance(instructions, str):
            self.problem(file, "instructions", "must be text (a Jinja2 template)")
            instructions = ""
        fallback_models = self._strings(file, data, "fallback_models")
        auto_enter = data.get("auto_enter", "allow")
        if auto_enter not in AUTO_ENTER:
            self.problem(
                file, "auto_enter", f"{auto_enter!r} is not one of {', '.join(AUTO_ENTER)}"
            )
            auto_enter = "allow"
        if len(self.problems) > before and not isinstance(name, str):
            return None
        return Profile(
            name=str(name),
            description=" ".join(description.split()),
            examples=examples,
            keywords=keywords,
            model=model.strip(),
            thinking=thinking,
            temperature=float(temperature) if temperature is not None else None,
            max_tokens=max_tokens,
            tools=tools,
            mcp=mcp,
            history=history,
            key=key.strip().lower() if isinstance(key, str) else None,
            available=available,
            instructions=instructions,
            source=str(file),
            fallback_models=fallback_models,
            auto_enter=auto_enter,
        )

    def _strings(self, file: Path, data: Mapping[str, Any], key: str) -> tuple[str, ...]:
        value = data.get(key, [])
        if value is None:
            return ()
        if not isinstance(value, list):
            self.problem(file, key, "must be a list of strings")
            return ()
        result: list[str] = []
        for index, item in enumerate(value):
            if not isinstance(item, str) or not item.strip():
                self.problem(file, f"{key}[{index}]", f"{item!r} must be non-empty text")
                continue
            result.append(item.strip())
        return tuple(result)

    def _servers(self, file: Path, data: Mapping[str, Any]) -> tuple[str, ...]:
        names = self._strings(file, data, "mcp")
        for index, name in enumerate(names):
            if self.known_servers is not None and name not in self.known_servers:
                configured = ", ".join(sorted(self.known_servers)) or "none"
                self.problem(
                    file,
                    f"mcp[{index}]",
                    f"no MCP server called {name!r} in the settings (configured: {configured}); "
                    "add it under mcp_servers in config.yaml or remove it here",
                )
        return names

    def _history(self, file: Path, value: Any, key: str) -> HistoryWindow:
        if value == "all" or value is None:
            return HistoryWindow(None)
        if isinstance(value, dict) and set(value) <= {"last"}:
            last = value.get("last")
            if last is None:
                return HistoryWindow(None)
            if isinstance(last, int) and not isinstance(last, bool) and last >= 0:
                return HistoryWindow(last)
        self.problem(file, key, f"{value!r} must be `all` or {{last: N}} with N >= 0")
        return HistoryWindow(None)

    def _availability(self, file: Path, value: Any) -> Availability:
        if value is None:
            return Availability()
        if isinstance(value, dict) and set(value) == {"env"} and isinstance(value["env"], str):
            return Availability(env=value["env"])
        self.problem(file, "available", f"{value!r} must be {{env: VARIABLE_NAME}}")
        return Availability()

    def _fraction(
        self, file: Path, data: Mapping[str, Any], key: str, default: float | None
    ) -> float | None:
        value = data.get(key, default)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            self.problem(file, key, f"{value!r} must be a number from 0 to 1")
            return default
        return float(value)

    def _router(self, file: Path, data: Mapping[str, Any], profiles: list[Profile]) -> RouterConfig:
        self._unknown_keys(file, data, ROUTER_KEYS)
        names = [p.name for p in profiles]
        classifier = data.get("classifier", "embedding")
        if not isinstance(classifier, str) or not (
            classifier in CLASSIFIERS or classifier.startswith("python:")
        ):
            self.problem(
                file,
                "classifier",
                f"{classifier!r} is not one of {', '.join(CLASSIFIERS)} or python:pkg.module:object",
            )
            classifier = "keyword"
        fallback = data.get("fallback")
        if fallback is None:
            self.problem(
                file,
                "fallback",
                f"missing; name the mode that takes unsure turns (one of {', '.join(names)})",
            )
            fallback = ""
        elif fallback not in names:
            self.problem(
                file,
                "fallback",
                f"{fallback!r} is not a mode of this pack; modes: {', '.join(names)}",
            )
        elif any(p.name == fallback and p.auto_enter != "allow" for p in profiles):
            self.problem(
                file,
                "fallback",
                f"{fallback!r} has auto_enter other than allow, but the fallback must take "
                "unsure turns without asking; pick another fallback or allow it",
            )
        truncate = data.get("truncate", {})
        message_cap: int | None = 30_000
        entry_cap: int | None = 2_000
        if not isinstance(truncate, dict) or not set(truncate) <= {"message", "history_entry"}:
            self.problem(
                file, "truncate", "must be {message: N, history_entry: N} (null disables a cap)"
            )
        else:
            message_cap = self._cap(file, truncate, "message", 30_000)
            entry_cap = self._cap(file, truncate, "history_entry", 2_000)
        cascade = None
        if classifier == "cascade" or "cascade" in data:
            cascade = self._cascade(file, data.get("cascade"))
        instructions = data.get("instructions", "")
        if not isinstance(instructions, str):
            self.problem(file, "instructions", "must be text")
            instructions = ""
        model = data.get("model", "default")
        encoder = data.get("encoder", "local/all-MiniLM-L6-v2")
        for key, value in (("model", model), ("encoder", encoder)):
            if not isinstance(value, str) or not value.strip():
                self.problem(file, key, "must be a model id")
        return RouterConfig(
            classifier=classifier,
            model=str(model),
            encoder=str(encoder),
            fallback=str(fallback),
            below_confidence=self._fraction(file, data, "below_confidence", None),
            history=self._history(file, data.get("history", {"last": 6}), "history"),
            truncate_message=message_cap,
            truncate_history_entry=entry_cap,
            sticky=self._fraction(file, data, "sticky", 0.0) or 0.0,
            instructions=" ".join(instructions.split()),
            cascade=cascade,
        )

    def _cap(self, file: Path, data: Mapping[str, Any], key: str, default: int) -> int | None:
        value = data.get(key, default)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 20:
            self.problem(
                file, f"truncate.{key}", f"{value!r} must be a whole number >= 20, or null"
            )
            return default
        return value

    def _cascade(self, file: Path, value: Any) -> CascadeConfig | None:
        if not isinstance(value, dict):
            self.problem(
                file,
                "cascade",
                "the cascade classifier needs cascade: {first: NAME, then: NAME, below: 0..1}",
            )
            return None
        self._unknown_keys(file, value, CASCADE_KEYS)
        stages = []
        for key in ("first", "then"):
            stage = value.get(key)
            if stage not in CLASSIFIERS or stage == "cascade":
                self.problem(
                    file,
                    f"cascade.{key}",
                    f"{stage!r} must be one of keyword, embedding, chat, judge",
                )
                stage = "keyword"
            stages.append(str(stage))
        below = self._fraction(file, value, "below", 0.5)
        return CascadeConfig(
            first=stages[0], then=stages[1], below=below if below is not None else 0.5
        )

    def _check_keys(self, profiles: list[Profile]) -> None:
        seen: dict[str, str] = {}
        for profile in profiles:
            if profile.key is None:
                continue
            if profile.key in seen:
                self.problem(
                    profile.source,
                    "key",
                    f"{profile.key!r} is also the key of mode {seen[profile.key]!r}; pick another",
                )
            seen[profile.key] = profile.name


def _closest(word: str, choices: frozenset[str] | set[str]) -> str | None:
    import difflib

    matches = difflib.get_close_matches(word, sorted(choices), n=1, cutoff=0.75)
    return matches[0] if matches else None

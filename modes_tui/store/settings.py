"""Settings: `<config>/config.yaml`, then `MODES_TUI_<KEY>` variables, then command-line options.

Each layer overrides the one before it, key by key. Keys are the field names of `Settings`
(`default_model`, `pack`, ...); the variable of a key is `MODES_TUI_` plus the key in
capitals (`MODES_TUI_DEFAULT_MODEL`). An unknown key in the file or among the options, or
a value of the wrong type anywhere, is a `SettingsError` that names the file or the
variable, the key, and the fix.

An unknown `MODES_TUI_*` variable is a warning, not an error: the prefix is shared with
variables that are not settings (`MODES_TUI_HOME`), and refusing to start over a stray
variable would be worse than saying it is ignored.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import yaml

from modes_tui.core.config.control import PACK_NAME_RULE, pack_name_problem
from modes_tui.core.config.models import (
    EMBEDDED_MODEL,
    ModelCatalog,
    ModelConfig,
    check_roles,
    models_from_text,
    parse_models,
    parse_roles,
)
from modes_tui.core.config.settings import SettingReader, is_text
from modes_tui.core.config.variables import expand_secret_values
from modes_tui.core.errors import FileReadError, SettingsError, cut_repr, suggest
from modes_tui.core.files import atomic_write, locked, private_folder, read_text
from modes_tui.core.history.ledger import budget_from_text, check_budget
from modes_tui.core.paths import HOME_ENV, Dirs
from modes_tui.core.redaction import remember_environment, remember_secret
from modes_tui.core.yaml_files import key_place, load_yaml, yaml_problem
from modes_tui.mcp.config import McpServer, parse_mcp_servers

ENV_PREFIX = "MODES_TUI_"
NOT_SETTINGS = frozenset(
    {
        HOME_ENV,
        "MODES_TUI_INIT_PORTS",  # llm/discovery.py: where `init` looks for local servers
        "MODES_TUI_ENCODER_BACKEND",  # llm/encoders.py: numpy or sentence-transformers
        "MODES_TUI_CPUINFO",  # setup_local.py: CPU flags for the portable build
    }
)
"""`MODES_TUI_*` variables that mean something else and are never reported as unknown."""


@dataclass(frozen=True, slots=True)
class Settings:
    """What the user configured, with where each value came from."""

    default_model: str = EMBEDDED_MODEL
    """What `model: default` in a profile stands for: an alias from `models`, or a litellm id."""
    pack: str = "default"
    """The pack of modes to use when no --pack or --profiles is given."""
    keymap: Mapping[str, str] = field(default_factory=dict)
    """Action id -> key, e.g. {"auto": "f12", "mode.code": "f3"}; overrides the defaults."""
    local_model_path: Path | None = None
    """A GGUF file to run instead of the bundled local model."""
    theme: str = "textual-dark"
    """The Textual theme of the app."""
    router_classifier: str | None = None
    """Replaces the pack's `classifier` (keyword, embedding, chat, judge, cascade, python:...)."""
    sessions_fsync: bool = False
    """fsync the session log after every record (survives power loss; costs time per record)."""
    sweep_days: int = 7
    """Runtime state (input history, caches) untouched for this many days is deleted at start."""
    models: Mapping[str, ModelConfig] = field(default_factory=dict)
    """Alias -> a configured model (litellm id, api_base, key variable, prices, ...)."""
    roles: Mapping[str, str] = field(default_factory=dict)
    """Role -> alias, litellm id, role or `default` (`fast`, `strong`, and any the user adds)."""
    budget: float | None = None
    """USD a session may spend before each further turn asks first; None: no limit."""
    mcp_servers: Mapping[str, McpServer] = field(default_factory=dict)
    """MCP servers by name (`modes_tui.mcp.config`); a profile's `mcp:` lists the ones it uses."""
    origins: Mapping[str, str] = field(default_factory=dict, compare=False)
    """Key -> where its value came from: a file path, a variable name, or "command line"."""
    warnings: tuple[str, ...] = field(default=(), compare=False)
    """Things that were ignored, e.g. an unknown MODES_TUI_* variable."""

    def catalog(self) -> ModelCatalog:
        """The configured models and the default, for resolving any model name."""
        return ModelCatalog(
            dict(self.models),
            self.default_model,
            dict(self.roles),
            self.origins.get("roles") or self.origins.get("default_model") or "config.yaml",
        )

    def origin(self, key: str) -> str:
        """Where `key` came from ("default" when nobody set it)."""
        return self.origins.get(key, "default")


_META_FIELDS = frozenset({"origins", "warnings"})
KEYS: tuple[str, ...] = tuple(f.name for f in fields(Settings) if f.name not in _META_FIELDS)

_EXPECTED: dict[str, str] = {
    "default_model": "text",
    "pack": "text",
    "keymap": "a mapping of action id to key, e.g. {auto: f12}",
    "local_model_path": "a file path",
    "theme": "text",
    "router_classifier": "text",
    "sessions_fsync": "true or false",
    "sweep_days": "a whole number of days, 1 or more",
    "models": "a mapping of alias to model settings",
    "roles": "a mapping of role to model, e.g. {fast: mini, strong: openai/gpt-4.1}",
    "budget": "a price in USD greater than 0, e.g. 2.50",
    "mcp_servers": "a mapping of server name to {command, args, env, cwd} or {url, headers}",
}
_ENV_EXAMPLES: dict[str, str] = {
    "keymap": "auto=f12,mode.code=f3 (or a JSON object)",
    "sessions_fsync": "1 or 0",
    "sweep_days": "7",
    "models": '{"fast": {"model": "openai/gpt-4.1-mini"}} (a JSON object)',
    "roles": "fast=mini,strong=openai/gpt-4.1 (or a JSON object)",
    "budget": "2.50",
    "mcp_servers": '{"time": {"command": "uvx", "args": ["mcp-server-time"]}}',
}


def load_settings(
    dirs: Dirs,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Settings:
    """Settings from the file, then the environment, then `overrides` (None values skipped)."""
    env = os.environ if env is None else env
    values: dict[str, Any] = {}
    origins: dict[str, str] = {}
    warnings: list[str] = []

    path = dirs.settings_file
    for key, value in _read_file(path).items():
        try:
            values[key] = _check(key, value, where=str(path), fix=f"edit {path}")
        except SettingsError as error:  # the message names the line and column too
            raise SettingsError(_placed(str(error), path, key)) from None
        origins[key] = str(path)

    for name in sorted(env):
        if not name.startswith(ENV_PREFIX) or name in NOT_SETTINGS:
            continue
        key = name[len(ENV_PREFIX) :].lower()
        if key not in KEYS:
            warnings.append(
                f"{name} is not a setting and is ignored; settings: "
                + ", ".join(ENV_PREFIX + k.upper() for k in KEYS)
            )
            continue
        example = _ENV_EXAMPLES.get(key, "a value")
        values[key] = _check(
            key,
            _from_text(key, env[name], where=name),
            where=name,
            fix=f"set {name} to {example}, or unset it",
        )
        origins[key] = name

    for key, value in (overrides or {}).items():
        if value is None:
            continue
        where = f"--{key.replace('_', '-')}"
        if key not in KEYS:
            raise SettingsError(
                f"command line: {cut_repr(key)} is not a setting; settings: {', '.join(KEYS)}"
            )
        if isinstance(value, str) and key not in {"default_model", "pack", "theme"}:
            value = _from_text(key, value, where=where)
        values[key] = _check(key, value, where=where, fix=f"pass {where} {_EXPECTED[key]}")
        origins[key] = "command line"

    settings = replace(Settings(**values), origins=origins, warnings=tuple(warnings))
    check_roles(settings.catalog())  # roles point at aliases: checked once both are known
    remember_configured_secrets(settings, env)
    return settings


def remember_configured_secrets(settings: Settings, env: Mapping[str, str]) -> None:
    """Redact by value (core.redaction) what the settings make secret: the environment's
    key variables, each model's `api_key_env`, and the expanded headers and MCP env."""
    remember_environment(env)
    remember_secret(
        *(env.get(m.api_key_env, "") for m in settings.models.values() if m.api_key_env)
    )
    values = [(m.source + ".headers", m.headers) for m in settings.models.values()]
    for name, server in settings.mcp_servers.items():
        values += [(f"mcp_servers.{name}.headers", server.headers)]
        values += [(f"mcp_servers.{name}.env", server.env)]
    for where, mapping in values:
        # a variable that is not set is named when the value is used, not here
        with contextlib.suppress(SettingsError):
            expand_secret_values(mapping, env, where=where)


def _read_file(path: Path) -> dict[str, Any]:
    try:
        text = read_text(path, "settings")
    except FileNotFoundError:
        return {}
    except FileReadError as error:
        raise SettingsError(f"settings file {error}") from error
    except (OSError, UnicodeDecodeError) as error:
        raise SettingsError(f"{path}: cannot be read ({error}); fix or remove the file") from error
    try:
        data = load_yaml(text)
    except yaml.YAMLError as error:
        where, reason = yaml_problem(error)
        raise SettingsError(
            f"{path}: not valid YAML at {where or 'its end'}: {reason}; fix the file "
            f"(keys: {', '.join(KEYS)})"
        ) from None  # the parser's traceback says nothing the message does not
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise SettingsError(
            f"{path}: expected a mapping of settings (key: value), found {type(data).__name__}"
        )
    unknown = [str(key) for key in data if key not in KEYS]
    if unknown:
        place = key_place(text, unknown[0])
        names = ", ".join(map(cut_repr, unknown))
        hint = suggest(unknown[0], KEYS)
        if hint and len(unknown) == 1:
            at = f"{place}; " if place else ""
            raise SettingsError(
                f"{path}: unknown key {names}: {hint} ({at}keys: {', '.join(KEYS)})"
            )
        raise SettingsError(
            f"{path}: unknown key{'s' if len(unknown) > 1 else ''} {names}; "
            f"remove {'them' if len(unknown) > 1 else 'it'} or use one of: {', '.join(KEYS)}"
            + (f" ({place})" if place else "")
        )
    return {str(key): value for key, value in data.items()}


def _placed(message: str, path: Path, key: str) -> str:
    """`message` (`<path>: models.fast.model must be ...`) with the line and column of the
    key it names in `path` (else of `key`): `... must be text (line 4, column 5); edit ...`."""
    head = f"{path}: "
    if not message.startswith(head):
        return message
    named = re.match(r"[\w.\[\]-]+", message[len(head) :])
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return message
    place = (key_place(text, named.group()) if named else "") or key_place(text, key)
    if not place:
        return message
    fix = f"; edit {path}"
    if message.endswith(fix):  # the place goes with the problem, the fix stays last
        return f"{message[: -len(fix)]} ({place}){fix}"
    return f"{message} ({place})"


def _from_text(key: str, text: str, *, where: str) -> Any:
    """An environment variable or option string as the value its key expects."""
    text = text.strip()
    if key in {"router_classifier", "local_model_path"}:
        return text or None
    if key == "sessions_fsync":
        lowered = text.lower()
        if lowered in {"1", "true", "yes", "on"}:
            return True
        if lowered in {"0", "false", "no", "off", ""}:
            return False
        return text  # _check names the problem
    if key == "sweep_days":
        try:
            return int(text)
        except ValueError:
            return text
    if key == "models":
        return models_from_text(text, where=where)
    if key == "budget":
        return budget_from_text(text)
    if key == "mcp_servers":
        try:
            return json.loads(text) if text else {}
        except json.JSONDecodeError as error:
            raise SettingsError(
                f"{where}: mcp_servers is not valid JSON ({error.msg}); "
                f"use {_ENV_EXAMPLES['mcp_servers']}"
            ) from error
    if key in {"keymap", "roles"}:
        return _pairs_from_text(key, text, where=where)
    return text


def _pairs_from_text(key: str, text: str, *, where: str) -> Any:
    """`auto=f12,mode.code=f3` (keymap, roles), or a JSON object, as a mapping (checked by
    _check)."""
    if text.startswith("{"):
        try:
            return json.loads(text)
        except json.JSONDecodeError as error:
            raise SettingsError(
                f"{where}: {key} is not valid JSON ({error.msg}); use {_ENV_EXAMPLES[key]}"
            ) from error
    pairs: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        action, sep, keyname = part.partition("=")
        if not sep or not action.strip() or not keyname.strip():
            raise SettingsError(
                f"{where}: {key} entry {cut_repr(part)} is not {'action=key' if key == 'keymap' else 'role=model'}; "
                f"use {_ENV_EXAMPLES[key]}"
            )
        pairs[action.strip()] = keyname.strip()
    return pairs


def _check(key: str, value: Any, *, where: str, fix: str) -> Any:
    """The value, normalised, or a SettingsError naming where, the key and the fix."""
    check = _CHECKS.get(key)
    if check is None:
        raise AssertionError(f"no check for setting {key}")  # KEYS and _CHECKS must agree
    return check(key, value, SettingReader(where, fix=fix))


def _text(key: str, value: Any, fields: SettingReader) -> str:
    return fields.text(key, value, _EXPECTED[key])


def _pack(key: str, value: Any, fields: SettingReader) -> str:
    """A pack name, never a path (`../../etc`), from config.yaml, MODES_TUI_PACK or --pack."""
    name = _text(key, value, fields)
    if pack_name_problem(name) is not None:
        raise fields.wrong(key, f"a pack name ({PACK_NAME_RULE})", name)
    return name


def _optional_text(key: str, value: Any, fields: SettingReader) -> str | None:
    return None if value is None else _text(key, value, fields)


def _path(key: str, value: Any, fields: SettingReader) -> Path | None:
    if value is None:
        return None
    if isinstance(value, Path):
        return value.expanduser()
    return Path(_text(key, value, fields)).expanduser()


def _keymap(key: str, value: Any, fields: SettingReader) -> dict[str, str]:
    if not isinstance(value, Mapping):
        raise fields.wrong(key, _EXPECTED[key], value)
    for action, keyname in value.items():
        if not isinstance(action, str) or not is_text(keyname):
            got = f", got entry {cut_repr(action)}: {cut_repr(keyname)}"
            raise fields.error(key, f" must be {_EXPECTED[key]}{got}")
    return {action: keyname.strip() for action, keyname in value.items()}


_CHECKS: dict[str, Callable[[str, Any, SettingReader], Any]] = {
    "default_model": _text,
    "pack": _pack,
    "theme": _text,
    "router_classifier": _optional_text,
    "local_model_path": _path,
    "sessions_fsync": lambda key, value, fields: fields.flag(key, value, _EXPECTED[key]),
    "sweep_days": lambda key, value, fields: fields.whole(key, value, _EXPECTED[key], 1),
    "keymap": _keymap,
    "models": lambda _key, value, fields: parse_models(value, where=fields.where),
    "roles": lambda _key, value, fields: parse_roles(value, where=fields.where),
    "budget": lambda _key, value, fields: check_budget(value, where=fields.where, fix=fields.fix),
    "mcp_servers": lambda _key, value, fields: parse_mcp_servers(
        value, where=fields.where, fix=fields.fix
    ),
}
"""How each setting's value is checked and normalised, by key."""


def save_setting(dirs: Dirs, key: str, value: str) -> Path:
    """Write one text setting into `<config>/config.yaml`, keeping the rest of the file.

    The key's top-level line is replaced in place (comments and other keys stay as they
    are), or appended when the file does not have it yet. Read and written atomically
    under the file's lock (`core.files.locked`, shared with `modes-tui init`). Returns the
    file. Raises `SettingsError` for a key that is not a text setting or a file that is not
    a mapping.
    """
    if key not in {"default_model", "pack", "theme"}:
        raise SettingsError(f"{key} cannot be saved from the app; edit {dirs.settings_file}")
    value = _check(key, value, where="the app", fix="pick another value")
    path = dirs.settings_file
    private_folder(path.parent)
    with locked(path):  # the same lock as init's: read, change, replace, no writer between
        _read_file(path)  # refuses to touch a file it could not read back
        try:
            lines = read_text(path, "settings").splitlines()
        except FileNotFoundError:
            lines = []
        entry = f"{key}: {json.dumps(value)}"
        for index, line in enumerate(lines):
            if line.startswith(f"{key}:"):
                lines[index] = entry
                break
        else:
            lines.append(entry)
        atomic_write(path, ("\n".join(lines) + "\n").encode("utf-8"))
    return path

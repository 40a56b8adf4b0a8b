"""Configured models: the `models:` section of config.yaml, and the one model-name resolver.

A profile's `model:`, `fallback_models:`, `--model`, router.yaml's `model:` and the
`default_model` setting all name a model the same way: `default`, a role, an alias from
`models:`, or a litellm id (`provider/model`). `ModelCatalog.resolve` is the only place that turns such
a name into what is called; nothing else spells the embedded model's id.

    models:
      mini:
        model: openai/gpt-4.1-mini        # the litellm id (required)
        api_key_env: OPENAI_API_KEY       # the variable's NAME; the key never goes in a file
      box:
        model: openai/qwen2.5             # any OpenAI-compatible server
        api_base: http://127.0.0.1:8080/v1
        headers: {X-Team: "${TEAM}"}      # `${NAME}` is filled in from the environment
        params: {top_p: 0.9}              # any other litellm parameter
        tools: false                      # capability overrides (else litellm's model map)
        reasoning: false
        context_window: 8192
        input_cost_per_token: 0.0         # USD; wins over litellm's price list
        output_cost_per_token: 0.0
    roles:
      fast: mini                          # an alias, a litellm id, another role, or default
      strong: anthropic/claude-sonnet-4-5

A **role** names a model by what it is for: `model: fast` (or `strong`, or a role added under
`roles:`) is followed to an alias or a litellm id by `resolve_role`, the one place that does.
`fast` and `strong` always exist and mean `default` until `roles:` says otherwise (an alias of
that name wins), so offline both are the embedded model.

Headless: no litellm here; the adapter (`llm/litellm_model.py`) applies a resolved entry.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from modes_tui.core.config.settings import SettingReader, is_scalar, is_text
from modes_tui.core.config.variables import expand_secret_values
from modes_tui.core.errors import SettingsError, cut_repr
from modes_tui.core.redaction import remember_secret

EMBEDDED_MODEL = "local/gemma-3-270m"
"""The embedded offline model: what `default` means when nothing else is configured."""
DEFAULT = "default"
"""The name that stands for the `default_model` setting."""
FAST = "fast"
"""The role of cheap, quick turns (chat, write; compaction summaries)."""
STRONG = "strong"
"""The role of hard turns (code, reason); the "always" of "saved vs always strong"."""
BUILTIN_ROLES: Mapping[str, str] = {FAST: DEFAULT, STRONG: DEFAULT}
"""The roles every config has, and what they mean until `roles:` says otherwise."""
ROLES_EXAMPLE = "roles: {fast: mini, strong: openai/gpt-4.1}"

ALIAS_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")
ENV_NAME_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
MODEL_KEYS: tuple[str, ...] = (
    "model",
    "api_base",
    "api_key_env",
    "headers",
    "params",
    "tools",
    "reasoning",
    "context_window",
    "input_cost_per_token",
    "output_cost_per_token",
)
RESERVED_PARAMS = {
    "model": "the entry's `model:`",
    "messages": "nothing: the engine builds the messages",
    "stream": "nothing: the engine streams",
    "tools": "the profile's `tools:` (and `tools: false` here to turn them off)",
    "api_key": "`api_key_env:` with the variable's name; never put a key in a file",
    "api_base": "the entry's `api_base:`",
    "base_url": "the entry's `api_base:`",
    "extra_headers": "the entry's `headers:`",
    "headers": "the entry's `headers:`",
}
"""Parameters that `params:` may not set, and what to use instead."""


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """What one token costs, in USD."""

    input: float
    """Per prompt token."""
    output: float
    """Per completion token."""

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        """The cost of a call with these token counts."""
        return prompt_tokens * self.input + completion_tokens * self.output


@dataclass(frozen=True, slots=True)
class ModelConfig:
    """One model as configured: an alias and the litellm parameters it stands for."""

    model: str
    """The litellm model id that is called."""
    alias: str | None = None
    """The name in `models:`; None for a plain litellm id."""
    api_base: str | None = None
    """The server's base URL (OpenAI-compatible servers, Ollama, vLLM, ...)."""
    api_key_env: str | None = None
    """The name of the environment variable that holds the API key (never the key)."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """Extra HTTP headers sent with every call."""
    params: Mapping[str, Any] = field(default_factory=dict)
    """Other litellm parameters (top_p, num_retries, ...)."""
    tools: bool | None = None
    """Whether the model can call tools; None asks litellm's model map."""
    reasoning: bool | None = None
    """Whether `reasoning_effort` applies; None asks litellm's model map."""
    context_window: int | None = None
    """Input tokens the model accepts; None asks litellm's model map."""
    price: ModelPrice | None = None
    """Configured price per token; None uses litellm's price list."""
    source: str = ""
    """Where it was configured (file and key), for messages."""

    @property
    def name(self) -> str:
        """What the user calls it: the alias, else the litellm id."""
        return self.alias or self.model

    def call_params(self, environ: Mapping[str, str]) -> dict[str, Any]:
        """litellm keyword arguments besides model and messages (the key read from `environ`).

        A missing key variable is left to the provider, whose own error names it, except that
        we say which variable this alias reads.
        """
        params: dict[str, Any] = dict(self.params)
        if self.api_base:
            params["api_base"] = self.api_base
        if self.headers:
            params["extra_headers"] = self.header_values(environ)
        if self.api_key_env:
            key = environ.get(self.api_key_env)
            if key:
                remember_secret(key)  # a provider error may echo it
                params["api_key"] = key
        return params

    def header_values(self, environ: Mapping[str, str]) -> dict[str, str]:
        """The headers with `${NAME}` filled in from `environ` (remembered as secrets); a
        SettingsError names the file, the alias and the header of a variable not set."""
        return expand_secret_values(self.headers, environ, where=f"{self.source}.headers")

    def summary(self) -> dict[str, Any]:
        """Plain values for listings and `--json` (the variable's name, never its value)."""
        return {
            "alias": self.alias,
            "model": self.model,
            "api_base": self.api_base,
            "api_key_env": self.api_key_env,
            "headers": sorted(self.headers),
            "params": dict(self.params),
            "source": self.source,
        }


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """What a model name came to: the alias or litellm id called, and the role that gave it."""

    name: str
    """The alias from `models:`, or a litellm id."""
    role: str | None = None
    """The role the name was (`fast`, `strong`, a user's); None for a plain name."""
    path: tuple[str, ...] = ()
    """Every name followed, first to last (`strong`, `big`), for messages."""

    def label(self) -> str:
        """`mini (fast)` for a role, else the name: what the panel and the REPL show."""
        return f"{self.name} ({self.role})" if self.role else self.name


@dataclass(frozen=True, slots=True)
class ModelCatalog:
    """Every configured alias and role, and the default; resolves any model name."""

    entries: Mapping[str, ModelConfig] = field(default_factory=dict)
    """Alias -> its configuration, in file order."""
    default_model: str = EMBEDDED_MODEL
    """What `default` stands for (an alias, a role or a litellm id)."""
    roles: Mapping[str, str] = field(default_factory=dict)
    """Role -> alias, litellm id, another role or `default`, as configured under `roles:`."""
    source: str = "config.yaml"
    """Where `roles:` was configured, for messages."""

    def __iter__(self) -> Iterator[ModelConfig]:
        return iter(self.entries.values())

    def __contains__(self, name: object) -> bool:
        return name in self.entries

    @property
    def role_table(self) -> dict[str, str]:
        """Every role: the built-in ones an alias does not shadow, then the configured ones."""
        table = {role: target for role, target in BUILTIN_ROLES.items() if role not in self.entries}
        table.update(self.roles)
        return table

    def is_role(self, name: str) -> bool:
        """Whether `name` is a role here (`fast` is not when an alias is called so)."""
        return name in self.role_table

    def choose(self, name: str) -> ModelChoice:
        """`name` followed through roles and `default` to an alias or a litellm id."""
        return resolve_role(name, self.role_table, self.default_model, where=self.source)

    def resolve(self, name: str) -> ModelConfig:
        """A role or `default` is followed first; an alias -> its entry; else a plain id."""
        name = self.choose(name).name
        entry = self.entries.get(name)
        if entry is not None:
            return entry
        return ModelConfig(model=name)

    def name_of(self, name: str) -> str:
        """What `name` is called in the UI and the session: `default` and roles spelled out."""
        return self.resolve(name).name

    def unknown(self, name: str) -> str | None:
        """Why `name` looks like a mistyped alias or role, or None.

        A bare word that is no alias may still be a litellm id (`gpt-4o`), so only a near
        miss of an alias or a role is refused here; litellm reports any other unknown id
        when called.
        """
        if name == DEFAULT or name in self.entries or name in self.role_table or "/" in name:
            return None
        import difflib

        known = [*self.entries, *self.role_table]
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.75)
        if not close:
            return None
        return (
            f"{cut_repr(name)} is not an alias from `models:` or a role from `roles:` in "
            f"config.yaml; did you mean {cut_repr(close[0])}? (aliases: "
            f"{', '.join(self.entries) or 'none'}; roles: {', '.join(self.role_table)})"
        )


def resolve_role(
    name: str,
    roles: Mapping[str, str],
    default_model: str = DEFAULT,
    *,
    where: str = "config.yaml",
) -> ModelChoice:
    """Follow `name` through `roles` (role -> target) and `default` (-> `default_model`).

    The first role met is the choice's role (`strong` -> `big` says strong). A role that
    comes back to itself is a SettingsError naming `where`, the chain and the fix.
    """
    path = [name]
    role: str | None = None
    while True:
        if name == DEFAULT:
            following = default_model if default_model != DEFAULT else EMBEDDED_MODEL
        elif name in roles:
            role = role or name
            following = roles[name]
        else:
            return ModelChoice(name=name, role=role, path=tuple(path))
        if following in path:
            chain = " -> ".join([*path, following])
            raise SettingsError(
                f"{where}: roles: {chain} is a cycle; point one of them at an alias from "
                f"`models:` or a litellm id, e.g. {ROLES_EXAMPLE}"
            )
        path.append(following)
        name = following


def resolve_model(name: str, default_model: str = DEFAULT) -> str:
    """`default` -> `default_model` -> the embedded model; other names unchanged (a role is
    followed by the adapter's catalog, which knows the configured `roles:`)."""
    if name != DEFAULT:
        return name
    return default_model if default_model != DEFAULT else EMBEDDED_MODEL


# --------------------------------------------------------------------------- parsing


def parse_models(value: Any, *, where: str) -> dict[str, ModelConfig]:
    """The `models:` section as alias -> ModelConfig, or a SettingsError naming `where` and key."""
    if value is None:
        return {}
    if isinstance(value, ModelCatalog):
        return dict(value.entries)
    if not isinstance(value, Mapping):
        raise SettingReader(where).error(
            "models",
            " must be a mapping of alias to settings, e.g. "
            f"models: {{fast: {{model: openai/gpt-4.1-mini}}}}; got {type(value).__name__}",
        )
    entries: dict[str, ModelConfig] = {}
    for alias, body in value.items():
        entries[str(alias)] = _entry(alias, body, where)
    return entries


def _entry(alias: Any, body: Any, where: str) -> ModelConfig:
    fields = SettingReader(where, f"models.{alias}", typed=False)
    if not isinstance(alias, str) or not ALIAS_PATTERN.match(alias):
        raise fields.problem(
            "",
            "the alias must be a word of letters, digits, . _ : or - "
            "(no /, which marks a litellm id); rename it",
        )
    if alias == DEFAULT:
        raise fields.problem(
            "",
            "`default` is reserved (it means the default_model setting); "
            "rename the alias and set default_model to it",
        )
    if isinstance(body, str):  # `fast: openai/gpt-4.1-mini`, a short form
        body = {"model": body}
    if not isinstance(body, Mapping):
        raise fields.error(
            "",
            f" must be a mapping with at least `model:` (a litellm id), got {type(body).__name__}",
        )
    fields.unknown_keys(
        body,
        MODEL_KEYS,
        f"known keys: {', '.join(MODEL_KEYS)} (other litellm parameters go under `params:`)",
    )
    model, api_base, api_key_env = _endpoint(alias, body, fields)
    headers, params = _extras(body, fields)
    return ModelConfig(
        model=model,
        alias=alias,
        api_base=api_base,
        api_key_env=api_key_env,
        headers=headers,
        params=params,
        tools=_optional_flag(body, "tools", fields),
        reasoning=_optional_flag(body, "reasoning", fields),
        context_window=_context_window(body, fields),
        price=_price(body, fields),
        source=f"{where}: {fields.key}",
    )


def _endpoint(
    alias: str, body: Mapping[str, Any], fields: SettingReader
) -> tuple[str, str | None, str | None]:
    """The litellm id, the server's URL and the key variable's name."""
    item = body.get("model")
    if not is_text(item):
        raise fields.error(
            "model",
            " is required: the litellm model id, e.g. openai/gpt-4.1-mini"
            + ("" if item is None else fields.got(item)),
        )
    model = str(item).strip()
    if model in (alias, DEFAULT):
        raise fields.error("model", f" must be a litellm id, not {cut_repr(model)}")
    api_base = _optional_text(body, "api_base", fields)
    if api_base is not None and not re.match(r"^https?://[^\s/]+", api_base):
        raise fields.wrong("api_base", "an http(s) URL such as http://localhost:8080/v1", api_base)
    api_key_env = _optional_text(body, "api_key_env", fields)
    if api_key_env is not None and not ENV_NAME_PATTERN.match(api_key_env):
        raise fields.wrong(
            "api_key_env",
            "the NAME of an environment variable (e.g. OPENAI_API_KEY), never the key itself; "
            "put the key in that variable",
        )
    return model, api_base, api_key_env


def _optional_text(body: Mapping[str, Any], name: str, fields: SettingReader) -> str | None:
    item = body.get(name)
    return None if item is None else fields.text(name, item, "non-empty text")


def _extras(
    body: Mapping[str, Any], fields: SettingReader
) -> tuple[dict[str, str], dict[str, Any]]:
    """The extra headers and the other litellm parameters."""
    headers = body.get("headers") or {}
    if not isinstance(headers, Mapping) or not all(
        isinstance(k, str) and is_scalar(v) for k, v in headers.items()
    ):
        raise fields.wrong("headers", "a mapping of header name to text, e.g. {X-Team: research}")
    params = body.get("params") or {}
    if not isinstance(params, Mapping) or not all(isinstance(k, str) for k in params):
        raise fields.wrong("params", "a mapping of litellm parameter to value, e.g. {top_p: 0.9}")
    for name in params:
        if name in RESERVED_PARAMS:
            raise fields.error(
                f"params.{name}", f" is not allowed here; use {RESERVED_PARAMS[name]}"
            )
    return {str(k): str(v) for k, v in headers.items()}, dict(params)


def _optional_flag(body: Mapping[str, Any], name: str, fields: SettingReader) -> bool | None:
    flag = body.get(name)
    return None if flag is None else fields.flag(name, flag)


def _context_window(body: Mapping[str, Any], fields: SettingReader) -> int | None:
    window = body.get("context_window")
    if window is None:
        return None
    return fields.whole("context_window", window, "a whole number of tokens", 1)


def _price(body: Mapping[str, Any], fields: SettingReader) -> ModelPrice | None:
    """Both sides of a configured price, or None when neither is set."""
    costs: list[float | None] = []
    for name in ("input_cost_per_token", "output_cost_per_token"):
        cost = body.get(name)
        if cost is not None:
            cost = fields.number(
                name, cost, "a price in USD per token (0 or more, e.g. 0.0000004)", 0, finite=True
            )
        costs.append(cost)
    if costs[0] is not None and costs[1] is not None:
        return ModelPrice(costs[0], costs[1])
    if costs[0] is not None or costs[1] is not None:
        missing = "input_cost_per_token" if costs[0] is None else "output_cost_per_token"
        raise fields.problem("", f"set {missing} too; a price needs both sides (0 is allowed)")
    return None


def parse_roles(value: Any, *, where: str) -> dict[str, str]:
    """The `roles:` section as role -> name, or a SettingsError naming `where` and the key.

    Only the shape is checked here; `check_roles` checks the names once `models:` is known.
    """
    if value is None:
        return {}
    fields = SettingReader(where, typed=False)
    entries = fields.mapping("roles", value, f"a mapping of role to model, e.g. {ROLES_EXAMPLE}")
    roles: dict[str, str] = {}
    for role, target in entries.items():
        key = f"roles.{role}"
        if not isinstance(role, str) or not ALIAS_PATTERN.match(role):
            raise fields.problem(key, "a role is a word of letters, digits, . _ : or -; rename it")
        if role == DEFAULT:
            raise fields.problem(
                key, "`default` is the default_model setting, not a role; set default_model"
            )
        roles[role] = fields.text(key, target, "an alias from `models:`, a litellm id or a role")
    return roles


def check_roles(catalog: ModelCatalog) -> None:
    """Every role names an alias, another role, `default` or a litellm id, without a cycle.

    A SettingsError names where the roles were set, the role and the fix. A bare word is
    refused (unlike a profile's `model:`): a role exists to point at configured models, so a
    typo of an alias must not silently become a litellm id.
    """
    fields = SettingReader(catalog.source, typed=False)
    table = catalog.role_table
    for role, target in catalog.roles.items():
        if role in catalog.entries:
            raise fields.problem(
                f"roles.{role}",
                f"{cut_repr(role)} is also an alias in `models:`; a name is an alias or a "
                "role, not both: rename one",
            )
        if target in (DEFAULT, *catalog.entries, *table) or "/" in target:
            continue
        known = ", ".join([*catalog.entries, *table]) or "none"
        raise fields.problem(
            f"roles.{role}",
            f"{cut_repr(target)} is not an alias from `models:`, a role or a litellm id "
            f"(provider/model); known: {known}",
        )
    for name in (DEFAULT, *table):
        catalog.choose(name)  # raises on a cycle


def models_from_text(text: str, *, where: str) -> Any:
    """`MODES_TUI_MODELS`: a JSON object of alias -> settings (checked by parse_models)."""
    import json

    if not text:
        return {}
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise SettingsError(
            f"{where}: models is not valid JSON ({error.msg}); use "
            '{"fast": {"model": "openai/gpt-4.1-mini"}}, or set them in config.yaml'
        ) from error

"""Configured models: the `models:` section of config.yaml, and the one model-name resolver.

A profile's `model:`, `fallback_models:`, `--model`, router.yaml's `model:` and the
`default_model` setting all name a model the same way: `default`, an alias from `models:`,
or a litellm id (`provider/model`). `ModelCatalog.resolve` is the only place that turns such
a name into what is called; nothing else spells the embedded model's id.

    models:
      fast:
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

Headless: no litellm here; the adapter (`llm/litellm_model.py`) applies a resolved entry.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from modes_tui.core.errors import SettingsError, cut_repr
from modes_tui.core.redaction import remember_secret
from modes_tui.core.variables import expand_secret_values

EMBEDDED_MODEL = "local/gemma-3-270m"
"""The embedded offline model: what `default` means when nothing else is configured."""
DEFAULT = "default"
"""The name that stands for the `default_model` setting."""

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
class ModelCatalog:
    """Every configured alias, and the default; resolves any model name."""

    entries: Mapping[str, ModelConfig] = field(default_factory=dict)
    """Alias -> its configuration, in file order."""
    default_model: str = EMBEDDED_MODEL
    """What `default` stands for (an alias or a litellm id)."""

    def __iter__(self) -> Iterator[ModelConfig]:
        return iter(self.entries.values())

    def __contains__(self, name: object) -> bool:
        return name in self.entries

    def resolve(self, name: str) -> ModelConfig:
        """`default` -> the default model; an alias -> its entry; anything else -> a plain id."""
        if name == DEFAULT:
            name = self.default_model if self.default_model != DEFAULT else EMBEDDED_MODEL
        entry = self.entries.get(name)
        if entry is not None:
            return entry
        return ModelConfig(model=name)

    def name_of(self, name: str) -> str:
        """What `name` is called in the UI and the session: `default` spelled out."""
        return self.resolve(name).name

    def unknown(self, name: str) -> str | None:
        """Why `name` looks like a mistyped alias, or None.

        A bare word that is no alias may still be a litellm id (`gpt-4o`), so only a near
        miss of an alias is refused here; litellm reports any other unknown id when called.
        """
        if name == DEFAULT or name in self.entries or "/" in name:
            return None
        import difflib

        close = difflib.get_close_matches(name, list(self.entries), n=1, cutoff=0.75)
        if not close:
            return None
        return (
            f"{cut_repr(name)} is not an alias from `models:` in config.yaml; did you mean {cut_repr(close[0])}? "
            f"(aliases: {', '.join(self.entries)})"
        )


def resolve_model(name: str, default_model: str = DEFAULT) -> str:
    """`default` -> `default_model` -> the embedded model; other names unchanged."""
    return ModelCatalog(default_model=default_model).resolve(name).name


# --------------------------------------------------------------------------- parsing


def parse_models(value: Any, *, where: str) -> dict[str, ModelConfig]:
    """The `models:` section as alias -> ModelConfig, or a SettingsError naming `where` and key."""
    if value is None:
        return {}
    if isinstance(value, ModelCatalog):
        return dict(value.entries)
    if not isinstance(value, Mapping):
        raise SettingsError(
            f"{where}: models must be a mapping of alias to settings, e.g. "
            f"models: {{fast: {{model: openai/gpt-4.1-mini}}}}; got {type(value).__name__}"
        )
    entries: dict[str, ModelConfig] = {}
    for alias, body in value.items():
        entries[str(alias)] = _entry(alias, body, where)
    return entries


def _entry(alias: Any, body: Any, where: str) -> ModelConfig:
    if not isinstance(alias, str) or not ALIAS_PATTERN.match(alias):
        raise SettingsError(
            f"{where}: models.{alias}: the alias must be a word of letters, digits, . _ : or - "
            "(no /, which marks a litellm id); rename it"
        )
    key = f"models.{alias}"
    if alias == DEFAULT:
        raise SettingsError(
            f"{where}: {key}: `default` is reserved (it means the default_model setting); "
            "rename the alias and set default_model to it"
        )
    if isinstance(body, str):  # `fast: openai/gpt-4.1-mini`, a short form
        body = {"model": body}
    if not isinstance(body, Mapping):
        raise SettingsError(
            f"{where}: {key} must be a mapping with at least `model:` (a litellm id), "
            f"got {type(body).__name__}"
        )
    unknown = sorted(str(k) for k in body if k not in MODEL_KEYS)
    if unknown:
        raise SettingsError(
            f"{where}: {key}: unknown key {', '.join(map(cut_repr, unknown))}; known keys: "
            f"{', '.join(MODEL_KEYS)} (other litellm parameters go under `params:`)"
        )

    def text(name: str, *, required: bool = False) -> str | None:
        item = body.get(name)
        if item is None and not required:
            return None
        if not isinstance(item, str) or not item.strip():
            need = "is required: the litellm model id, e.g. openai/gpt-4.1-mini" if required else ""
            raise SettingsError(
                f"{where}: {key}.{name} {need or 'must be non-empty text'}"
                + ("" if item is None else f", got {cut_repr(item)}")
            )
        return item.strip()

    model = text("model", required=True)
    assert model is not None
    if model in (alias, DEFAULT):
        raise SettingsError(f"{where}: {key}.model must be a litellm id, not {cut_repr(model)}")
    api_base = text("api_base")
    if api_base is not None and not re.match(r"^https?://[^\s/]+", api_base):
        raise SettingsError(
            f"{where}: {key}.api_base must be an http(s) URL such as http://localhost:8080/v1, "
            f"got {cut_repr(api_base)}"
        )
    api_key_env = text("api_key_env")
    if api_key_env is not None and not ENV_NAME_PATTERN.match(api_key_env):
        raise SettingsError(
            f"{where}: {key}.api_key_env must be the NAME of an environment variable "
            "(e.g. OPENAI_API_KEY), never the key itself; put the key in that variable"
        )
    headers = body.get("headers") or {}
    if not isinstance(headers, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str | int | float) and not isinstance(v, bool)
        for k, v in headers.items()
    ):
        raise SettingsError(
            f"{where}: {key}.headers must be a mapping of header name to text, "
            "e.g. {X-Team: research}"
        )
    params = body.get("params") or {}
    if not isinstance(params, Mapping) or not all(isinstance(k, str) for k in params):
        raise SettingsError(
            f"{where}: {key}.params must be a mapping of litellm parameter to value, "
            "e.g. {top_p: 0.9}"
        )
    for name in params:
        if name in RESERVED_PARAMS:
            raise SettingsError(
                f"{where}: {key}.params.{name} is not allowed here; use {RESERVED_PARAMS[name]}"
            )
    flags: dict[str, bool | None] = {}
    for name in ("tools", "reasoning"):
        flag = body.get(name)
        if flag is not None and not isinstance(flag, bool):
            raise SettingsError(
                f"{where}: {key}.{name} must be true or false, got {cut_repr(flag)}"
            )
        flags[name] = flag
    window = body.get("context_window")
    if window is not None and (
        isinstance(window, bool) or not isinstance(window, int) or window < 1
    ):
        raise SettingsError(
            f"{where}: {key}.context_window must be a whole number of tokens, got {cut_repr(window)}"
        )
    costs: list[float | None] = []
    for name in ("input_cost_per_token", "output_cost_per_token"):
        cost = body.get(name)
        if cost is not None and (
            isinstance(cost, bool)
            or not isinstance(cost, int | float)
            or cost < 0
            or not math.isfinite(cost)
        ):
            raise SettingsError(
                f"{where}: {key}.{name} must be a price in USD per token (0 or more, e.g. "
                f"0.0000004), got {cut_repr(cost)}"
            )
        costs.append(None if cost is None else float(cost))
    if (costs[0] is None) != (costs[1] is None):
        missing = "input_cost_per_token" if costs[0] is None else "output_cost_per_token"
        raise SettingsError(
            f"{where}: {key}: set {missing} too; a price needs both sides (0 is allowed)"
        )
    price = (
        ModelPrice(costs[0], costs[1]) if costs[0] is not None and costs[1] is not None else None
    )
    return ModelConfig(
        model=model,
        alias=alias,
        api_base=api_base,
        api_key_env=api_key_env,
        headers={str(k): str(v) for k, v in headers.items()},
        params=dict(params),
        tools=flags["tools"],
        reasoning=flags["reasoning"],
        context_window=window,
        price=price,
        source=f"{where}: {key}",
    )


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

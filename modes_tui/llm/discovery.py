"""What providers this machine can reach, found without a network guess (for `modes-tui init`).

Two sources, both local:
- API key variables in the environment (`OPENAI_API_KEY`, ...): the provider is offered with
  a small and a large model of its own (`KEY_PROVIDERS`); the key is never read, only its
  variable's name is written (`api_key_env:`).
- Servers on 127.0.0.1: Ollama (`/api/tags`), LM Studio and llama.cpp's server
  (`/v1/models`), asked at once (a thread each) through `llm.local_probe`: straight to the
  loopback address (no proxy), each request within `PROBE_SECONDS` and the whole lookup
  within `RUN_SECONDS`, so a server that trickles or hangs cannot hold `init`. Every
  server given up on is kept with its port and why (`GaveUp`: refused, slow, needs a key,
  not OpenAI-compatible, not an Ollama server). Their ports can be moved
  (`MODES_TUI_INIT_PORTS=ollama=11500,...` or `--ports`), so tests run fake servers on
  ephemeral ports.
- Each model's context window, where the server says it: llama.cpp's `/props`
  (`default_generation_settings.n_ctx`, what the server runs with), Ollama's `/api/show`
  (`parameters` num_ctx, else `model_info` `<arch>.context_length`), LM Studio's
  `/api/v0/models` (`loaded_context_length`, else `max_context_length`). A server that does
  not say (the Python `llama_cpp.server`) leaves it unknown.

A model name reported by a server is data from outside: a name with control characters or
an unreasonable length is skipped (and counted), never shown raw or written.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from modes_tui.core.errors import SettingsError, cut_repr
from modes_tui.llm.local_probe import HOST, ProbeFailed, get_json

PROBE_SECONDS = 2.0
"""Each request to a local server: one that answers at all answers in milliseconds."""
RUN_SECONDS = 6.0
"""The whole lookup of every port, however the servers behave."""
MAX_MODELS = 50
"""Models listed per server (a long list says nothing more)."""
PORTS_ENV = "MODES_TUI_INIT_PORTS"
DEFAULT_PORTS: Mapping[str, int] = {"ollama": 11434, "lmstudio": 1234, "llamacpp": 8080}
_PRINTABLE_NAME = re.compile(
    r"^[^\x00-\x1f\x7f-\x9f\u2028\u2029\u200b-\u200f\u202a-\u202e]{1,200}$"
)


@dataclass(frozen=True, slots=True)
class KeyProvider:
    """A hosted provider found by its key variable, with the models proposed for it."""

    name: str
    """The provider's name, as people say it."""
    env: str
    """The variable that holds its API key."""
    fast: str
    """The litellm id proposed for the `fast` role (its small, cheap model)."""
    strong: str
    """The litellm id proposed for the `strong` role (its large model)."""


KEY_PROVIDERS: tuple[KeyProvider, ...] = (
    KeyProvider("OpenAI", "OPENAI_API_KEY", "openai/gpt-4.1-mini", "openai/gpt-4.1"),
    KeyProvider(
        "Anthropic",
        "ANTHROPIC_API_KEY",
        "anthropic/claude-haiku-4-5",
        "anthropic/claude-sonnet-4-5",
    ),
    KeyProvider("Gemini", "GEMINI_API_KEY", "gemini/gemini-2.5-flash", "gemini/gemini-2.5-pro"),
    KeyProvider(
        "Mistral", "MISTRAL_API_KEY", "mistral/mistral-small-latest", "mistral/mistral-large-latest"
    ),
    KeyProvider(
        "DeepSeek", "DEEPSEEK_API_KEY", "deepseek/deepseek-chat", "deepseek/deepseek-reasoner"
    ),
    KeyProvider("Groq", "GROQ_API_KEY", "groq/openai/gpt-oss-20b", "groq/openai/gpt-oss-120b"),
    KeyProvider(
        "OpenRouter",
        "OPENROUTER_API_KEY",
        "openrouter/openai/gpt-4.1-mini",
        "openrouter/openai/gpt-4.1",
    ),
)
"""In the order init prefers them for the roles (the first found gives fast and strong)."""


@dataclass(frozen=True, slots=True)
class LocalModel:
    """A model a local server lists."""

    name: str
    """Its name on the server (checked printable)."""
    size: int | None = None
    """Its size in bytes, when the server says (Ollama does)."""
    context: int | None = None
    """Its context window in tokens, when the server says (see the module's docstring)."""


_LABELS = {"ollama": "Ollama", "lmstudio": "LM Studio", "llamacpp": "llama.cpp server"}
_PROVIDERS = {"ollama": "ollama_chat", "lmstudio": "lm_studio", "llamacpp": "llamafile"}
"""litellm's provider for each kind of server: each talks to it with no key set (a
placeholder key goes out when no `api_key_env` is configured; llamafile is litellm's
provider for llama.cpp's server, LM Studio's and Ollama's their own)."""


@dataclass(frozen=True, slots=True)
class LocalServer:
    """A server found on 127.0.0.1, and the models it lists."""

    kind: str
    """ollama, lmstudio or llamacpp."""
    port: int
    """Where it answered."""
    models: tuple[LocalModel, ...] = ()
    """What it lists (at most MAX_MODELS, printable names only)."""
    skipped: int = 0
    """Names left out: unprintable, too long, or past MAX_MODELS."""

    @property
    def label(self) -> str:
        """`Ollama on 127.0.0.1:11434`."""
        return f"{_LABELS[self.kind]} on {HOST}:{self.port}"

    @property
    def api_base(self) -> str:
        """What litellm is given as `api_base`."""
        root = f"http://{HOST}:{self.port}"
        return root if self.kind == "ollama" else root + "/v1"

    def litellm_id(self, model: LocalModel) -> str:
        """The litellm id that reaches `model` on this server, with no key variable set."""
        return f"{_PROVIDERS[self.kind]}/{model.name}"


@dataclass(frozen=True, slots=True)
class GaveUp:
    """A port where no usable server was found, and why."""

    kind: str
    """ollama, lmstudio or llamacpp: what was looked for."""
    port: int
    """Where."""
    why: str
    """refused, slow, needs a key, not OpenAI-compatible, not an Ollama server."""
    detail: str
    """What happened, in a few words."""

    @property
    def refused(self) -> bool:
        """Nothing listens there (the usual case: not a problem)."""
        return self.why == "refused"

    def __str__(self) -> str:
        return f"{self.kind} on {HOST}:{self.port}: {self.why} ({self.detail})"


@dataclass(frozen=True, slots=True)
class Discovery:
    """Everything found."""

    keys: tuple[KeyProvider, ...] = ()
    """Hosted providers whose key variable is set (non-empty)."""
    servers: tuple[LocalServer, ...] = ()
    """Local servers that answered with a model list."""
    gave_up: tuple[GaveUp, ...] = field(default=())
    """Ports given up on, in the order looked at."""

    @property
    def empty(self) -> bool:
        """Nothing to configure."""
        return not self.keys and not any(server.models for server in self.servers)


def parse_ports(text: str, *, where: str) -> dict[str, int]:
    """`ollama=11500,llamacpp=8081` over the default ports; a SettingsError names a bad one."""
    ports = dict(DEFAULT_PORTS)
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, _, value = part.partition("=")
        name = name.strip().lower()
        if name not in DEFAULT_PORTS or not value.strip().isdigit() or not 0 < int(value) < 65536:
            raise SettingsError(
                f"{where}: {cut_repr(part)} is not NAME=PORT; names: {', '.join(DEFAULT_PORTS)}, "
                "ports 1-65535, e.g. ollama=11434,lmstudio=1234,llamacpp=8080"
            )
        ports[name] = int(value)
    return ports


def discover(
    environ: Mapping[str, str],
    ports: Mapping[str, int],
    *,
    probe_seconds: float = PROBE_SECONDS,
    run_seconds: float = RUN_SECONDS,
) -> Discovery:
    """Key variables in `environ`, then every local server at its port, all at once; done
    within `run_seconds` whatever the servers do (a port still busy then is `slow`)."""
    keys = tuple(p for p in KEY_PROVIDERS if environ.get(p.env, "").strip())
    run_deadline = time.monotonic() + run_seconds
    outcomes: dict[str, LocalServer | GaveUp] = {}

    def look(kind: str, port: int) -> None:
        try:
            outcomes[kind] = probe(kind, port, probe_seconds=probe_seconds, until=run_deadline)
        except ProbeFailed as error:
            outcomes[kind] = GaveUp(kind, port, error.why, error.detail)

    threads = [
        threading.Thread(target=look, args=item, name=f"modes-tui-probe-{item[0]}", daemon=True)
        for item in ports.items()
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(max(0.0, run_deadline - time.monotonic()) + 0.5)
    servers: list[LocalServer] = []
    gave_up: list[GaveUp] = []
    for kind, port in ports.items():
        outcome = outcomes.get(kind) or GaveUp(
            kind, port, "slow", f"no whole answer within {run_seconds:g} s"
        )
        if isinstance(outcome, LocalServer):
            servers.append(outcome)
        else:
            gave_up.append(outcome)
    return Discovery(keys, tuple(servers), tuple(gave_up))


def probe(
    kind: str, port: int, *, probe_seconds: float = PROBE_SECONDS, until: float | None = None
) -> LocalServer:
    """The server of `kind` at `port`, its models and their context windows, each request
    within `probe_seconds` and all of them before `until` (a `time.monotonic()` value);
    ProbeFailed says why not."""

    def deadline() -> float:
        now = time.monotonic() + probe_seconds
        return now if until is None else min(now, until)

    path = "/api/tags" if kind == "ollama" else "/v1/models"
    foreign = "not an Ollama server" if kind == "ollama" else "not OpenAI-compatible"
    data = get_json(port, path, deadline=deadline(), foreign=foreign)
    key = "models" if kind == "ollama" else "data"
    items = data.get(key)
    if not isinstance(items, list):
        raise ProbeFailed(foreign, f"{path} answered, but not with a model list (no {key} list)")
    models: list[LocalModel] = []
    skipped = 0
    for item in items:
        model = _model(kind, item)
        if model is None or len(models) >= MAX_MODELS:
            skipped += 1
            continue
        models.append(model)
    server = LocalServer(kind, port, tuple(models), skipped)
    return _with_contexts(server, deadline)


def _with_contexts(server: LocalServer, deadline: Callable[[], float]) -> LocalServer:
    """`server` with each model's context window where the server says it (a failure to
    say leaves it unknown: the models are usable all the same)."""
    if server.kind == "llamacpp":
        try:
            props = get_json(server.port, "/props", deadline=deadline())
        except ProbeFailed:
            return server
        window = _whole(_get(props, "default_generation_settings", "n_ctx")) or _whole(
            props.get("n_ctx")
        )
        models = tuple(replace(model, context=window) for model in server.models)
        return replace(server, models=models)
    if server.kind == "ollama":
        shown_models: list[LocalModel] = []
        for model in server.models:
            try:
                body = {"model": model.name, "name": model.name}  # older Ollama: `name`
                shown = get_json(server.port, "/api/show", deadline=deadline(), body=body)
            except ProbeFailed:
                shown_models.append(model)
                continue
            shown_models.append(replace(model, context=ollama_context(shown)))
        return replace(server, models=tuple(shown_models))
    return _lm_studio_contexts(server, deadline)


def _lm_studio_contexts(server: LocalServer, deadline: Callable[[], float]) -> LocalServer:
    """LM Studio's own `/api/v0/models`: each model's `loaded_context_length` (what it runs
    with), else its `max_context_length`."""
    try:
        listed = get_json(server.port, "/api/v0/models", deadline=deadline())
    except ProbeFailed:
        return server
    windows: dict[str, int] = {}
    for item in listed.get("data") or []:
        if isinstance(item, Mapping) and isinstance(item.get("id"), str):
            window = _whole(item.get("loaded_context_length")) or _whole(
                item.get("max_context_length")
            )
            if window is not None:
                windows[item["id"]] = window
    models = tuple(replace(model, context=windows.get(model.name)) for model in server.models)
    return replace(server, models=models)


def ollama_context(shown: Mapping[str, Any]) -> int | None:
    """The context window in Ollama's `/api/show` answer: `num_ctx` in its parameters (what
    the server runs the model with), else `<arch>.context_length` in its model_info."""
    parameters = shown.get("parameters")
    if isinstance(parameters, str):
        for line in parameters.splitlines():
            name, _, value = line.strip().partition(" ")
            if name == "num_ctx" and _whole(value.strip()):
                return _whole(value.strip())
    info = shown.get("model_info")
    if isinstance(info, Mapping):
        arch = info.get("general.architecture")
        if isinstance(arch, str) and _whole(info.get(f"{arch}.context_length")):
            return _whole(info.get(f"{arch}.context_length"))
        for key, value in info.items():
            if isinstance(key, str) and key.endswith(".context_length") and _whole(value):
                return _whole(value)
    return None


def _get(data: Mapping[str, Any], *keys: str) -> Any:
    value: Any = data
    for key in keys:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def _whole(value: Any) -> int | None:
    """A positive whole number from a JSON value or text, else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    return value if isinstance(value, int) and 0 < value < 100_000_000 else None


def _model(kind: str, item: Any) -> LocalModel | None:
    """One listed model, or None when its name is missing or not printable."""
    if not isinstance(item, Mapping):
        return None
    name = item.get("name") or item.get("model") if kind == "ollama" else item.get("id")
    if not isinstance(name, str) or not _PRINTABLE_NAME.match(name) or not name.strip():
        return None
    size = item.get("size")
    return LocalModel(name.strip(), size if isinstance(size, int) and size >= 0 else None)

"""What providers this machine can reach, found without a network guess (for `modes-tui init`).

Two sources, both local:
- API key variables in the environment (`OPENAI_API_KEY`, ...): the provider is offered with
  a small and a large model of its own (`KEY_PROVIDERS`); the key is never read, only its
  variable's name is written (`api_key_env:`).
- Servers on 127.0.0.1: Ollama (`/api/tags`), LM Studio and llama.cpp's server
  (`/v1/models`), each asked once with a short timeout through the standard library. Their
  ports can be moved (`MODES_TUI_INIT_PORTS=ollama=11500,...` or `--ports`), so tests run
  fake servers on ephemeral ports.

A model name reported by a server is data from outside: a name with control characters or
an unreasonable length is skipped (and counted), never shown raw or written.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from modes_tui.core.errors import SettingsError, cut_repr

HOST = "127.0.0.1"
TIMEOUT_SECONDS = 0.5
"""A local server answers in milliseconds; nothing listening fails at once."""
MAX_BODY = 1_000_000
"""Bytes of a server's model list read at most."""
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
        names = {"ollama": "Ollama", "lmstudio": "LM Studio", "llamacpp": "llama.cpp server"}
        return f"{names[self.kind]} on {HOST}:{self.port}"

    @property
    def api_base(self) -> str:
        """What litellm is given as `api_base`."""
        root = f"http://{HOST}:{self.port}"
        return root if self.kind == "ollama" else root + "/v1"

    def litellm_id(self, model: LocalModel) -> str:
        """The litellm id that reaches `model` on this server."""
        prefix = {"ollama": "ollama_chat", "lmstudio": "lm_studio", "llamacpp": "openai"}
        return f"{prefix[self.kind]}/{model.name}"


@dataclass(frozen=True, slots=True)
class Discovery:
    """Everything found."""

    keys: tuple[KeyProvider, ...] = ()
    """Hosted providers whose key variable is set (non-empty)."""
    servers: tuple[LocalServer, ...] = ()
    """Local servers that answered."""
    problems: tuple[str, ...] = field(default=())
    """Servers that answered something unreadable (said, not fatal)."""

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


def discover(environ: Mapping[str, str], ports: Mapping[str, int]) -> Discovery:
    """Key variables in `environ`, then each local server at its port."""
    keys = tuple(p for p in KEY_PROVIDERS if environ.get(p.env, "").strip())
    servers: list[LocalServer] = []
    problems: list[str] = []
    for kind, port in ports.items():
        try:
            found = probe(kind, port)
        except ValueError as error:
            problems.append(f"{kind} on {HOST}:{port} answered, but {error}")
            continue
        if found is not None:
            servers.append(found)
    return Discovery(keys, tuple(servers), tuple(problems))


def probe(kind: str, port: int) -> LocalServer | None:
    """The server of `kind` at `port` and its models; None when nothing answers there.

    ValueError when something answers but not with a model list.
    """
    path = "/api/tags" if kind == "ollama" else "/v1/models"
    data = _get_json(f"http://{HOST}:{port}{path}")
    if data is None:
        return None
    items = data.get("models") if kind == "ollama" else data.get("data")
    if not isinstance(items, list):
        raise ValueError(
            f"not with a model list ({path} has no {'models' if kind == 'ollama' else 'data'} list)"
        )
    models: list[LocalModel] = []
    skipped = 0
    for item in items:
        model = _model(kind, item)
        if model is None or len(models) >= MAX_MODELS:
            skipped += 1
            continue
        models.append(model)
    return LocalServer(kind, port, tuple(models), skipped)


def _model(kind: str, item: Any) -> LocalModel | None:
    """One listed model, or None when its name is missing or not printable."""
    if not isinstance(item, Mapping):
        return None
    name = item.get("name") or item.get("model") if kind == "ollama" else item.get("id")
    if not isinstance(name, str) or not _PRINTABLE_NAME.match(name) or not name.strip():
        return None
    size = item.get("size")
    return LocalModel(name.strip(), size if isinstance(size, int) and size >= 0 else None)


def _get_json(url: str) -> dict[str, Any] | None:
    """The JSON object at `url`; None when nothing answers (refused, timeout, HTTP error)."""
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:
            body = response.read(MAX_BODY + 1)
    except (urllib.error.URLError, OSError, ValueError):
        return None  # nothing there, or not an HTTP server: not found, not a problem
    if len(body) > MAX_BODY:
        raise ValueError(f"with more than {MAX_BODY} bytes")
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise ValueError("not with JSON") from None
    if not isinstance(data, dict):
        raise ValueError("not with a JSON object")
    return data

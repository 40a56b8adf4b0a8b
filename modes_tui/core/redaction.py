"""Secrets never reach a log or a session file: API keys, tokens, auth headers, cookies.

The one redactor: `ModelRequest.to_dict()` (the request as logged) and the session log
(every record it writes) both use it. Redaction goes by the *name* of a value, and by the
value of a configured secret (below), never by what a text looks like: what the user typed
is recorded as typed, even if it looks like a key, unless it is one of the configured keys.

A name is secret when, lower-cased with dashes read as underscores, it is one of
`SECRET_NAMES` (`token`, `Authorization`, `X-Api-Key`, `aws_secret_access_key`, ...) or ends
with one of `SECRET_SUFFIXES` (`openai_api_key`, `client_secret`, ...). Values are replaced
under a secret-named key of a mapping, and in a `[name, value]` pair (a header list).
Empty values stay as they are, so a log still shows that no key was set.

Redaction by *value* catches a secret where no name marks it: a provider error that echoes
the key ("Incorrect API key provided: Bearer sk-..."), a tool's output, a model's answer.
`remember_secret` registers a value (the runtime does so for the environment variables
with secret names, each model's `api_key_env`, expanded `${VAR}` headers and MCP server
env and headers); `redact_values` replaces every registered value in a text. The session
log applies it to every string it writes, and `terminal_safe` to everything shown, so the
screen, replay and export never show a registered value. Values shorter than
`SHORTEST_SECRET` are not registered: they would garble ordinary words and are no keys.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable, Mapping
from typing import Any

REDACTED = "[redacted]"
"""What a secret is replaced with."""

SECRET_NAMES = frozenset(
    {
        "api_key",
        "apikey",
        "api_token",
        "token",
        "secret",
        "access_token",
        "refresh_token",
        "id_token",
        "auth_token",
        "bearer_token",
        "session_token",
        "client_secret",
        "password",
        "passwd",
        "authorization",
        "proxy_authorization",
        "x_api_key",
        "x_goog_api_key",
        "x_auth_token",
        "cookie",
        "set_cookie",
        "aws_secret_access_key",
        "aws_session_token",
        "private_key",
    }
)
"""Names (normalised: lower case, `_` for `-`) whose values are secrets."""

SECRET_SUFFIXES = (
    "_api_key",
    "_apikey",
    "_secret",
    "_secret_key",
    "_access_token",
    "_password",
)
"""Name endings that mark a provider-specific secret (`openai_api_key`)."""


def is_secret_name(name: object) -> bool:
    """Whether a key or header called `name` holds a secret."""
    if not isinstance(name, str):
        return False
    normal = name.strip().lower().replace("-", "_")
    return normal in SECRET_NAMES or normal.endswith(SECRET_SUFFIXES)


def redact_secrets(value: Any) -> Any:
    """A copy of `value` with every secret-named value replaced by "[redacted]"."""
    if isinstance(value, Mapping):
        return {
            key: REDACTED if is_secret_name(key) and item else redact_secrets(item)
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        if len(value) == 2 and is_secret_name(value[0]) and value[1]:
            return [value[0], REDACTED]  # a (header, value) pair
        return [redact_secrets(item) for item in value]
    return value


SHORTEST_SECRET = 8
"""Values shorter than this are not redacted by value (see the module docstring)."""

SECRET_ENV_ENDINGS = ("_KEY", "_TOKEN", "_SECRET", "_PASSWORD", "_CREDENTIALS")
"""Environment variable name endings whose values count as secrets (`OPENAI_API_KEY`,
`GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY` is caught by `is_secret_name`)."""


class _KnownSecrets:
    """The registered secret values and one pattern that finds any of them."""

    def __init__(self) -> None:
        self._values: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self._lock = threading.Lock()

    def add(self, values: Iterable[str]) -> None:
        with self._lock:
            fresh = {
                form
                for value in values
                if isinstance(value, str) and len(value.strip()) >= SHORTEST_SECRET
                for form in _forms(value.strip())
            } - self._values
            if not fresh:
                return
            self._values |= fresh
            longest_first = sorted(self._values, key=len, reverse=True)
            self._pattern = re.compile("|".join(map(re.escape, longest_first)))

    def clear(self) -> None:
        with self._lock:
            self._values.clear()
            self._pattern = None

    def started_at_end(self, text: str) -> int:
        """The length of the longest end of `text` that begins a secret (0: none does)."""
        longest = 0
        for value in self._values:
            for size in range(min(len(value) - 1, len(text)), longest, -1):
                if text.endswith(value[:size]):
                    longest = size
                    break
        return longest

    def redact(self, text: str) -> str:
        pattern = self._pattern
        if pattern is None:
            return text
        return pattern.sub(REDACTED, text)


def _forms(value: str) -> set[str]:
    """The value, and the value as it reads inside a JSON string (quotes, backslashes)."""
    return {value, json.dumps(value, ensure_ascii=False)[1:-1]}


_KNOWN = _KnownSecrets()


def remember_secret(*values: str) -> None:
    """Redact each of `values` by value from now on, in this process."""
    _KNOWN.add(values)


def remember_environment(environ: Mapping[str, str]) -> None:
    """Register the values of the environment variables whose names mark a secret."""
    remember_secret(
        *(
            value
            for name, value in environ.items()
            if is_secret_name(name) or name.upper().endswith(SECRET_ENV_ENDINGS)
        )
    )


def forget_secrets() -> None:
    """Unregister every value (for tests that need a clean process state)."""
    _KNOWN.clear()


def secret_started_at_end(text: str) -> int:
    """How many characters at the end of `text` could be the start of a registered secret:
    a stream holds them back until the next chunk says (see `TerminalStream`)."""
    return _KNOWN.started_at_end(text)


def redact_values(text: str) -> str:
    """`text` with every registered secret value replaced by "[redacted]"."""
    return _KNOWN.redact(text)


def redact_all(value: Any) -> Any:
    """`redact_secrets(value)` with `redact_values` applied to every string inside too."""
    return _redact_strings(redact_secrets(value))


def _redact_strings(value: Any) -> Any:
    if isinstance(value, str):
        return redact_values(value)
    if isinstance(value, Mapping):
        return {key: _redact_strings(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_redact_strings(item) for item in value]
    return value

"""Secrets never reach a session file: API keys, tokens, auth headers, cookies.

Extends `modes_tui.llm.base.redact` (which knows the common key names) for what a session
record may carry: names spelled with dashes or in any case (`X-Api-Key`, `Authorization`),
provider-specific key names (`openai_api_key`, `aws_secret_access_key`), and headers given
as `[name, value]` pairs. Redaction goes by the *name* of a value, never by its content:
what the user typed is recorded as typed, even if it looks like a key.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from modes_tui.llm.base import SECRET_KEYS

REDACTED = "[redacted]"

_SECRET_NAMES = frozenset(
    {key.replace("-", "_") for key in SECRET_KEYS}
    | {
        "api_key",
        "apikey",
        "api_token",
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
_SECRET_SUFFIXES = ("_api_key", "_apikey", "_secret", "_secret_key", "_access_token", "_password")


def is_secret_name(name: object) -> bool:
    """Whether a key or header called `name` holds a secret."""
    if not isinstance(name, str):
        return False
    normal = name.strip().lower().replace("-", "_")
    return normal in _SECRET_NAMES or normal.endswith(_SECRET_SUFFIXES)


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

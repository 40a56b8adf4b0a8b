"""Secrets never reach a log or a session file: API keys, tokens, auth headers, cookies.

The one redactor: `ModelRequest.to_dict()` (the request as logged) and the session log
(every record it writes) both use it. Redaction goes by the *name* of a value, never by its
content: what the user typed is recorded as typed, even if it looks like a key.

A name is secret when, lower-cased with dashes read as underscores, it is one of
`SECRET_NAMES` (`token`, `Authorization`, `X-Api-Key`, `aws_secret_access_key`, ...) or ends
with one of `SECRET_SUFFIXES` (`openai_api_key`, `client_secret`, ...). Values are replaced
under a secret-named key of a mapping, and in a `[name, value]` pair (a header list).
Empty values stay as they are, so a log still shows that no key was set.
"""

from __future__ import annotations

from collections.abc import Mapping
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

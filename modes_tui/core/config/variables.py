"""`${NAME}` in configured values (model headers, MCP server env and headers): filled in from
the environment when the value is used, so a secret never has to be written into a file.

Whatever a variable supplies is remembered as a secret (`core.redaction.remember_secret`):
it is redacted by value from every record and everything shown, wherever it turns up.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from modes_tui.core.errors import SettingsError
from modes_tui.core.redaction import is_secret_name, remember_secret

VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
"""`${NAME}`; a plain `$NAME` is left as it is."""


def expand_variables(value: str, environ: Mapping[str, str], *, where: str) -> str:
    """`value` with each `${NAME}` replaced; a SettingsError names a variable that is not set."""

    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in environ:
            raise SettingsError(
                f"{where} uses ${{{name}}}, which is not set; set {name} or edit it"
            )
        remember_secret(environ[name])
        return environ[name]

    return VARIABLE.sub(substitute, value)


def remember_named_value(name: str, value: str) -> None:
    """Remember `value` as a secret when `name` marks one (`Authorization`, `X-Api-Key`):
    the whole value, and its last word (the token of `Bearer <token>`)."""
    if is_secret_name(name) and value.strip():
        remember_secret(value, value.split()[-1])


def expand_secret_values(
    values: Mapping[str, str], environ: Mapping[str, str], *, where: str
) -> dict[str, str]:
    """Every value of `values` (headers, env) expanded, and remembered when its name or a
    variable marks it secret; `where` is the key path, e.g. `config.yaml: models.fast.headers`."""
    expanded = {}
    for name, value in values.items():
        expanded[name] = expand_variables(value, environ, where=f"{where}.{name}")
        remember_named_value(name, expanded[name])
    return expanded

"""Settings the user writes: models, config.yaml's fields, variables, the control file's keys.

The control file's value (`core/control_setting.py`) is read through a port and written by
the store.

    control.py    The control file's keys: what a pack name may be (a name, never a path)
    models.py     Configured models: the `models:` section of config.yaml, and the one
                  model-name resolver (roles: `fast`, `strong`, `roles:`)
    ports.py      What the core needs to read the control setting: the store's control file, or
                  a fixed reading in tests (the value: `core.control_setting.ControlReading`)
    settings.py   Typed fields of config.yaml: the one reader for its keys, `models:` and
                  `mcp_servers:`
    variables.py  `${NAME}` in configured values (model headers, MCP server env and headers):
                  filled in from the environment when the value is used, so a secret never has
                  to be written into a file

Public names: `__all__`, imported from the module that defines them (see core/__init__.py).
"""

from __future__ import annotations

from .control import PACK_NAME_RULE, pack_name_problem
from .models import (
    DEFAULT,
    EMBEDDED_MODEL,
    FAST,
    STRONG,
    ModelCatalog,
    ModelChoice,
    ModelConfig,
    ModelPrice,
    check_roles,
    models_from_text,
    parse_models,
    parse_roles,
    resolve_model,
    resolve_role,
)
from .ports import ControlSource
from .settings import SettingReader, is_number, is_scalar, is_text, is_whole
from .variables import expand_secret_values, expand_variables

__all__ = ["PACK_NAME_RULE", "pack_name_problem"]
__all__ += ["DEFAULT", "EMBEDDED_MODEL", "FAST", "STRONG", "ModelCatalog", "ModelChoice"]
__all__ += ["ModelConfig", "ModelPrice", "check_roles", "models_from_text", "parse_models"]
__all__ += ["ControlSource", "parse_roles", "resolve_model", "resolve_role"]
__all__ += ["SettingReader", "is_number", "is_scalar", "is_text", "is_whole"]
__all__ += ["expand_secret_values", "expand_variables"]

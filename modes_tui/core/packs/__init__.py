"""A pack: its modes (profiles), prompt templates, router.yaml and its own Python tools.

    fields.py         The pieces every pack file is read with: YAML, typed fields, and the
                      problems they make
    ports.py          What a pack's templates need of a mode, so that prompts.py need not
                      import profiles (profiles imports prompts); `profiles.Profile` has it
    profiles.py       Packs: a folder of mode profiles plus `router.yaml`, and the prompts that
                      go with them
    prompts.py        Prompt templates: the pack's base system prompt and each mode's
                      instructions
    router_config.py  `router.yaml`: how a pack's router decides, read and checked
    tools.py          A pack's own Python tools, named in its `router.yaml` by `python:`
                      references

Public names: `__all__`, imported from the module that defines them (see core/__init__.py).
"""

from __future__ import annotations

from .fields import FieldReader, HistoryWindow
from .profiles import NAME_PATTERN, Pack, Profile, available_packs, load_pack
from .prompts import template_locals
from .router_config import RouterConfig, read_router

__all__ = ["FieldReader", "HistoryWindow"]
__all__ += ["NAME_PATTERN", "Pack", "Profile", "available_packs", "load_pack", "template_locals"]
__all__ += ["RouterConfig", "read_router"]

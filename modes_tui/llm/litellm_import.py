"""Importing litellm: lazily, once, with its environment set first.

`import litellm` costs seconds and, unless told otherwise, reaches for the network to fetch
a price list. So nothing imports it at module level except adapter modules loaded on demand
(`local.py`, after `configure_environment`); everything else asks `import_litellm()`, or
warms it in a background thread after the first paint (`preload`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from types import ModuleType

_import_lock = threading.Lock()
_litellm: ModuleType | None = None


def configure_environment(*, offline: bool) -> None:
    """Set what litellm reads at import: the bundled price list, and offline mode."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    if offline:
        os.environ.setdefault("LITELLM_OFFLINE_MODE", "True")


def import_litellm(*, offline: bool = False) -> ModuleType:
    """Import litellm once, quietly, with the environment set first. Thread-safe."""
    global _litellm
    with _import_lock:
        if _litellm is None:
            configure_environment(offline=offline)
            import litellm

            litellm.suppress_debug_info = True
            litellm.telemetry = False
            logging.getLogger("LiteLLM").setLevel(logging.ERROR)
            _litellm = litellm
        return _litellm


async def import_litellm_async(*, offline: bool = False) -> ModuleType:
    """`import_litellm` without blocking the event loop on the first, slow import."""
    if _litellm is not None:
        return _litellm
    return await asyncio.to_thread(import_litellm, offline=offline)


def preload(*, offline: bool = False) -> threading.Thread:
    """Import litellm in a daemon thread (call after the first paint)."""
    thread = threading.Thread(
        target=import_litellm, kwargs={"offline": offline}, name="litellm-import", daemon=True
    )
    thread.start()
    return thread

"""Keeping the garbage collector off the first frame and off the streaming screen.

Starting the app creates hundreds of thousands of objects (Textual, our widgets) that live
as long as the app. With the default thresholds (700, 10, 10) the collector runs 87
passes over the younger generations while they are being imported (79 of the youngest, 8
of the middle one, counted with `gc.callbacks`): about 25 ms of the first frame on a
2-core machine (`bench/tui_startup.py`). So collections are spaced out
before the imports start (`hold_collections`), and once the heap holds what will live
for the whole session, that heap is frozen out of collection (`freeze_what_is_loaded`).

This module imports nothing but `gc`, so the command line can call it before Textual.
"""

from __future__ import annotations

import gc

GC_THRESHOLDS = (50_000, 20, 100)
"""Collect the young generation every 50,000 allocations instead of 700: starting up and
streaming make many short-lived objects, and each pass stalls the event loop."""


def hold_collections() -> None:
    """Space collections out while the app's modules are imported (call it before them)."""
    gc.set_threshold(*GC_THRESHOLDS)


def freeze_what_is_loaded() -> None:
    """Take everything loaded so far out of garbage collection.

    Called twice: right before the first frame (Textual and our widgets) and once the
    engine is built (litellm, the model, the pack). All of it lives as long as the app;
    frozen, it is never scanned again, so a full collection while answers stream walks
    only what the conversation made (50-150 ms stalls otherwise, measured).
    """
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)

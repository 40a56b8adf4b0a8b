"""Starting the app keeps the garbage collector off its first frame."""

from __future__ import annotations

import gc

from modes_tui.tui.startup import GC_THRESHOLDS, keep_imports_out_of_gc


def test_what_is_imported_before_the_first_frame_is_never_collected_again() -> None:
    thresholds = gc.get_threshold()
    gc.unfreeze()
    try:
        keep_imports_out_of_gc()
        assert gc.get_freeze_count() > 1000  # textual and our modules, at least
        assert gc.get_threshold() == GC_THRESHOLDS
        before = gc.get_count()[0]
        garbage = [[index] for index in range(5_000)]  # the first frame allocates like this
        # With the default threshold (700) a young collection would have reset the count.
        assert gc.get_count()[0] >= before + 4_000
        del garbage
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)

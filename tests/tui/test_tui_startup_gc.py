"""Starting the app keeps the garbage collector off its first frame."""

from __future__ import annotations

import gc
import json
import textwrap

from modes_tui.tui.gc_tuning import GC_THRESHOLDS, freeze_what_is_loaded
from tests.support.cli_support import run_python


def test_what_is_imported_before_the_first_frame_is_never_collected_again() -> None:
    thresholds = gc.get_threshold()
    gc.unfreeze()
    try:
        freeze_what_is_loaded()
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


def test_the_command_line_spaces_collections_out_before_textual_loads() -> None:
    """`modes-tui` alone: by the time Textual is imported the collector is already held
    back, so importing it and our widgets runs no collection passes (25 ms measured)."""
    code = textwrap.dedent(
        """
        import gc, importlib.abc, json, sys

        class Stop(Exception):
            pass

        class Watch(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path, target=None):
                # The app's module comes first if something imported textual earlier.
                if name in ("textual", "modes_tui.tui.app"):
                    loaded = "textual" in sys.modules
                    print(json.dumps({"thresholds": gc.get_threshold(), "early": loaded}))
                    raise Stop
                return None

        sys.meta_path.insert(0, Watch())
        from modes_tui.cli import main
        try:
            main([])
        except Stop:
            pass
        """
    )
    seen = json.loads(run_python(code))
    assert seen == {"thresholds": list(GC_THRESHOLDS), "early": False}

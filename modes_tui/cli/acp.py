"""`modes-tui acp`: serve the engine to an editor over the Agent Client Protocol (stdio)."""

from __future__ import annotations

import argparse


def cmd_acp(args: argparse.Namespace) -> int:
    """Guard stdout first (only protocol goes there), load the settings and the pack, serve."""
    from modes_tui.acp.stdio import guard_stdout

    streams = guard_stdout()
    from modes_tui.acp.server import serve
    from modes_tui.runtime import RunOptions, Runtime

    runtime = Runtime.load(RunOptions.from_args(args))
    return serve(runtime, streams)

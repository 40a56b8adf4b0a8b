"""`modes-tui completion bash|zsh|tcsh`: the shell completion script, made by shtab from the
same parser the command line runs, so it knows every verb and option."""

from __future__ import annotations

import argparse

from modes_tui.cli.common import EXIT_OK, say

SHELLS = ("bash", "zsh", "tcsh")


def cmd_completion(args: argparse.Namespace) -> int:
    """Print the completion script for `args.shell`."""
    import shtab

    from modes_tui.cli.parser import build_parser

    say(shtab.complete(build_parser(), shell=args.shell), end="")
    return EXIT_OK

"""The command line: `main` parses (`parser.py`) and hands each verb to its own module.

    common.py       exit codes, settings and runtime of a command line, terminal-safe printing
    parser.py       every verb and option
    chat.py         `chat` and no verb: the terminal UI, or --plain the REPL and pipes
    acp.py          `acp`: the engine served to an editor over ACP (modes_tui/acp)
    profiles.py tools.py route.py eval.py mode.py corrections.py sessions.py models.py
    export.py replay.py init.py     one verb each
    setup.py        `setup local`: the offline parts into this install (modes_tui.setup_local)
    completion.py   `completion bash|zsh|tcsh`: the shell completion script (shtab)
    model_check.py  `models --check`: one tiny request per model
    init_yaml.py    `init`'s merge into the user's config.yaml, keeping their lines

Everything a verb runs (pack, control file, sessions, engine, router) comes from a
`modes_tui.runtime.Runtime`. Exit codes: 0 ok, 1 failure (the message says what to do),
2 usage error. Errors go to stderr as one readable message, never a traceback.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from modes_tui.cli.common import EXIT_FAILURE, no_arguments, say_err, terminal_safe
from modes_tui.core.errors import ModesError
from modes_tui.core.paths import HOME_ENV
from modes_tui.core.redaction import remember_environment

NOT_POSIX = (
    "modes-tui: this system is not supported: modes-tui runs on POSIX systems (Linux, macOS), "
    "it needs termios and directory file descriptors; on Windows, run it in WSL"
)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    if os.name == "nt":  # before anything POSIX-only is imported
        say_err(NOT_POSIX)
        return EXIT_FAILURE
    from modes_tui.cli.chat import cmd_tui

    argv = sys.argv[1:] if argv is None else list(argv)
    if argv:
        from modes_tui.cli.parser import build_parser

        try:
            args = build_parser().parse_args(argv)
        except SystemExit as exit_:
            return int(exit_.code or 0)
    else:  # `modes-tui` alone: the app with every default, argparse not even imported
        args = no_arguments()
    if args.home:
        os.environ[HOME_ENV] = args.home
    # verbs that read no settings (replay, export) still redact the keys in the environment
    remember_environment(os.environ)
    handler = getattr(args, "handler", None)
    if handler is None:
        handler = cmd_tui  # `modes-tui` alone opens the terminal UI
    try:
        return int(handler(args))
    except ModesError as error:
        say_err(terminal_safe(f"modes-tui: {error}"))
        return EXIT_FAILURE
    except KeyboardInterrupt:
        say_err("modes-tui: interrupted")
        return 130
    except BrokenPipeError:
        # the reader (e.g. `head`) went away: stop quietly, as other CLI tools do
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_FAILURE

"""What the verbs share: exit codes, the settings and runtime of a command line, and
printing words from outside (models, sessions, pipes) so a terminal obeys none of them."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    import argparse

    from modes_tui.core.packs.profiles import Pack
    from modes_tui.runtime import Runtime
    from modes_tui.store.settings import Settings

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2

NO_ARGUMENTS = {"home": None, "pack": None, "model": None, "resume": None, "verb": None}
"""What the parser gives `modes-tui` alone (a test holds them equal): the app starts from
these without importing argparse or building the parser."""

WARNINGS_SHOWN = 20
"""A binary or badly broken file has a problem on every line: the first ones say enough."""


def no_arguments() -> argparse.Namespace:
    """The parsed options of `modes-tui` with no arguments."""
    return cast("argparse.Namespace", SimpleNamespace(**NO_ARGUMENTS))


def settings_for(args: argparse.Namespace) -> Settings:
    """Settings with this command's options on top; warnings go to stderr (once)."""
    cached = getattr(args, "_settings", None)
    if cached is not None:
        return cached
    from modes_tui.core.paths import app_dirs
    from modes_tui.runtime import RunOptions, load_settings_for

    settings = load_settings_for(RunOptions.from_args(args), app_dirs())
    for warning in settings.warnings:
        say_err(f"modes-tui: warning: {warning}")
    args._settings = settings
    return settings


def runtime_for(args: argparse.Namespace, pack: Pack | None = None) -> Runtime:
    """The runtime of a verb: the settings and the pack (--profiles, else --pack, else the
    settings'), or `pack` when the verb chose one itself."""
    from modes_tui.runtime import RunOptions, Runtime

    return Runtime.load(RunOptions.from_args(args), settings=settings_for(args), pack=pack)


def terminal_safe(text: str) -> str:
    """The one sanitiser (`core.terminal_text.terminal_safe`), imported when first used."""
    from modes_tui.core.terminal_text import terminal_safe as safe

    return safe(text)


# The verbs write only through say, say_err, say_json and ask (tests/test_output_paths.py
# fails on a print() anywhere else in cli/), so no text from outside reaches a terminal raw.


def say(text: str = "", end: str = "\n", *, flush: bool = False) -> None:
    """Print text that may hold words from outside (models, sessions, packs, errors) with
    nothing a terminal would obey and no registered secret (see core.terminal_text)."""
    print(terminal_safe(text), end=end, flush=flush)


def say_err(text: str, end: str = "\n", *, flush: bool = False) -> None:
    """`say` on stderr: warnings and errors, which quote files and providers."""
    print(terminal_safe(text), end=end, file=sys.stderr, flush=flush)


def say_json(value: Any, indent: int | None = 2) -> None:
    """JSON; the same value for a parser, inert on a terminal, secrets redacted."""
    from modes_tui.core.terminal_text import json_terminal_safe

    print(json_terminal_safe(json.dumps(value, indent=indent, ensure_ascii=False, default=str)))


def ask(question: str) -> str:
    """The user's answer to `question` (which may quote a session title); EOF is no answer."""
    try:
        return input(terminal_safe(question))
    except EOFError:
        return ""


def warn_problems(problems: Sequence[object]) -> None:
    """The first problems of a file on stderr, and how many more there are."""
    for problem in problems[:WARNINGS_SHOWN]:
        say_err(f"modes-tui: warning: {problem}")
    if len(problems) > WARNINGS_SHOWN:
        more = len(problems) - WARNINGS_SHOWN
        say_err(f"modes-tui: warning: … and {more} more problem(s) like these")


def read_stdin() -> str:
    """All of stdin as text; bytes that are not UTF-8 or NULs are named on stderr."""
    from modes_tui.core.terminal_text import decode_typed

    text, notes = decode_typed(sys.stdin.buffer.read(), "stdin")
    for note in notes:
        say_err(f"modes-tui: warning: {note}")
    return text


def progress_printer() -> Callable[[int, int], None]:
    """Progress on stderr: a bar redrawn in place on a terminal, a line per quarter elsewhere."""
    tty = sys.stderr.isatty()

    def show(done: int, total: int) -> None:
        if tty:
            filled = int(30 * done / total)
            end = "\n" if done == total else ""
            bar = "#" * filled + "." * (30 - filled)
            print(f"\rrouting [{bar}] {done}/{total}", end=end, file=sys.stderr, flush=True)
        elif done == total or done % max(1, total // 4) == 0:
            print(f"routing {done}/{total}", file=sys.stderr, flush=True)

    return show

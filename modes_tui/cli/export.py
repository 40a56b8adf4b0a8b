"""`modes-tui export ID [--format markdown|json] [-o FILE]`: a session as a transcript or records."""

from __future__ import annotations

import argparse
import json

from modes_tui.cli.common import EXIT_OK, say, warn_problems
from modes_tui.core.errors import FileWriteError, ModesError
from modes_tui.core.terminal_text import json_terminal_safe


def cmd_export(args: argparse.Namespace) -> int:
    """Write a session as a Markdown transcript or as its JSON records."""
    from pathlib import Path

    from modes_tui.store.export import session_markdown, write_export
    from modes_tui.store.replay import replay
    from modes_tui.store.session_reader import load_named_session

    session = load_named_session(args.id)
    if args.format == "json":
        warn_problems(session.problems)
        data = {
            "id": session.id,
            "path": str(session.path),
            "meta": dict(session.meta),
            "records": list(session.records),
            "problems": [str(problem) for problem in session.problems],
        }
        # the same value for a parser; controls, bidi and secrets escaped or redacted
        text = json_terminal_safe(json.dumps(data, indent=2, ensure_ascii=False)) + "\n"
    else:
        replayed = replay(session)
        warn_problems(replayed.problems)
        text = session_markdown(replayed)  # inert wherever it goes (a file, a pipe, a terminal)
    if args.output is None:
        say(text, end="")
        return EXIT_OK
    target = Path(args.output).expanduser()
    try:
        write_export(target, text)
    except FileWriteError as error:
        raise ModesError(f"{error}; pick another file with -o") from error
    except OSError as error:
        raise ModesError(
            f"cannot write {target}: {error.strerror or error}; pick another file with -o"
        ) from error
    say(f"exported session {session.id} to {target}")
    return EXIT_OK

"""`modes-tui sessions [--search TEXT] [--cost] [rename ID TITLE | rm ID]`.

Errors are `ModesError`s; `cli.main` prints them.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from modes_tui.cli.common import EXIT_FAILURE, EXIT_OK, ask, say, say_err, say_json, settings_for
from modes_tui.core.errors import ModesError

if TYPE_CHECKING:
    from modes_tui.core.paths import Dirs
ENCODING_NOTICE = 50
"""Say so on stderr when a search has to encode at least this many new messages."""


def cmd_sessions(args: argparse.Namespace) -> int:
    """List recorded sessions, newest first; or rename, remove, search, cost them."""
    from modes_tui.core.paths import app_dirs
    from modes_tui.store.export import sessions_table
    from modes_tui.store.sessions import list_sessions

    dirs = app_dirs()
    handled = session_action(args, dirs)
    if handled is not None:
        return handled
    summaries = list_sessions(dirs)
    if getattr(args, "cost", False):
        from modes_tui.cli.models import cost_rows, sessions_cost_table

        rows = cost_rows(summaries)
        if args.json:
            say_json(rows)
        elif not rows:
            say(f"no sessions yet in {dirs.sessions}")
        else:
            say(sessions_cost_table(rows))
        return EXIT_OK
    if args.json:
        say_json([s.to_dict() for s in summaries])
    elif not summaries:
        say(f"no sessions yet in {dirs.sessions}")
    else:
        say(sessions_table(summaries))
    return EXIT_OK


def session_action(args: argparse.Namespace, dirs: Dirs) -> int | None:
    """Run `sessions rename|rm|--search`; None when it is the plain list."""
    action = getattr(args, "action", None)
    if action == "rename":
        from modes_tui.store.manage import rename_session

        session_id, title = rename_session(args.id, " ".join(args.title), dirs)
        say(f"renamed session {session_id}: {title}")
        return EXIT_OK
    if action == "rm":
        return remove(args, dirs)
    if args.search is not None:
        return search(args, dirs)
    return None


def remove(args: argparse.Namespace, dirs: Dirs) -> int:
    """Delete one session, after a yes on a terminal (or --yes)."""
    from modes_tui.store.manage import delete_session, session_in_folder
    from modes_tui.store.session_reader import load_session

    path = session_in_folder(args.id, dirs)
    if not args.yes:
        if not sys.stdin.isatty():
            raise ModesError(
                f"not deleting session {path.name.removesuffix('.jsonl')} without a yes: "
                "there is no terminal to ask; add --yes to delete it"
            )
        session = load_session(path, dirs)
        what = f"{session.id} ({session.title or 'untitled'}, {_turns(session.turns)})"
        answer = ask(f"Delete session {what}? This cannot be undone. [y/N] ")
        if answer.strip().lower() not in {"y", "yes"}:
            say("kept: nothing was deleted")
            return EXIT_FAILURE
    deleted = delete_session(str(path), dirs)
    say(f"deleted session {deleted.id} ({deleted.path})")
    return EXIT_OK


def _turns(count: int) -> str:
    return f"{count} turn" if count == 1 else f"{count} turns"


def search(args: argparse.Namespace, dirs: Dirs) -> int:
    """Ranked sessions for `--search TEXT`, each with why it matched."""
    from modes_tui.store.search import search_sessions

    encoder, name, cache = (None, "", None) if args.text_only else _encoder(args, dirs)
    hits = search_sessions(
        args.search, dirs, encoder=encoder, encoder_name=name, cache=cache, encoding=_encoding
    )
    if args.json:
        say_json([hit.to_dict() for hit in hits])
        return EXIT_OK
    if not hits:
        how = "" if encoder is None else " or by meaning"
        say(f"no session matches {args.search!r} by text{how}")
        return EXIT_FAILURE
    for hit in hits:
        say(f"{hit.score:.2f}  {hit.id}  {hit.title or '(untitled)'}")
        for match in hit.matches:
            say(f"      {match.describe()}")
    return EXIT_OK


def _encoding(count: int) -> None:
    if count >= ENCODING_NOTICE:
        say_err(
            f"modes-tui: encoding {count} messages not searched before "
            "(once: they are cached for next time)…",
            flush=True,
        )


def _encoder(args: argparse.Namespace, dirs: Dirs) -> tuple[Any, str, Any]:
    """The pack's router encoder and its vector cache; text only (with a warning) without."""
    from modes_tui.core.routing.classifiers.embedding import EmbeddingCache
    from modes_tui.llm.encoders import load_encoder
    from modes_tui.runtime import load_pack

    settings = settings_for(args)
    try:
        spec = load_pack(settings.pack, getattr(args, "profiles", None)).router.encoder
        encoder = load_encoder(spec)
    except (ModesError, ImportError, OSError) as error:
        say_err(
            f"modes-tui: warning: searching by text only: the encoder could not load ({error})",
        )
        return None, "", None
    return encoder, spec, EmbeddingCache(dirs.cache / "session-search")

"""`modes-tui replay ID [--reroute]`: a recorded session, or today's router compared with it."""

from __future__ import annotations

import argparse
import asyncio

from modes_tui.cli.common import (
    EXIT_OK,
    runtime_for,
    say,
    say_err,
    say_json,
    settings_for,
    warn_problems,
)


def cmd_replay(args: argparse.Namespace) -> int:
    """Show a recorded session; with --reroute, compare today's router with the recording."""
    from modes_tui.core.packs.profiles import available_packs
    from modes_tui.runtime import load_pack
    from modes_tui.store.export import replay_json, reroute_text, session_markdown
    from modes_tui.store.replay import replay
    from modes_tui.store.reroute import reroute
    from modes_tui.store.session_reader import load_named_session

    session = load_named_session(args.id)
    replayed = replay(session)
    warn_problems(replayed.problems)
    if not args.reroute:
        if args.json:
            say_json(replay_json(replayed))
        else:
            say(session_markdown(replayed), end="")
        return EXIT_OK

    settings = settings_for(args)
    chosen = getattr(args, "pack", None) or getattr(args, "profiles", None)
    if chosen is None and session.pack is not None and session.pack in available_packs():
        pack = load_pack(session.pack)  # today's version of the pack it was recorded with
    else:
        if chosen is None and session.pack is not None:
            say_err(
                f"modes-tui: warning: session {session.id} was recorded with pack "
                f"{session.pack!r}, which is not installed; rerouting with {settings.pack!r}",
            )
        pack = load_pack(settings.pack, getattr(args, "profiles", None))
    runtime = runtime_for(args, pack=pack)
    report = asyncio.run(reroute(replayed, runtime.router()))
    if args.json:
        say_json(report.to_dict())
    else:
        say(reroute_text(report, session.pack, runtime.classifier_name or pack.router.classifier))
    return EXIT_OK

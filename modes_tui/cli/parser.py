"""The command line's parser: every verb and option, each verb handled by its own module."""

from __future__ import annotations

import argparse

from modes_tui import __version__
from modes_tui.cli.chat import cmd_chat
from modes_tui.cli.corrections import add_parser as add_corrections
from modes_tui.cli.corrections import cmd_corrections
from modes_tui.cli.eval import cmd_eval
from modes_tui.cli.export import cmd_export
from modes_tui.cli.mode import cmd_mode
from modes_tui.cli.models import cmd_models
from modes_tui.cli.profiles import cmd_profiles
from modes_tui.cli.replay import cmd_replay
from modes_tui.cli.route import cmd_route
from modes_tui.cli.sessions import add_resume_option, add_session_verbs, cmd_sessions
from modes_tui.cli.tools import cmd_tools
from modes_tui.core.paths import HOME_ENV


def build_parser() -> argparse.ArgumentParser:
    """Every verb and option."""
    parser = argparse.ArgumentParser(
        prog="modes-tui",
        description="A terminal chat assistant that routes every turn to a mode.",
    )
    parser.add_argument("--version", action="version", version=f"modes-tui {__version__}")
    parser.add_argument(
        "--home", metavar="DIR", help=f"keep config, state and data under DIR (same as ${HOME_ENV})"
    )
    parser.add_argument(
        "--pack", metavar="NAME", help="the pack of modes to use (default: default)"
    )
    parser.add_argument(
        "--model",
        metavar="ID",
        help="use this litellm model id for every mode in this run (e.g. openai/gpt-4.1-mini); "
        "scripted/echo answers offline without a model",
    )
    add_resume_option(parser)
    verbs = parser.add_subparsers(dest="verb", metavar="VERB")

    def pack_options(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("--profiles", metavar="DIR", help="use the pack in this folder")
        sub.add_argument(
            "--pack", metavar="NAME", default=argparse.SUPPRESS, help="the pack to use"
        )

    profiles = verbs.add_parser("profiles", help="list the modes of a pack, or --check it")
    pack_options(profiles)
    profiles.add_argument(
        "--check", action="store_true", help="validate; exit 1 and list every problem"
    )
    profiles.add_argument("--json", action="store_true", help="print the pack as JSON")
    profiles.set_defaults(handler=cmd_profiles)

    tools = verbs.add_parser(
        "tools", help="list the tools each mode gets (built-in, pack:<pack> or mcp:<server>)"
    )
    pack_options(tools)
    tools.add_argument("--mode", metavar="NAME", help="only this mode")
    tools.add_argument("--json", action="store_true", help="print the listing as JSON")
    tools.set_defaults(handler=cmd_tools)

    route = verbs.add_parser("route", help="show which mode would take a message (no answer)")
    route.add_argument("text", nargs="+", help="the message; - reads it from stdin")
    pack_options(route)
    route.add_argument("--classifier", metavar="NAME", help="override the pack's classifier")
    route.add_argument("--json", action="store_true", help="print Route.to_dict() as JSON")
    route.set_defaults(handler=cmd_route)

    evaluate = verbs.add_parser(
        "eval", help="route an eval file (JSONL) and report accuracy, per-mode scores, latency"
    )
    evaluate.add_argument(
        "file", metavar="FILE.jsonl", help='lines of {"text", "mode" (or null), "history"}'
    )
    pack_options(evaluate)
    evaluate.add_argument("--classifier", metavar="NAME", help="override the pack's classifier")
    evaluate.add_argument("--json", action="store_true", help="print the report as JSON")
    evaluate.add_argument(
        "--fit",
        action="store_true",
        help="also search the below_confidence that best balances accuracy and fallback recall",
    )
    evaluate.add_argument(
        "--learn",
        action="store_true",
        help="correct every wrong route as it happens (into the pack's corrections store) "
        "and print the learning curve",
    )
    evaluate.add_argument(
        "--block", type=int, default=25, metavar="N", help="lines per row of the learning curve"
    )
    evaluate.set_defaults(handler=cmd_eval)

    mode = verbs.add_parser(
        "mode", help="show the mode setting and routing rule, or set it: NAME, auto or off"
    )
    mode.add_argument(
        "value", nargs="?", metavar="NAME|auto|off", help="force a mode, auto, or off"
    )
    pack_options(mode)
    mode.add_argument("--json", action="store_true", help="print the setting as JSON")
    mode.set_defaults(handler=cmd_mode)

    add_corrections(verbs).set_defaults(handler=cmd_corrections)

    sessions = verbs.add_parser(
        "sessions", help="list, search, rename or delete recorded sessions (newest first)"
    )
    sessions.add_argument("--json", action="store_true", help="print the list as JSON")
    sessions.add_argument(
        "--cost",
        action="store_true",
        help="what each session cost and saved against always using the priciest mode's model",
    )
    add_session_verbs(sessions)
    sessions.set_defaults(handler=cmd_sessions)

    models = verbs.add_parser(
        "models", help="list configured model aliases: litellm id, capabilities, price"
    )
    models.add_argument("--json", action="store_true", help="print the list as JSON")
    models.set_defaults(handler=cmd_models)

    session_id = "a session id, a unique id prefix, latest, or a path to a .jsonl file"
    export = verbs.add_parser("export", help="write a session as Markdown or JSON")
    export.add_argument("id", metavar="ID", help=session_id)
    export.add_argument(
        "--format", choices=("markdown", "json"), default="markdown", help="default: markdown"
    )
    export.add_argument("-o", "--output", metavar="FILE", help="write to FILE, not stdout")
    export.set_defaults(handler=cmd_export)

    replay = verbs.add_parser(
        "replay", help="show a recorded session; --reroute compares today's router with it"
    )
    replay.add_argument("id", metavar="ID", help=session_id)
    replay.add_argument(
        "--reroute", action="store_true", help="run today's router over the recorded user turns"
    )
    pack_options(replay)
    replay.add_argument("--classifier", metavar="NAME", help="override the pack's classifier")
    replay.add_argument("--json", action="store_true", help="print events or the report as JSON")
    replay.set_defaults(handler=cmd_replay)

    chat = verbs.add_parser("chat", help="chat: the terminal UI, or --plain for a simple REPL")
    chat.add_argument(
        "--plain",
        action="store_true",
        help="a prompt-toolkit REPL; reads one message per line when stdin is not a terminal",
    )
    chat.add_argument(
        "--json", action="store_true", help="with --plain: print one JSON event per line"
    )
    pack_options(chat)
    chat.add_argument("--classifier", metavar="NAME", help="override the pack's classifier")
    chat.add_argument(
        "--model", metavar="ID", default=argparse.SUPPRESS, help="override every mode's model"
    )
    add_resume_option(chat, default=argparse.SUPPRESS)
    chat.set_defaults(handler=cmd_chat)
    return parser

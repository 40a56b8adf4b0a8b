"""`modes-tui profiles [--check] [--json]`: the modes of a pack, or every problem in it."""

from __future__ import annotations

import argparse

from modes_tui.cli.common import EXIT_FAILURE, EXIT_OK, runtime_for, say, say_err, say_json
from modes_tui.core.errors import DeclarationError


def cmd_profiles(args: argparse.Namespace) -> int:
    """List the modes of a pack; with --check, validate it and list every problem."""
    try:
        pack = runtime_for(args).pack
    except DeclarationError as error:
        say_err(str(error))
        if args.check:
            say_err("fix the problems above and run `modes-tui profiles --check` again")
        return EXIT_FAILURE
    if args.json:
        say_json(
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
            }
        )
        return EXIT_OK
    if args.check:
        say(f"pack {pack.name!r} is valid: {len(pack.profiles)} modes ({pack.path})")
        return EXIT_OK
    say(f"pack {pack.name} ({pack.path})")
    say(
        f"router: {pack.router.classifier}, fallback {pack.router.fallback}, "
        f"below_confidence {pack.router.below_confidence}, sticky {pack.router.sticky}"
    )
    width = max(len(p.name) for p in pack.profiles)
    for profile in pack.profiles:
        marks = [] if profile.is_available() else ["unavailable"]
        if profile.name == pack.router.fallback:
            marks.append("fallback")
        if profile.auto_enter != "allow":
            marks.append("asks first" if profile.auto_enter == "confirm" else "only when forced")
        tools = ", ".join([*profile.tools, *(f"mcp:{name}" for name in profile.mcp)])
        tools = tools or "no tools"
        extra = f" [{', '.join(marks)}]" if marks else ""
        say(f"  {profile.name:<{width}}  thinking {profile.thinking:<6} {tools}{extra}")
        say(f"  {'':<{width}}  {profile.description}")
    return EXIT_OK

"""`modes-tui mode [NAME|auto|off] [--pack P]`: a pack's mode setting and the routing rule in
force, or set it. The setting belongs to the pack (`--pack`, else the configured one): setting
`returns` for `support` leaves the default pack's setting as it was."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from modes_tui.cli.common import (
    EXIT_FAILURE,
    EXIT_OK,
    say,
    say_err,
    say_json,
    settings_for,
)
from modes_tui.core.errors import DeclarationError, UnknownMode, suggest
from modes_tui.frontend.modes import setting_meaning

if TYPE_CHECKING:
    from pathlib import Path

    from modes_tui.core.control_setting import ControlReading
    from modes_tui.core.packs.profiles import Pack


def cmd_mode(args: argparse.Namespace) -> int:
    """Show the control setting and the routing rule in force, or set the setting."""
    from modes_tui.core.control_setting import AUTO, OFF
    from modes_tui.core.paths import app_dirs
    from modes_tui.runtime import load_pack
    from modes_tui.store.control import ControlFile

    dirs = app_dirs()
    settings = settings_for(args)
    pack: Pack | None = None
    pack_error: DeclarationError | None = None
    try:
        pack = load_pack(settings.pack, getattr(args, "profiles", None))
    except DeclarationError as error:
        pack_error = error
    names = pack.names if pack is not None else ()
    pack_name = pack.name if pack is not None else broken_pack_name(args, settings.pack)
    control = ControlFile(
        dirs.control_file, modes=(lambda: names) if pack is not None else None, pack=pack_name
    )

    if args.value is not None:
        if pack is None and args.value not in (AUTO, OFF):
            say_err(f"modes-tui: {pack_error}")
            say_err(
                "modes-tui: cannot check the mode name against a broken pack; fix the pack, "
                "or use `modes-tui mode auto` or `modes-tui mode off`",
            )
            return EXIT_FAILURE
        try:
            control.write(args.value)
        except UnknownMode as error:
            say_err(f"modes-tui: {unknown_mode(error, pack_name)}")
            return EXIT_FAILURE
        say(f"mode: {args.value} for pack {pack_name} (written to {control.path})")
        say(f"  {setting_meaning(args.value, pack_option(args, pack_name))}")
        return EXIT_OK

    reading = control.read()
    exists = control.path.exists()
    classifier = settings.router_classifier or (pack.router.classifier if pack else None)
    if args.json:
        data: dict[str, Any] = {
            "mode": reading.mode,
            "source": "control file" if reading.source != "default" else "default",
            "scope": reading.source,
            "path": str(control.path),
            "warning": reading.warning,
            "pack": pack.name if pack is not None else settings.pack,
            "router": None,
        }
        if pack is not None:
            data["router"] = {
                "classifier": classifier,
                "fallback": pack.router.fallback,
                "below_confidence": pack.router.below_confidence,
                "sticky": pack.router.sticky,
            }
            data["modes"] = list(pack.names)
        say_json(data)
        return EXIT_OK
    say(f"mode: {reading.mode} ({origin(reading, control.path, pack_name, exists=exists)})")
    say(f"  {setting_meaning(reading.mode, pack_option(args, pack_name))}")
    if reading.warning:
        say(f"warning: {reading.warning}")
    if pack is None:
        say(f"pack: {settings.pack} cannot be loaded:\n{pack_error}")
        return EXIT_OK
    router = pack.router
    source = ""
    if settings.router_classifier and settings.router_classifier != router.classifier:
        source = (
            f" (set by {settings.origin('router_classifier')}; the pack says {router.classifier})"
        )
    threshold = "off" if router.below_confidence is None else f"{router.below_confidence}"
    say(f"pack: {pack.name} ({pack.path})")
    say(
        f"routing: classifier {classifier}{source}, fallback {router.fallback}, "
        f"below_confidence {threshold}, sticky {router.sticky}"
    )
    say(f"modes: {', '.join(pack.names)}")
    return EXIT_OK


def unknown_mode(error: UnknownMode, pack: str) -> str:
    """`unknown mode 'codee' in pack default: did you mean 'code'? (choose one of: ...)`."""
    choices = ", ".join(error.available)
    hint = suggest(error.name, error.available)
    if hint:
        return f"unknown mode {error.name!r} in pack {pack}: {hint} (choose one of: {choices})"
    return f"unknown mode {error.name!r} in pack {pack}; choose one of: {choices}"


def origin(reading: ControlReading, path: Path, pack: str, *, exists: bool) -> str:
    """Where the setting in force comes from, in words."""
    if reading.source == "pack":
        return f"this pack's setting, from {path}"
    if reading.source == "file":
        return (
            f"the setting of all packs, from {path}; `modes-tui mode NAME` sets one for "
            f"pack {pack} alone"
        )
    if reading.warning:
        return f"default: the control file {path} cannot be used"
    if not exists:
        return f"default: no control file at {path}"
    return f"default: {path} has no setting for pack {pack}"


def pack_option(args: argparse.Namespace, pack: str) -> str:
    """` --pack P` when the pack was chosen on the command line (the hint repeats it)."""
    return f" --pack {pack}" if getattr(args, "pack", None) else ""


def broken_pack_name(args: argparse.Namespace, configured: str) -> str:
    """The name of a pack that did not load: its folder's (`--profiles`), else the setting."""
    from pathlib import Path

    folder = getattr(args, "profiles", None)
    return Path(folder).resolve().name if folder else configured

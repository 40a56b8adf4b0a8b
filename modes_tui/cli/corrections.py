"""`modes-tui corrections [list|remove ID|clear|export] [--pack NAME] [--json]`.

The corrections of one pack, as the store keeps them (`<data>/corrections/<pack>.jsonl`):
list them, forget one or all (the next route, in any running app, no longer learns from
them), or export them as YAML `examples:` per mode, ready to paste into the pack's profiles.
Exit codes as everywhere: 0 ok, 1 failure (an unknown id), 2 usage error.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from modes_tui.cli.common import say, say_err, say_json, settings_for
from modes_tui.core.errors import ModesError
from modes_tui.core.terminal_text import terminal_safe

if TYPE_CHECKING:  # the store loads only for the actions that use it
    from modes_tui.core.values.correction import Correction
    from modes_tui.store.corrections import CorrectionStore


def cmd_corrections(args: argparse.Namespace) -> int:
    """The corrections of a pack (the settings' one, or --pack): list, remove ID, clear, export."""
    from modes_tui.core.paths import app_dirs
    from modes_tui.store.corrections import CorrectionStore

    pack = settings_for(args).pack
    return run(args, CorrectionStore.for_pack(app_dirs().data, pack), pack)


def run(args: argparse.Namespace, store: CorrectionStore, pack: str) -> int:
    """Do what the verb asks of `store`, the corrections of `pack`."""
    if args.action != "remove" and args.id is not None:
        say_err(f"modes-tui: corrections {args.action} takes no id (got {args.id!r})")
        return 2
    if args.action == "list":
        return _list(args, store, pack)
    if args.action == "remove":
        return _remove(args, store, pack)
    if args.action == "clear":
        count = store.clear()
        _say(args, {"pack": pack, "cleared": count}, f"cleared {_count(count)} of pack {pack}")
        return 0
    return _export(args, store, pack)


def _list(args: argparse.Namespace, store: CorrectionStore, pack: str) -> int:
    corrections = store.corrections()
    _warn(store)
    if args.json:
        say_json([c.to_dict() for c in corrections])
    elif not corrections:
        say(f"no corrections yet for pack {pack} ({store.path})")
        _check_pack(pack)
    else:
        say(terminal_safe(corrections_table(corrections)))  # texts came from a pipe or paste
        refit = store.last_refit()
        if refit:
            say(terminal_safe(refit))
    return 0


def _remove(args: argparse.Namespace, store: CorrectionStore, pack: str) -> int:
    if not args.id:
        say_err(
            "modes-tui: corrections remove needs an ID (corrections list shows them)",
        )
        return 2
    wanted = args.id.strip()
    matches = [c.id for c in store.corrections() if c.id.startswith(wanted)]
    if len(matches) > 1 and wanted not in matches:
        raise ModesError(
            f"{wanted!r} names {len(matches)} corrections of pack {pack}; give more of the id"
        )
    found = wanted if wanted in matches else (matches[0] if matches else None)
    if found is None or not store.remove(found):
        raise ModesError(
            f"no correction {wanted!r} in pack {pack}; `modes-tui corrections list` shows the ids"
        )
    _say(args, {"pack": pack, "removed": found}, f"removed correction {found} of pack {pack}")
    return 0


def _export(args: argparse.Namespace, store: CorrectionStore, pack: str) -> int:
    corrections = store.corrections()
    _warn(store)
    by_mode = examples_by_mode(corrections)
    if args.json:
        say_json({mode: {"examples": texts} for mode, texts in by_mode.items()})
    else:
        say(examples_yaml(by_mode, pack), end="")
    return 0


def examples_by_mode(corrections: Sequence[Correction]) -> dict[str, list[str]]:
    """Each corrected mode's texts, in the order they were corrected, without repeats.

    A text corrected to two modes goes to the later one: it is the user's latest word.
    """
    latest: dict[str, str] = {}
    for correction in corrections:
        text = correction.text.strip()
        if text:
            latest.pop(text, None)  # re-inserted last, so the order follows the latest word
            latest[text] = correction.corrected_mode
    by_mode: dict[str, list[str]] = {}
    for text, mode in latest.items():
        by_mode.setdefault(mode, []).append(text)
    return dict(sorted(by_mode.items()))


def examples_yaml(by_mode: dict[str, list[str]], pack: str) -> str:
    """`<mode>:\\n  examples:\\n    - text` per mode, with a comment saying where it goes."""
    import yaml

    if not by_mode:
        return f"# no corrections for pack {pack}\n"
    head = (
        f"# Corrections of pack {pack}, as examples per mode. Add each list to the `examples:`\n"
        f"# of that mode's profile (<pack folder>/<mode>.yaml).\n"
    )
    body = yaml.safe_dump(
        {mode: {"examples": texts} for mode, texts in by_mode.items()},
        allow_unicode=True,
        sort_keys=False,
        default_flow_style=False,
        width=100,
    )
    return head + body


def corrections_table(corrections: Sequence[Correction]) -> str:
    """id, when, routed → corrected, who made it (when not the user), text."""
    from modes_tui.store.export import table

    rows = [
        (
            c.id,
            _when(c.created_at),
            f"{c.routed_mode or '(forced)'} → {c.corrected_mode}",
            c.source if c.source != "user" else "",
            _short(c.text, 60),
        )
        for c in corrections
    ]
    return table(("id", "when", "correction", "by", "text"), rows)


def _when(stamp: str) -> str:
    try:
        return datetime.fromisoformat(stamp).astimezone().strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return stamp or "?"


def _short(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _check_pack(pack: str) -> None:
    """An empty list for a pack that does not exist is most likely a typo: say so."""
    from modes_tui.core.packs.profiles import load_pack

    try:
        load_pack(pack)
    except ModesError as error:
        say_err(f"modes-tui: warning: {error}")


def _count(count: int) -> str:
    return f"{count} correction{'s' if count != 1 else ''}"


def _say(args: argparse.Namespace, data: dict[str, Any], text: str) -> None:
    if args.json:
        say_json(data, indent=None)
    else:
        say(text)


def _warn(store: CorrectionStore) -> None:
    for warning in store.warnings:
        say_err(f"modes-tui: warning: {warning}")

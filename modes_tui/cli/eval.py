"""`modes-tui eval FILE.jsonl`: route an eval file and score the routes; `--fit` tunes the
threshold, `--learn` corrects every wrong route as it happens and prints the curve."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from modes_tui.cli.common import EXIT_OK, progress_printer, runtime_for, say, say_json
from modes_tui.core.errors import ModesError

if TYPE_CHECKING:
    from modes_tui.runtime import Runtime


def cmd_eval(args: argparse.Namespace) -> int:
    """Route every line of an eval file and score the routes; --fit tunes the threshold."""
    from modes_tui.core.evals.cases import read_eval_file
    from modes_tui.core.evals.report import format_fit, format_report
    from modes_tui.core.evals.scoring import (
        SURE,
        case_rows,
        evaluate,
        fit_threshold,
        route_cases,
        wrong_sure,
    )

    runtime = runtime_for(args)
    pack = runtime.pack
    cases = read_eval_file(args.file, pack.names)
    if args.learn:
        return eval_learn(args, runtime, cases)
    classifier = runtime.classifier()
    progress = progress_printer() if len(cases) >= 20 else None
    outcomes = asyncio.run(route_cases(pack, classifier, cases, progress))
    config = pack.router
    report = evaluate(outcomes, pack.names, config.fallback, config.below_confidence)
    fit = fit_threshold(outcomes, pack.names, config.fallback) if args.fit else None
    info = outcomes[0].route.classifier if outcomes else None
    used = info.with_ + (f" ({info.model})" if info and info.model else "") if info else "-"
    if args.json:
        data: dict[str, Any] = {"file": args.file, "pack": pack.name, "classifier": used}
        data.update(report.to_dict())
        data["wrong_sure"] = {"at_least": SURE, "count": wrong_sure(outcomes)}
        data["ask_share"] = round(sum(o.route.unsure is not None for o in outcomes) / len(cases), 4)
        data["per_case"] = case_rows(outcomes, config.below_confidence, config.fallback)
        if fit is not None:
            data["fit"] = fit.to_dict()
        say_json(data)
        return EXIT_OK
    title = f"{args.file}: {len(cases)} cases, pack {pack.name}, classifier {used}"
    say(format_report(report, title=title))
    asked = sum(o.route.unsure is not None for o in outcomes)
    say(
        f"\nwrong routes at confidence >= {SURE}: {wrong_sure(outcomes)}   "
        f"unsure (would ask): {asked}/{len(cases)}"
    )
    if fit is not None:
        say()
        say(format_fit(fit, config.below_confidence))
    return EXIT_OK


def eval_learn(args: argparse.Namespace, runtime: Runtime, cases: Sequence[Any]) -> int:
    """`eval --learn`: route line by line, each wrong route becoming a correction."""
    from modes_tui.core.evals.learning import format_curve, learn_from_cases
    from modes_tui.store.corrections import CorrectionStore

    if args.fit or args.block < 1:
        raise ModesError("--learn takes no --fit, and --block needs at least 1 line")
    pack = runtime.pack
    store = CorrectionStore.for_pack(runtime.dirs.data, pack.name)
    classifier = runtime.classifier(corrections=store)
    progress = progress_printer() if len(cases) >= 20 else None
    curve = asyncio.run(learn_from_cases(pack, classifier, cases, store, args.block, progress))
    if args.json:
        data = {"file": args.file, "pack": pack.name, "store": str(store.path), **curve.to_dict()}
        say_json(data)
        return EXIT_OK
    say(format_curve(curve, title=f"{args.file}: {len(cases)} cases, pack {pack.name}, learning"))
    say(
        f"\ncorrections are in {store.path} ({len(store.corrections())} in all); "
        f"`modes-tui corrections clear --pack {pack.name}` undoes them"
    )
    return EXIT_OK

"""Framing benchmark: quoted and pasted content, elliptic follow-ups, and the ask share.

Run from the repository root (the default pack, the local encoder, in process):

    python bench/framing.py                      # every file below, one table
    python bench/framing.py bench/evals/framing_dev.jsonl --cases

Per eval file: accuracy, ECE, the routes that were wrong at confidence >= 0.9, follow-up and
switch accuracy, the share of turns the router would ask about (`unsure`), and the route
latency (p50/p95, the split and the quoted evidence included) twice: "cold" as `eval` routes a
line (every earlier turn encoded afresh, as on the first route after a session is loaded from
disk) and "app" as the app routes it (each earlier user message was routed when it was sent
and the last answer was encoded when its turn ended, `Router.answered`, so the route encodes
only what is new); with `--idle`, the app's route also after a pause and for a message the
app prepared while it was typed (`DRAFTS`); per `group` when lines name one. It reads the files itself (a `group` key is kept aside), so the same script measures
an older checkout that has no framing (`PYTHONPATH=/path/to/old python bench/framing.py`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FILES = (
    "bench/evals/framing_heldout.jsonl",
    "bench/evals/framing_dev.jsonl",
    "bench/evals/framing_heldout_c.jsonl",
    "bench/evals/framing_dev_b.jsonl",
    "bench/evals/framing_dev_c.jsonl",
    "bench/evals/after_quote_heldout.jsonl",
    "bench/evals/after_quote_dev.jsonl",
    "bench/evals/default.jsonl",
    "bench/evals/conversation.jsonl",
    "bench/evals/conversation_heldout.jsonl",
)
SURE = 0.9


def read_cases(path: Path) -> tuple[list[Any], list[str | None]]:
    """EvalCases (built directly, so an old checkout reads them) and each line's group."""
    from modes_tui.core.evals.cases import EvalCase

    cases, groups = [], []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not raw.strip():
            continue
        data = json.loads(raw)
        history = tuple(data.get("history") or ())
        previous = data.get("previous_mode")
        if previous is None:
            for entry in reversed(history):
                if isinstance(entry, dict) and entry.get("role") == "assistant":
                    previous = entry.get("mode") or None
                    break
        cases.append(EvalCase(data["text"], data.get("mode"), history, number, previous))
        groups.append(data.get("group"))
    return cases, groups


def score(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Accuracy, ECE (10 bins), wrong at >= 0.9, ask share, follow-up and switch accuracy."""
    n = len(rows)
    bins: dict[int, list[tuple[float, bool]]] = defaultdict(list)
    for row in rows:
        if row["confidence"] is not None:
            bins[min(int(row["confidence"] * 10), 9)].append((row["confidence"], row["right"]))
    scored = sum(len(b) for b in bins.values())
    ece = (
        sum(
            len(b) / scored * abs(sum(c for c, _ in b) / len(b) - sum(ok for _, ok in b) / len(b))
            for b in bins.values()
        )
        if scored
        else None
    )
    follow = [r["correct"] for r in rows if r["kind"] == "follow-up"]
    switch = [r["correct"] for r in rows if r["kind"] == "switch"]
    return {
        "cases": n,
        "accuracy": sum(r["correct"] for r in rows) / n if n else 0.0,
        "ece": ece,
        "wrong_sure": sum(1 for r in rows if not r["right"] and (r["confidence"] or 0) >= SURE),
        "ask": sum(r["unsure"] for r in rows) / n if n else 0.0,
        "follow": (sum(follow), len(follow)),
        "switch": (sum(switch), len(switch)),
    }


async def run_file(
    path: Path, show_cases: bool, idle: float = 0.0
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    from modes_tui.core.evals.scoring import percentile, route_cases
    from modes_tui.core.packs.profiles import load_pack
    from modes_tui.runtime import RunOptions, Runtime
    from modes_tui.store.settings import Settings

    pack = load_pack("default")
    runtime = Runtime.load(RunOptions(classifier="embedding"), settings=Settings(), pack=pack)
    cases, groups = read_cases(path)
    outcomes = await route_cases(pack, runtime.classifier(), cases)
    threshold = pack.router.below_confidence
    rows = []
    for outcome, group in zip(outcomes, groups, strict=True):
        route, case = outcome.route, outcome.case
        confidence = route.confidence
        fell = route.decided_by == "fallback" or (
            threshold is not None and confidence is not None and confidence < threshold
        )
        mode = pack.router.fallback if fell else route.mode_name
        rows.append(
            {
                "text": case.text,
                "expected": case.mode,
                "routed": mode,
                "classifier_mode": route.mode_name,
                "confidence": confidence,
                "right": route.mode_name == case.mode,
                "correct": fell if case.mode is None else mode == case.mode,
                "unsure": getattr(route, "unsure", None) is not None,
                "kind": case.kind,
                "group": group,
                "ms": route.duration_ms,
            }
        )
        if show_cases:
            mark = "ok " if rows[-1]["correct"] else "BAD"
            print(
                f"{mark} {case.mode!s:>6} -> {mode:<6} {confidence or 0:.2f} "
                f"{'?' if rows[-1]['unsure'] else ' '} {' '.join(case.text.split())[:90]}"
            )
    total = score(rows)
    durations = [r["ms"] for r in rows if r["ms"] is not None]
    total["p50"], total["p95"] = percentile(durations, 50), percentile(durations, 95)
    with contextlib.suppress(ImportError):  # an old checkout encodes no turns ahead
        app = await app_path_times(pack, cases, idle)
        times = [ms for ms, _ in app]
        total["app_p50"], total["app_p95"] = percentile(times, 50), percentile(times, 95)
        total["app_framed"] = [ms for ms, framed in app if framed]
    from modes_tui.core.routing.router import Router

    if idle and hasattr(Router, "prepare"):  # an old checkout prepares no drafts
        for draft in DRAFTS:
            times = [ms for ms, _ in await app_path_times(pack, cases, idle, draft)]
            total[draft] = (percentile(times, 50), percentile(times, 95))
    return total, rows


DRAFTS = ("drafted", "edited")
"""How the message was typed, with `--idle`: "drafted", its text was prepared
(`Router.prepare`, as the app does after a pause in typing) `DRAFT_BEFORE[0]` s before Enter;
"edited", only the text without its last character was, `DRAFT_BEFORE[1]` s before Enter
(the last key came too late for a pause)."""
DRAFT_BEFORE = (0.15, 0.05)


async def app_path_times(
    pack: Any, cases: list[Any], idle: float = 0.0, draft: str | None = None
) -> list[tuple[float, bool]]:
    """Each line's route time as the app pays it, and whether the line was split (it quotes
    or pastes material): a fresh classifier (no line's vector left
    from the accuracy pass), the line's earlier user messages routed in order and each answer
    encoded as `Router.answered` does when a turn ends (untimed), then the line routed; after
    `idle` seconds of nothing, when given, as a person types between two messages, and the
    message prepared as `draft` says (`DRAFTS`)."""
    from dataclasses import replace

    from modes_tui.core.routing.continuity import ANSWER_CHARS, vector_source
    from modes_tui.core.routing.router import Router
    from modes_tui.runtime import RunOptions, Runtime
    from modes_tui.store.settings import Settings

    runtime = Runtime.load(RunOptions(classifier="embedding"), settings=Settings(), pack=pack)
    classifier = runtime.classifier()
    source = vector_source(classifier)
    router = Router(replace(pack, router=replace(pack.router, below_confidence=None)), classifier)
    times = []
    for case in cases:
        conversation = case.conversation()
        for at, entry in enumerate(conversation[:-1]):
            if not isinstance(entry, dict):
                continue
            if entry.get("role") == "user":
                await router.route(conversation[: at + 1])
            elif entry.get("role") == "assistant" and source is not None:
                excerpt = str(entry.get("content") or "")[:ANSWER_CHARS]
                if excerpt.strip():
                    source.turn_vectors([excerpt])
        if idle:
            time.sleep(idle)  # the whole process idle, as between two turns in the app
        if draft is not None:
            text = str(conversation[-1]["content"])
            router.prepare(conversation[:-1], text if draft == "drafted" else text[:-1])
            time.sleep(DRAFT_BEFORE[DRAFTS.index(draft)])
        route = await router.route(conversation, **case.route_options())
        if route.duration_ms is not None:
            times.append((route.duration_ms, route.framing is not None))
    return times


def split_cost(paths: list[str]) -> None:
    """What the split costs per message (no encoder), and on a 1 MB paste."""

    from modes_tui.core.values.framing import split_message

    texts = [
        json.loads(raw)["text"]
        for name in paths
        for raw in Path(name).read_text(encoding="utf-8").splitlines()
        if raw.strip()
    ]
    rounds = 20
    started = time.perf_counter()
    for _ in range(rounds):
        for text in texts:
            split_message(text)
    each = (time.perf_counter() - started) / (rounds * len(texts)) * 1e6
    paste = "summarise this log:\n" + "2024-05-01 10:02:11 ERROR db timeout\n" * 28_000
    started = time.perf_counter()
    split_message(paste)
    huge = (time.perf_counter() - started) * 1000
    framed = sum(split_message(t) is not None for t in texts)
    print(
        f"\nsplit: {each:.0f} us per message on average over {len(texts)} messages "
        f"({framed} of them split); a 1 MB paste: {huge:.1f} ms"
    )


def line(name: str, s: dict[str, Any]) -> str:
    ece = "-" if s["ece"] is None else f"{s['ece']:.3f}"
    follow = f"{s['follow'][0]}/{s['follow'][1]}" if s["follow"][1] else "-"
    switch = f"{s['switch'][0]}/{s['switch'][1]}" if s["switch"][1] else "-"
    cold = f"{s['p50']:.1f}/{s['p95']:.1f}" if s.get("p50") is not None and s.get("p95") else ""
    app = f"{s['app_p50']:.1f}/{s['app_p95']:.1f}" if s.get("app_p50") is not None else ""
    drafts = "".join(f" {s[d][0]:>5.1f}/{s[d][1]:<5.1f}" for d in DRAFTS if d in s)
    return (
        f"{name:<34} {s['cases']:>5} {s['accuracy']:>8.3f} {ece:>6} {s['wrong_sure']:>9} "
        f"{s['ask']:>6.1%} {follow:>9} {switch:>8} {cold:>12} {app:>11}{drafts}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", default=list(FILES))
    parser.add_argument("--cases", action="store_true", help="print every case")
    parser.add_argument(
        "--idle",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="on the app's path, wait this long before each timed route (a CPU that idled "
        "between two messages wakes up slower: see the README); then also time the route of "
        "a message prepared while typed (drafted) and of one edited after that (edited)",
    )
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    print(
        f"{'file / group':<34} {'cases':>5} {'accuracy':>8} {'ECE':>6} {'wrong>=.9':>9} "
        f"{'ask':>6} {'follow-up':>9} {'switch':>8} {'cold ms':>12} {'app ms':>11}"
        + ("".join(f" {d + ' ms':>11}" for d in DRAFTS) if args.idle else "")
    )
    framed: list[float] = []
    for name in args.files:
        total, rows = asyncio.run(run_file(Path(name), args.cases, args.idle))
        print(line(Path(name).name, total))
        framed += total.get("app_framed", [])
        groups = sorted({r["group"] for r in rows if r["group"]})
        for group in groups:
            print(line(f"  {group}", score([r for r in rows if r["group"] == group])))
    if framed:
        from modes_tui.core.evals.scoring import percentile

        print(
            f"\nmessages that quote or paste material ({len(framed)} over these files), app "
            f"path: p50 {percentile(framed, 50):.1f} ms, p95 {percentile(framed, 95):.1f} ms"
        )
    with contextlib.suppress(ImportError):  # a checkout without the framing has no split
        split_cost(args.files)


if __name__ == "__main__":
    main()

"""Routing benchmark: our embedding backend against the semantic-router approach.

Run from the repository root:

    python bench/routing.py [--data ../shared/data] [--banking-test 1000] [--quick]
    python bench/routing.py --learning     # corrections streamed, calibration (bench/learning.py)
    python bench/routing.py --targets      # issue 21's targets, out-of-scope rows (bench/targets.py)

Both methods use the same encoder (all-MiniLM-L6-v2, in process) and the same examples:

- **ours**: `modes_tui.core.routing.classifiers.embedding` (`ModeIndex`): per mode a blend of the
  nearest example, the 3 nearest, the description and the examples' centroid; softmax
  probabilities; confidence against a "none of these" option at the pack's own floor.
- **semantic-router**: the approach of aurelio-labs/semantic-router, re-implemented here:
  the route of the single most similar utterance (maximum cosine), its similarity as the
  score; with k = 0, the description is the route's only utterance.

Protocol, per dataset and per k in (0, 5, 20):
- k examples per mode are drawn from the train split with a fixed seed (k = 0: the one-line
  descriptions below only; ours uses the descriptions at every k, the baseline only at k=0).
- Each method gets its own fallback threshold (ours on confidence, the baseline on
  similarity), fitted the same way `modes-tui eval --fit` fits one (best harmonic mean of
  in-scope accuracy and fallback recall; with no out-of-scope rows, best accuracy) on a
  calibration set from the train split: up to 300 held-out rows, the train split's
  out-of-scope rows, and, for a mode with fewer than 2 held-out rows, its examples scored
  leave-one-out. The test split is never seen before scoring.
- Accuracy is computed with the same `ModeIndex` the classifier routes with. Latency is the
  wall time of `Router.route` through the real classifiers (query encoding included) on up
  to 100 test rows per cell.

Datasets (`../shared/data`, see its README):
- banking77: 77 intents grouped into the 7 modes of `BANKING_GROUPS` (our grouping, stated
  below); test: a fixed-seed sample of `--banking-test` of the 3,080 test rows.
- snips2017: the 7 intents as modes; train_*.json for examples, validate_*.json (700) as test.
- sr_healthcare: 7 routes; rows with an empty expected_route expect the fallback. Examples
  and calibration from split=train; test = the validation and test splits (48 rows, 13 of
  them out of scope). Each route has only 7 train rows, so k = 20 is capped at 7.

The script also prints the warm decision latency of one classifier with 10 modes x 30
examples, and the cold start (fresh process, warm disk cache) to the first route.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from modes_tui.core.evals.cases import EvalCase  # noqa: E402
from modes_tui.core.evals.scoring import (  # noqa: E402
    Outcome,
    evaluate,
    fit_threshold,
    percentile,
)
from modes_tui.core.history.conversation import Message  # noqa: E402
from modes_tui.core.packs.fields import HistoryWindow  # noqa: E402
from modes_tui.core.packs.profiles import Pack, Profile  # noqa: E402
from modes_tui.core.packs.prompts import DEFAULT_SYSTEM, PromptSet, Template  # noqa: E402
from modes_tui.core.packs.router_config import RouterConfig  # noqa: E402
from modes_tui.core.routing.classifiers.embedding import EmbeddingClassifier  # noqa: E402
from modes_tui.core.routing.classifiers.mode_index import ModeIndex  # noqa: E402
from modes_tui.core.routing.router import Router  # noqa: E402
from modes_tui.core.values.route import ClassifierInfo, Decision  # noqa: E402
from modes_tui.llm.encoders import MiniLMEncoder  # noqa: E402

SEED = 13
KS = (0, 5, 20)
CALIBRATION_ROWS = 300
LATENCY_ROWS = 100
FALLBACK = "(fallback)"

# --------------------------------------------------------------------------- datasets

# banking77's 77 intents grouped into 7 modes by what the customer wants handled. Ours;
# other groupings are possible and would give other numbers.
BANKING_GROUPS: dict[str, list[str]] = {
    "cards": [
        "card_arrival",
        "card_linking",
        "card_delivery_estimate",
        "card_not_working",
        "lost_or_stolen_card",
        "pin_blocked",
        "contactless_not_working",
        "getting_virtual_card",
        "get_physical_card",
        "disposable_card_limits",
        "compromised_card",
        "card_swallowed",
        "change_pin",
        "getting_spare_card",
        "order_physical_card",
        "virtual_card_not_working",
        "get_disposable_virtual_card",
        "activate_my_card",
        "card_about_to_expire",
        "visa_or_mastercard",
        "card_acceptance",
        "apple_pay_or_google_pay",
    ],
    "card_payments": [
        "extra_charge_on_statement",
        "card_payment_fee_charged",
        "card_payment_not_recognised",
        "direct_debit_payment_not_recognised",
        "pending_card_payment",
        "request_refund",
        "Refund_not_showing_up",
        "declined_card_payment",
        "transaction_charged_twice",
        "reverted_card_payment?",
    ],
    "transfers": [
        "cancel_transfer",
        "transfer_not_received_by_recipient",
        "declined_transfer",
        "pending_transfer",
        "beneficiary_not_allowed",
        "transfer_fee_charged",
        "receiving_money",
        "failed_transfer",
        "transfer_into_account",
        "transfer_timing",
        "balance_not_updated_after_bank_transfer",
    ],
    "top_ups": [
        "automatic_top_up",
        "top_up_by_bank_transfer_charge",
        "pending_top_up",
        "top_up_limits",
        "top_up_reverted",
        "topping_up_by_card",
        "verify_top_up",
        "top_up_by_cash_or_cheque",
        "top_up_failed",
        "top_up_by_card_charge",
        "balance_not_updated_after_cheque_or_cash_deposit",
    ],
    "cash": [
        "pending_cash_withdrawal",
        "wrong_amount_of_cash_received",
        "atm_support",
        "declined_cash_withdrawal",
        "cash_withdrawal_not_recognised",
        "cash_withdrawal_charge",
    ],
    "exchange": [
        "exchange_rate",
        "card_payment_wrong_exchange_rate",
        "fiat_currency_support",
        "exchange_via_app",
        "supported_cards_and_currencies",
        "exchange_charge",
        "wrong_exchange_rate_for_cash_withdrawal",
    ],
    "account": [
        "age_limit",
        "edit_personal_details",
        "why_verify_identity",
        "unable_to_verify_identity",
        "passcode_forgotten",
        "lost_or_stolen_phone",
        "terminate_account",
        "verify_source_of_funds",
        "verify_my_identity",
        "country_support",
    ],
}

# One line per mode: what k = 0 routes by, and what ours adds at every k.
DESCRIPTIONS: dict[str, dict[str, str]] = {
    "banking77": {
        "cards": "Getting, activating, using or replacing a bank card: delivery, PIN, lost, stolen or blocked cards, virtual and disposable cards, Apple Pay and Google Pay.",
        "card_payments": "Card payments and charges on the statement: pending, declined or unrecognised payments, double charges, card payment fees, direct debits and merchant refunds.",
        "transfers": "Bank transfers: sending money to someone, receiving money, pending, failed or declined transfers, transfer fees and timing, cancelling a transfer.",
        "top_ups": "Topping up the account balance by card, bank transfer, cash or cheque: top-up limits and fees, pending, failed or reverted top-ups, automatic top-up.",
        "cash": "Cash withdrawals at an ATM: declined or pending withdrawals, the wrong amount of cash, withdrawal fees.",
        "exchange": "Currencies and exchange rates: supported currencies, exchanging money in the app, the exchange rate applied and exchange fees.",
        "account": "The account and identity checks: verifying identity or source of funds, personal details, passcode, age and country requirements, a lost phone, closing the account.",
    },
    "snips2017": {
        "AddToPlaylist": "Add a song, artist or album to one of my playlists.",
        "BookRestaurant": "Book a table at a restaurant for some people at a given time and place.",
        "GetWeather": "The weather forecast: temperature, rain, snow, wind or sun somewhere at some time.",
        "PlayMusic": "Play music: a song, an artist, an album, a genre or a playlist, on a music service.",
        "RateBook": "Give a book or a novel a rating, such as stars or points out of a scale.",
        "SearchCreativeWork": "Find a creative work by its title: a movie, TV show, song, album, book, game or painting.",
        "SearchScreeningEvent": "Find movie showtimes and which films are playing at cinemas nearby.",
    },
    "sr_healthcare": {
        "claims": "Status, payment or correction of a medical claim that was already submitted.",
        "eligibility": "Whether a member is enrolled and covered by the plan on a given date.",
        "prior_authorization": "Getting approval from the plan before a service, procedure or drug is provided.",
        "benefits": "What the plan covers and what the member pays: deductibles, copays, coinsurance, limits.",
        "pharmacy": "Prescriptions filled at a pharmacy: formulary, refills, drug prices, pharmacy problems.",
        "infusion_therapy": "Infusion treatments: scheduling, sites, home infusion and infused medications.",
        "appeals": "Disputing a denied claim or authorization: filing an appeal or grievance and its status.",
    },
}

Row = tuple[str, str | None]  # (text, mode or None for "should fall back")


@dataclass
class Dataset:
    """Train rows (examples and calibration) and test rows of one routing task."""

    name: str
    modes: list[str]
    train: list[Row]
    test: list[Row]
    note: str


def load_banking(data: Path, test_size: int) -> Dataset:
    group_of = {intent: group for group, intents in BANKING_GROUPS.items() for intent in intents}

    def read(split: str) -> list[Row]:
        with (data / "banking77" / f"{split}.csv").open(newline="", encoding="utf-8") as handle:
            return [(r["text"], group_of[r["category"]]) for r in csv.DictReader(handle)]

    test = read("test")
    sample = random.Random(SEED).sample(test, min(test_size, len(test)))
    note = f"77 intents in 7 modes; test: {len(sample)} of {len(test)} rows (seed {SEED})"
    return Dataset("banking77", list(BANKING_GROUPS), read("train"), sample, note)


def load_snips(data: Path) -> Dataset:
    def read(prefix: str) -> list[Row]:
        rows: list[Row] = []
        for path in sorted((data / "snips2017").glob(f"{prefix}_*.json")):
            for intent, items in json.loads(path.read_text(encoding="utf-8")).items():
                rows += [
                    ("".join(p["text"] for p in item["data"]).strip(), intent) for item in items
                ]
        return rows

    test = read("validate")
    modes = sorted({mode for _, mode in test if mode})
    return Dataset(
        "snips2017", modes, read("train"), test, f"7 intents; test: validate, {len(test)} rows"
    )


def load_healthcare(data: Path) -> Dataset:
    path = data / "sr_healthcare" / "healthcare-routing-evaluation.csv"
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    train = [(r["utterance"], r["expected_route"] or None) for r in rows if r["split"] == "train"]
    test = [(r["utterance"], r["expected_route"] or None) for r in rows if r["split"] != "train"]
    modes = list(DESCRIPTIONS["sr_healthcare"])
    nulls = sum(1 for _, mode in test if mode is None)
    note = (
        f"7 routes; test: validation + test splits, {len(test)} rows, {nulls} expect the "
        "fallback; k capped at the 7 train rows per route"
    )
    return Dataset("sr_healthcare", modes, train, test, note)


# --------------------------------------------------------------------------- vectors


class Vectors:
    """Encodes each distinct text once per run."""

    def __init__(self, encoder: MiniLMEncoder) -> None:
        self.encoder = encoder
        self.known: dict[str, np.ndarray] = {}

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self.known]
        if missing:
            for start in range(0, len(missing), 256):
                chunk = missing[start : start + 256]
                self.known.update(zip(chunk, self.encoder.encode(chunk), strict=True))
        dim = 384
        return np.stack([self.known[t] for t in texts]) if texts else np.zeros((0, dim), np.float32)


# --------------------------------------------------------------------------- the two methods


@dataclass
class Split:
    examples: dict[str, list[str]]
    calibration: list[tuple[Row, str | None]]  # (row, the example left out, if scored LOO)


def draw(dataset: Dataset, k: int, seed: int) -> Split:
    rng = random.Random(seed * 100 + k)
    by_mode: dict[str, list[str]] = defaultdict(list)
    negatives: list[Row] = []
    for text, mode in dataset.train:
        if mode is None:
            negatives.append((text, None))
        else:
            by_mode[mode].append(text)
    examples: dict[str, list[str]] = {}
    held: list[Row] = []
    loo: list[tuple[Row, str | None]] = []
    for mode in dataset.modes:
        texts = by_mode[mode][:]
        rng.shuffle(texts)
        examples[mode] = texts[:k]
        rest = [(t, mode) for t in texts[k:]]
        held += rest
        if len(rest) < 2:
            loo += [((t, mode), t) for t in examples[mode]]
    rng.shuffle(held)
    calibration = [(row, None) for row in held[:CALIBRATION_ROWS] + negatives] + loo
    return Split(examples, calibration)


def build_index(
    dataset: Dataset, examples: Mapping[str, list[str]], vec: Vectors, floor: float | None = None
) -> ModeIndex:
    descriptions = DESCRIPTIONS[dataset.name]
    return ModeIndex(
        dataset.modes,
        vec([descriptions[m] for m in dataset.modes]),
        [vec(examples[m]) for m in dataset.modes],
        [tuple(examples[m]) for m in dataset.modes],
        floor=floor,
    )


def ours(index: ModeIndex, query: np.ndarray) -> tuple[str, float]:
    scored = index.score(query)
    return scored.mode, scored.confidence


def baseline_anchors(
    dataset: Dataset, examples: Mapping[str, list[str]], vec: Vectors
) -> tuple[np.ndarray, list[str], list[str]]:
    """semantic-router's utterances: the examples, or the description when k = 0."""
    texts: list[str] = []
    owners: list[str] = []
    for mode in dataset.modes:
        utterances = examples[mode] or [DESCRIPTIONS[dataset.name][mode]]
        texts += utterances
        owners += [mode] * len(utterances)
    return vec(texts), owners, texts


def baseline(anchors: np.ndarray, owners: list[str], query: np.ndarray) -> tuple[str, float]:
    similarities = anchors @ query
    best = int(np.argmax(similarities))
    return owners[best], float(max(0.0, min(1.0, similarities[best])))


def outcome(row: Row, mode: str, score: float) -> Outcome:
    from modes_tui.core.values.route import Route

    route = Route(mode, "classifier", None, Decision(mode, score))
    return Outcome(EvalCase(row[0], row[1]), route)


def fitted(outcomes: list[Outcome], modes: list[str]) -> float:
    candidates = {0.0} | {round(o.route.confidence or 0.0, 6) for o in outcomes}
    return fit_threshold(outcomes, modes, FALLBACK, candidates).best.threshold


# --------------------------------------------------------------------------- latency


class MaxSimClassifier:
    """The baseline as a classifier, so its latency is measured the same way."""

    def __init__(self, encoder: MiniLMEncoder, anchors: np.ndarray, owners: list[str]) -> None:
        self.encoder, self.anchors, self.owners = encoder, anchors, owners

    def classify(
        self, message: str, history: Any, modes: Any, instructions: str, inputs: Any
    ) -> Decision:
        mode, score = baseline(self.anchors, self.owners, self.encoder.encode([message])[0])
        return Decision(mode, score, "max cosine")

    def trace(self) -> ClassifierInfo:
        return ClassifierInfo("semantic-router", self.encoder.name)


def make_pack(
    modes: list[str], descriptions: Mapping[str, str], examples: Mapping[str, list[str]]
) -> Pack:
    profiles = tuple(
        Profile(name=_slug(m), description=descriptions[m], examples=tuple(examples[m]))
        for m in modes
    )
    router = RouterConfig(
        classifier="embedding", fallback=profiles[0].name, history=HistoryWindow(0), sticky=0.0
    )
    prompts = PromptSet(Template(DEFAULT_SYSTEM, "<built-in>"))
    return Pack("bench", ROOT, profiles, router, prompts)


def _slug(mode: str) -> str:
    return "m-" + "".join(c if c.isalnum() else "-" for c in mode.lower())


def route_times(
    pack: Pack, classifiers: Mapping[str, Any], texts: Sequence[str]
) -> dict[str, list[float]]:
    """Wall time of Router.route per text, for each classifier, interleaved text by text so
    that a busy moment on the machine hits every method alike."""
    routers = {name: Router(pack, classifier) for name, classifier in classifiers.items()}

    async def run() -> dict[str, list[float]]:
        times: dict[str, list[float]] = {name: [] for name in routers}
        for router in routers.values():
            await router.route([Message("user", "warm up")])
        for i, text in enumerate(texts):
            order = list(routers.items())
            for name, router in order if i % 2 else reversed(order):
                started = time.perf_counter()
                await router.route([Message("user", text)])
                times[name].append((time.perf_counter() - started) * 1000)
        return times

    return asyncio.run(run())


# --------------------------------------------------------------------------- one dataset


@dataclass
class Cell:
    threshold: float
    accuracy: float
    macro_f1: float
    fallback_precision: float | None
    fallback_recall: float | None
    p50: float | None
    p95: float | None


def run_dataset(
    dataset: Dataset, encoder: MiniLMEncoder, vec: Vectors, latency_rows: int, seeds: Sequence[int]
) -> dict[tuple[int, str], list[Cell]]:
    """Per (k, method), one Cell per seed (latency measured on the first seed only)."""
    results: dict[tuple[int, str], list[Cell]] = defaultdict(list)
    test_vectors = vec([t for t, _ in dataset.test])
    sample = random.Random(SEED).sample(dataset.test, min(latency_rows, len(dataset.test)))
    latency_texts = [text for text, _ in sample]
    for k in KS:
        for seed in seeds:
            for method, cell in run_cell(
                dataset,
                k,
                seed,
                encoder,
                vec,
                test_vectors,
                latency_texts if seed == seeds[0] else [],
            ).items():
                results[(k, method)].append(cell)
    return results


def run_cell(
    dataset: Dataset,
    k: int,
    seed: int,
    encoder: MiniLMEncoder,
    vec: Vectors,
    test_vectors: np.ndarray,
    latency_texts: Sequence[str],
) -> dict[str, Cell]:
    split = draw(dataset, k, seed)
    index = build_index(dataset, split.examples, vec)
    anchors, owners, anchor_texts = baseline_anchors(dataset, split.examples, vec)

    # calibration: each method fits its own threshold
    ours_cal, base_cal = [], []
    for row, left_out in split.calibration:
        query = vec([row[0]])[0]
        if left_out is None:
            ours_cal.append(outcome(row, *ours(index, query)))
            base_cal.append(outcome(row, *baseline(anchors, owners, query)))
            continue
        without = {m: [t for t in ts if t != left_out] for m, ts in split.examples.items()}
        loo_index = build_index(dataset, without, vec, floor=index.floor)
        ours_cal.append(outcome(row, *ours(loo_index, query)))
        keep = [i for i, text in enumerate(anchor_texts) if text != left_out]
        base_cal.append(outcome(row, *baseline(anchors[keep], [owners[i] for i in keep], query)))
    thresholds = {
        "ours": fitted(ours_cal, dataset.modes),
        "semantic-router": fitted(base_cal, dataset.modes),
    }

    times: dict[str, list[float]] = {"ours": [], "semantic-router": []}
    if latency_texts:
        pack = make_pack(dataset.modes, DESCRIPTIONS[dataset.name], split.examples)
        slug = {m: _slug(m) for m in dataset.modes}
        classifiers: dict[str, Any] = {
            "ours": EmbeddingClassifier(
                lambda: encoder, encoder_name=encoder.name, modes=pack.profiles
            ),
            "semantic-router": MaxSimClassifier(encoder, anchors, [slug[o] for o in owners]),
        }
        times = route_times(pack, classifiers, latency_texts)

    cells = {}
    for method in ("ours", "semantic-router"):
        outcomes = []
        for row, query in zip(dataset.test, test_vectors, strict=True):
            if method == "ours":
                mode, score = ours(index, query)
            else:
                mode, score = baseline(anchors, owners, query)
            outcomes.append(outcome(row, mode, score))
        report = evaluate(outcomes, dataset.modes, FALLBACK, thresholds[method])
        cells[method] = Cell(
            thresholds[method],
            report.accuracy,
            _macro_f1(report, dataset.modes),
            report.fallback.precision,
            report.fallback.recall,
            percentile(times[method], 50),
            percentile(times[method], 95),
        )
    return cells


def _macro_f1(report: Any, modes: list[str]) -> float:
    scores = [report.per_mode[m].f1 for m in modes if m in report.per_mode]
    return sum(scores) / len(scores)


# --------------------------------------------------------------------------- warm and cold


def warm_latency(data: Path, encoder: MiniLMEncoder, rows: int) -> dict[str, list[float]]:
    """10 modes x 30 examples (10 banking77 intents as modes), after the first route.

    Wall time through Router.route (interleaved), and the CPU time of the same decision run
    synchronously in one thread (`time.thread_time`), which other processes on a busy
    machine do not inflate.
    """
    with (data / "banking77" / "train.csv").open(newline="", encoding="utf-8") as handle:
        train = [(r["text"], r["category"]) for r in csv.DictReader(handle)]
    with (data / "banking77" / "test.csv").open(newline="", encoding="utf-8") as handle:
        test = [(r["text"], r["category"]) for r in csv.DictReader(handle)]
    intents = sorted({c for _, c in train})[:10]
    rng = random.Random(SEED)
    examples = {i: rng.sample([t for t, c in train if c == i], 30) for i in intents}
    descriptions = {i: i.replace("_", " ").strip("?") for i in intents}
    pack = make_pack(intents, descriptions, examples)
    texts = [t for t, c in test if c in intents][:rows]
    classifier = EmbeddingClassifier(
        lambda: encoder, encoder_name=encoder.name, modes=pack.profiles
    )
    classifier.wait()
    vec = Vectors(encoder)
    anchors = vec([t for i in intents for t in examples[i]])
    owners = [_slug(i) for i in intents for _ in examples[i]]
    baseline_classifier = MaxSimClassifier(encoder, anchors, owners)
    walls = route_times(pack, {"ours": classifier, "semantic-router": baseline_classifier}, texts)
    decide: dict[str, Callable[[str], Any]] = {
        "ours": lambda text: classifier.classify_now(text + " ", [], pack.profiles),
        "semantic-router": lambda text: baseline_classifier.classify(text, [], [], "", {}),
        "encoding the message alone": lambda text: encoder.encode([text]),
    }
    cpu: dict[str, list[float]] = {name: [] for name in decide}
    wall_alone: list[float] = []
    for text in texts:
        for name, run in decide.items():
            started, wall_started = time.thread_time(), time.perf_counter()
            run(text)
            cpu[name].append((time.thread_time() - started) * 1000)
            if name == "encoding the message alone":
                wall_alone.append((time.perf_counter() - wall_started) * 1000)
    walls["encoding the message alone"] = wall_alone
    return {
        name: [
            percentile(walls[name], 50) or 0.0,
            percentile(walls[name], 95) or 0.0,
            percentile(cpu[name], 50) or 0.0,
            percentile(cpu[name], 95) or 0.0,
        ]
        for name in decide
    }


COLD = """
import json, os, sys, time
started = time.perf_counter()
sys.path.insert(0, {root!r})
from modes_tui.runtime import RunOptions, Runtime
from modes_tui.core.history.conversation import Message
from modes_tui.core.packs.profiles import load_pack
from modes_tui.core.routing.router import Router
from modes_tui.store.settings import Settings
import asyncio
pack = load_pack("default")
imported = time.perf_counter()
runtime = Runtime.load(RunOptions(classifier="embedding"), settings=Settings(), pack=pack)
classifier = runtime.classifier()
route = asyncio.run(Router(pack, classifier).route([Message("user", "why does my build fail")]))
done = time.perf_counter()
print(json.dumps({{"imports": imported - started, "to_first_route": done - imported,
                  "mode": route.mode_name, "loaded": classifier.load_seconds}}))
"""


def cold_start(runs: int) -> list[dict[str, float]]:
    """Fresh processes on one MODES_TUI_HOME: the first warms the cache, the rest are measured."""
    results = []
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "MODES_TUI_HOME": home, "HF_HUB_OFFLINE": "1"}
        code = COLD.format(root=str(ROOT))
        for attempt in range(runs + 1):
            started = time.perf_counter()
            out = subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
            )
            wall = time.perf_counter() - started
            if attempt == 0:
                continue  # cache cold: this run encodes the pack
            data = json.loads(out.stdout.strip().splitlines()[-1])
            data["process"] = wall
            results.append(data)
    return results


# --------------------------------------------------------------------------- printing


def load_average() -> str:
    try:
        return ", ".join(f"{v:.2f}" for v in os.getloadavg()) + f" on {os.cpu_count()} cores"
    except OSError:  # pragma: no cover - not on every platform
        return "unknown"


def fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def mean(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def print_dataset(
    dataset: Dataset, results: Mapping[tuple[int, str], list[Cell]], seeds: Sequence[int]
) -> None:
    print(f"\n### {dataset.name} ({dataset.note})\n")
    print(
        "| k | method | threshold | accuracy | macro-F1 | fallback P | fallback R | p50 ms | p95 ms |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for k in KS:
        for method in ("ours", "semantic-router"):
            cells = results[(k, method)]
            print(
                f"| {k} | {method} | {fmt(mean([c.threshold for c in cells]), 2)} "
                f"| {fmt(mean([c.accuracy for c in cells]))} "
                f"| {fmt(mean([c.macro_f1 for c in cells]))} "
                f"| {fmt(mean([c.fallback_precision for c in cells]), 2)} "
                f"| {fmt(mean([c.fallback_recall for c in cells]), 2)} "
                f"| {fmt(cells[0].p50, 1)} | {fmt(cells[0].p95, 1)} |"
            )
    print(f"\naccuracy, ours minus semantic-router, per seed ({', '.join(map(str, seeds))}):")
    for k in KS:
        deltas = [
            o.accuracy - b.accuracy
            for o, b in zip(results[(k, "ours")], results[(k, "semantic-router")], strict=True)
        ]
        print(
            f"- k={k}: "
            + " ".join(f"{d:+.3f}" for d in deltas)
            + f" (mean {sum(deltas) / len(deltas):+.3f})"
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--data", default=str(ROOT.parent / "shared" / "data"), help="the shared data folder"
    )
    parser.add_argument(
        "--banking-test", type=int, default=1000, help="banking77 test rows to sample"
    )
    parser.add_argument("--seeds", type=int, default=3, help="example draws to average over")
    parser.add_argument("--quick", action="store_true", help="smaller samples, for a smoke run")
    parser.add_argument(
        "--learning",
        action="store_true",
        help="only the learning benchmark: corrections streamed, calibration, latency",
    )
    parser.add_argument(
        "--latency",
        action="store_true",
        help="only the warm decision latency (10 modes x 30 examples) beside the encoder alone",
    )
    parser.add_argument(
        "--targets",
        action="store_true",
        help="only the targets: in-scope accuracy at out-of-scope recall, static and learned",
    )
    args = parser.parse_args(argv)
    data = Path(args.data)
    if not (data / "banking77").is_dir():
        parser.error(f"no benchmark data in {data}; pass --data PATH/TO/shared/data")
    latency_rows = 20 if args.quick else LATENCY_ROWS
    banking_rows = 200 if args.quick else args.banking_test

    started = time.perf_counter()
    print(f"load average at start: {load_average()}")
    encoder = MiniLMEncoder()
    vec = Vectors(encoder)
    if args.learning:
        return learning_main(data, encoder, vec, banking_rows, args.quick, started)
    if args.targets:
        return targets_main(data, vec, banking_rows, started)
    if args.latency:
        print_latency(data, encoder, 50 if args.quick else 200)
        return 0
    print(
        "## Routing benchmark: ours (embedding backend) vs semantic-router (max cosine), same encoder"
    )
    seeds = [SEED + i for i in range(1 if args.quick else args.seeds)]
    print(
        f"\nencoder: {encoder.name} (numpy, in process); k examples per mode drawn from train "
        f"with seeds {', '.join(map(str, seeds))}; table: mean over the seeds (latency: first seed)"
    )
    loaders: list[Callable[[], Dataset]] = [
        lambda: load_banking(data, banking_rows),
        lambda: load_snips(data),
        lambda: load_healthcare(data),
    ]
    for load in loaders:
        dataset = load()
        print_dataset(dataset, run_dataset(dataset, encoder, vec, latency_rows, seeds), seeds)
        sys.stdout.flush()

    print_latency(data, encoder, 50 if args.quick else 200)

    print("\n### Cold start with a warm disk cache (fresh process, default pack)\n")
    runs = cold_start(1 if args.quick else 3)
    print("| run | python imports (s) | build classifier -> first route (s) | whole process (s) |")
    print("|---|---|---|---|")
    for i, run in enumerate(runs, start=1):
        print(
            f"| {i} | {run['imports']:.2f} | {run['to_first_route']:.2f} | {run['process']:.2f} |"
        )
    median = statistics.median(r["to_first_route"] for r in runs)
    print(f"\nmedian build -> first route: {median:.2f} s (target <= 1.5 s)")
    print(f"\nbenchmark wall time: {time.perf_counter() - started:.0f} s")
    return 0


def print_latency(data: Path, encoder: MiniLMEncoder, rows: int) -> None:
    """The warm decision latency table, with each method's p50 over the encoder's alone."""
    print(
        "\n### Warm decision latency: 10 modes x 30 examples (Router.route, query encoding included)\n"
    )
    print(f"load average before: {load_average()}\n")
    print("| method | wall p50 ms | wall p95 ms | CPU p50 ms | CPU p95 ms | CPU p50 / encoder |")
    print("|---|---|---|---|---|---|")
    table = warm_latency(data, encoder, rows)
    alone = table["encoding the message alone"][2] or 1.0
    for name, (p50, p95, c50, c95) in table.items():
        print(f"| {name} | {p50:.1f} | {p95:.1f} | {c50:.1f} | {c95:.1f} | {c50 / alone:.2f}x |")
    print(f"\nload average during the run: {load_average()}")


def targets_main(data: Path, vec: Vectors, banking_rows: int, started: float) -> int:
    """Issue 21's targets (bench/targets.py) on the three data sets."""
    from bench.targets import load_open_sets, print_targets, run_targets

    print("## Targets: in-scope accuracy at out-of-scope recall, ours vs semantic-router")
    for dataset in load_open_sets(data, banking_rows, SEED):
        descriptions = DESCRIPTIONS[dataset.name]
        print_targets(dataset.name, dataset.note, run_targets(dataset, descriptions, vec, SEED))
        sys.stdout.flush()
    print(f"\nload average: {load_average()}; wall time {time.perf_counter() - started:.0f} s")
    return 0


def learning_main(
    data: Path, encoder: MiniLMEncoder, vec: Vectors, banking_rows: int, quick: bool, started: float
) -> int:
    """The learning benchmark (bench/learning.py) on the same datasets."""
    from bench.learning import print_learning, run_learning, warm_latency_with_corrections

    print("## Learning from corrections: ours vs semantic-router, same encoder, same stream")
    for load in (
        lambda: load_banking(data, banking_rows),
        lambda: load_snips(data),
        lambda: load_healthcare(data),
    ):
        dataset = load()
        print_learning(run_learning(dataset, DESCRIPTIONS[dataset.name], vec, SEED))
        sys.stdout.flush()
    print("\n### Warm decision latency with corrections: 10 modes x 30 examples\n")
    print(
        "| corrections | Router.route wall p50 ms (encoding included) | p95 ms "
        "| decision alone: wall p50 ms | CPU p50 ms | index build ms |"
    )
    print("|---|---|---|---|---|---|")
    rows = warm_latency_with_corrections(
        data, encoder, 50 if quick else 200, make_pack, route_times, SEED
    )
    for name, (p50, p95, decision, cpu, build) in rows.items():
        print(f"| {name} | {p50:.1f} | {p95:.1f} | {decision:.2f} | {cpu:.2f} | {build:.0f} |")
    print(f"\nload average: {load_average()}; wall time {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

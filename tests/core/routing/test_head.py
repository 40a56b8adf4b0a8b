"""The calibrated head: refits that learn, refits that are refused, calibration, evidence,
and the refit that runs off the routing thread."""

from __future__ import annotations

import asyncio
import re
import threading
from typing import Any

import numpy as np
import pytest

from modes_tui.core.history.conversation import Message
from modes_tui.core.packs.profiles import Pack, load_pack
from modes_tui.core.routing.calibration import expected_calibration_error, reliability
from modes_tui.core.routing.classifiers.embedding import EmbeddingClassifier
from modes_tui.core.routing.classifiers.head import build_training, calibrated
from modes_tui.core.routing.corrections import MemoryCorrections
from modes_tui.core.routing.ports import CorrectionSource
from modes_tui.core.routing.router import Router
from modes_tui.core.values.correction import Correction
from modes_tui.core.values.evidence import Evidence
from modes_tui.core.values.route import Decision
from tests.conftest import PackWriter
from tests.support.fake_encoder import HashingEncoder

# Each mode's examples share words, so that the bag-of-words fake encoder gives the pack a
# cross-validated accuracy worth protecting.
MODES: dict[str, dict[str, Any]] = {
    "chat": {
        "description": "Small talk about films, food and travel.",
        "examples": [
            "recommend a film for tonight",
            "a good film about food",
            "food to try when I travel",
            "travel tips and a film to watch",
            "what food goes with a film night",
            "where to travel for good food",
        ],
    },
    "code": {
        "description": "Python code: functions, bugs and failing tests.",
        "examples": [
            "my python function raises a keyerror",
            "this python function has a bug",
            "fix the failing test of my function",
            "python test fails with a bug",
            "the function in my python code loops forever",
            "a bug in the python code of this test",
        ],
    },
    "shell": {
        "description": "Terminal commands: git, docker and files.",
        "examples": [
            "undo my last git commit",
            "list running docker containers",
            "git command to rename files",
            "docker command to remove files",
            "terminal command for git history",
            "stop the docker terminal session",
        ],
    },
}


@pytest.fixture
def pack(write_pack: PackWriter) -> Pack:
    folder = write_pack(
        router={"classifier": "embedding", "fallback": "chat", "below_confidence": 0.5},
        modes=MODES,
    )
    return load_pack(profiles_dir=folder)


def classifier_for(pack: Pack, source: CorrectionSource, **options: Any) -> EmbeddingClassifier:
    encoder = options.pop("encoder", None) or HashingEncoder()
    return EmbeddingClassifier(
        lambda: encoder,
        encoder_name=encoder.name,
        modes=pack.profiles,
        corrections=source,
        fallback=pack.router.fallback,
        threshold=pack.router.below_confidence,
        **options,
    )


def route(pack: Pack, classifier: EmbeddingClassifier, text: str) -> Any:
    return asyncio.run(Router(pack, classifier).route([Message("user", text)]))


# --------------------------------------------------------------------------- learning


def test_a_correction_fixes_a_misrouted_message_and_the_reason_names_it(pack: Pack) -> None:
    source = MemoryCorrections()
    classifier = classifier_for(pack, source)
    text = "compile the docs site before the release"
    before = route(pack, classifier, text)
    target = "shell" if before.mode_name != "shell" else "code"
    source.add(Correction(text, target, routed_mode=before.mode_name))
    after = route(pack, classifier, text)
    assert after.mode_name == target
    assert after.reason.startswith(f"like your correction '{text}' -> {target} (")
    evidence = after.decision.evidence
    assert isinstance(evidence, Evidence)
    assert (evidence.kind, evidence.text, evidence.mode) == ("correction", text, target)
    assert evidence.similarity == pytest.approx(1.0, abs=1e-3)
    assert classifier.last_refit is not None and classifier.last_refit.taken


def test_a_poisoning_stream_of_corrections_is_refused_and_says_so(pack: Pack) -> None:
    source = MemoryCorrections()
    classifier = classifier_for(pack, source)
    assert route(pack, classifier, "python function with a bug").mode_name == "code"
    # A stream that sends programming questions to shell: under cross-validation the pack's
    # own code examples would no longer route to code.
    poison = [
        "python function bug",
        "a python test with a bug",
        "the function test fails",
        "python code bug in a function",
        "my python test fails",
        "bug in the python function code",
        "test the python code",
        "function bug in my test",
    ]
    for text in poison:
        source.add(Correction(text, "shell", routed_mode="code"))
    after = route(pack, classifier, "python function with a bug")
    outcome = classifier.last_refit
    assert outcome is not None and not outcome.taken
    summary = outcome.summary()
    assert summary.startswith("last refit not taken: in-scope ")
    found = re.match(r"last refit not taken: in-scope (\d\.\d\d) -> (\d\.\d\d)", summary)
    assert found is not None, summary
    assert float(found[2]) < float(found[1])
    assert after.mode_name == "code"  # the head in use stayed


def test_fallback_corrections_raise_rejection_without_dropping_a_nearby_in_scope_case(
    pack: Pack,
) -> None:
    source = MemoryCorrections()
    classifier = classifier_for(pack, source)
    off_topic = [
        "feed my pet python snake twice a week",
        "how long does a pet python snake live",
        "what size tank for a pet python snake",
    ]
    unseen = "does a pet python snake need a heat lamp"
    nearby = "my python function has a bug"  # shares "python" with the negatives
    before = route(pack, classifier, unseen)
    kept_before = route(pack, classifier, nearby)
    assert (kept_before.mode_name, kept_before.decided_by) == ("code", "classifier")
    for text in off_topic:
        source.add(Correction(text, "chat", routed_mode="code"))
    after = route(pack, classifier, unseen)
    assert after.decided_by == "fallback"
    assert after.decision is not None and after.decision.confidence is not None
    assert before.confidence is not None and after.decision.confidence < before.confidence
    assert "which no mode should take" in (after.decision.reason or "")
    kept = route(pack, classifier, nearby)
    assert (kept.mode_name, kept.decided_by) == ("code", "classifier")
    assert kept.confidence is not None and kept.confidence >= 0.5


def test_removing_the_corrections_is_always_taken(pack: Pack) -> None:
    source = MemoryCorrections()
    classifier = classifier_for(pack, source)
    for text in MODES["code"]["examples"]:
        source.add(Correction(f"{text} please", "chat", routed_mode="code"))
    route(pack, classifier, "hello")
    source.clear()
    route(pack, classifier, "hello")
    assert classifier.last_refit is not None and classifier.last_refit.taken


# --------------------------------------------------------------------------- refit thread


def test_the_refit_runs_off_the_routing_thread_and_the_old_head_answers_meanwhile(
    pack: Pack,
) -> None:
    gate = threading.Event()
    gate.set()
    encoder = HashingEncoder(gate=gate)
    source = MemoryCorrections()
    classifier = classifier_for(pack, source, encoder=encoder, refit_wait=0.0)
    text = "compile the docs site before the release"
    before = route(pack, classifier, text)
    target = "shell" if before.mode_name != "shell" else "code"
    gate.clear()  # the refit must encode the correction's new text: it waits here
    source.add(Correction("please compile the docs site before the release now", target))
    meanwhile = route(pack, classifier, text)  # the message's vector is already known
    assert meanwhile.mode_name == before.mode_name
    assert not classifier.wait_refit(0.05)  # still running, in its own thread
    threads = {t.name for t in threading.enumerate()}
    assert "modes-tui-refit" in threads
    gate.set()
    assert classifier.wait_refit(30)
    assert route(pack, classifier, text).mode_name == target


# --------------------------------------------------------------------------- calibration


def test_an_ambiguous_message_is_not_shown_as_certain(pack: Pack) -> None:
    classifier = classifier_for(pack, MemoryCorrections())
    decision = classifier.classify_now("a git film", [], pack.profiles)
    assert isinstance(decision, Decision)
    assert decision.confidence is not None and f"{decision.confidence:.2f}" != "1.00"
    exact = classifier.classify_now("undo my last git commit", [], pack.profiles)
    assert exact.confidence is not None and exact.confidence <= 0.99


def test_confidence_is_calibrated_on_a_synthetic_set() -> None:
    rng = np.random.default_rng(7)
    centres = rng.normal(size=(4, 32))

    def sample(count: int, mode: int) -> Any:
        rows = centres[mode] + rng.normal(scale=1.3, size=(count, 32))
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)

    blocks = [sample(20, m) for m in range(4)]
    training = build_training(blocks, [[True] * 20] * 4, None)
    head, _ = calibrated(training)
    test = np.concatenate([sample(150, m) for m in range(4)])
    truth = np.repeat(np.arange(4), 150)
    scored = head.score_rows(test)
    confidence = [float(s.probabilities.max()) for s in scored]
    right = [int(np.argmax(s.probabilities)) == t for s, t in zip(scored, truth, strict=True)]
    accuracy = float(np.mean(right))
    assert 0.5 < accuracy < 0.98  # hard enough that confidence has something to say
    ece = expected_calibration_error(reliability(confidence, right))
    assert ece is not None and ece < 0.08


# --------------------------------------------------------------------------- the CLI


def test_corrections_list_says_when_the_last_refit_was_not_taken(
    pack: Pack, capsys: pytest.CaptureFixture[str]
) -> None:
    from modes_tui.cli import main
    from modes_tui.core.paths import app_dirs
    from modes_tui.store.corrections import CorrectionStore

    source = CorrectionStore.for_pack(app_dirs().data, pack.name)
    classifier = classifier_for(pack, source)
    route(pack, classifier, "python function with a bug")
    for text in ("python function bug", "a python test with a bug", "the function test fails"):
        source.add(Correction(text, "shell", routed_mode="code"))
        source.add(Correction(f"{text} in my code", "shell", routed_mode="code"))
    route(pack, classifier, "python function with a bug")
    assert classifier.last_refit is not None and not classifier.last_refit.taken
    assert main(["corrections", "list", "--pack", pack.name]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert re.match(r"last refit not taken: in-scope \d\.\d\d -> \d\.\d\d", last), last


def test_the_evidence_survives_the_log_and_bad_records_are_dropped() -> None:
    evidence = Evidence("correction", "clean the build folder", "shell", 0.97, "correction of x")
    decision = Decision("shell", 0.9, "like your correction", {"shell": 0.9}, evidence)
    assert Decision.from_dict(decision.to_dict()) == Decision(
        "shell", 0.9, "like your correction", {"shell": 0.9}, evidence
    )
    assert "evidence" not in Decision("shell", 0.9).to_dict()
    assert Evidence.from_dict({"kind": "rumour", "text": "x"}) is None
    assert evidence.describe() == "like your correction 'clean the build folder' -> shell"
    long = Evidence("example", "word " * 40, "code", 0.5)
    assert long.describe().endswith("…'") and len(long.describe()) < 90

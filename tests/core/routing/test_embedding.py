"""The embedding backend with a deterministic fake encoder: scoring, cache, loading."""

from __future__ import annotations

import asyncio
import math
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from modes_tui.core.history.conversation import Message
from modes_tui.core.packs.profiles import Pack, load_pack
from modes_tui.core.routing.classifiers.embedding import EmbeddingCache, EmbeddingClassifier
from modes_tui.core.routing.classifiers.mode_index import DEFAULT_FLOOR, ModeIndex, ScoringParams
from modes_tui.core.routing.router import Router
from modes_tui.core.values.entry import HistoryEntry
from tests.conftest import PackWriter
from tests.support.fake_encoder import HashingEncoder

MODES: dict[str, dict[str, Any]] = {
    "chat": {
        "description": "Small talk and quick questions about films, food and travel.",
        "examples": [
            "recommend a film for tonight",
            "what should I cook for dinner",
            "best beaches to visit in spring",
        ],
    },
    "code": {
        "description": "Programs, bugs, stack traces and failing tests.",
        "examples": [
            "my python function raises a keyerror",
            "why does this loop never end",
            "the unit test fails with an assertion error",
        ],
    },
    "shell": {
        "description": "Terminal commands, git and docker.",
        "examples": [
            "undo my last git commit",
            "list running docker containers",
            "delete a git branch",
        ],
        "available": {"env": "SHELL_MODE_ON"},
    },
}


@pytest.fixture
def pack(write_pack: PackWriter) -> Pack:
    folder = write_pack(router={"classifier": "embedding", "fallback": "chat"}, modes=MODES)
    return load_pack(profiles_dir=folder)


def build(
    pack: Pack, encoder: HashingEncoder, cache: EmbeddingCache | None = None, **kw: Any
) -> EmbeddingClassifier:
    return EmbeddingClassifier(
        lambda: encoder, encoder_name=encoder.name, modes=pack.profiles, cache=cache, **kw
    )


async def route(pack: Pack, classifier: EmbeddingClassifier, text: str, environ: Any = None):
    return await Router(pack, classifier, environ=environ or {}).route([Message("user", text)])


async def test_probabilities_cover_exactly_the_available_modes_and_sum_to_one(pack: Pack) -> None:
    classifier = build(pack, HashingEncoder())
    without_shell = await route(pack, classifier, "why does my python loop never end")
    assert without_shell.decision is not None and without_shell.decision.probabilities
    assert set(without_shell.decision.probabilities) == {"chat", "code"}
    assert math.isclose(sum(without_shell.decision.probabilities.values()), 1.0, abs_tol=1e-6)
    assert without_shell.mode_name == "code"

    with_shell = await route(pack, classifier, "undo the git commit", {"SHELL_MODE_ON": "1"})
    assert with_shell.decision is not None and with_shell.decision.probabilities
    assert set(with_shell.decision.probabilities) == {"chat", "code", "shell"}
    assert math.isclose(sum(with_shell.decision.probabilities.values()), 1.0, abs_tol=1e-6)
    assert with_shell.mode_name == "shell"


async def test_an_unavailable_mode_is_never_chosen(pack: Pack) -> None:
    route_ = await route(pack, build(pack, HashingEncoder()), "delete a git branch")
    assert route_.mode_name != "shell"


async def test_reason_quotes_the_closest_example_and_its_similarity(pack: Pack) -> None:
    route_ = await route(pack, build(pack, HashingEncoder()), "why does this loop never end")
    assert route_.reason is not None
    assert route_.reason.startswith("like the example 'why does this loop never end' (")
    evidence = route_.decision.evidence if route_.decision else None
    assert evidence is not None
    assert (evidence.kind, evidence.text, evidence.mode) == (
        "example",
        "why does this loop never end",
        "code",
    )
    assert route_.reason.endswith("(1.00)")
    assert route_.classifier is not None
    assert route_.classifier.to_dict() == {"with": "embedding", "model": "fake/hashing"}


async def test_confidence_is_a_fraction_and_never_above_the_top_probability(pack: Pack) -> None:
    classifier = build(pack, HashingEncoder())
    for text in ("recommend a film", "python keyerror", "zzz qqq", "the"):
        decision = (await route(pack, classifier, text)).decision
        assert decision is not None and decision.confidence is not None
        assert decision.probabilities is not None
        assert 0.0 <= decision.confidence <= max(decision.probabilities.values()) + 1e-6


async def test_a_clear_message_is_more_confident_than_an_unrelated_one(pack: Pack) -> None:
    classifier = build(pack, HashingEncoder())
    clear = (await route(pack, classifier, "my python function raises a keyerror")).confidence
    unrelated = (await route(pack, classifier, "zebra quantum umbrella")).confidence
    assert clear is not None and unrelated is not None
    assert clear > unrelated


def test_example_vectors_come_from_the_disk_cache_on_the_second_build(
    pack: Pack, tmp_path: Path
) -> None:
    cache = EmbeddingCache(tmp_path / "cache")
    first = HashingEncoder()
    build(pack, first, cache).wait(10)
    texts = {t for mode in pack.profiles for t in [mode.description, *mode.examples]}
    assert set(first.texts) == texts

    second = HashingEncoder()
    classifier = build(pack, second, cache)
    classifier.wait(10)
    assert second.calls == 0  # nothing re-encoded at start
    classifier.classify_now("list the docker containers", [], pack.profiles)
    assert second.texts == ["list the docker containers"]  # only the message


def test_the_cache_is_keyed_by_encoder(pack: Pack, tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "cache")
    build(pack, HashingEncoder("fake/one"), cache).wait(10)
    other = HashingEncoder("fake/two")
    build(pack, other, cache).wait(10)
    assert other.calls == 1 and len(other.texts) == 12
    assert cache.path_for("fake/one") != cache.path_for("fake/two")
    assert len(list((tmp_path / "cache").glob("*.npz"))) == 2


def test_a_new_example_is_the_only_text_encoded_again(
    write_pack: PackWriter, tmp_path: Path
) -> None:
    cache = EmbeddingCache(tmp_path / "cache")
    folder = write_pack(router={"classifier": "embedding", "fallback": "chat"}, modes=MODES)
    build(load_pack(profiles_dir=folder), HashingEncoder(), cache).wait(10)
    changed = {**MODES, "chat": {**MODES["chat"], "examples": ["tell me a joke"]}}
    folder = write_pack(router={"classifier": "embedding", "fallback": "chat"}, modes=changed)
    encoder = HashingEncoder()
    build(load_pack(profiles_dir=folder), encoder, cache).wait(10)
    assert encoder.texts == ["tell me a joke"]


def test_a_damaged_cache_file_is_ignored_and_rewritten(pack: Pack, tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "cache")
    path = cache.path_for("fake/hashing")
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a numpy file")
    encoder = HashingEncoder()
    build(pack, encoder, cache).wait(10)
    assert len(encoder.texts) == 12
    assert len(cache.load("fake/hashing", [pack.profiles[0].description])) == 1


async def test_loading_runs_in_the_background_and_the_first_route_waits_for_it(
    pack: Pack,
) -> None:
    gate = threading.Event()
    classifier = build(pack, HashingEncoder(gate=gate))
    assert not classifier.ready
    task = asyncio.create_task(route(pack, classifier, "why does this loop never end"))
    await asyncio.sleep(0.05)
    assert not task.done()  # waiting for the encoder, without blocking the event loop
    gate.set()
    result = await asyncio.wait_for(task, 10)
    assert result.mode_name == "code" and result.decided_by == "classifier"
    assert classifier.ready


async def test_a_failed_load_falls_back_and_is_retried_on_the_next_route(pack: Pack) -> None:
    attempts: list[int] = []

    def factory() -> HashingEncoder:
        attempts.append(1)
        if len(attempts) == 1:
            raise OSError("model file missing")
        return HashingEncoder()

    classifier = EmbeddingClassifier(factory, encoder_name="fake/hashing", modes=pack.profiles)
    failed = await route(pack, classifier, "why does this loop never end")
    assert failed.decided_by == "fallback"
    assert failed.reason == "Classifier failed: OSError: model file missing"
    recovered = await route(pack, classifier, "why does this loop never end")
    assert recovered.mode_name == "code" and len(attempts) == 2


def test_a_follow_up_leans_on_the_previous_user_message(pack: Pack) -> None:
    classifier = build(pack, HashingEncoder())
    history = [
        HistoryEntry("user", "my python function raises a keyerror"),
        HistoryEntry("assistant", "Check that the key exists first."),
    ]
    # "function" is what ties the two together for the bag-of-words fake encoder.
    alone = classifier.classify_now("what if the function is async?", [], pack.profiles)
    follow = classifier.classify_now("what if the function is async?", history, pack.profiles)
    assert alone.mode_name != "code"
    assert follow.mode_name == "code"
    assert follow.reason is not None
    assert follow.reason.startswith(
        "follows up on the previous message, like the example 'my python function raises a keyerror'"
    )
    off = build(pack, HashingEncoder(), params=ScoringParams(follow_up=False))
    assert off.classify_now("what if the function is async?", history, pack.profiles) == alone


def test_an_unsure_message_on_another_subject_is_not_pulled_into_the_previous_mode(
    pack: Pack,
) -> None:
    classifier = build(pack, HashingEncoder())
    history = [
        HistoryEntry("user", "my python function raises a keyerror"),
        HistoryEntry("assistant", "Check that the key exists first."),
    ]
    # Self-contained (no follow-up cue, issue 21): "and again?" now leans on the previous turn.
    text = "tell me about whales migrating south"
    alone = classifier.classify_now(text, [], pack.profiles)
    assert alone.confidence is not None and alone.confidence < 0.6  # unsure, yet unrelated
    assert classifier.classify_now(text, history, pack.profiles) == alone


def test_an_elliptic_follow_up_leans_on_the_previous_message_whatever_its_words(
    pack: Pack,
) -> None:
    classifier = build(pack, HashingEncoder())
    history = [
        HistoryEntry("user", "my python function raises a keyerror"),
        HistoryEntry("assistant", "Check that the key exists first."),
    ]
    alone = classifier.classify_now("and again?", [], pack.profiles)
    follow = classifier.classify_now("and again?", history, pack.profiles)
    assert alone.mode_name != "code" and follow.mode_name == "code"


def test_a_clear_message_is_not_pulled_back_by_the_previous_one(pack: Pack) -> None:
    classifier = build(pack, HashingEncoder())
    history = [HistoryEntry("user", "my python function raises a keyerror")]
    decision = classifier.classify_now("recommend a film for tonight", history, pack.profiles)
    assert decision.mode_name == "chat"


def test_mode_index_scores_a_mode_without_examples_by_its_description() -> None:
    encoder = HashingEncoder()
    descriptions = encoder.encode(["films and food", "python bugs"])
    index = ModeIndex(
        ["chat", "code"],
        descriptions,
        [np.zeros((0, 64), np.float32), encoder.encode(["python keyerror"])],
        [(), ("python keyerror",)],
    )
    assert index.floor == DEFAULT_FLOOR  # too few examples to measure the pack
    scored = index.score(encoder.encode(["films and food"])[0])
    assert scored.mode == "chat"
    assert scored.nearest == "description of chat"
    assert math.isclose(scored.scores["chat"], 1.0, abs_tol=1e-5)


def test_the_floor_is_measured_on_the_pack_itself() -> None:
    encoder = HashingEncoder()
    groups = {
        "chat": ["recommend a film", "a film for tonight", "cook dinner tonight"],
        "code": ["python keyerror bug", "python loop bug", "failing python test"],
    }
    index = ModeIndex(
        list(groups),
        encoder.encode(["films", "python"]),
        [encoder.encode(texts) for texts in groups.values()],
        [tuple(texts) for texts in groups.values()],
    )
    assert index.floor != DEFAULT_FLOOR
    assert -1.0 <= index.floor <= 1.0


def test_an_unknown_local_encoder_is_refused_when_the_classifier_is_built(
    write_pack: PackWriter,
) -> None:
    from modes_tui.core.errors import DeclarationError
    from modes_tui.core.routing.classifiers import build_classifier
    from modes_tui.runtime import classifier_services

    folder = write_pack(
        router={"classifier": "embedding", "fallback": "chat", "encoder": "local/bge-small"},
        modes=MODES,
    )
    with pytest.raises(DeclarationError, match="unknown local encoder 'local/bge-small'"):
        build_classifier(load_pack(profiles_dir=folder), None, classifier_services())


async def test_a_remote_encoder_goes_through_litellm_embedding(
    pack: Pack, monkeypatch: pytest.MonkeyPatch
) -> None:
    from modes_tui.llm import encoders
    from modes_tui.llm.litellm_import import import_litellm

    litellm = import_litellm(offline=True)
    seen: list[dict[str, Any]] = []
    fake = HashingEncoder()

    def embedding(model: str, input: list[str], **params: Any) -> Any:
        seen.append({"model": model, "input": input})
        vectors = fake.encode(input) * 3.0  # not normalised: the adapter normalises
        return type(
            "R",
            (),
            {"data": [{"index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)]},
        )

    monkeypatch.setattr(litellm, "embedding", embedding)
    encoder = encoders.load_encoder("ollama/nomic-embed-text")
    assert isinstance(encoder, encoders.LiteLLMEncoder)
    classifier = EmbeddingClassifier(
        lambda: encoder, encoder_name=encoder.name, modes=pack.profiles
    )
    result = await route(pack, classifier, "why does this loop never end")
    assert result.mode_name == "code"
    assert result.classifier is not None and result.classifier.model == "ollama/nomic-embed-text"
    assert seen[0]["model"] == "ollama/nomic-embed-text" and seen[-1]["input"] == [
        "why does this loop never end"
    ]
    assert np.allclose(np.linalg.norm(encoder.encode(["x y"]), axis=1), 1.0)


def test_a_remote_encoder_failure_is_a_provider_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from modes_tui.core.errors import ProviderError
    from modes_tui.llm import encoders
    from modes_tui.llm.litellm_import import import_litellm

    litellm = import_litellm(offline=True)

    def embedding(model: str, input: list[str], **params: Any) -> Any:
        raise litellm.APIConnectionError(
            message="connection refused", llm_provider="ollama", model=model
        )

    monkeypatch.setattr(litellm, "embedding", embedding)
    with pytest.raises(ProviderError, match="connection refused"):
        encoders.load_encoder("ollama/nomic-embed-text").encode(["hi"])

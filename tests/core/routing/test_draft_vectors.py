"""A message prepared while it is typed (`Router.prepare`, `TurnEngine.prepare`): the route
after Enter encodes nothing, decides exactly as without it, and typing never pushes a turn's
vector out of the query cache."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from modes_tui.core.history.conversation import Message
from modes_tui.core.packs.profiles import Pack, load_pack
from modes_tui.core.routing.classifiers.embedding_cache import RecentVectors
from modes_tui.core.routing.classifiers.keyword import KeywordClassifier
from modes_tui.core.routing.imperative import request_of
from modes_tui.core.routing.router import Router
from modes_tui.core.values.route import Route
from tests.conftest import PackWriter
from tests.core.engine.test_engine import make_engine
from tests.core.routing.test_conversation_meaning import EMBEDDING_MODES
from tests.support.fake_encoder import HashingEncoder, hashing_backend

QUOTED = "translate into German: 'git push --force-with-lease origin main'"
ANSWER = "Auf Deutsch: 'git push --force-with-lease origin main' bleibt gleich."
DRAFT = "and what does the lease part mean"


@pytest.fixture
def pack(write_pack: PackWriter) -> Pack:
    folder = write_pack(
        router={"classifier": "embedding", "fallback": "chat"}, modes=EMBEDDING_MODES
    )
    return load_pack(profiles_dir=folder)


def transcript(*messages: str) -> list[Message]:
    """The quoted request, its answer, then `messages` from the user."""
    return [
        Message("user", QUOTED),
        Message("assistant", ANSWER, mode="write"),
        *(Message("user", m) for m in messages),
    ]


def test_a_prepared_message_is_routed_without_encoding_and_decides_the_same(pack: Pack) -> None:
    classifier, encoder = hashing_backend(pack)
    router = Router(pack, classifier)
    asyncio.run(router.route(transcript()[:1]))  # the quoted request was sent and routed
    classifier.turn_vectors([ANSWER[:400]])  # its answer, as `Router.answered` encodes it
    # Without the draft step, the route encodes the message itself.
    cold, cold_encoder = hashing_backend(pack)
    cold_router = Router(pack, cold)
    asyncio.run(cold_router.route(transcript()[:1]))
    cold.turn_vectors([ANSWER[:400]])
    before = len(cold_encoder.texts)
    expected = asyncio.run(cold_router.route(transcript(DRAFT)))
    # the classifier reads the request without its opener ("and")
    assert request_of(DRAFT) in cold_encoder.texts[before:]

    router.prepare(transcript()[:2], DRAFT)
    before = len(encoder.texts)
    route = asyncio.run(router.route(transcript(DRAFT)))
    assert encoder.texts[before:] == []
    assert (route.mode_name, route.confidence, route.reason) == (
        expected.mode_name,
        expected.confidence,
        expected.reason,
    )


def test_a_draft_that_quotes_material_has_its_request_encoded_too(pack: Pack) -> None:
    classifier, encoder = hashing_backend(pack)
    router = Router(pack, classifier)
    draft = "proofread this: 'pip instal requests --upgrade'"
    router.prepare([], draft)
    before = len(encoder.texts)
    route = asyncio.run(router.route([Message("user", draft)]))
    assert route.framing is not None and route.framing.routed_on == "request"
    assert encoder.texts[before:] == []


def test_a_draft_that_asks_for_something_made_has_its_head_encoded_too(pack: Pack) -> None:
    classifier, encoder = hashing_backend(pack)
    router = Router(pack, classifier)
    draft = "write a go function that estimates pi by throwing random darts"
    router.prepare([], draft)
    assert "write a go function" in encoder.texts
    before = len(encoder.texts)
    asyncio.run(router.route([Message("user", draft)]))
    assert encoder.texts[before:] == []


def test_a_draft_edited_after_its_pause_is_encoded_by_the_route(pack: Pack) -> None:
    classifier, encoder = hashing_backend(pack)
    router = Router(pack, classifier)
    router.prepare([], "restart the docker contai")  # Enter came before the next pause
    before = len(encoder.texts)
    asyncio.run(router.route([Message("user", "restart the docker container now")]))
    assert encoder.texts[before:] == ["restart the docker container now"]


def test_typing_a_long_message_keeps_the_turns_vectors() -> None:
    recent = RecentVectors(size=3, drafts=2)
    vector = np.ones(4, dtype=np.float32)
    for turn in ("first turn", "second turn", "an answer"):
        recent.put(turn, vector)
    typed = "restart the docker container and show its logs"
    for end in range(1, len(typed) + 1):  # a pause after every character
        recent.put_draft(typed[:end], vector)
    assert all(turn in recent for turn in ("first turn", "second turn", "an answer"))
    assert typed in recent and typed[:-1] in recent and typed[:-2] not in recent
    # The draft that was sent joins the routed messages; the oldest turn makes room.
    assert recent.get(typed) is vector
    assert "first turn" not in recent and typed in recent and "an answer" in recent


def test_a_draft_that_quotes_several_kinds_is_routed_without_encoding(pack: Pack) -> None:
    """Code, a traceback and a command quoted at once: the request, the whole message and
    each kind's reading all fit among the drafts, the message last."""
    classifier, encoder = hashing_backend(pack)
    router = Router(pack, classifier)
    draft = (
        "compare these:\n```\ndef f(x):\n    return x\n```\n"
        'Traceback (most recent call last):\n  File "a.py", line 3, in <module>\n'
        "ValueError: bad\n\n$ git push --force origin main"
    )
    router.prepare([], draft)
    before = len(encoder.texts)
    route = asyncio.run(router.route([Message("user", draft)]))
    assert route.framing is not None and len({q.kind for q in route.framing.quoted}) >= 2
    assert encoder.texts[before:] == []
    # A second draft after that route: the kinds' readings are known, only new text is encoded.
    again = draft.replace("compare these", "explain these")
    before = len(encoder.texts)
    router.prepare([Message("user", draft)], again)
    assert sorted(encoder.texts[before:]) == sorted(
        [again, route.framing.request.replace("compare these", "explain these")]
    )


def test_typing_never_evicts_a_routed_message_and_a_routed_text_is_no_draft() -> None:
    recent = RecentVectors(size=4, drafts=2)
    vector = np.ones(4, dtype=np.float32)
    recent.put_draft("restart nginx", vector)
    recent.put("restart nginx", vector)  # the route read it
    recent.put_draft("restart nginx", vector)  # a late draft of the same text
    recent.put_draft("a", vector)
    recent.put_draft("b", vector)
    recent.put_draft("c", vector)
    assert "restart nginx" in recent  # kept with the routed messages, not pushed out
    assert recent.refresh("b") and recent.refresh("c") and not recent.refresh("a")


def test_a_cascade_prepares_the_whole_message_only(pack: Pack) -> None:
    """A cascade classifies the whole message (it reads its framing itself): no request and
    no kind texts are encoded for it."""
    from modes_tui.core.routing.classifiers.cascade import CascadeClassifier

    classifier, encoder = hashing_backend(pack)
    router = Router(pack, CascadeClassifier(classifier, KeywordClassifier(), 0.5))
    draft = "proofread this: 'pip instal requests --upgrade'"
    before = len(encoder.texts)
    router.prepare([], draft)
    assert encoder.texts[before:] == [draft]


def test_the_engine_never_raises_from_a_draft(
    pack: Pack, tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = make_engine(pack, tmp_path)

    def broken(conversation: object, draft: str) -> None:
        raise RuntimeError("encoder gone")

    monkeypatch.setattr(engine.router, "prepare", broken)
    with caplog.at_level(logging.WARNING, logger="modes_tui.engine"):
        engine.prepare("restart the docker container")
    assert "the draft was not encoded ahead (RuntimeError: encoder gone)" in caplog.text


class Gated:
    """Holds the encode of `text` until `go` is set (a draft encode still running), then
    encodes it, or fails."""

    def __init__(self, encoder: HashingEncoder, text: str, *, fail: bool) -> None:
        self.encoder, self.text, self.fail = encoder, text, fail
        self.started, self.go = threading.Event(), threading.Event()

    def encode(self, texts: Sequence[str]) -> Any:
        self.started.set()
        assert self.go.wait(10)
        if self.fail:
            raise RuntimeError("the encoder broke")
        return self.encoder.encode(texts)


PASTED = "why does this fail: KeyError: 'user' in app.py line 3"


@pytest.mark.parametrize("fails", [False, True])
def test_a_route_waits_for_the_draft_encode_of_its_text_instead_of_running_a_second(
    pack: Pack, fails: bool
) -> None:
    """A paste is prepared at once and may be sent at once: the route then waits for that
    encode (two beside each other on two cores took 118-164 ms in the app where one takes
    15-50); when the draft's encode fails, the route encodes the text itself."""
    classifier, encoder = hashing_backend(pack)
    gated = Gated(encoder, PASTED, fail=fails)
    failed: list[BaseException] = []

    def draft() -> None:
        try:
            classifier._queries.encode_drafts([PASTED], gated, classifier._lock)
        except RuntimeError as error:
            failed.append(error)

    drafting = threading.Thread(target=draft)
    drafting.start()
    assert gated.started.wait(10)
    before = len(encoder.texts)
    routed: list[Route] = []
    router = Router(pack, classifier)
    routing = threading.Thread(
        target=lambda: routed.append(asyncio.run(router.route([Message("user", PASTED)])))
    )
    routing.start()
    time.sleep(0.2)
    assert routed == [] and PASTED not in encoder.texts[before:]  # waiting, not encoding
    gated.go.set()
    routing.join(10)
    drafting.join(10)
    assert len(routed) == 1 and routed[0].mode_name in pack.names
    assert encoder.texts[before:].count(PASTED) == 1  # by the draft, or by the route after it
    assert len(failed) == (1 if fails else 0)


def test_a_failed_draft_encode_leaves_no_text_claimed(pack: Pack) -> None:
    """The texts after the one that failed were claimed too: a route would wait a second for
    each, and they would never be prepared again."""
    classifier, _ = hashing_backend(pack)

    class Broken:
        def encode(self, texts: Sequence[str]) -> Any:
            raise RuntimeError("the encoder broke")

    queries = classifier._queries
    with pytest.raises(RuntimeError):
        queries.encode_drafts(["request", "message"], Broken(), classifier._lock)
    # neither is left claimed: a route finds nothing to wait for, and a draft may encode both
    assert queries.settled("message", classifier._lock, seconds=60) is None
    assert queries.claim("request") and queries.claim("message")


EXIT_SCRIPT = """
import time
from modes_tui.core.routing.continuity import warm_answer

class SlowEncoder:
    def turn_vectors(self, texts):
        time.sleep(0.5)  # an encode on a loaded machine
        print("encoded", texts[0], flush=True)
        return [], 0.1

warm_answer(SlowEncoder(), "the last answer")
"""


def test_a_session_that_ends_right_after_its_last_answer_waits_for_its_encoding() -> None:
    """A piped session exits as soon as its last answer is printed, while the answer is still
    being encoded ahead in a daemon thread; inside the encoder's native code at exit, that
    thread aborted the process ("terminate called without an active exception", -6) on a
    loaded CI machine. The exit now waits for it (up to `continuity.EXIT_WAIT`)."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", EXIT_SCRIPT],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parents[3],
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "encoded the last answer"

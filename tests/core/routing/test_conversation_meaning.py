"""Follow-ups by meaning (issue 31 item 5): the conversation step compares the message with
the user's recent turns in the current mode, so an elliptic follow-up with no cue word stays,
a self-contained request moves, and the route's reason names the similarity."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

import pytest

from modes_tui.core.history.conversation import Message
from modes_tui.core.packs.profiles import Pack, load_pack
from modes_tui.core.routing.classifiers.cascade import CascadeClassifier
from modes_tui.core.routing.classifiers.keyword import KeywordClassifier
from modes_tui.core.routing.continuity import (
    ANSWER_CHARS,
    Continuity,
    latest_answer,
    recent_turns,
    vector_source,
)
from modes_tui.core.routing.router import REASON_BELOW, Router
from modes_tui.core.values.route import Decision
from tests.conftest import PackWriter
from tests.core.routing.test_router import Scripted
from tests.support.fake_encoder import HashingEncoder, hashing_backend

MODES = {
    "chat": {"description": "Everyday chat."},
    "code": {"description": "Code questions."},
    "shell": {"description": "Terminal commands."},
    "write": {"description": "Prose to write."},
}

EXITED = "why did my docker container exit with code 137"
# No cue word, no request of its own, a finite verb: its shape says nothing of a follow-up.
OOM = "docker container exit 137 was OOMKilled"
# Its own words lean to code, unsurely.
UNSURE_CODE = Decision(
    "code", 0.62, "closest: 'read this error'", {"code": 0.64, "shell": 0.33, "chat": 0.03}
)


class Vectored(Scripted):
    """A scripted decision, with the turns' vectors from the hashing encoder, as the
    embedding backend gives them from its query cache; can fail or be not ready yet."""

    def __init__(
        self,
        answer: object,
        *,
        fail: Exception | None = None,
        ready: bool = True,
        short: bool = False,
        unrelated: float = 0.1,
    ):
        super().__init__(answer)
        self.encoder = HashingEncoder()
        self.fail = fail
        self.ready = ready
        self.short = short
        self.unrelated = unrelated
        self.asked: list[list[str]] = []

    def turn_vectors(self, texts: Sequence[str]) -> tuple[list[Any], float] | None:
        self.asked.append(list(texts))
        if self.fail is not None:
            raise self.fail
        if not self.ready:
            return None
        vectors = list(self.encoder.encode(texts))
        return (vectors[:1] if self.short else vectors), self.unrelated


@pytest.fixture
def pack(write_pack: PackWriter) -> Pack:
    folder = write_pack(
        router={"classifier": "keyword", "fallback": "chat", "below_confidence": 0.7},
        modes=MODES,
    )
    return load_pack(profiles_dir=folder)


def after(turns: Sequence[tuple[str, str]], text: str) -> list[Message]:
    """A transcript: each (user message, mode that answered it), then `text`."""
    messages = []
    for said, mode in turns:
        messages += [Message("user", said), Message("assistant", "(answer)", mode=mode)]
    return [*messages, Message("user", text)]


def route_with(pack: Pack, classifier: object, transcript: list[Message]) -> Any:
    return asyncio.run(Router(pack, classifier).route(transcript))  # type: ignore[arg-type]


# ---------------------------------------------------------------------------- stay or move


def test_an_elliptic_follow_up_without_a_cue_word_stays_by_its_meaning(pack: Pack) -> None:
    transcript = after([(EXITED, "shell")], OOM)
    by_shape = route_with(pack, Scripted(UNSURE_CODE), transcript)
    # the shape alone lets it go: code at 0.62, below the threshold, falls back to chat
    assert (by_shape.mode_name, by_shape.decided_by) == ("chat", "fallback")
    route = route_with(pack, Vectored(UNSURE_CODE), transcript)
    assert (route.mode_name, route.decided_by) == ("shell", "classifier"), route.reason
    assert route.confidence is not None and route.confidence >= 0.7  # above the threshold
    assert route.reason == (
        "Follow-up of shell: continues your last turn (similarity 0.54); alone: code 0.62"
    )
    assert route.alone == UNSURE_CODE
    assert route.follow_up is not None and route.follow_up > 0.5


SURE_CODE = Decision("code", 0.97, "closest: 'x'", {"code": 0.98, "shell": 0.01, "chat": 0.01})


def test_a_request_its_own_words_send_surely_elsewhere_moves_however_close(pack: Pack) -> None:
    request = "fix the docker container exit 137 OOMKilled"
    route = route_with(pack, Vectored(SURE_CODE), after([(EXITED, "shell")], request))
    assert (route.mode_name, route.decided_by) == ("code", "classifier")
    assert route.reason is not None and "a new request (similarity" in route.reason
    assert route.alone is None and route.follow_up == 0.0  # it leans on nothing


def test_a_statement_close_to_the_last_turn_stays_however_sure_its_words_are(pack: Pack) -> None:
    """A statement asks nothing of another mode: "docker container exit 137 was OOMKilled"
    after the exit-137 question is its context, whatever mode its words alone read as."""
    route = route_with(pack, Vectored(SURE_CODE), after([(EXITED, "shell")], OOM))
    assert route.mode_name == "shell", route.reason
    assert "continues your last turn (similarity 0.54)" in route.reason
    assert route.alone == SURE_CODE


def test_a_complete_request_moves_though_it_shares_the_last_turns_words(pack: Pack) -> None:
    text = "write a limerick about my cat and my docker container"
    unsure_write = Decision("write", 0.75, "closest: 'y'", {"write": 0.78, "shell": 0.2})
    route = route_with(pack, Vectored(unsure_write), after([(EXITED, "shell")], text))
    assert (route.mode_name, route.decided_by) == ("write", "classifier"), route.reason
    assert route.reason == "closest: 'y'; a new request (similarity 0.32 to your last turn)"


def test_a_follow_up_closest_to_an_older_turn_names_that_turn(pack: Pack) -> None:
    transcript = after([(EXITED, "shell"), ("how do I list the pods", "shell")], OOM)
    route = route_with(pack, Vectored(UNSURE_CODE), transcript)
    assert route.mode_name == "shell"
    assert "continues your turn 2 back (similarity 0.54)" in route.reason


QUESTION = "why does my service keep crashing at night"
"""Shares no word with `REPORT`: only the answer names what the report is about."""
ANSWER = "Check the journal with journalctl and look for oom killer lines"
REPORT = "journalctl shows oom killer lines"


def test_a_report_on_what_the_last_answer_named_stays_by_the_answer(pack: Pack) -> None:
    """ "journalctl shows ..." continues a turn whose question never said journalctl; the
    answer did. The user's question alone lends it nothing; the answer does."""
    transcript = [
        Message("user", QUESTION),
        Message("assistant", ANSWER, mode="shell"),
        Message("user", REPORT),
    ]
    route = route_with(pack, Vectored(UNSURE_CODE), transcript)
    assert (route.mode_name, route.decided_by) == ("shell", "classifier"), route.reason
    assert "continues the last answer (similarity 0." in route.reason
    without = route_with(pack, Vectored(UNSURE_CODE), after([(QUESTION, "shell")], REPORT))
    assert (without.mode_name, without.decided_by) == ("chat", "fallback"), without.reason


def test_the_last_answer_is_compared_only_when_the_current_mode_gave_it() -> None:
    long = "x" * (ANSWER_CHARS + 50)
    shell_turn = [Message("user", QUESTION), Message("assistant", long, mode="shell")]
    assert latest_answer([*shell_turn, Message("user", REPORT)], "shell") == long[:ANSWER_CHARS]
    assert latest_answer([*shell_turn, Message("user", REPORT)], "code") is None
    chat_turn = [Message("user", "hi"), Message("assistant", "hello!", mode="chat")]
    assert latest_answer([*shell_turn, *chat_turn, Message("user", REPORT)], "shell") is None
    assert latest_answer([Message("user", REPORT)], "shell") is None


def test_an_answer_is_encoded_when_its_turn_ends_not_when_the_next_is_routed(
    write_pack: PackWriter,
) -> None:
    folder = write_pack(
        router={"classifier": "embedding", "fallback": "chat"}, modes=EMBEDDING_MODES
    )
    pack = load_pack(profiles_dir=folder)
    classifier, encoder = hashing_backend(pack)
    router = Router(pack, classifier)
    asyncio.run(router.route([Message("user", "restart the docker container")]))
    router.answered(ANSWER)  # the turn ended: its start is encoded in the background
    deadline = time.monotonic() + 10
    while ANSWER not in encoder.texts and time.monotonic() < deadline:
        time.sleep(0.01)
    assert ANSWER in encoder.texts
    before = len(encoder.texts)
    transcript = [
        Message("user", "restart the docker container"),
        Message("assistant", ANSWER, mode="shell"),
        Message("user", REPORT),
    ]
    asyncio.run(router.route(transcript))
    assert encoder.texts[before:] == [REPORT]  # the answer came from the cache


def test_turns_another_mode_answered_are_not_compared(pack: Pack) -> None:
    vectored = Vectored(UNSURE_CODE)
    transcript = after([(EXITED, "shell"), ("what is a monad", "chat")], OOM)
    route = asyncio.run(Router(pack, vectored).route(transcript, current_mode="shell"))
    assert vectored.asked == []  # no turn of shell since the last chat turn
    assert (route.mode_name, route.reason) == ("chat", REASON_BELOW)


def test_a_turn_the_fallback_took_lends_no_closeness(pack: Pack) -> None:
    """A turn no mode was sure of says nothing for any mode: what is below the threshold
    still falls back, however close it is to that turn."""
    vectored = Vectored(UNSURE_CODE)
    transcript = after([(EXITED, "chat")], OOM)
    route = route_with(pack, vectored, transcript)
    assert vectored.asked == []
    assert (route.mode_name, route.decided_by, route.reason) == ("chat", "fallback", REASON_BELOW)


# ---------------------------------------------------------------------------- without vectors


def test_a_backend_without_vectors_reads_the_shape_alone(pack: Pack) -> None:
    assert vector_source(KeywordClassifier()) is None
    route = route_with(pack, Scripted(UNSURE_CODE), after([(EXITED, "shell")], "and in Go?"))
    assert route.mode_name == "shell"
    assert route.reason == (
        "Follow-up of shell (0.90: opens with a continuation, 3 words, no request of its own); "
        "alone: code 0.62"
    )


@pytest.mark.parametrize(
    "vectored",
    [
        Vectored(UNSURE_CODE, fail=RuntimeError("encoder died")),
        Vectored(UNSURE_CODE, ready=False),
        Vectored(UNSURE_CODE, short=True),
        Vectored(UNSURE_CODE, unrelated=float("nan")),
    ],
    ids=["encoder-failed", "encoder-not-ready", "too-few-vectors", "no-unrelated-cosine"],
)
def test_without_vectors_the_route_reads_the_shape_and_does_not_fail(
    pack: Pack, vectored: Vectored, caplog: pytest.LogCaptureFixture
) -> None:
    route = route_with(pack, vectored, after([(EXITED, "shell")], OOM))
    assert vectored.asked == [[OOM, EXITED, "(answer)"]]  # the turn, then the last answer
    assert (route.mode_name, route.decided_by, route.reason) == ("chat", "fallback", REASON_BELOW)
    assert route.error is None and route.alone is None
    broken = vectored.fail is not None or vectored.short or vectored.unrelated != 0.1
    logged = [r.getMessage() for r in caplog.records if r.name == "modes_tui.routing"]
    if broken:
        (line,) = logged
        assert line.startswith("follow-ups: closeness to the recent turns not measured (")
        assert line.endswith("the message's shape decides this turn")
    else:
        assert logged == []  # still loading is no failure


def test_a_cascade_lends_its_first_stages_vectors() -> None:
    vectored = Vectored(UNSURE_CODE)
    assert vector_source(CascadeClassifier(vectored, Scripted(UNSURE_CODE), 0.5)) is vectored


# ---------------------------------------------------------------------------- recent turns


@pytest.mark.parametrize(
    ("transcript", "current", "expected"),
    [
        (after([("a", "shell"), ("b", "shell")], "now"), "shell", ["b", "a"]),
        (after([("a", "shell"), ("b", "code"), ("c", "shell")], "now"), "shell", ["c"]),
        (after([("a", "code")], "now"), "shell", []),
        (after([(t, "shell") for t in "abcde"], "now"), "shell", ["e", "d", "c"]),
        ([Message("user", "now")], "shell", []),
        # content parts, as a chat API sends them; tool results and system lines are no turns
        (
            [
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": [{"type": "text", "text": "a"}]},
                {"role": "assistant", "content": "x", "mode": "shell"},
                {"role": "tool", "content": "ok"},
                {"role": "user", "content": "now"},
            ],
            "shell",
            ["a"],
        ),
        # an eval line: the caller names the previous mode, the answer does not
        (
            [
                {"role": "user", "content": "a"},
                {"role": "assistant", "content": "x"},
                {"role": "user", "content": "now"},
            ],
            "shell",
            ["a"],
        ),
    ],
)
def test_recent_turns_are_the_users_latest_messages_in_the_current_mode(
    transcript: list[Any], current: str, expected: list[str]
) -> None:
    assert recent_turns(transcript, current) == expected


@pytest.mark.parametrize(
    ("similarity", "chance"),
    [(0.05, 0.0), (0.1, 0.0), (0.3, 0.4), (0.5, 0.8), (0.9, 0.8)],
)
def test_closeness_counts_from_the_unrelated_cosine_up_to_its_weight(
    similarity: float, chance: float
) -> None:
    assert Continuity(similarity, 0.1).chance == pytest.approx(chance)


# ---------------------------------------------------------------------------- encoding cost

EMBEDDING_MODES = {
    "chat": {"description": "Everyday chat.", "examples": ["tell me a joke", "how are you"]},
    "shell": {
        "description": "Terminal commands.",
        "examples": ["restart the docker container", "list files in a folder"],
    },
    "write": {"description": "Prose.", "examples": ["write a poem", "draft an email"]},
}


def test_the_history_is_encoded_once_not_on_every_turn(write_pack: PackWriter) -> None:
    folder = write_pack(
        router={"classifier": "embedding", "fallback": "chat"}, modes=EMBEDDING_MODES
    )
    pack = load_pack(profiles_dir=folder)
    classifier, encoder = hashing_backend(pack)  # the pack's own texts are encoded first
    router = Router(pack, classifier)
    # A resumed session: two earlier shell turns the classifier never routed.
    history = [("restart the docker container", "shell"), ("why did it exit with 137", "shell")]
    first = len(encoder.texts)
    asyncio.run(router.route(after(history, "docker logs say OOMKilled")))
    encoded = encoder.texts[first:]
    assert sorted(encoded) == sorted(
        [
            "docker logs say OOMKilled",
            "why did it exit with 137",
            "restart the docker container",
            "(answer)",  # the last answer, compared too
        ]
    )
    # The next turn encodes its own message only: the earlier ones come from the cache.
    history.append(("docker logs say OOMKilled", "shell"))
    second = len(encoder.texts)
    asyncio.run(router.route(after(history, "memory limit of the docker container")))
    assert encoder.texts[second:] == ["memory limit of the docker container"]


# ---------------------------------------------------------------------------- real encoder


def _default_router() -> Router:
    from modes_tui.runtime import RunOptions, Runtime
    from modes_tui.store.settings import Settings

    default = load_pack("default")
    runtime = Runtime.load(RunOptions(classifier="embedding"), settings=Settings(), pack=default)
    return Router(default, runtime.classifier())


LOGS = "how do I follow the logs of a kubernetes pod?"


@pytest.mark.local
def test_a_fragment_after_a_logs_question_stays_in_shell_with_the_real_encoder() -> None:
    route = asyncio.run(
        _default_router().route(after([(LOGS, "shell")], "only the errors from the last hour"))
    )
    assert (route.mode_name, route.decided_by) == ("shell", "classifier"), route.reason
    assert route.reason.startswith("Follow-up of shell: continues your last turn (similarity 0.")
    assert "; shape 0.45: no request of its own; " in route.reason


@pytest.mark.local
def test_a_new_request_after_a_logs_question_moves_with_the_real_encoder() -> None:
    route = asyncio.run(
        _default_router().route(after([(LOGS, "shell")], "write a limerick about my cat"))
    )
    assert (route.mode_name, route.decided_by) == ("write", "classifier"), route.reason
    assert "; a new request (similarity 0." in route.reason
    # closest to the placeholder answer "(answer)" rather than to the question: said so
    assert route.reason.endswith(" to the last answer)")


@pytest.mark.local
def test_a_proof_after_a_quoted_git_command_does_not_lean_on_it_with_the_real_encoder() -> None:
    """Seen in the app: "show that …" read as "show that again", so the proof leaned on the
    previous message, read whole as a git command, and went to shell at 0.94."""
    turn = "translate this into German: 'git push --force-with-lease origin main'"
    route = asyncio.run(
        _default_router().route(
            after([(turn, "write")], "show that the sum of the angles in a triangle is 180 degrees")
        )
    )
    assert "follows up on the previous message" not in route.reason
    assert not (route.mode_name == "shell" and route.decided_by == "classifier"), route.reason


@pytest.mark.local
@pytest.mark.parametrize(
    ("turn", "mode", "message", "expected"),
    [
        # held-out lines (imperative_heldout_e, related_heldout): the request is sure of its
        # mode alone, and the last turn's topic (a tree of commits, a mortgage) pulled it
        # below the threshold
        (
            "how do i undo git add for one file?",
            "shell",
            "implement binary search tree deletion",
            "code",
        ),
        (
            "help me choose between a 30-year and a 15-year mortgage",
            "reason",
            "write a polite email asking my bank about refinancing options",
            "write",
        ),
    ],
)
def test_a_whole_request_sure_of_its_mode_is_not_pulled_back_by_a_related_turn(
    turn: str, mode: str, message: str, expected: str
) -> None:
    route = asyncio.run(_default_router().route(after([(turn, mode)], message)))
    assert (route.mode_name, route.decided_by) == (expected, "classifier"), route.reason


@pytest.mark.local
@pytest.mark.xfail(
    strict=True,
    reason="known miss (issue 31 item 5): the statement reads alone as code 0.75 and MiniLM puts "
    "it at only 0.18 from the restart question (the pack's unrelated cosine is 0.10), too far "
    "for closeness to outweigh; strict, so a fix shows up here",
)
def test_a_statement_about_the_same_container_stays_in_shell_with_the_real_encoder() -> None:
    turn = "how do I see why my docker container keeps restarting?"
    route = asyncio.run(
        _default_router().route(
            after([(turn, "shell")], "the events mention a failed liveness probe")
        )
    )
    assert route.mode_name == "shell", route.reason


@pytest.mark.local
def test_the_held_out_conversation_file_meets_its_floor(capsys: pytest.CaptureFixture[str]) -> None:
    """Written before the step was tuned, never tuned on (bench/evals/conversation_heldout.jsonl)."""
    import json
    from pathlib import Path

    from modes_tui.cli import main

    eval_file = Path(__file__).resolve().parents[3] / "bench/evals/conversation_heldout.jsonl"
    assert main(["eval", str(eval_file), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["cases"] >= 40
    assert report["conversation"]["follow_up_accuracy"] >= 0.9, report["confusion"]
    assert report["conversation"]["switch_accuracy"] >= 0.9, report["confusion"]


@pytest.mark.local
@pytest.mark.parametrize(
    ("turn", "mode", "message", "expected"),
    [
        # new problems that read like a report on the last answer (a review's finding)
        ("translate 'good morning' into French", "write", "my code returns None", "code"),
        ("how do I list hidden files with ls?", "shell", "the weather was lovely today", "chat"),
    ],
)
def test_a_new_problem_after_an_unrelated_turn_moves_with_the_real_encoder(
    turn: str, mode: str, message: str, expected: str
) -> None:
    route = asyncio.run(_default_router().route(after([(turn, mode)], message)))
    assert route.mode_name == expected, route.reason

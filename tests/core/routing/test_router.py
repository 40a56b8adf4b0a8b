"""The router's behaviour: the outcome table, history, truncation, force, stickiness."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from modes_tui.core.errors import ContractError, RoutingDecisionError, UnknownMode
from modes_tui.core.history.conversation import Message
from modes_tui.core.model.wire import ToolCall
from modes_tui.core.packs.profiles import Pack, Profile, load_pack
from modes_tui.core.routing.input import cut_middle, cut_tail, split_transcript
from modes_tui.core.routing.router import Router
from modes_tui.core.values.entry import HistoryEntry
from modes_tui.core.values.route import ClassifierInfo, Decision, Route
from tests.conftest import PackWriter


class Scripted:
    """A classifier that answers what it is told, or raises it, and records its inputs."""

    def __init__(self, answer: object) -> None:
        self.answer = answer
        self.seen: dict[str, Any] = {}

    def classify(
        self,
        message: str,
        history: Sequence[HistoryEntry],
        modes: Sequence[Profile],
        instructions: str,
        inputs: Mapping[str, Any],
    ) -> Any:
        self.seen = {"message": message, "history": list(history), "modes": [m.name for m in modes]}
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer

    def trace(self) -> ClassifierInfo:
        return ClassifierInfo("scripted", "fake-1")


class AsyncScripted(Scripted):
    async def classify(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        await asyncio.sleep(0)
        return super().classify(*args, **kwargs)


THREE_MODES = {
    "chat": {"description": "Everyday chat."},
    "code": {"description": "Code questions."},
    "vip": {"description": "Only for VIPs.", "available": {"env": "VIP_ON"}},
}


@pytest.fixture
def pack(write_pack: PackWriter) -> Pack:
    folder = write_pack(
        router={"classifier": "keyword", "fallback": "chat", "below_confidence": 0.5},
        modes=THREE_MODES,
    )
    return load_pack(profiles_dir=folder)


def route(pack: Pack, answer: object, text: str = "hello", **kwargs: Any) -> Route:
    router = Router(pack, Scripted(answer), **kwargs)
    return asyncio.run(router.route([Message("user", text)]))


OUTCOMES = [
    # (decision or exception, mode, decided_by, reason)
    (Decision("code", 0.9, "looks like code"), "code", "classifier", "looks like code"),
    (
        RuntimeError("provider said no\nsecond line"),
        "chat",
        "fallback",
        "Classifier failed: RuntimeError: provider said no",
    ),
    (
        "not a decision",
        "chat",
        "fallback",
        "Classifier failed: ContractError: classifier returned str, expected a Decision",
    ),
    (
        Decision("code", 1.5),
        "chat",
        "fallback",
        "Classifier failed: ContractError: Decision.confidence must be from 0 to 1, got 1.5",
    ),
    (
        Decision("code", 0.9, probabilities={"code": "high"}),
        "chat",
        "fallback",  # type: ignore[dict-item]
        "Classifier failed: ContractError: Decision.probabilities must map mode names to numbers",
    ),
    (Decision(None, None, "nothing fits"), "chat", "fallback", "No mode chosen"),
    (Decision("billing", 0.9), "chat", "fallback", "Unknown mode billing"),
    (Decision("vip", 0.9), "chat", "fallback", "Unknown mode vip"),  # unavailable
    (Decision("code", None), "chat", "fallback", "Confidence not scored"),
    (Decision("code", 0.49), "chat", "fallback", "Below confidence threshold"),
    (Decision("code", 0.5, None), "code", "classifier", None),
]


@pytest.mark.parametrize(("answer", "mode", "decided_by", "reason"), OUTCOMES)
def test_outcome_table(
    pack: Pack, answer: object, mode: str, decided_by: str, reason: str | None
) -> None:
    result = route(pack, answer)
    assert (result.mode_name, result.decided_by, result.reason) == (mode, decided_by, reason)
    assert result.classifier == ClassifierInfo("scripted", "fake-1")
    assert result.duration_ms is not None and result.duration_ms >= 0


def test_async_classifiers_are_awaited(pack: Pack) -> None:
    router = Router(pack, AsyncScripted(Decision("code", 0.8, "async")))
    result = asyncio.run(router.route([Message("user", "hi")]))
    assert (result.mode_name, result.reason) == ("code", "async")


def test_failed_classifier_keeps_the_exception_and_its_raw_output(pack: Pack) -> None:
    error = RoutingDecisionError("not JSON", stage="json-parse", raw_output="sure! code")
    result = route(pack, error)
    assert result.error is error
    assert result.to_dict()["error"] == {
        "type": "RoutingDecisionError",
        "message": "not JSON",
        "stage": "json-parse",
        "raw_output": "sure! code",
    }


def test_failure_reason_is_cut_at_200_characters(pack: Pack) -> None:
    result = route(pack, ValueError("x" * 500))
    assert result.reason is not None
    assert len(result.reason.removeprefix("Classifier failed: ValueError: ")) == 200


def test_threshold_off_accepts_any_confidence(write_pack: PackWriter) -> None:
    pack = load_pack(profiles_dir=write_pack(router={"classifier": "keyword", "fallback": "chat"}))
    assert route(pack, Decision("code", None)).mode_name == "code"
    assert route(pack, Decision("code", 0.01)).mode_name == "code"


def test_only_the_fallback_available_skips_the_classifier(write_pack: PackWriter) -> None:
    folder = write_pack(
        modes={
            "chat": {"description": "Everyday chat."},
            "vip": {"description": "VIPs.", "available": {"env": "VIP_ON"}},
        }
    )
    pack = load_pack(profiles_dir=folder)
    classifier = Scripted(Decision("vip", 1.0))
    result = asyncio.run(Router(pack, classifier, environ={}).route([Message("user", "hi")]))
    assert (result.mode_name, result.decided_by, result.reason) == (
        "chat",
        "fallback",
        "No other mode available",
    )
    assert classifier.seen == {} and result.classifier is None


def test_availability_follows_the_environment(pack: Pack) -> None:
    router = Router(pack, Scripted(Decision("vip", 0.9)), environ={"VIP_ON": "1"})
    assert asyncio.run(router.route([Message("user", "hi")])).mode_name == "vip"


def test_on_error_sees_the_failure_and_can_escalate(pack: Pack) -> None:
    seen: list[BaseException] = []
    result = route(pack, KeyError("boom"), on_error=seen.append)
    assert result.decided_by == "fallback" and isinstance(seen[0], KeyError)

    def escalate(error: BaseException) -> None:
        raise RuntimeError("stop the turn") from error

    with pytest.raises(RuntimeError, match="stop the turn"):
        route(pack, KeyError("boom"), on_error=escalate)


def test_per_call_classifier_override(pack: Pack) -> None:
    router = Router(pack, Scripted(Decision("chat", 1.0)))
    other = Scripted(Decision("code", 1.0, "override"))
    result = asyncio.run(router.route([Message("user", "hi")], classifier=other))
    assert (result.mode_name, result.reason) == ("code", "override")


# --------------------------------------------------------------------------- force


def test_force_is_decided_by_the_caller(pack: Pack) -> None:
    result = Router(pack, Scripted(RuntimeError())).force("code")
    assert (result.mode_name, result.decided_by, result.reason) == (
        "code",
        "caller",
        "Mode requested by caller",
    )
    assert result.decision is None and result.duration_ms is None and result.classifier is None


@pytest.mark.parametrize("name", ["billing", "vip"])
def test_force_of_an_unknown_or_unavailable_mode_names_the_choices(pack: Pack, name: str) -> None:
    with pytest.raises(UnknownMode) as caught:
        Router(pack, Scripted(None), environ={}).force(name)
    assert str(caught.value) == f"unknown mode {name!r}; available modes: chat, code"
    assert isinstance(caught.value, KeyError)


# --------------------------------------------------------------------------- transcript


def test_history_keeps_text_and_drops_tool_results_and_metadata() -> None:
    entries: list[Any] = [
        Message("system", "be nice"),
        "plain context string",
        Message("user", "read config.py"),
        Message(
            "assistant",
            "Let me look.",
            tool_calls=(ToolCall("1", "read_file", {"path": "config.py"}),),
        ),
        Message("tool", '{"content": "SECRET=1"}', tool_call_id="1", name="read_file"),
        Message("assistant", "", tool_calls=(ToolCall("2", "list_files", {}),)),
        {"role": "assistant", "content": "   "},
        {"role": "metadata", "content": "trace id 42"},
        {"role": "assistant", "content": [{"type": "text", "text": "It sets SECRET."}]},
        Message("user", "and what else?"),
    ]
    message, history = split_transcript(entries)
    assert message == "and what else?"
    assert history == [
        HistoryEntry(None, "plain context string"),
        HistoryEntry("user", "read config.py"),
        HistoryEntry("assistant", "Let me look."),
        HistoryEntry("assistant", "It sets SECRET."),
    ]


@pytest.mark.parametrize(
    ("entries", "problem"),
    [
        ([], "no user message"),
        ([Message("system", "x")], "no user message"),
        ([Message("user", "q"), Message("assistant", "a")], "not assistant"),
        (["just a string"], "not a plain string"),
    ],
)
def test_the_routed_message_must_be_a_user_message(entries: list[Any], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        split_transcript(entries)


def test_history_window_and_truncation_reach_the_classifier(write_pack: PackWriter) -> None:
    folder = write_pack(
        router={
            "classifier": "keyword",
            "fallback": "chat",
            "history": {"last": 2},
            "truncate": {"message": 40, "history_entry": 20},
        }
    )
    pack = load_pack(profiles_dir=folder)
    classifier = Scripted(Decision("chat", 1.0))
    conversation = [Message("user", f"old {i} " + "y" * 50) for i in range(4)] + [
        Message("user", "H" * 30 + "M" * 40 + "T" * 30)
    ]
    asyncio.run(Router(pack, classifier).route(conversation))
    assert [h.content.split("\n")[0] for h in classifier.seen["history"]] == [
        ("old 2 " + "y" * 50)[:20],
        ("old 3 " + "y" * 50)[:20],
    ]
    assert classifier.seen["history"][0].content.endswith("[… 36 characters cut …]")
    assert classifier.seen["message"] == "H" * 20 + "\n[… 60 characters cut …]\n" + "T" * 20


def test_custom_transcript_replaces_what_the_classifier_reads(pack: Pack) -> None:
    classifier = Scripted(Decision("chat", 1.0))
    router = Router(pack, classifier)
    asyncio.run(
        router.route(
            [Message("user", "real")],
            messages=["card: order 7", {"role": "user", "content": "custom"}],
        )
    )
    assert classifier.seen["message"] == "custom"
    assert classifier.seen["history"] == [HistoryEntry(None, "card: order 7")]


@pytest.mark.parametrize(
    ("text", "cap", "expected"),
    [
        ("short", 10, "short"),
        ("abcdefghij", None, "abcdefghij"),
        ("abcdefghijKLMNOPQRST", 10, "abcde\n[… 10 characters cut …]\nPQRST"),
    ],
)
def test_cut_middle_keeps_head_and_tail(text: str, cap: int | None, expected: str) -> None:
    assert cut_middle(text, cap) == expected


def test_cut_tail_keeps_the_head() -> None:
    assert cut_tail("abcdefghij", 4) == "abcd\n[… 6 characters cut …]"
    assert cut_tail("abc", None) == "abc"


# --------------------------------------------------------------------------- stickiness


@pytest.fixture
def sticky_pack(write_pack: PackWriter) -> Pack:
    folder = write_pack(
        router={"classifier": "keyword", "fallback": "chat", "sticky": 0.1}, modes=THREE_MODES
    )
    return load_pack(profiles_dir=folder)


def history_in(mode: str) -> list[Message]:
    return [
        Message("user", "q"),
        Message("assistant", "a", mode=mode),
        Message("user", "tell me about the history of the Roman aqueducts in some detail"),
    ]


def test_sticky_keeps_the_current_mode_against_a_narrow_winner(sticky_pack: Pack) -> None:
    decision = Decision("chat", 0.52, "chatty", {"chat": 0.52, "code": 0.48})
    result = asyncio.run(Router(sticky_pack, Scripted(decision)).route(history_in("code")))
    assert (result.mode_name, result.sticky, result.runner_up) == ("code", True, "chat")
    assert result.reason == "Sticky: kept code; chat led by only 0.04"


def test_sticky_lets_a_clear_winner_switch(sticky_pack: Pack) -> None:
    decision = Decision("chat", 0.8, "chatty", {"chat": 0.8, "code": 0.2})
    result = asyncio.run(Router(sticky_pack, Scripted(decision)).route(history_in("code")))
    assert (result.mode_name, result.sticky, result.runner_up) == ("chat", False, "code")


def test_sticky_needs_probabilities_and_a_current_mode(sticky_pack: Pack) -> None:
    no_probabilities = Decision("chat", 0.51)
    assert (
        asyncio.run(
            Router(sticky_pack, Scripted(no_probabilities)).route(history_in("code"))
        ).mode_name
        == "chat"
    )
    narrow = Decision("chat", 0.52, None, {"chat": 0.52, "code": 0.48})
    assert (
        asyncio.run(Router(sticky_pack, Scripted(narrow)).route([Message("user", "hi")])).sticky
        is False
    )


# --------------------------------------------------------------------------- values


def test_route_to_dict_has_string_keys_and_round_trips(pack: Pack) -> None:
    result = route(pack, Decision("code", 0.75, "why", {"code": 0.75, "chat": 0.25}))
    data = result.to_dict()
    assert data["decision"] == {
        "mode_name": "code",
        "confidence": 0.75,
        "reason": "why",
        "probabilities": {"code": 0.75, "chat": 0.25},
    }
    assert data["classifier"] == {"with": "scripted", "model": "fake-1"}
    assert data["runner_up"] == "chat"
    assert Route.from_dict(data).to_dict() == data


def test_decision_to_dict_omits_missing_probabilities() -> None:
    assert Decision("a", None).to_dict() == {"mode_name": "a", "confidence": None, "reason": None}


def test_values_are_frozen() -> None:
    decision = Decision("a", 0.5)
    with pytest.raises(AttributeError):
        decision.mode_name = "b"  # type: ignore[misc]


def test_contract_error_is_raised_by_validation() -> None:
    from modes_tui.core.routing.router import validate_decision

    with pytest.raises(ContractError):
        validate_decision(Decision("a", float("nan")))


def test_shipped_default_pack_routes_a_segfault_to_code_by_keyword() -> None:
    from modes_tui.core.routing.classifiers import build_classifier

    pack = load_pack("default")
    router = Router(pack, build_classifier(pack, "keyword"))
    result = asyncio.run(router.route([Message("user", "my build fails with a segfault")]))
    assert (result.mode_name, result.decided_by) == ("code", "classifier")
    assert Path(pack.path).name == "default"

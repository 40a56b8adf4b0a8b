"""The cascade backend: the second stage runs only when the first is unsure."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from modes_tui.core.errors import DeclarationError
from modes_tui.core.history.conversation import Message
from modes_tui.core.packs.profiles import Pack, Profile, load_pack
from modes_tui.core.routing.classifiers import build_classifier
from modes_tui.core.routing.classifiers.cascade import CascadeClassifier
from modes_tui.core.routing.router import Router
from modes_tui.core.values.entry import HistoryEntry
from modes_tui.core.values.route import ClassifierInfo, Decision, Route
from modes_tui.runtime import classifier_services
from tests.conftest import PackWriter
from tests.support.fake_provider import FakeProvider, Reply


class Fixed:
    """A classifier that always answers the same decision (or raises)."""

    def __init__(self, name: str, decision: Decision | Exception) -> None:
        self.name = name
        self.decision = decision
        self.calls = 0

    def classify(
        self,
        message: str,
        history: Sequence[HistoryEntry],
        modes: Sequence[Profile],
        instructions: str,
        inputs: Mapping[str, Any],
    ) -> Decision:
        self.calls += 1
        if isinstance(self.decision, Exception):
            raise self.decision
        return self.decision

    def trace(self) -> ClassifierInfo:
        return ClassifierInfo(self.name, f"{self.name}-model")


@pytest.fixture
def pack(write_pack: PackWriter) -> Pack:
    folder = write_pack(
        router={
            "classifier": "cascade",
            "fallback": "chat",
            "below_confidence": 0.3,
            "model": "fake/plain",
            "cascade": {"first": "keyword", "then": "chat", "below": 0.7},
        }
    )
    return load_pack(profiles_dir=folder)


async def run(pack: Pack, classifier: Any) -> Route:
    return await Router(pack, classifier).route([Message("user", "hello there")])


async def test_a_sure_first_stage_decides_alone(pack: Pack) -> None:
    first = Fixed("embedding", Decision("code", 0.9, "close to code"))
    then = Fixed("chat", Decision("chat", 0.99, "never asked"))
    route = await run(pack, CascadeClassifier(first, then, 0.7))
    assert (route.mode_name, route.reason) == ("code", "close to code")
    assert then.calls == 0
    assert [s.mode_name for s in route.stages] == ["code"]
    assert route.classifier == ClassifierInfo("cascade", "embedding embedding-model")


@pytest.mark.parametrize(
    "first_decision",
    [
        Decision("code", 0.5, "unsure"),
        Decision("code", None, "unscored"),
        Decision(None, None, "no idea"),
        Decision("shell", 0.99, "a mode this pack lacks"),
    ],
)
async def test_an_unsure_first_stage_hands_over_and_both_decisions_are_kept(
    pack: Pack, first_decision: Decision
) -> None:
    first = Fixed("embedding", first_decision)
    then = Fixed("chat", Decision("chat", 0.8, "small talk"))
    route = await run(pack, CascadeClassifier(first, then, 0.7))
    assert (route.mode_name, route.decided_by, route.reason) == ("chat", "classifier", "small talk")
    assert route.stages == (first_decision, Decision("chat", 0.8, "small talk"))
    assert route.classifier == ClassifierInfo(
        "cascade", "embedding embedding-model -> chat chat-model"
    )
    assert [stage["mode_name"] for stage in route.to_dict()["stages"]] == [
        first_decision.mode_name,
        "chat",
    ]


async def test_a_failed_first_stage_hands_over(pack: Pack) -> None:
    first = Fixed("embedding", OSError("encoder missing"))
    then = Fixed("chat", Decision("code", 0.8, "a bug"))
    route = await run(pack, CascadeClassifier(first, then, 0.7))
    assert route.mode_name == "code"
    assert route.classifier is not None
    assert route.classifier.model == "embedding embedding-model (failed) -> chat chat-model"


async def test_a_failed_second_stage_falls_back(pack: Pack) -> None:
    first = Fixed("embedding", Decision("code", 0.1, "unsure"))
    then = Fixed("chat", RuntimeError("provider down"))
    route = await run(pack, CascadeClassifier(first, then, 0.7))
    assert (route.decided_by, route.reason) == (
        "fallback",
        "Classifier failed: RuntimeError: provider down",
    )


async def test_the_cascade_from_router_yaml_runs_keyword_then_chat(
    pack: Pack, fake_llm: FakeProvider
) -> None:
    fake_llm.script(Reply(text=json.dumps({"mode": "code", "confidence": 0.8, "reason": "r"})))
    classifier = build_classifier(pack, None, classifier_services())
    route = await Router(pack, classifier).route([Message("user", "is python slow?")])
    # keyword: "python" is a code keyword, but one hit of one mode is confidence 1.0
    assert route.classifier is not None and route.classifier.with_ == "cascade"
    assert route.mode_name == "code" and len(fake_llm.seen) == 0
    route = await Router(pack, classifier).route([Message("user", "what is up")])
    assert route.mode_name == "code" and len(fake_llm.seen) == 1
    assert route.stages[0].mode_name is None and route.stages[1].mode_name == "code"


def test_cascade_without_its_settings_is_a_declaration_error(write_pack: PackWriter) -> None:
    folder = write_pack(router={"classifier": "keyword", "fallback": "chat"})
    pack = load_pack(profiles_dir=folder)
    with pytest.raises(DeclarationError, match=r"cascade: missing"):
        build_classifier(pack, "cascade", classifier_services())

"""First messages that point at nothing ("fix it") or name no object ("shorter") go to the
fallback, whatever the classifier says; the same words mid-conversation, a verb of one
mode's own ("translate"), or something quoted, do not."""

from __future__ import annotations

import asyncio

import pytest

from modes_tui.core.history.conversation import Message
from modes_tui.core.packs.profiles import Pack, load_pack
from modes_tui.core.routing.router import Router
from modes_tui.core.routing.vague import names_no_object, points_at_nothing
from modes_tui.core.values.route import ClassifierInfo, Decision
from tests.conftest import PackWriter
from tests.core.routing.test_router import Scripted


@pytest.fixture
def pack(write_pack: PackWriter) -> Pack:
    modes = {"chat": {"description": "Everyday chat."}, "code": {"description": "Code."}}
    router = {"classifier": "keyword", "fallback": "chat", "below_confidence": 0.5}
    return load_pack(profiles_dir=write_pack(router=router, modes=modes))


class Head(Scripted):
    """Answers as told, traced as the embedding head (the rule applies to it alone)."""

    def trace(self) -> ClassifierInfo:
        return ClassifierInfo("embedding", "fake-head")


SURE_WRITE = Decision("code", 0.98, "like 'tighten this up'", {"code": 0.98, "chat": 0.02})


@pytest.mark.parametrize(
    ("text", "pointer"),
    [
        ("fix it", "it"),
        ("make it shorter", "it"),
        ("Can you improve this?", "this"),
        ("what's wrong with this?", "this"),
        ("compare them", "them"),
        ("redo the last one", "last"),
        ("Is that right?", "that"),
    ],
)
def test_a_message_of_pointers_common_verbs_and_fillers_points_at_nothing(
    text: str, pointer: str
) -> None:
    assert points_at_nothing(text) == pointer


@pytest.mark.parametrize(
    "text",
    [
        "debug this",  # a verb of one mode's own
        "translate it into German",
        "git status",  # no pointer
        "poem about rain",
        "fix this: x = 1",  # something to work on is there
        "why does `ls` fail here",
        "make this email more polite",
        "fix it " + "please " * 8,  # long: carries its own weight
    ],
)
def test_a_message_with_a_subject_of_its_own_is_left_alone(text: str) -> None:
    assert points_at_nothing(text) is None


@pytest.mark.parametrize(
    ("text", "action"),
    [
        ("shorter", "shorter"),
        ("try again", "try"),
        ("Explain more, please", "explain"),
        ("simpler", "simpler"),
    ],
)
def test_a_bare_request_with_no_object_names_its_action(text: str, action: str) -> None:
    assert names_no_object(text) == action


@pytest.mark.parametrize(
    "text",
    [
        "translate",  # a verb of one mode's own: it announces the task
        "summarise",
        "thanks",  # no action at all: small talk, left to the classifier
        "ok",
        "make it shorter",  # a pointer: `points_at_nothing` names it
        "explain recursion",  # an object of its own
        "fix: 1",
        "please make the intro shorter",  # more than a bare request
        "we are done",  # a statement, not a request
        "done?",
        "sort",  # a command's name
        "how to run",
        "work out",  # a phrase of its own
    ],
)
def test_a_bare_word_with_a_subject_or_a_mode_of_its_own_is_left_alone(text: str) -> None:
    assert names_no_object(text) is None


def test_shorter_as_the_first_message_goes_to_the_fallback_and_says_why(pack: Pack) -> None:
    route = asyncio.run(Router(pack, Head(SURE_WRITE)).route([Message("user", "shorter")]))
    assert (route.mode_name, route.decided_by) == ("chat", "fallback")
    assert route.reason == (
        "“shorter” says what to do but not to what, and nothing came before it: nothing to route on"
    )
    route = asyncio.run(Router(pack, Head(SURE_WRITE)).route([Message("user", "Try again!")]))
    assert route.decided_by == "fallback"
    assert route.reason is not None and route.reason.startswith("“try again” says what to do")


def test_fix_it_as_the_first_message_goes_to_the_fallback_and_says_why(pack: Pack) -> None:
    route = asyncio.run(Router(pack, Head(SURE_WRITE)).route([Message("user", "fix it")]))
    assert (route.mode_name, route.decided_by) == ("chat", "fallback")
    assert route.reason is not None and "“it” points at something" in route.reason
    assert "nothing came before it" in route.reason
    # the classifier's view stays in the route, shown as "0.98 in code", not as chat's
    assert route.decision is not None and route.decision.mode_name == "code"


@pytest.mark.parametrize(
    ("asked", "answer", "then"),
    [
        ("why does my loop never end?", "You never change i.", "fix it"),
        ("write a docstring for this parser", "Parses one line.", "shorter"),
    ],
)
def test_the_same_words_mid_conversation_are_a_follow_up_not_a_fallback(
    pack: Pack, asked: str, answer: str, then: str
) -> None:
    conversation = [
        Message("user", asked),
        Message("assistant", answer, mode="code"),
        Message("user", then),
    ]
    route = asyncio.run(Router(pack, Head(SURE_WRITE)).route(conversation))
    assert (route.mode_name, route.decided_by) == ("code", "classifier")


def test_a_keyword_pack_keeps_its_own_word_for_fix(pack: Pack) -> None:
    # the pack's author said "fix" means code: a keyword match is not second-guessed
    route = asyncio.run(Router(pack, Scripted(SURE_WRITE)).route([Message("user", "fix it")]))
    assert (route.mode_name, route.decided_by) == ("code", "classifier")


def test_fix_this_with_pasted_code_is_routed_on_the_request(pack: Pack) -> None:
    message = "fix this:\n```python\nfor i in range(10)\n    print(i)\n```"
    route = asyncio.run(Router(pack, Head(SURE_WRITE)).route([Message("user", message)]))
    assert route.mode_name == "code" and route.decided_by == "classifier"


@pytest.mark.local
def test_with_the_real_encoder_make_it_shorter_first_falls_back_and_debug_this_does_not() -> None:
    from tests.core.routing.test_framing import _default_router

    router = _default_router()
    routed = asyncio.run(router.route([Message("user", "make it shorter")]))
    assert (routed.mode_name, routed.decided_by) == ("chat", "fallback"), routed.to_dict()
    routed = asyncio.run(router.route([Message("user", "debug this")]))
    assert routed.mode_name == "code", routed.to_dict()
    routed = asyncio.run(router.route([Message("user", "try again")]))
    assert (routed.mode_name, routed.decided_by) == ("chat", "fallback"), routed.to_dict()

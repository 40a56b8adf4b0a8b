"""Whose confidence a route shows: a number beside the mode that took the turn must be the
router's confidence in that mode. After a fallback (below the threshold, a declined
`auto_enter: confirm`), a sticky hold or a forced mode, the number is the classifier's in
another mode, and every place that prints it says which."""

from __future__ import annotations

import pytest

from modes_tui.acp.updates import route_note
from modes_tui.core.history.transcript import TurnTranscript
from modes_tui.core.values.route import Decision, Route
from modes_tui.route_format import (
    confidence_words,
    markdown_line,
    panel_text,
    repl_line,
    strip_line,
    verb_text,
)
from modes_tui.tui.correct import CorrectScreen

DECLINED = Route(
    "chat",
    "fallback",
    "Entering shell declined (auto_enter: confirm)",
    Decision("shell", 0.79, "r", {"shell": 0.79, "chat": 0.12, "code": 0.09}),
    2.0,
    runner_up="shell",
)
CHOSEN = Route("code", "classifier", "r", Decision("code", 0.82, "r"), 2.0)

SHOWN = {
    "strip line (chat)": lambda route: strip_line(route).plain,
    "panel and /why": lambda route: "\n".join(panel_text(route)),
    "REPL line": repl_line,
    "Markdown export": markdown_line,
    "route verb": verb_text,
    "ACP decision note": route_note,
}


@pytest.mark.parametrize("place", SHOWN)
def test_a_declined_entry_shows_the_confidence_as_the_declined_mode_s(place: str) -> None:
    text = SHOWN[place](DECLINED)
    assert "0.79 in shell" in text, text
    # no line shows the 0.79 without naming shell (the panel's bar row `shell ███ 0.79` does)
    assert all("shell" in line for line in text.splitlines() if "0.79" in line), text


@pytest.mark.parametrize("place", SHOWN)
def test_a_mode_the_router_chose_shows_its_own_confidence_bare(place: str) -> None:
    text = SHOWN[place](CHOSEN)
    assert "0.82" in text and "0.82 in" not in text, text


def test_whose_confidence_for_each_kind_of_route() -> None:
    below = Route("chat", "fallback", "Below confidence threshold", Decision("code", 0.41))
    sticky = Route("code", "classifier", "Sticky", Decision("chat", 0.55), sticky=True)
    forced = Route("write", "caller", "Mode requested by caller", Decision("code", 0.9))
    unscored = Route("chat", "fallback", "Confidence not scored", Decision("code", None))
    assert confidence_words(below) == "0.41 in code"
    assert confidence_words(sticky) == "0.55 in chat"
    assert confidence_words(forced) == "0.90 in code"
    assert confidence_words(unscored) is None
    assert confidence_words(Route("chat", "fallback", "No mode chosen")) is None


SATURATED = Route(
    "shell",
    "classifier",
    "r",
    Decision("shell", 1.0, "r", {"shell": 1.0, "code": 0.0, "chat": 0.0}),
    2.0,
)
"""A softmax that saturated to exactly 1.0 in floating point: not a certainty."""


@pytest.mark.parametrize("place", SHOWN)
def test_a_saturated_router_is_shown_at_most_0_99_sure(place: str) -> None:
    text = SHOWN[place](SATURATED)
    assert "0.99" in text and "1.00" not in text, text


def test_the_correction_dialog_shows_a_saturated_probability_as_0_99() -> None:
    record = TurnTranscript(1, "list files", route=SATURATED)
    picker = CorrectScreen(record, ["chat", "code", "shell"])
    lines = [str(option.prompt) for option in picker._options()]
    assert lines[0].split()[1] == "shell" and " 0.99" in lines[0], lines
    assert not any("1.00" in line for line in lines), lines


def test_a_fallback_below_the_threshold_names_what_pulled_it_down() -> None:
    """The panel, the inspector and `route --explain` showed "Below confidence threshold"
    beside shell 0.99 in the table, hiding that the user's own correction to the fallback
    decided; the classifier's reason (with its evidence) now follows the router's."""
    why = "like your correction 'clean the build' -> chat (0.97), which no mode should take"
    below = Route(
        "chat",
        "fallback",
        "Below confidence threshold",
        Decision("shell", 0.05, why, {"shell": 0.99, "chat": 0.01}),
        3.0,
    )
    expected = f"reason: Below confidence threshold (shell: {why})"
    assert expected in verb_text(below)
    assert expected in "\n".join(panel_text(below))
    # a route the classifier took keeps its own reason once, not twice
    took = Route("shell", "classifier", why, Decision("shell", 0.9, why))
    assert verb_text(took).count(why) == 1


def test_a_fallback_with_no_mode_chosen_gives_the_classifier_reason_without_a_name() -> None:
    none = Route("chat", "fallback", "No mode chosen", Decision(None, None, "no keyword matched"))
    assert "reason: No mode chosen (no keyword matched)" in verb_text(none)
    assert "None" not in "\n".join(panel_text(none))


def test_a_correction_quoted_in_a_fallback_reason_cannot_drive_the_terminal() -> None:
    """The evidence quotes the user's own text (a correction): escapes in it are made
    visible, not sent to the terminal, in every place the full reason is shown."""
    why = "like your correction 'ls \x1b]52;c;cGF3bmVk\x07 -la' -> chat (0.97)"
    below = Route("chat", "fallback", "Below confidence threshold", Decision("shell", 0.05, why))
    for shown in (verb_text(below), "\n".join(panel_text(below))):
        assert "\x1b" not in shown and "\x07" not in shown, shown
        assert "Below confidence threshold (shell: like your correction 'ls " in shown

"""What the screen shows of an answer is what the model wrote (issue 30, item 1).

Each answer of a corpus of tricky ones is sent through the app; every word of it, and the
fragments Markdown must not eat (tags, generics, redirections), are on screen afterwards.
"""

from __future__ import annotations

import re

import pytest

from modes_tui.tui.app import ModesApp, build_app
from tests.support.tui_support import ScriptEngine, answer_events, services, until

SIZE = (170, 60)

CORPUS: dict[str, tuple[str, list[str]]] = {
    "generics": (
        "Use a `List<String>` here: in prose, List<String> and Map<K, V> keep their types.",
        ["List<String> and Map<K, V> keep"],
    ),
    "traceback": (
        'Traceback (most recent call last):\n  File "x.py", line 1, in <module>\n'
        "ZeroDivisionError: division by zero",
        ['File "x.py", line 1, in <module>'],
    ),
    "redirection": (
        "Run it as cmd 2>&1 > out so both streams land in out.",
        ["cmd 2>&1 > out so"],
    ),
    "br": ("first<br>second and <b>bold</b> stay as typed", ["first<br>second", "<b>bold</b>"]),
    "comparison": ("In math a < b > c reads oddly.", ["a < b > c reads"]),
    "html block": (
        '<div class="note">\nraw block\n</div>\n\nafter the block',
        ['<div class="note">', "</div>"],
    ),
    "comment": ("Before <!-- hidden note --> after.", ["<!-- hidden note -->"]),
    "unclosed fence": (
        "Code follows:\n\n```python\nprint('never closed')\nx = 1 < 2",
        ["print('never closed')", "x = 1 < 2"],
    ),
    "table": (
        "| type | example |\n|---|---|\n| generic | Vec<u8> |\n| plain | 42 |",
        ["Vec<u8>", "generic", "42"],
    ),
    "nested lists": (
        "- outer <one>\n  - inner <two>\n    - deepest three\n- last",
        ["outer <one>", "inner <two>", "deepest three"],
    ),
}


def screen_text(app: ModesApp) -> str:
    """Every character on screen, line by line, as the terminal gets them."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def words(text: str) -> list[str]:
    """The words of an answer, without a code fence's language (Markdown syntax)."""
    return re.findall(r"\w+", re.sub(r"```\w*", "", text))


@pytest.mark.parametrize("name", list(CORPUS))
async def test_every_word_of_an_answer_is_on_screen(name: str) -> None:
    answer, fragments = CORPUS[name]
    engine = ScriptEngine().script(answer_events(answer, "chat", "show me"))
    app = build_app(services(engine))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.conversation.engine is not None)
        app.conversation.prompt.value = "show me"
        await pilot.press("enter")
        await until(pilot, lambda: bool(app.conversation.records))
        await until(pilot, lambda: not app.conversation.turns.running)
        await pilot.pause(0.1)
        shown = screen_text(app)
    missing = [word for word in words(answer) if word not in shown]
    assert not missing, f"{name}: words of the answer missing on screen: {missing}"
    for fragment in fragments:
        assert fragment in shown, f"{name}: {fragment!r} is not on screen:\n{shown}"

"""Text renderings: route lines, fences, and the store staying free of UI and model libraries."""

from __future__ import annotations

import json

import pytest

from modes_tui.core.values.route import Decision, Route
from modes_tui.route_format import markdown_line
from modes_tui.store.export import fence, table
from tests.support.cli_support import run_python

HEAVY = ["textual", "prompt_toolkit", "litellm", "llama_cpp", "torch", "sentence_transformers"]
STORE_MODULES = [
    "modes_tui.store.control",
    "modes_tui.store.settings",
    "modes_tui.store.runtime",
    "modes_tui.store.sessions",
    "modes_tui.store.replay",
    "modes_tui.store.export",
]


@pytest.mark.parametrize("module", STORE_MODULES)
def test_store_modules_load_no_ui_or_model_library(module: str) -> None:
    code = (
        f"import json, sys, importlib; importlib.import_module({module!r}); "
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    )
    assert json.loads(run_python(code)) == []


def test_route_line_marks_sticky_forced_and_a_differing_setting() -> None:
    sticky = Route(
        "code", "classifier", "Sticky: kept code", Decision("chat", 0.55, "r"), 2.25, sticky=True
    )
    # the 0.55 is the classifier's confidence in chat, not in code (the mode kept)
    assert markdown_line(sticky) == (
        "code by classifier, confidence 0.55 in chat, 2.2 ms [sticky]: Sticky: kept code"
    )
    forced = Route("chat", "caller", "Mode requested by caller")
    assert markdown_line(forced, "chat") == "chat by caller [forced]: Mode requested by caller"
    fallback = Route("chat", "fallback", None)
    assert markdown_line(fallback, "code") == "chat by fallback [setting code]"


def test_fence_outgrows_backticks_inside() -> None:
    assert fence("plain") == "```\nplain\n```"
    assert fence("has ``` inside", "md") == "````md\nhas ``` inside\n````"


def test_table_aligns_columns() -> None:
    assert table(("A", "NUM"), [("xyz", "1"), ("b", "22")], right=(1,)) == (
        "A    NUM\nxyz    1\nb     22"
    )

"""A pack's own Python tools: `tools: [python:...]` in router.yaml, and every bad reference."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from modes_tui.core.edits import session_tools
from modes_tui.core.engine.engine import Engine
from modes_tui.core.engine.guards import Limits
from modes_tui.core.errors import DeclarationError
from modes_tui.core.history.events import RequestBuilt, ToolCallFinished, TurnFinished
from modes_tui.core.packs.profiles import Pack, load_pack
from modes_tui.core.routing.classifiers.keyword import KeywordClassifier
from modes_tui.core.routing.router import Router
from modes_tui.core.tools.registry import BUILTIN_TOOL_NAMES
from modes_tui.core.tools.toolbox import default_registry
from modes_tui.llm.fake import ScriptedModel, ScriptedReply
from tests.conftest import PackWriter
from tests.support.engine_support import with_config

ROUTER = {"classifier": "keyword", "fallback": "chat"}

COUNTER = '''
from modes_tui.core.errors import ToolError
from modes_tui.core.tools.registry import Tool, tool

from .greeting import GREETING


def make_tools() -> list[Tool]:
    """A fresh counter for every session."""
    seen: list[str] = []

    @tool
    def count_visit(name: str) -> dict:
        """Count one visit by name.

        Args:
            name: Who visited.
        """
        if not name.strip():
            raise ToolError("a visit needs a name")
        seen.append(name)
        return {"greeting": f"{GREETING}, {name}", "visits": len(seen)}

    return [count_visit]
'''


def pack_with(
    write_pack: PackWriter,
    references: list[str],
    files: dict[str, str],
    tools: tuple[str, ...] = ("count_visit",),
) -> Path:
    folder = write_pack(
        router={**ROUTER, "tools": references},
        modes={
            "chat": {"description": "Everyday chat.", "keywords": ["hello"]},
            "desk": {"description": "The front desk.", "keywords": ["visit"], "tools": list(tools)},
        },
    )
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(textwrap.dedent(text), encoding="utf-8")
    return folder


@pytest.fixture
def desk_pack(write_pack: PackWriter) -> Pack:
    folder = pack_with(
        write_pack,
        ["python:tools/desk.py:make_tools"],
        {"tools/desk.py": COUNTER, "tools/greeting.py": 'GREETING = "Welcome"\n'},
    )
    return load_pack(profiles_dir=folder)


def engine_for(pack: Pack, cwd: Path, *replies: ScriptedReply, **kwargs: object) -> Engine:
    return Engine(
        **with_config(
            pack=pack,
            router=Router(pack, KeywordClassifier()),
            model=ScriptedModel().script(*replies),
            default_model="scripted",
            cwd=cwd,
            **kwargs,
        )
    )


def test_a_user_pack_brings_its_own_tools_from_a_file_beside_it(desk_pack: Pack) -> None:
    assert [source.names for source in desk_pack.tools] == [("count_visit",)]
    made = desk_pack.make_tools()
    assert [t.name for t in made] == ["count_visit"]
    assert made[0].source == "pack:testpack"
    assert made[0].parameters["required"] == ["name"]


def test_a_pack_written_before_core_had_parts_still_imports_tool_from_core_tools(
    write_pack: PackWriter,
) -> None:
    old = "from modes_tui.core.tools import Tool, tool"  # old path, still works
    counter = COUNTER.replace("from modes_tui.core.tools.registry import Tool, tool", old)
    assert old in counter
    folder = pack_with(
        write_pack,
        ["python:tools/desk.py:make_tools"],
        {"tools/desk.py": counter, "tools/greeting.py": 'GREETING = "Welcome"\n'},
    )
    made = load_pack(profiles_dir=folder).make_tools()
    assert [t.name for t in made] == ["count_visit"]
    assert made[0].parameters["required"] == ["name"]


async def test_a_pack_tool_runs_in_a_turn_and_its_state_is_fresh_per_session(
    desk_pack: Pack, tmp_path: Path
) -> None:
    call = ScriptedReply(tool_calls=[("count_visit", {"name": "Ada"})])
    engine = engine_for(desk_pack, tmp_path, call, call, ScriptedReply("Counted twice."))
    events = [event async for event in engine.run_turn("log a visit")]
    first, second = [e for e in events if isinstance(e, ToolCallFinished)]
    assert json.loads(first.result) == {"greeting": "Welcome, Ada", "visits": 1}
    assert json.loads(second.result)["visits"] == 2
    offered = [t.name for t in next(e for e in events if isinstance(e, RequestBuilt)).request.tools]
    assert offered == ["count_visit"]
    assert isinstance(events[-1], TurnFinished) and events[-1].message.mode == "desk"

    # a new session (engine) starts from a fresh counter: the factory is called again
    again = engine_for(desk_pack, tmp_path, call, ScriptedReply("ok"))
    events = [event async for event in again.run_turn("log a visit")]
    (only,) = [e for e in events if isinstance(e, ToolCallFinished)]
    assert json.loads(only.result)["visits"] == 1


async def test_pack_tools_pass_the_guards_and_report_tool_errors_like_built_ins(
    desk_pack: Pack, tmp_path: Path
) -> None:
    same = ScriptedReply(tool_calls=[("count_visit", {"name": "Ada"})])
    blank = ScriptedReply(tool_calls=[("count_visit", {"name": " "})])
    engine = engine_for(
        desk_pack,
        tmp_path,
        blank,
        same,
        same,
        ScriptedReply("done"),
        limits=Limits(repeated_calls=2),
    )
    events = [event async for event in engine.run_turn("log a visit")]
    outcomes = [(e.outcome, e.result) for e in events if isinstance(e, ToolCallFinished)]
    assert outcomes[0] == ("error", json.dumps({"error": "a visit needs a name"}))
    assert outcomes[1][0] == "ok"
    assert outcomes[2][0] == "blocked"  # the loop guard stops the repeated call


def test_a_module_on_the_path_can_provide_tools(
    write_pack: PackWriter, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    library = tmp_path / "lib" / "acme_desk"
    library.mkdir(parents=True)
    (library / "__init__.py").write_text("")
    (library / "tools.py").write_text(
        textwrap.dedent(
            '''
            def count_visit(name: str) -> str:
                """Count one visit.

                Args:
                    name: Who visited.
                """
                return name

            TOOLS = [count_visit]
            '''
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path / "lib"))
    pack = load_pack(profiles_dir=pack_with(write_pack, ["python:acme_desk.tools:TOOLS"], {}))
    assert [t.name for t in pack.make_tools()] == ["count_visit"]


def test_the_support_pack_has_the_store_and_other_packs_do_not(tmp_path: Path) -> None:
    support = load_pack("support")
    assert [source.reference for source in support.tools] == ["python:tools.py:make_tools"]
    store_tools = {"find_order", "list_orders", "track_shipment", "create_return", "create_ticket"}
    assert session_tools(tmp_path, pack=support).names() == BUILTIN_TOOL_NAMES | store_tools
    assert session_tools(tmp_path, pack=load_pack("default")).names() == BUILTIN_TOOL_NAMES
    assert not store_tools & BUILTIN_TOOL_NAMES


def test_a_profile_may_not_list_a_tool_no_reference_gives(write_pack: PackWriter) -> None:
    folder = pack_with(
        write_pack,
        ["python:desk.py:make_tools"],
        {"desk.py": COUNTER.replace("from .greeting import GREETING", 'GREETING = "Hi"')},
        tools=("count_visits",),
    )
    with pytest.raises(DeclarationError) as caught:
        load_pack(profiles_dir=folder)
    (problem,) = caught.value.problems
    assert problem.file == "testpack/desk.yaml" and problem.field == "tools[0]"
    assert "unknown tool 'count_visits'; did you mean 'count_visit'?" in problem.message


GOOD_TOOL = '''
from modes_tui.core.tools.registry import tool

@tool
def count_visit(name: str) -> str:
    """Count one visit."""
    return name
'''

# (case, reference, files, expected message after "testpack/router.yaml: tools[0]: ")
BAD: list[tuple[str, str, dict[str, str], str]] = [
    (
        "missing file",
        "python:nowhere.py:make_tools",
        {},
        "python:nowhere.py:make_tools: no file {pack}/nowhere.py",
    ),
    (
        "syntax error",
        "python:desk.py:make_tools",
        {"desk.py": "def make_tools(:\n"},
        "python:desk.py:make_tools: importing {pack}/desk.py failed: SyntaxError: ",
    ),
    (
        "import fails",
        "python:desk.py:make_tools",
        {"desk.py": "import no_such_module_here\n"},
        "python:desk.py:make_tools: importing {pack}/desk.py failed: "
        "ModuleNotFoundError: No module named 'no_such_module_here'",
    ),
    (
        "missing module",
        "python:no_such_pkg.tools:TOOLS",
        {},
        "python:no_such_pkg.tools:TOOLS: importing no_such_pkg.tools failed: "
        "ModuleNotFoundError: No module named 'no_such_pkg'",
    ),
    (
        "missing object",
        "python:desk.py:make_tools",
        {"desk.py": GOOD_TOOL},
        "python:desk.py:make_tools: desk.py has no object 'make_tools' (it has: count_visit)",
    ),
    (
        "misspelt object",
        "python:desk.py:count_visits",
        {"desk.py": GOOD_TOOL},
        "python:desk.py:count_visits: desk.py has no object 'count_visits' "
        "(did you mean 'count_visit'?)",
    ),
    (
        "wrong object",
        "python:desk.py:NAME",
        {"desk.py": "NAME = 'desk'\n"},
        "python:desk.py:NAME gave a str; it must be a Tool, a list of tools and functions, "
        "or a factory (a callable without arguments) that returns one of those",
    ),
    (
        "factory raises",
        "python:desk.py:make_tools",
        {"desk.py": "def make_tools():\n    raise RuntimeError('no database\\nmore')\n"},
        "python:desk.py:make_tools: calling it failed: RuntimeError: no database",
    ),
    (
        "factory gives nothing",
        "python:desk.py:make_tools",
        {"desk.py": "def make_tools():\n    return []\n"},
        "python:desk.py:make_tools gave no tools;",
    ),
    (
        "item not a tool",
        "python:desk.py:TOOLS",
        {"desk.py": GOOD_TOOL + "TOOLS = [count_visit, 42]\n"},
        "python:desk.py:TOOLS: item 1 is an int, not a Tool or a function",
    ),
    (
        "function without a docstring",
        "python:desk.py:TOOLS",
        {"desk.py": "def count_visit(name: str) -> str:\n    return name\nTOOLS = [count_visit]\n"},
        "python:desk.py:TOOLS: item 0: tool 'count_visit' needs a docstring saying what it does",
    ),
    (
        "clash with a built-in",
        "python:desk.py:TOOLS",
        {"desk.py": GOOD_TOOL.replace("count_visit", "read_file") + "TOOLS = [read_file]\n"},
        "python:desk.py:TOOLS: tool 'read_file' is already a built-in tool; rename one of them",
    ),
    (
        "one name twice",
        "python:desk.py:TOOLS",
        {"desk.py": GOOD_TOOL + "TOOLS = [count_visit, count_visit]\n"},
        "python:desk.py:TOOLS: names more than one tool count_visit",
    ),
    (
        "not a python reference",
        "desk.py:make_tools",
        {},
        "'desk.py:make_tools' is not a python: reference; write python:<file.py>:<object> "
        "or python:<package.module>:<object>",
    ),
    (
        "no object named",
        "python:desk.py",
        {},
        "'python:desk.py' must be python:<file.py>:<object> or python:<package.module>:<object>",
    ),
]


@pytest.mark.parametrize(
    ("reference", "files", "expected"), [case[1:] for case in BAD], ids=[c[0] for c in BAD]
)
def test_each_bad_reference_names_the_file_the_key_and_the_reference(
    write_pack: PackWriter, reference: str, files: dict[str, str], expected: str
) -> None:
    folder = pack_with(write_pack, [reference], files, tools=())
    with pytest.raises(DeclarationError) as caught:
        load_pack(profiles_dir=folder)
    (problem,) = caught.value.problems
    assert str(problem).startswith(
        "testpack/router.yaml: tools[0]: " + expected.format(pack=folder)
    ), str(problem)
    assert caught.value.title == "Broken pack"


def test_a_broken_reference_is_the_one_problem_not_every_profile_using_its_tools(
    write_pack: PackWriter,
) -> None:
    folder = pack_with(write_pack, ["python:desk.py:make_tools"], {"desk.py": "oops(\n"})
    with pytest.raises(DeclarationError) as caught:
        load_pack(profiles_dir=folder)
    assert [p.field for p in caught.value.problems] == ["tools[0]"]


def test_two_references_may_not_give_the_same_name(write_pack: PackWriter) -> None:
    folder = pack_with(
        write_pack,
        ["python:a.py:count_visit", "python:b.py:count_visit"],
        {"a.py": GOOD_TOOL, "b.py": GOOD_TOOL},
        tools=(),
    )
    with pytest.raises(DeclarationError) as caught:
        load_pack(profiles_dir=folder)
    assert [str(p) for p in caught.value.problems] == [
        "testpack/router.yaml: tools[1]: python:b.py:count_visit: tool 'count_visit' is "
        "already given by python:a.py:count_visit; rename one of them (line 5, column 3)"
    ]


def test_a_factory_that_fails_later_is_a_broken_pack_not_a_crash(
    write_pack: PackWriter, tmp_path: Path
) -> None:
    flaky = GOOD_TOOL + textwrap.dedent(
        """
        calls = []

        def make_tools():
            calls.append(1)
            if len(calls) > 1:
                raise OSError("the database went away")
            return [count_visit]
        """
    )
    pack = load_pack(
        profiles_dir=pack_with(write_pack, ["python:desk.py:make_tools"], {"desk.py": flaky})
    )
    with pytest.raises(DeclarationError, match="the database went away") as caught:
        default_registry(tmp_path, pack=pack)
    assert str(caught.value.problems[0]).startswith("router.yaml: tools[0]: python:desk.py")

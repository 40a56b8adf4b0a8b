"""The layer contract, read from the source (no import runs but rule 10's): what may import what.

    cli, repl, tui,   the edges: parse, show, ask the user (acp: an editor, over the Agent
    acp               Client Protocol)
        |
    frontend          what the TUI and the REPL share (no textual, no prompt_toolkit)
        |
    store, llm, mcp   adapters: files on disk, model libraries, MCP servers
        |
      core            headless domain; talks to the adapters only through its ports modules
                      (core/engine/ports.py, core/<part>/ports.py)

Thirteen rules, each failure naming the module and the rule:
1. `modes_tui.core` imports nothing from the adapter or edge packages, not even inside a
   function or under `if TYPE_CHECKING:` (a type-only import still couples the layers).
2. No import cycles between modes_tui modules. Module-level and function-local imports
   count (a function-local import only defers a cycle, it does not remove it); imports
   under `if TYPE_CHECKING:` do not (they never run).
3. No function over ruff's limits (C901 complexity 15, PLR0912 12 branches, PLR0915 50
   statements): pyproject selects them and the suite's ruff run (test_quality) applies them.
4. `modes_tui.frontend` imports neither textual nor prompt_toolkit, nor the front ends
   (`tui`, `repl`), anywhere in a module.
5. Every package of core, store, llm and tui maps its modules in its docstring, a line each.
6. Every core sub-package declares its public names in `__init__`'s `__all__`; other
   packages import only those names (from the module that defines them), never `_private` ones.
7. Core's parts depend downward: base < config < model < tools < packs < history < routing <
   evals < engine (LAYERS).
8. No core `__init__` looks names up lazily (`__getattr__`, a name -> module table).
9. Every core package whose `__init__` holds code declares `__all__` (nested ones too).
10. Every package's `__all__` is true: each name is bound by its `__init__`, and
   `from <package> import *` works (this one imports: each package first, in a fresh
   interpreter).

11. No two core sub-packages import each other, directly or through others (function-local
   and type-only imports count).
12. CONTRIBUTING.md names only files that exist (its walk of one message follows the code).
13. Every package's docstring opens with what it is for, in one line that is a sentence.

Rule 2 keeps an explicit list of cycles still known (empty today; it may only shrink: a
test fails when a listed cycle is gone). Rule 7 keeps none: KNOWN_UPWARD is an empty tuple
and a test fails if anything is added to it.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "modes_tui"
CORE = "modes_tui.core"
OUTSIDE_CORE = (
    "modes_tui.llm",
    "modes_tui.store",
    "modes_tui.tui",
    "modes_tui.mcp",
    "modes_tui.repl",
    "modes_tui.frontend",
    "modes_tui.cli",
    "modes_tui.acp",
    "modes_tui.route_format",
    "modes_tui.runtime",
    "modes_tui.__main__",
)
"""Everything core must not import: adapters, edges, and the wiring."""

STILL_KNOWN_CYCLES: set[frozenset[str]] = set()
"""Import cycles tolerated for now (none today; an entry fails once the cycle is gone)."""


@dataclass(frozen=True, slots=True)
class Import:
    """One import statement, resolved to a modes_tui module."""

    target: str
    """The imported module (a name imported from a package counts as its submodule)."""
    line: int
    """Where it is, 1-based."""
    type_only: bool
    """Whether it sits under `if TYPE_CHECKING:` (never runs)."""


def module_name(path: Path) -> str:
    """`modes_tui/core/engine/ports.py` -> `modes_tui.core.engine.ports`; a package's __init__ -> the package."""
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def all_modules() -> dict[str, Path]:
    """Every module of the package, by dotted name."""
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


MODULES = all_modules()


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _resolve(module: str, node: ast.ImportFrom) -> str:
    """The absolute module a `from ... import` names (relative imports included)."""
    if not node.level:
        return node.module or ""
    package = module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


def _targets(module: str, node: ast.Import | ast.ImportFrom) -> Iterator[str]:
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield alias.name
        return
    base = _resolve(module, node)
    for alias in node.names:
        submodule = f"{base}.{alias.name}"
        yield submodule if submodule in MODULES else base


def imports_of(module: str) -> list[Import]:
    """Every import of a modes_tui module in `module`, wherever it sits."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    found: list[Import] = []

    def visit(node: ast.AST, type_only: bool) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                visit(child, True)
            for child in node.orelse:
                visit(child, type_only)
            return
        if isinstance(node, ast.Import | ast.ImportFrom):
            for target in _targets(module, node):
                if target == "modes_tui" or target.startswith("modes_tui."):
                    found.append(Import(target, node.lineno, type_only))
        for child in ast.iter_child_nodes(node):
            visit(child, type_only)

    visit(tree, False)
    return found


def import_graph() -> dict[str, set[str]]:
    """module -> the modes_tui modules it imports at run time (TYPE_CHECKING skipped)."""
    graph: dict[str, set[str]] = {name: set() for name in MODULES}
    for name in MODULES:
        for item in imports_of(name):
            if not item.type_only and item.target in MODULES and item.target != name:
                graph[name].add(item.target)
    return graph


def cycles(graph: dict[str, set[str]]) -> set[frozenset[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[frozenset[str]] = set()

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.add(frozenset(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


def _outside_core(target: str) -> bool:
    return any(target == name or target.startswith(name + ".") for name in OUTSIDE_CORE)


# --------------------------------------------------------------------------- the rules


def test_core_imports_nothing_from_adapters_or_edges() -> None:
    broken = [
        f"{name}:{item.line} imports {item.target} (rule: core imports nothing from "
        "llm, store, tui, mcp, repl, frontend or cli; depend on a Protocol in a core ports module)"
        for name in MODULES
        if name == CORE or name.startswith(CORE + ".")
        for item in imports_of(name)
        if _outside_core(item.target)
    ]
    assert broken == []


def test_no_new_import_cycles() -> None:
    found = cycles(import_graph())
    new = [
        " -> ".join(sorted(cycle)) + " (rule: no import cycles between modes_tui modules)"
        for cycle in found - STILL_KNOWN_CYCLES
    ]
    gone = [
        " -> ".join(sorted(cycle)) + " is no longer a cycle: remove it from STILL_KNOWN_CYCLES"
        for cycle in STILL_KNOWN_CYCLES - found
    ]
    assert new + gone == []


def test_function_limits_are_switched_on_in_ruff() -> None:
    """Rule 3 lives in ruff's config: removing a rule or raising the limit fails here."""
    config = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())["tool"]["ruff"]["lint"]
    assert {"C901", "PLR0912", "PLR0915"} <= set(config["select"])
    assert not {"C901", "PLR0912", "PLR0915"} & set(config.get("ignore", []))
    assert config["mccabe"]["max-complexity"] == 15
    assert "per-file-ignores" not in config


FRONTEND = "modes_tui.frontend"
NOT_IN_FRONTEND = ("textual", "prompt_toolkit", "modes_tui.tui", "modes_tui.repl")
"""What the shared front-end layer must not import: the two UI libraries and the front ends."""


def every_import(module: str) -> Iterator[tuple[str, int]]:
    """Every module `module` imports (any package), wherever the import sits."""
    for node in ast.walk(ast.parse(MODULES[module].read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for target in _targets(module, node):
                yield target, node.lineno


ACP = "modes_tui.acp"
ACP_SDK = "acp"


def test_only_the_acp_edge_imports_the_acp_sdk_and_only_its_verb_imports_it() -> None:
    """The `acp` SDK (pydantic models, a JSON-RPC loop) is the ACP edge's alone, and the edge
    is reached only through `modes-tui acp` (cli/acp.py), never on the way to the TUI."""
    broken = []
    for name in MODULES:
        inside = name == ACP or name.startswith(ACP + ".")
        for target, line in every_import(name):
            if not inside and (target == ACP_SDK or target.startswith(ACP_SDK + ".")):
                broken.append(f"{name}:{line} imports {target} (rule: only modes_tui.acp does)")
            is_edge = target == ACP or target.startswith(ACP + ".")
            if is_edge and not inside and name != "modes_tui.cli.acp":
                broken.append(f"{name}:{line} imports {target} (rule: only cli/acp.py does)")
    assert broken == []


def test_the_frontend_layer_imports_no_ui_library() -> None:
    frontend = [name for name in MODULES if name == FRONTEND or name.startswith(FRONTEND + ".")]
    broken = [
        f"{name}:{line} imports {target} (rule: frontend imports neither textual nor "
        "prompt_toolkit nor the front ends; it returns outcomes they show)"
        for name in frontend
        for target, line in every_import(name)
        if any(target == bad or target.startswith(bad + ".") for bad in NOT_IN_FRONTEND)
    ]
    assert frontend and broken == []


# --------------------------------------------------------------------------- the checker


def _write(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


@pytest.fixture
def fake_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A tiny modes_tui tree the checker reads instead of the real one."""
    root = tmp_path / "modes_tui"
    _write(
        root,
        {
            "__init__.py": "",
            "core/__init__.py": "",
            "core/a.py": (
                "from typing import TYPE_CHECKING\n"
                "from modes_tui.core import b\n"
                "if TYPE_CHECKING:\n    from modes_tui.store.c import C\n"
            ),
            "core/b.py": "def later():\n    from modes_tui.core.a import x\n",
            "core/d.py": "if TYPE_CHECKING:\n    from modes_tui.core.a import y\n",
            "core/e.py": "from .d import z\n",
            "store/__init__.py": "",
            "store/c.py": "import modes_tui.core.d\n",
        },
    )
    monkeypatch.setattr(__import__(__name__, fromlist=["MODULES"]), "PACKAGE", root)
    monkeypatch.setattr(__import__(__name__, fromlist=["MODULES"]), "MODULES", all_modules())
    return root


def test_the_checker_sees_function_local_imports_and_skips_type_checking(
    fake_package: Path,
) -> None:
    graph = import_graph()
    assert graph["modes_tui.core.a"] == {"modes_tui.core.b"}
    assert graph["modes_tui.core.b"] == {"modes_tui.core.a"}  # a function-local import counts
    assert graph["modes_tui.core.d"] == set()  # a TYPE_CHECKING import does not
    assert graph["modes_tui.core.e"] == {"modes_tui.core.d"}  # relative, resolved
    assert cycles(graph) == {frozenset({"modes_tui.core.a", "modes_tui.core.b"})}


def test_the_checker_reports_a_type_only_import_of_an_adapter_from_core(
    fake_package: Path,
) -> None:
    with pytest.raises(AssertionError, match=r"modes_tui\.core\.a:4 imports modes_tui\.store\.c"):
        test_core_imports_nothing_from_adapters_or_edges()


# --------------------------------------------------------------------------- the sub-packages
#
# core/ is a small top level (BASE) and sub-packages by concept. The rules:
# 5. Every package of core, store, llm and tui opens with a map of its modules, a line each
#    (`    name.py   what it owns`, or `name/` for a sub-package); a module without a line,
#    or a line without a module, fails.
# 6. Every core sub-package has an `__init__` with a literal `__all__`: its public surface.
#    Other packages import a public name from the module that defines it
#    (`from modes_tui.core.routing.router import Route`), only names in that `__all__`, never
#    a `_private` one.
# 7. Core's parts depend downward in LAYERS: a module imports from its own layer or below.
#    There is no allow-list any more: KNOWN_UPWARD is empty and must stay so (issue 32); a
#    value two parts share moves down (core/values/), or the higher part is passed in.
# 11. No two core sub-packages import each other, even through others (package-level cycles;
#    function-local and type-only imports count: either one still ties the packages).

CORE_DIR = PACKAGE / "core"
BASE = frozenset(
    {"errors", "paths", "files", "yaml_files", "terminal_text", "redaction", "control_setting"}
)
"""Core's top level: small modules every part may use; they import no sub-package."""
LAYERS = (
    "base",
    "values",  # issue 32: route, decision, correction, framing: what the parts hand each other
    "config",
    "model",  # the model seam: ChatModel, ModelCapabilities, ModelRequest and its events
    "tools",
    "edits",  # issue 23: diffs, the write/edit tools' core, policy, checkpoints
    "packs",
    "history",
    "context",  # issue 24: token counting, window fitting, compaction
    "routing",
    "evals",
    "engine",
)
"""Core's parts from the bottom up (a top-level module not in BASE would count as `engine`;
there is none: test_cores_top_level_is_small)."""
MAPPED = ("core", "store", "llm", "tui", "acp")
"""The packages whose `__init__` docstrings map their modules (rule 5), sub-packages included."""

KNOWN_UPWARD: tuple[tuple[str, str], ...] = ()
"""Upward imports tolerated (rule 7): none, and it stays empty (test_no_upward_import_is_tolerated)."""


def layer_of(module: str) -> str | None:
    """The layer of a core module, or None outside core."""
    if module == CORE or not module.startswith(CORE + "."):
        return None
    part = module.split(".")[2]
    if (CORE_DIR / part).is_dir():
        return part
    return "base" if part in BASE else "engine"


def subpackages() -> list[str]:
    """The names of core's sub-packages (core/<name>/__init__.py)."""
    return sorted(p.parent.name for p in CORE_DIR.glob("*/__init__.py"))


def declared_all(path: Path) -> list[str] | None:
    """The literal `__all__` of a module, or None when it has none.

    A long one is written as `__all__ = [...]` then `__all__ += [...]` lines, one a source
    module (mypy and star imports read both); every part must be a literal list.
    """
    names: list[str] | None = None
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                value = node.value
                assert isinstance(value, ast.List | ast.Tuple), f"{path}: __all__ is not a literal"
                part = [ast.literal_eval(item) for item in value.elts]
                if isinstance(node, ast.AugAssign):
                    assert names is not None, f"{path}: __all__ += before __all__ ="
                    names += part
                else:
                    names = part
    return names


def top_level_names(path: Path) -> set[str]:
    """The names a module binds at its top level (definitions, assignments, imports)."""
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.If):  # TYPE_CHECKING blocks, optional imports
            names |= {
                (a.asname or a.name)
                for child in node.body
                if isinstance(child, ast.Import | ast.ImportFrom)
                for a in child.names
            }
    return names


def mapped_names(init: Path) -> set[str]:
    """The modules a package's docstring map lists: `    name.py  ...` and `    name/  ...`."""
    doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")), clean=False) or ""
    return set(re.findall(r"^ {2,}(\w+\.py|\w+/)(?= |$)", doc, re.M))


def package_children(directory: Path) -> set[str]:
    """What a package holds: its modules (`x.py`) and sub-packages (`x/`)."""
    found = {p.name for p in directory.glob("*.py") if p.name != "__init__.py"}
    return found | {f"{p.parent.name}/" for p in directory.glob("*/__init__.py")}


def map_problems() -> list[str]:
    """Rule 5's failures: modules a map misses, and lines for modules that are not there."""
    broken = []
    for top in MAPPED:
        for init in sorted((PACKAGE / top).rglob("__init__.py")):
            listed, present = mapped_names(init), package_children(init.parent)
            where = init.relative_to(PACKAGE.parent)
            broken += [
                f"{where} does not list {name} (rule: the map lists every module, a line each)"
                for name in sorted(present - listed)
            ]
            broken += [
                f"{where} lists {name}, which is not there (rule: the map follows the package)"
                for name in sorted(listed - present)
            ]
    return broken


def test_package_maps_list_every_module() -> None:
    assert map_problems() == []


def surface_problems() -> list[str]:
    """Rule 6's first half: a sub-package without `__all__`, or listing what nothing defines."""
    broken = []
    for name in subpackages():
        directory = CORE_DIR / name
        public = declared_all(directory / "__init__.py")
        if public is None:
            broken.append(f"core/{name}/__init__.py has no __all__ (rule: a public surface)")
            continue
        bound = set().union(*(top_level_names(p) for p in directory.rglob("*.py")))
        bound |= {p.parent.name for p in directory.glob("*/__init__.py")}
        broken += [
            f"core/{name}/__init__.py lists {item!r}, which no module of core/{name} defines"
            for item in public
            if item not in bound or item.startswith("_")
        ]
    return broken


def test_every_core_subpackage_declares_its_public_names() -> None:
    assert surface_problems() == []


def _subpackage_of(module: str) -> str | None:
    layer = layer_of(module)
    return layer if layer is not None and (CORE_DIR / layer).is_dir() else None


def private_imports() -> list[str]:
    """Rule 6's second half: imports of a sub-package's names not in its `__all__`."""
    public = {
        name: set(declared_all(CORE_DIR / name / "__init__.py") or ()) for name in subpackages()
    }
    broken = []
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
                continue
            target = _subpackage_of(node.module)
            if target is None or _subpackage_of(module) == target:
                continue
            for alias in node.names:
                if f"{node.module}.{alias.name}" in MODULES:
                    continue  # a module of the package, imported as a module
                if node.module == f"{CORE}.{target}":
                    broken.append(
                        f"{module}:{node.lineno} imports {alias.name} from {node.module} (rule: "
                        "import a name from the module that defines it, not from the package)"
                    )
                elif alias.name.startswith("_") or alias.name not in public[target]:
                    broken.append(
                        f"{module}:{node.lineno} imports {alias.name} from {node.module} (rule: "
                        f"only names in core/{target}/__init__.py's __all__; add it there if "
                        "it is public, or keep it inside the package)"
                    )
    return broken


def test_other_packages_import_only_a_subpackages_public_names() -> None:
    assert private_imports() == []


def upward_imports() -> set[tuple[str, str]]:
    """(importer, imported) for every core import that goes up LAYERS (type-only ones count)."""
    found = set()
    for module in MODULES:
        low = layer_of(module)
        if low is None:
            continue
        for item in imports_of(module):
            high = layer_of(item.target)
            if high is None or high == low:
                continue
            if high not in LAYERS or low not in LAYERS:
                found.add((module, item.target))  # a new part: place it in LAYERS first
            elif LAYERS.index(high) > LAYERS.index(low):
                found.add((module, item.target))
    return found


def test_core_parts_depend_downward() -> None:
    found = upward_imports()
    new = [
        f"{low} imports {high}, which is above it (rule: core's parts depend downward: "
        f"{' < '.join(LAYERS)}; move the shared value down, or pass it in)"
        for low, high in sorted(found - set(KNOWN_UPWARD))
    ]
    gone = [
        f"{low} no longer imports {high}: remove it from KNOWN_UPWARD (the list only shrinks)"
        for low, high in sorted(set(KNOWN_UPWARD) - found)
    ]
    assert new + gone == []


def test_no_upward_import_is_tolerated() -> None:
    assert KNOWN_UPWARD == (), (
        "KNOWN_UPWARD must stay empty (issue 32): move the shared value down to core/values/, "
        "or pass the higher part in through a port"
    )


def package_graph() -> dict[str, set[str]]:
    """core sub-package -> the other core sub-packages it imports (every import counts)."""
    graph: dict[str, set[str]] = {name: set() for name in subpackages()}
    for module in MODULES:
        low = _subpackage_of(module)
        if low is None:
            continue
        for item in imports_of(module):
            high = _subpackage_of(item.target)
            if high is not None and high != low:
                graph[low].add(high)
    return graph


def package_cycle_problems() -> list[str]:
    """Rule 11's failures: each group of core sub-packages that import each other."""
    return [
        f"core sub-packages {', '.join(sorted(cycle))} import each other (rule: no package "
        "cycles in core; move the shared value down to core/values/ or invert with a port)"
        for cycle in sorted(cycles(package_graph()), key=sorted)
    ]


def test_no_two_core_subpackages_import_each_other() -> None:
    assert package_cycle_problems() == []


def test_the_checker_finds_a_package_cycle_through_a_function_local_import(
    fake_core: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(fake_core, {"core/high/d.py": "def f():\n    from modes_tui.core.low.a import A\n"})
    _write(fake_core, {"core/low/b.py": "def g():\n    from modes_tui.core.high.c import C\n"})
    monkeypatch.setattr(__import__(__name__, fromlist=["MODULES"]), "MODULES", all_modules())
    assert package_cycle_problems() == [
        "core sub-packages high, low import each other (rule: no package cycles in core; "
        "move the shared value down to core/values/ or invert with a port)"
    ]
    with pytest.raises(AssertionError):
        test_no_two_core_subpackages_import_each_other()


def port_problems() -> list[str]:
    """Ports modules and modules of their own part that import each other (any import counts)."""
    broken = []
    for port in sorted(m for m in MODULES if m.startswith(CORE + ".") and m.endswith(".ports")):
        part = port.rpartition(".")[0]
        for item in imports_of(port):
            if item.target.startswith(part + ".") and any(
                back.target == port for back in imports_of(item.target)
            ):
                broken.append(
                    f"{port} and {item.target} import each other (rule: a ports module imports "
                    "values only; move the value it needs out of the implementation)"
                )
    return sorted(set(broken))


def test_no_port_and_its_implementation_import_each_other() -> None:
    assert port_problems() == []


def test_the_checker_finds_a_port_that_imports_its_implementation(
    fake_core: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(
        fake_core,
        {
            "core/low/ports.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
            "    from modes_tui.core.low.d import D\n",
            "core/low/d.py": "from modes_tui.core.low.ports import P\nD = 1\n",
        },
    )
    monkeypatch.setattr(__import__(__name__, fromlist=["MODULES"]), "MODULES", all_modules())
    assert [line.partition(" (rule")[0] for line in port_problems()] == [
        "modes_tui.core.low.ports and modes_tui.core.low.d import each other"
    ]


def test_no_core_layer_is_unknown() -> None:
    unknown = [name for name in subpackages() if name not in LAYERS]
    assert unknown == [], f"place the new core sub-packages {unknown} in LAYERS"


@pytest.fixture
def fake_core(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A modes_tui tree with two core sub-packages, `low` below `high`, each breaking a rule."""
    root = tmp_path / "modes_tui"
    _write(
        root,
        {
            "__init__.py": "",
            "core/__init__.py": '"""Core.\n\n    errors.py  errors\n    low/  low\n    high/  high\n"""\n',
            "core/errors.py": "",
            "core/low/__init__.py": '"""Low.\n\n    a.py  a\n"""\n__all__ = ["A", "Gone"]\n',
            "core/low/a.py": "A = 1\nB = 2\n_P = 3\n",
            "core/low/b.py": "from modes_tui.core.high.c import C\n",
            "core/high/__init__.py": '"""High.\n\n    c.py  c\n"""\n__all__ = ["C"]\n',
            "core/high/c.py": (
                "from modes_tui.core.low.a import A, B, _P\nfrom modes_tui.core.low import A\nC = A\n"
            ),
        },
    )
    module = __import__(__name__, fromlist=["MODULES"])
    monkeypatch.setattr(module, "PACKAGE", root)
    monkeypatch.setattr(module, "CORE_DIR", root / "core")
    monkeypatch.setattr(module, "MODULES", all_modules())
    monkeypatch.setattr(module, "LAYERS", ("base", "low", "high", "engine"))
    monkeypatch.setattr(module, "KNOWN_UPWARD", ())
    return root


def test_the_checker_finds_a_module_missing_from_its_packages_map(fake_core: Path) -> None:
    assert any("core/low/__init__.py does not list b.py" in line for line in map_problems())
    with pytest.raises(AssertionError):
        test_package_maps_list_every_module()


def test_the_checker_finds_a_public_name_that_nothing_defines(fake_core: Path) -> None:
    assert surface_problems() == [
        "core/low/__init__.py lists 'Gone', which no module of core/low defines"
    ]
    with pytest.raises(AssertionError):
        test_every_core_subpackage_declares_its_public_names()


def test_the_checker_finds_imports_of_names_outside_all(fake_core: Path) -> None:
    found = [line.partition(" (rule")[0] for line in private_imports()]
    assert found == [
        "modes_tui.core.high.c:1 imports B from modes_tui.core.low.a",
        "modes_tui.core.high.c:1 imports _P from modes_tui.core.low.a",
        "modes_tui.core.high.c:2 imports A from modes_tui.core.low",
    ]
    with pytest.raises(AssertionError):
        test_other_packages_import_only_a_subpackages_public_names()


def test_the_checker_finds_an_upward_import_between_core_parts(fake_core: Path) -> None:
    with pytest.raises(
        AssertionError,
        match=r"modes_tui\.core\.low\.b imports modes_tui\.core\.high\.c, which is above it",
    ):
        test_core_parts_depend_downward()
    assert upward_imports() == {("modes_tui.core.low.b", "modes_tui.core.high.c")}


def test_cores_top_level_is_small() -> None:
    extra = [
        f"core/{path.name} sits at core's top level (rule: only {', '.join(sorted(BASE))} "
        "live there; put it in the part it belongs to)"
        for path in sorted(CORE_DIR.glob("*.py"))
        if path.name != "__init__.py" and path.stem not in BASE
    ]
    assert extra == []


# --------------------------------------------------------------------------- the package doors
#
# 8. No core `__init__` looks names up lazily (a module `__getattr__`, a name -> module table):
#    type checkers see such names as `object` (a pack's `from modes_tui.core.tools import tool`
#    would lose its type), and a lazy lookup only hides an import cycle. An `__init__` imports
#    eagerly what its surface really serves, or nothing.
# 9. Every core package whose `__init__` holds code (a function, a class) declares `__all__`,
#    nested ones too (`routing/classifiers/`).


def core_inits() -> list[Path]:
    return sorted(CORE_DIR.rglob("__init__.py"))


def lazy_lookups() -> list[str]:
    found = []
    for init in core_inits():
        for node in ast.parse(init.read_text(encoding="utf-8")).body:
            named = getattr(node, "name", None) or next(
                (t.id for t in getattr(node, "targets", ()) if isinstance(t, ast.Name)), None
            )
            if named in ("__getattr__", "_HOMES"):
                found.append(
                    f"{init.relative_to(PACKAGE.parent)}:{node.lineno} defines {named} (rule: no "
                    "lazy lookups in core's __init__s; import eagerly what the surface serves)"
                )
    return found


def test_no_core_init_looks_names_up_lazily() -> None:
    assert lazy_lookups() == []


def test_every_core_package_with_code_declares_all() -> None:
    missing = [
        f"{init.relative_to(PACKAGE.parent)} holds code but has no __all__ (rule: a public surface)"
        for init in core_inits()
        if any(
            isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            for node in ast.parse(init.read_text(encoding="utf-8")).body
        )
        and declared_all(init) is None
    ]
    assert missing == []


def test_the_documented_pack_import_is_bound_by_the_package() -> None:
    """README's `from modes_tui.core.tools import tool`: bound eagerly, so it is typed."""
    assert {"Tool", "tool"} <= top_level_names(CORE_DIR / "tools" / "__init__.py")


# 10. Every `__all__` is true: each name it lists is bound in the package (its `__init__`
#     imports it from the module that defines it), so `from modes_tui.core.engine import
#     Engine` and `from modes_tui.core.config import *` work. Checked by importing each
#     package first in a fresh interpreter (an import-order cycle between eager `__init__`s
#     shows there too).

ALL_CHECK = """
import importlib, json, sys
name = sys.argv[1]
package = importlib.import_module(name)
listed = list(getattr(package, "__all__", ()))
unbound = [item for item in listed if not hasattr(package, item)]
try:
    exec(f"from {name} import *", {})
    star = None
except Exception as error:
    star = f"{type(error).__name__}: {error}"
print(json.dumps({"listed": len(listed), "unbound": unbound, "star": star}))
"""


def packages() -> list[str]:
    """Every package of modes_tui (a folder with an `__init__.py`), by dotted name."""
    return sorted(
        module_name(init) for init in PACKAGE.rglob("__init__.py") if "__pycache__" not in str(init)
    )


def all_problems(package: str, root: Path) -> list[str]:
    """What is wrong with `package`'s `__all__`, imported first in a fresh interpreter with
    `root` on the path: names it lists but does not bind, a failing `from ... import *`."""
    done = subprocess.run(
        [sys.executable, "-c", ALL_CHECK, package],
        capture_output=True,
        text=True,
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return [f"{package} cannot be imported first in a fresh interpreter: {last}"]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    problems = [
        f"{package}.__all__ lists {item!r}, which {package}/__init__.py does not bind (rule: "
        "import it there from the module that defines it, or drop it from __all__)"
        for item in found["unbound"]
    ]
    if found["star"] is not None:
        problems.append(f"`from {package} import *` fails: {found['star']}")
    return problems


@pytest.mark.parametrize("package", packages())
def test_every_name_in_a_packages_all_is_bound(package: str) -> None:
    assert all_problems(package, PACKAGE.parent) == []


def test_the_all_checker_finds_a_listed_name_the_package_does_not_bind(tmp_path: Path) -> None:
    fake = tmp_path / "fakepkg"
    fake.mkdir()
    (fake / "values.py").write_text("THERE = 1\n")
    (fake / "__init__.py").write_text(
        'from .values import THERE\n\n__all__ = ["THERE", "Missing"]\n'
    )
    problems = all_problems("fakepkg", tmp_path)
    assert problems[0].startswith("fakepkg.__all__ lists 'Missing', which fakepkg/__init__.py")
    assert problems[1].startswith("`from fakepkg import *` fails: AttributeError")
    assert "Missing" in problems[1]


def test_the_all_checker_finds_a_package_that_cannot_be_imported_first(tmp_path: Path) -> None:
    fake = tmp_path / "cyclic"
    fake.mkdir()
    (fake / "__init__.py").write_text('from .a import A\n\n__all__ = ["A"]\n')
    (fake / "a.py").write_text("from cyclic.b import B\n\nA = B\n")
    (fake / "b.py").write_text("from cyclic.a import A\n\nB = 1\n")
    (problem,) = all_problems("cyclic", tmp_path)
    assert problem.startswith("cyclic cannot be imported first in a fresh interpreter: ImportError")


# --------------------------------------------------------------------------- the guide and the doors
#
# 12. CONTRIBUTING.md names only files that exist (its walk of one message follows the code):
#    `core/engine/turn.py`, `modes_tui/cli/main.py`, `tests/x.py`, or a module named alone
#    (`quoted.py`) that some package holds.
# 13. Every package's docstring opens with what it is for, in one line that is a sentence.

GUIDE = PACKAGE.parent / "CONTRIBUTING.md"
_GUIDE_PATH = re.compile(r"`([\w./-]+\.py)`")


def guide_problems(text: str, root: Path) -> list[str]:
    """The `.py` paths the guide names (in backticks) that are not in the tree under `root`."""
    tops = {p.name for p in (root / "modes_tui").iterdir() if (p / "__init__.py").exists()}
    missing = []
    for named in dict.fromkeys(_GUIDE_PATH.findall(text)):
        first = named.split("/")[0]
        if first in ("modes_tui", "tests", "bench", "scripts"):
            found = (root / named).is_file()
        elif first in tops:
            found = (root / "modes_tui" / named).is_file()
        else:  # a module named alone, after the package the sentence is about
            found = any(
                p.as_posix().endswith("/" + named) for p in root.rglob(named.split("/")[-1])
            )
        if not found:
            missing.append(
                f"CONTRIBUTING.md names {named}, which is not there (rule: the guide names the "
                "files the code really has; fix the path or the walk)"
            )
    return missing


def test_the_guide_names_only_files_that_exist() -> None:
    assert guide_problems(GUIDE.read_text(encoding="utf-8"), PACKAGE.parent) == []


def test_the_guide_checker_finds_a_file_that_is_gone(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {"modes_tui/__init__.py": "", "modes_tui/core/__init__.py": "", "modes_tui/core/a.py": ""},
    )
    text = "1. `core/a.py` then `core/gone.py`, `a.py`, `modes_tui/core/b.py` and `b.py`."
    assert [line.split(",")[0] for line in guide_problems(text, tmp_path)] == [
        "CONTRIBUTING.md names core/gone.py",
        "CONTRIBUTING.md names modes_tui/core/b.py",
        "CONTRIBUTING.md names b.py",
    ]


def opening_problems(inits: list[Path], root: Path) -> list[str]:
    """Packages whose docstring does not open with one line that is a sentence (rule 13)."""
    broken = []
    for init in inits:
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")), clean=False)
        lines = (doc or "").split("\n")
        first = lines[0].strip()
        where = init.relative_to(root)
        if not first:
            broken.append(f"{where} has no docstring (rule: say what the package is for)")
        elif not first.endswith(".") or (len(lines) > 1 and lines[1].strip()):
            broken.append(
                f"{where} opens with {first!r}, not one sentence on one line (rule: the first "
                "line says what the package is for; details go below a blank line)"
            )
    return broken


def test_every_package_says_what_it_is_for_in_its_first_line() -> None:
    assert opening_problems(sorted(PACKAGE.rglob("__init__.py")), PACKAGE.parent) == []


def test_the_opening_checker_finds_a_sentence_split_over_two_lines(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "good/__init__.py": '"""Good: one line.\n\nMore here."""\n',
            "split/__init__.py": '"""Split: a sentence that\ngoes on."""\n',
            "none/__init__.py": "X = 1\n",
        },
    )
    found = opening_problems(sorted(tmp_path.glob("*/__init__.py")), tmp_path)
    assert [line.split(" ")[0] for line in found] == ["none/__init__.py", "split/__init__.py"]

"""list_files and search_files skip what the .gitignore files ignore, as ripgrep does
(issue 34): the top one, nested ones, negations, folders not entered; a path the model
names itself is still listed or searched.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from modes_tui.core.errors import ToolError
from modes_tui.core.tools.registry import Tool
from modes_tui.core.tools.workspace import Workspace, file_tools


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src" / "gen").mkdir(parents=True)
    (root / "logs").mkdir()
    (root / ".gitignore").write_text("# build output\n*.log\n!keep.log\nlogs/\n/top.txt\n")
    (root / "src" / ".gitignore").write_text("gen/\nsecret.txt\n")
    (root / "src" / "app.py").write_text("needle = 1\n")
    (root / "src" / "secret.txt").write_text("needle in a nested ignore\n")
    (root / "src" / "gen" / "out.py").write_text("needle = 'generated'\n")
    (root / "src" / "top.txt").write_text("needle: only /top.txt at the top is ignored\n")
    (root / "logs" / "today.txt").write_text("needle in an ignored folder\n")
    (root / "debug.log").write_text("needle in a log\n")
    (root / "keep.log").write_text("needle kept by a negation\n")
    (root / "top.txt").write_text("needle at the top\n")
    return root


def tools(root: Path) -> dict[str, Tool]:
    return {t.name: t for t in file_tools(Workspace(root))}


def listed(root: Path, **arguments: object) -> list[str]:
    text = str(tools(root)["list_files"].function(**arguments))
    return [line.split("  (")[0] for line in text.splitlines()[1:]]


def searched(root: Path, **arguments: object) -> list[str]:
    text = str(tools(root)["search_files"].function(pattern="needle", **arguments))
    return [line.split(":")[0] for line in text.splitlines()[1:]]


def test_a_recursive_listing_skips_what_gitignore_ignores(project: Path) -> None:
    assert listed(project, recursive=True) == [
        ".gitignore",
        "keep.log",
        "src/",
        "src/.gitignore",
        "src/app.py",
        "src/top.txt",
    ]


def test_a_search_skips_what_gitignore_ignores(project: Path) -> None:
    assert searched(project) == ["keep.log", "src/app.py", "src/top.txt"]


def test_a_folder_searched_from_below_still_honours_the_gitignore_above(project: Path) -> None:
    (project / "src" / "trace.log").write_text("needle in a log below\n")
    assert searched(project, path="src") == ["src/app.py", "src/top.txt"]


def test_a_path_named_explicitly_is_still_searched_and_listed(project: Path) -> None:
    assert searched(project, path="debug.log") == ["debug.log"]
    assert searched(project, path="logs") == ["logs/today.txt"]
    assert listed(project, path="logs") == ["today.txt"]
    assert listed(project, path="src/gen") == ["out.py"]


def test_a_link_named_gitignore_is_not_read(project: Path, tmp_path: Path) -> None:
    (tmp_path / "outside-ignore").write_text("*.py\n")
    os.unlink(project / "src" / ".gitignore")
    (project / "src" / ".gitignore").symlink_to(tmp_path / "outside-ignore")
    assert "src/app.py" in searched(project)


def test_without_a_gitignore_everything_is_walked(tmp_path: Path) -> None:
    (tmp_path / "a.log").write_text("needle\n")
    assert searched(tmp_path) == ["a.log"]


def test_an_ignored_file_named_directly_can_still_be_refused_for_other_reasons(
    project: Path,
) -> None:
    (project / "huge.log").write_bytes(b"\0binary")
    with pytest.raises(ToolError, match="binary file"):
        tools(project)["search_files"].function(pattern="x", path="huge.log")

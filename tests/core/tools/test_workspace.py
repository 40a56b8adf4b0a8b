"""The working-directory tools: confinement, caps, and run_command's timeout and kill."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from modes_tui.core.errors import ToolError
from modes_tui.core.tools.registry import Tool
from modes_tui.core.tools.workspace import Workspace, command_tool, file_tools
from tests.support.fake_provider import wait_until


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "main.py").write_text("def main():\n    print('hello')\n\nmain()\n")
    (root / "README.md").write_text("# Demo\nTODO: write docs\n")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("TODO inside git\n")
    (root / "blob.bin").write_bytes(b"\x00\x01\x02TODO")
    (tmp_path / "secret.txt").write_text("TODO secret outside\n")
    return root


def running_in_group(group: int) -> list[int]:
    """The processes of process group `group` still running: dead ones waiting for their
    parent to reap them (zombies; an orphan's parent is PID 1, which reaps when it gets to
    it) run nothing and do not count."""
    running = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # gone while we looked
        # pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses
        state, _ppid, pgrp = stat[stat.rindex(")") + 2 :].split()[:3]
        if int(pgrp) == group and state not in ("Z", "X"):
            running.append(int(entry.name))
    return running


def tools_for(root: Path, **caps: int) -> dict[str, Tool]:
    return {t.name: t for t in file_tools(Workspace(root, **caps))}


async def call(t: Tool, **arguments: object) -> str:
    assert t.check_arguments(arguments) is None
    return str(await t.invoke(arguments))


async def test_read_file_reads_text_and_line_ranges(project: Path) -> None:
    read = tools_for(project)["read_file"]
    assert await call(read, path="src/main.py") == "def main():\n    print('hello')\n\nmain()\n"
    part = await call(read, path="src/main.py", start_line=2, end_line=2)
    assert part == "[src/main.py, lines 2-2 of 4]\n    print('hello')\n"


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("../secret.txt", "outside the working directory"),
        ("/etc/passwd", "outside the working directory"),
        ("src/../../secret.txt", "outside the working directory"),
        ("missing.txt", "does not exist"),
        ("src", "is a directory"),
        ("blob.bin", "binary file"),
    ],
)
async def test_read_file_refuses_with_a_message_the_model_reads(
    project: Path, path: str, message: str
) -> None:
    with pytest.raises(ToolError, match=message):
        await call(tools_for(project)["read_file"], path=path)


async def test_a_symlink_that_leads_outside_is_refused(project: Path) -> None:
    (project / "escape.txt").symlink_to(project.parent / "secret.txt")
    (project / "outside").symlink_to(project.parent)
    tools = tools_for(project)
    with pytest.raises(ToolError, match="symbolic link that leads outside"):
        await call(tools["read_file"], path="escape.txt")
    with pytest.raises(ToolError, match="symbolic link that leads outside"):
        await call(tools["read_file"], path="outside/secret.txt")
    with pytest.raises(ToolError, match="symbolic link that leads outside"):
        await call(tools["list_files"], path="outside")
    listing = await call(tools["list_files"])
    assert "escape.txt@ (link outside the working directory, not followed)" in listing
    found = await call(tools["search_files"], pattern="secret")
    assert found.startswith("no matches")


async def test_a_symlink_inside_the_directory_is_fine(project: Path) -> None:
    (project / "alias.py").symlink_to(project / "src" / "main.py")
    assert "print('hello')" in await call(tools_for(project)["read_file"], path="alias.py")


async def test_read_file_is_capped(project: Path) -> None:
    (project / "big.txt").write_text("".join(f"line {i:04}\n" for i in range(1000)))
    text = await call(tools_for(project, max_read_chars=100)["read_file"], path="big.txt")
    assert text.startswith("line 0000\n")
    assert "cut at line 11 of 1000" in text and "start_line=11" in text
    assert len(text) < 300


async def test_list_files_lists_and_skips_version_control(project: Path) -> None:
    tools = tools_for(project)
    top = await call(tools["list_files"])
    assert "src/" in top and "README.md  (" in top
    deep = await call(tools["list_files"], recursive=True, pattern="*.py")
    assert deep.splitlines()[1:] == ["src/main.py  (39 B)"]
    capped = await call(tools_for(project, max_entries=2)["list_files"], recursive=True)
    assert "first 2" in capped


async def test_search_files_finds_lines_and_skips_binaries_and_git(project: Path) -> None:
    search = tools_for(project)["search_files"]
    found = await call(search, pattern="todo")
    assert found.splitlines() == ["1 matches", "README.md:2: TODO: write docs"]
    assert "print" in await call(search, pattern=r"print\(", glob="*.py")
    with pytest.raises(ToolError, match="not a valid regular expression"):
        await call(search, pattern="(")
    capped = await call(tools_for(project, max_matches=1)["search_files"], pattern="m")
    assert "stopped early" in capped


async def test_run_command_runs_in_the_working_directory(project: Path) -> None:
    run = command_tool(Workspace(project))
    assert run.needs_confirmation
    result = await run.invoke({"command": "pwd; echo oops >&2; exit 3"})
    assert result["exit_code"] == 3
    assert result["output"] == f"{project.resolve()}\noops\n"


async def test_run_command_caps_output_keeping_head_and_tail(project: Path) -> None:
    run = command_tool(Workspace(project), output_cap=100)
    result = await run.invoke({"command": "seq 1 2000"})
    lines = result["output"].splitlines()
    assert lines[0] == "1" and lines[-1] == "2000"
    assert "bytes of output cut" in result["output"]
    assert len(result["output"]) < 200


async def test_run_command_times_out_and_kills_the_command(project: Path) -> None:
    # 2 s: a loaded machine can take most of a second to start bash and read its first line
    run = command_tool(Workspace(project), timeout=2.0)
    result = await run.invoke({"command": "echo start; sleep 30; echo never"})
    assert result["exit_code"] is None
    assert result["timed_out"] == "stopped after 2 seconds"
    assert result["output"] == "start\n"


async def test_cancelling_run_command_kills_its_process_group(project: Path) -> None:
    run = command_tool(Workspace(project))
    task = asyncio.create_task(run.invoke({"command": "echo $$ > pid; sleep 30 & wait"}))
    assert await asyncio.to_thread(
        wait_until, lambda: (project / "pid").exists() and (project / "pid").read_text().strip()
    )
    pid = int((project / "pid").read_text())
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    assert await asyncio.to_thread(wait_until, lambda: not running_in_group(pid), 15.0)


async def test_a_cancel_while_the_command_starts_kills_what_it_started(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A loaded machine: the command runs (and forks) before asyncio has finished starting
    it, and the turn is cancelled right then. Nothing it started may outlive the turn."""
    real_start = asyncio.create_subprocess_shell
    started = asyncio.Event()

    async def slow_start(*args: Any, **kwargs: Any) -> asyncio.subprocess.Process:
        process = await real_start(*args, **kwargs)
        # the shell's `>` makes the file before `echo` writes into it: wait for its content
        assert await asyncio.to_thread(
            wait_until,
            lambda: (project / "pid").exists() and (project / "pid").read_text().strip(),
            30.0,
        )
        started.set()
        await asyncio.sleep(5)  # still "starting" when the cancel comes
        return process

    monkeypatch.setattr(asyncio, "create_subprocess_shell", slow_start)
    run = command_tool(Workspace(project))
    task = asyncio.create_task(run.invoke({"command": "sleep 30 & echo $$ > pid; wait"}))
    await asyncio.wait_for(started.wait(), 30)
    pid = int((project / "pid").read_text())
    assert running_in_group(pid)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    assert await asyncio.to_thread(wait_until, lambda: not running_in_group(pid), 15.0)


def test_read_file_refuses_a_fifo_instead_of_blocking(tmp_path: Path) -> None:
    from modes_tui.core.tools.toolbox import default_registry

    os.mkfifo(tmp_path / "pipe")
    read_file = default_registry(tmp_path).get("read_file")
    assert read_file is not None
    with pytest.raises(ToolError, match="not a regular file"):
        read_file.function(path="pipe")


def test_read_file_cuts_one_enormous_line(tmp_path: Path) -> None:
    from modes_tui.core.tools.toolbox import default_registry

    (tmp_path / "min.js").write_text("x" * 200_000 + "\nsecond line\n")
    read_file = default_registry(tmp_path).get("read_file")
    assert read_file is not None
    text = read_file.function(path="min.js")
    assert len(text) < 30_000 and "cut at line 1 of 2" in text

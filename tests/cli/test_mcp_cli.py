"""MCP through the command line: `chat --plain` starts a mode's server and stops it at exit,
`modes-tui tools` lists each mode's tools with their source. Real servers from PyPI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.mcp_support import CLI, MARK, REPO, make_git_repo, marked_processes

MODES: dict[str, dict[str, Any]] = {
    "chat": {"description": "Everyday chat.", "keywords": ["hello"]},
    "clock": {"description": "Times.", "keywords": ["time"], "mcp": ["time"]},
}


@pytest.fixture
def mark() -> str:
    return uuid.uuid4().hex


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    return make_git_repo(tmp_path / "repo")


def test_chat_plain_starts_the_server_for_its_mode_and_stops_it_at_exit(
    write_pack: Callable[..., Path], modes_home: Path, mark: str
) -> None:
    config = modes_home / "config" / "config.yaml"
    config.parent.mkdir(parents=True)
    config.write_text(
        json.dumps(
            {
                "mcp_servers": {
                    "time": {
                        "command": sys.executable,
                        "args": ["-m", "mcp_server_time"],
                        "env": {MARK: mark},
                    }
                }
            }
        )
    )
    folder = write_pack(router={"classifier": "keyword", "fallback": "chat"}, modes=MODES)
    env = {**os.environ, "MODES_TUI_HOME": str(modes_home), "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [*CLI, "--model", "scripted/echo", "chat", "--plain", "--json", "--profiles", str(folder)],
        input="what time is it\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    events = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    built = [e for e in events if e["type"] == "request_built"]
    offered = [tool["function"]["name"] for tool in built[0]["request"]["tools"]]
    assert offered == ["time__get_current_time", "time__convert_time"]
    assert marked_processes(mark) == []  # the REPL stopped the server before exiting


def test_tools_verb_lists_each_modes_tools_with_their_source(
    write_pack: Callable[..., Path], modes_home: Path, git_repo: Path, mark: str
) -> None:
    config = modes_home / "config" / "config.yaml"
    config.parent.mkdir(parents=True)
    config.write_text(
        json.dumps(
            {
                "mcp_servers": {
                    "git": {
                        "command": sys.executable,
                        "args": ["-m", "mcp_server_git", "--repository", str(git_repo)],
                        "env": {MARK: mark},
                        "trust": True,
                    },
                    "nope": {"command": "no-such-mcp-server-here"},
                }
            }
        )
    )
    modes = {
        "chat": {"description": "Everyday chat."},
        "repo": {"description": "Git work.", "tools": ["read_file"], "mcp": ["git"]},
        "broken": {"description": "Missing server.", "mcp": ["nope"]},
    }
    folder = write_pack(router={"classifier": "keyword", "fallback": "chat"}, modes=modes)
    env = {**os.environ, "MODES_TUI_HOME": str(modes_home), "PYTHONPATH": str(REPO)}
    command = [*CLI, "tools", "--profiles", str(folder)]

    out = subprocess.run(
        [*command, "--mode", "repo", "--json"], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    (mode,) = json.loads(out.stdout)["modes"]
    sources = {tool["name"]: (tool["source"], tool["confirm"]) for tool in mode["tools"]}
    assert sources["read_file"] == ("built-in", False)
    assert sources["git__git_status"] == ("mcp:git", False)
    assert mode["problems"] == []

    out = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 1  # a server that cannot start is a failure scripts can see
    assert "read_file  " in out.stdout and "[mcp:git]" in out.stdout
    assert (
        "! MCP server 'nope' could not start: command 'no-such-mcp-server-here' not found"
        in out.stdout
    )
    assert marked_processes(mark) == []

    out = subprocess.run(
        [*command, "--mode", "nosuch"], capture_output=True, text=True, env=env, timeout=60
    )
    assert out.returncode == 1 and "unknown mode 'nosuch'" in out.stderr

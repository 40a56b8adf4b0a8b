"""Helpers for the MCP tests: the CLI as a subprocess, and finding a server's processes."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from modes_tui.mcp.config import McpServer

REPO = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-c", "import sys; from modes_tui.cli import main; sys.exit(main())"]
MARK = "MODES_TUI_TEST_MCP_MARK"
"""An environment variable every server started by a test carries, to find its processes."""


def marked_processes(mark: str) -> list[int]:
    """Pids of live (or zombie) processes whose environment carries `MARK=mark`."""
    found: list[int] = []
    needle = f"{MARK}={mark}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def wait_until_gone(pid: int, timeout: float = 10.0) -> bool:
    """True once /proc no longer lists `pid`: dead *and* reaped, so not a zombie."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not Path(f"/proc/{pid}").exists():
            return True
        time.sleep(0.02)
    return False


def make_git_repo(repo: Path) -> Path:
    """A real git repository with one commit, one modified file and one new file."""
    repo.mkdir()

    def git(*args: str) -> None:
        subprocess.run(
            ["git", "-c", "user.name=T", "-c", "user.email=t@example.com", *args],
            cwd=repo,
            check=True,
            capture_output=True,
        )

    git("init", "-q")
    (repo / "tracked.txt").write_text("one\n")
    git("add", "tracked.txt")
    git("commit", "-q", "-m", "first")
    (repo / "tracked.txt").write_text("two\n")
    (repo / "brand-new.txt").write_text("hello\n")
    return repo


def stdio(name: str, module: str, *args: str, mark: str, trust: bool = False) -> McpServer:
    """A stdio server run as `python -m module`, marked so a test can find its process."""
    return McpServer(
        name=name,
        transport="stdio",
        command=sys.executable,
        args=("-m", module, *args),
        env={MARK: mark},
        trust=trust,
        start_timeout=60.0,
    )

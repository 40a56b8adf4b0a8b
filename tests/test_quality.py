"""ruff and mypy run as part of the test command, so CI fails on what they find."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
TARGETS = [
    name
    for name in ("modes_tui", "tests", "bench", "scripts/screenshots.py", "profiles")
    if (REPO / name).exists()
]


def run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True)


def test_ruff_lint_is_clean() -> None:
    result = run(str(BIN / "ruff"), "check", *TARGETS)
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_is_clean() -> None:
    result = run(str(BIN / "ruff"), "format", "--check", *TARGETS)
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_is_clean() -> None:
    result = run(str(BIN / "mypy"))
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_is_clean_on_the_shipped_packs_own_tools() -> None:
    # pack tools are files, not a package of modes_tui: check them with the same settings,
    # each pack folder standing as a package so their relative imports resolve
    files = sorted(str(p.relative_to(REPO / "profiles")) for p in REPO.glob("profiles/*/*.py"))
    assert files, "the support pack's tools.py should be found"
    config = ["--config-file", str(REPO / "pyproject.toml"), "--explicit-package-bases"]
    result = subprocess.run(
        [str(BIN / "mypy"), *config, *files],
        cwd=REPO / "profiles",
        env={**os.environ, "MYPYPATH": str(REPO)},  # this checkout's modes_tui
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr

"""ruff and mypy run as part of the test command, so CI fails on what they find."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
TARGETS = [
    name
    for name in ("modes_tui", "tests", "bench", "scripts/screenshots.py")
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

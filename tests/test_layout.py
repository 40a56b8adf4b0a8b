"""The tests mirror the code's layers: at most 20 test files sit directly in tests/.

A new test goes in the folder of the layer it tests (tests/core/<part>, tests/store, tests/tui,
tests/repl, tests/cli, tests/frontend, tests/llm, tests/mcp, tests/runtime; CONTRIBUTING.md,
"Tests"); tests/ itself keeps the checks that span the whole checkout. Helpers shared by tests
live in tests/support, never in a test file.
"""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent
MOST_AT_THE_TOP = 20


def test_at_most_20_test_files_sit_directly_in_tests() -> None:
    top = sorted(path.name for path in TESTS.glob("test_*.py"))
    assert len(top) <= MOST_AT_THE_TOP, (
        f"{len(top)} test files sit directly in tests/ (at most {MOST_AT_THE_TOP}): "
        f"move the ones that test one layer into its folder (CONTRIBUTING.md, Tests): {top}"
    )


def test_every_test_folder_is_a_package_so_module_names_stay_unique() -> None:
    folders = {path.parent for path in TESTS.rglob("test_*.py")}
    missing = sorted(
        str(folder.relative_to(TESTS.parent))
        for folder in folders
        if not (folder / "__init__.py").is_file()
    )
    assert missing == [], f"add an empty __init__.py to each of: {missing}"


def test_support_modules_hold_no_tests() -> None:
    support = TESTS / "support"
    assert support.is_dir()
    stray = sorted(path.name for path in support.glob("test_*.py"))
    assert stray == [], f"tests/support is for helpers; move these test files out: {stray}"

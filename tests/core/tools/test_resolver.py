"""Where a path really is, and what the mode's rules say about the file there (issue 29
item 1), plus the policy globs' gitignore semantics (issue 34).

The resolver walks a path by descriptor and gives its real path under the working
directory (a file still to be created gets its nearest existing folder's real path); the
access rules judge that real path and the descriptor's fstat (hard links).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from modes_tui.core.edits.globs import PathGlobs, check_glob
from modes_tui.core.edits.policy import DEFAULT_DENY, Policy, read_policy
from modes_tui.core.errors import ToolError
from modes_tui.core.tools.access import FileRules, check, literal_globs
from modes_tui.core.tools.confined import ConfinedRoot, OutsideError
from modes_tui.core.tools.registry import known_tool_names
from modes_tui.core.tools.resolver import resolve


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("print('hi')\n")
    (root / "README.md").write_text("# readme\n")
    (root / ".env").write_text("TOKEN=hunter2\n")
    return root


def resolved(root: Path, raw: str) -> tuple[str, str, bool]:
    with ConfinedRoot(root) as confined:
        found = resolve(confined, raw)
    return found.given, found.real, found.exists


# --------------------------------------------------------------------------- the resolver


def test_a_missing_file_behind_a_folder_link_resolves_to_its_real_place(repo: Path) -> None:
    (repo / "g").symlink_to(".git")
    assert resolved(repo, "g/hooks/pre-commit") == (
        "g/hooks/pre-commit",
        ".git/hooks/pre-commit",
        False,
    )
    assert resolved(repo, "g/new/deeper/file") == (
        "g/new/deeper/file",
        ".git/new/deeper/file",
        False,
    )
    assert resolved(repo, "g/config") == ("g/config", ".git/config", True)


def test_a_link_up_a_level_resolves_to_the_top(repo: Path) -> None:
    (repo / "src" / "out").symlink_to("..")
    assert resolved(repo, "src/out/README.md") == ("src/out/README.md", "README.md", True)
    assert resolved(repo, "src/out/new.txt") == ("src/out/new.txt", "new.txt", False)


def test_a_link_leaving_the_working_folder_is_refused(repo: Path, tmp_path: Path) -> None:
    (repo / "out").symlink_to(tmp_path)
    (repo / "abs").symlink_to("/etc")
    for raw in ("out/anything.txt", "out", "abs/passwd", "../repo-sibling"):
        with pytest.raises(OutsideError, match="outside the working directory"):
            resolved(repo, raw)


def test_a_plain_path_is_its_own_real_path(repo: Path) -> None:
    assert resolved(repo, "./src/../src/app.py") == ("src/app.py", "src/app.py", True)
    assert resolved(repo, ".") == (".", ".", True)


# --------------------------------------------------------------------------- the rules


def judged(root: Path, rules: FileRules, raw: str, *, writing: bool) -> str | None:
    with ConfinedRoot(root) as confined:
        found = resolve(confined, raw)
        refusal = check(rules, confined, found.real, found.status, writing=writing)
    return None if refusal is None else f"{refusal.source}: {refusal.reason}"


def test_the_rules_look_at_the_real_path_not_the_name(repo: Path) -> None:
    (repo / "g").symlink_to(".git")
    (repo / "src" / "out").symlink_to("..")
    policy, problems = read_policy({"paths": {"write": ["src/**"]}}, known_tool_names())
    assert problems == []
    rules = policy.file_rules()
    refused = judged(repo, rules, "g/hooks/pre-commit", writing=True)
    assert refused is not None and refused.startswith("paths.deny:")
    assert "`.git/hooks/pre-commit`" in refused and "(paths.deny: .git/**)" in refused
    outside_src = judged(repo, rules, "src/out/README.md", writing=True)
    assert outside_src is not None and outside_src.startswith("paths.write:")
    assert "`README.md`" in outside_src
    assert judged(repo, rules, "src/app.py", writing=True) is None
    assert judged(repo, rules, "src/out/README.md", writing=False) is None  # reading is fine


def test_a_hard_link_is_refused_by_default_and_says_how_to_allow_it(repo: Path) -> None:
    os.link(repo / ".env", repo / "notes.txt")
    refused = judged(repo, Policy().file_rules(), "notes.txt", writing=False)
    assert refused == (
        "paths.hard_links: `notes.txt` is a hard link (the same file has 2 names), so it may "
        "be another name of a file this mode may not touch; it was not read. A mode that "
        "works with hard-linked files (package stores such as pnpm's use them) allows them "
        "with `paths: {hard_links: allow}` in its profile"
    )
    assert "it was not written" in str(judged(repo, FileRules(), "notes.txt", writing=True))


def test_allowed_hard_links_still_never_reach_a_denied_file(repo: Path) -> None:
    os.link(repo / ".env", repo / "notes.txt")
    (repo / "store.txt").write_text("shared\n")
    os.link(repo / "store.txt", repo / "src" / "store-link.txt")
    policy, problems = read_policy({"paths": {"hard_links": "allow"}}, known_tool_names())
    assert problems == [] and policy.hard_links
    rules = policy.file_rules()
    refused = judged(repo, rules, "notes.txt", writing=False)
    assert refused is not None and refused.startswith("paths.deny:")
    assert "`notes.txt` is the same file as `.env` (a hard link)" in refused
    assert judged(repo, rules, "src/store-link.txt", writing=False) is None


def test_only_literal_deny_globs_are_compared_by_inode() -> None:
    assert literal_globs(DEFAULT_DENY) == (".env",)
    assert literal_globs(("config/secrets.yml", "*.pem", "build/", "\\*x")) == (
        "config/secrets.yml",
        "build",
    )


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("maybe", "'maybe' is not allow or deny"),
        (["allow"], "['allow'] is not allow or deny"),
    ],
)
def test_a_bad_hard_links_value_is_named(value: object, message: str) -> None:
    policy, problems = read_policy({"paths": {"hard_links": value}}, known_tool_names())
    [(key, text)] = problems
    assert key == "paths.hard_links" and text.startswith(message)
    assert not policy.hard_links  # a bad value keeps the safe default


def test_hard_links_appear_in_the_summary_and_the_paths_line() -> None:
    policy, _ = read_policy({"paths": {"hard_links": "allow"}}, known_tool_names())
    assert policy.summary()["paths"]["hard_links"] == "allow"
    assert policy.paths_text().endswith("hard links allowed")
    assert Policy().summary()["paths"]["hard_links"] == "deny"


# --------------------------------------------------------------------------- globs (issue 34)


def test_a_double_star_inside_a_name_does_not_cross_folders() -> None:
    globs = PathGlobs(("a**b",))
    assert globs.match("axxb") == "a**b"
    assert globs.match("a/x/b") is None  # the old translator let `**` cross `/` here


def test_a_backslash_escapes_a_wildcard() -> None:
    globs = PathGlobs(("\\*.txt",))
    assert globs.match("*.txt") == "\\*.txt"
    assert globs.match("notes.txt") is None  # the old translator read `\*` as a wildcard


def test_gitignore_semantics_the_policy_relies_on() -> None:
    deny = PathGlobs(DEFAULT_DENY)
    assert deny.match(".git") == ".git/**"  # the folder itself, not only what is in it
    assert deny.match(".git/hooks/pre-commit") == ".git/**"
    assert deny.match("app/.env") == ".env"
    assert deny.match("deep/er/key.pem") == "**/*.pem"
    assert deny.match("src/app.py") is None
    anchored = PathGlobs(("docs/*.md", "build"))
    assert anchored.match("docs/a.md") == "docs/*.md"
    assert anchored.match("x/docs/a.md") is None
    assert anchored.match("docs/x/a.md") is None
    assert anchored.match("build/out/x.o") == "build"


@pytest.mark.parametrize(
    ("glob", "problem"),
    [
        ("", "is empty"),
        ("/etc/**", "must be relative to the working directory"),
        ("!keep", "cannot be a negation"),
        ("#x", "starts with #"),
        ("a/../b", "cannot climb out"),
        ("a/[b", "has a `[` without its `]` (at character 3)"),
    ],
)
def test_a_glob_that_cannot_be_used_says_why(glob: str, problem: str) -> None:
    found = check_glob(glob)
    assert found is not None and found.startswith(problem)


def test_a_refused_path_is_a_tool_error_with_the_walks_message(repo: Path) -> None:
    with pytest.raises(ToolError, match="NUL"):
        resolved(repo, "a\0b")

"""Edit tools' core: confined atomic writes, exact-one-match edits, safe diffs, the policy
format, checkpoints and undo (issue 23). The engine flows are in test_edits_flow.py."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from modes_tui.core.edits import (
    DEFAULT_DENY,
    ChangedOnDisk,
    Checkpoint,
    Editor,
    PathGlobs,
    Policy,
    diff_lines,
    read_policy,
    unified_diff,
)
from modes_tui.core.errors import DeclarationError, ToolError
from modes_tui.core.packs.profiles import load_pack
from modes_tui.core.tools.registry import known_tool_names
from tests.conftest import PackWriter

BUGGY = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n"


def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "calc.py").write_text(BUGGY, encoding="utf-8")
    return root


# --------------------------------------------------------------------------- edit_file


def test_edit_file_fixes_a_function_and_shows_the_diff(tmp_path: Path) -> None:
    root = project(tmp_path)
    editor = Editor(root)
    arguments = {
        "path": "src/calc.py",
        "old_text": "def add(a, b):\n    return a - b",
        "new_text": "def add(a, b):\n    return a + b",
    }
    change = editor.preview("edit_file", arguments)
    assert change.summary == "change src/calc.py (+1 -1)"
    assert "-    return a - b\n+    return a + b" in change.diff
    assert (root / "src/calc.py").read_text() == BUGGY  # nothing written by a preview
    result = editor.apply("edit_file", arguments, call_id="c1")
    assert result.startswith("change src/calc.py (+1 -1)")
    assert (root / "src/calc.py").read_text() == BUGGY.replace("a - b", "a + b", 1)
    [checkpoint] = editor.checkpoints.items
    assert (checkpoint.path, checkpoint.before, checkpoint.call_id) == ("src/calc.py", BUGGY, "c1")


@pytest.mark.parametrize(
    ("old_text", "expected"),
    [
        ("return a * b", "old_text matched nothing in `src/calc.py`"),
        ("return a - b", "old_text matched 2 places in `src/calc.py`"),
        ("", "old_text is empty"),
    ],
)
def test_edit_file_needs_exactly_one_match(tmp_path: Path, old_text: str, expected: str) -> None:
    root = project(tmp_path)
    with pytest.raises(ToolError, match=expected):
        Editor(root).apply(
            "edit_file", {"path": "src/calc.py", "old_text": old_text, "new_text": "x"}
        )
    assert (root / "src/calc.py").read_text() == BUGGY


def test_overlapping_matches_count_as_several(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("aaa")
    with pytest.raises(ToolError, match="matched 2 places"):
        Editor(tmp_path).plan("edit_file", {"path": "a.txt", "old_text": "aa", "new_text": "b"})


def test_edit_file_on_a_missing_file_says_to_use_write_file(tmp_path: Path) -> None:
    with pytest.raises(ToolError, match="does not exist; use write_file"):
        Editor(tmp_path).plan("edit_file", {"path": "nope.py", "old_text": "a", "new_text": "b"})


# --------------------------------------------------------------------------- write_file


def test_write_file_creates_folders_and_keeps_an_existing_files_mode(tmp_path: Path) -> None:
    root = project(tmp_path)
    editor = Editor(root)
    editor.apply("write_file", {"path": "docs/new/notes.md", "content": "# notes\n"})
    assert (root / "docs/new/notes.md").read_text() == "# notes\n"
    script = root / "run.sh"
    script.write_text("echo old\n")
    script.chmod(0o750)
    editor.apply("write_file", {"path": "run.sh", "content": "echo new\n"})
    assert script.read_text() == "echo new\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o750
    assert not [p for p in root.rglob("*.tmp")]  # no temp file left behind


def test_writing_the_same_text_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("same\n")
    editor = Editor(tmp_path)
    assert "nothing was written" in editor.apply(
        "write_file", {"path": "a.txt", "content": "same\n"}
    )
    assert editor.checkpoints.items == []


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/passwd-copy", "a/../../x"])
def test_write_file_outside_the_working_directory_is_refused(tmp_path: Path, path: str) -> None:
    root = project(tmp_path)
    with pytest.raises(ToolError, match="outside the working directory"):
        Editor(root).apply("write_file", {"path": path, "content": "pwned"})
    assert not (tmp_path / "outside.txt").exists()


def test_a_link_out_of_the_working_directory_is_not_written_through(tmp_path: Path) -> None:
    root = project(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("keep me\n")
    (root / "link.txt").symlink_to(secret)
    (root / "out").symlink_to(tmp_path)
    for path in ("link.txt", "out/secret.txt", "out/new.txt"):
        with pytest.raises(ToolError, match="outside the working directory"):
            Editor(root).apply("write_file", {"path": path, "content": "pwned"})
    assert secret.read_text() == "keep me\n"
    assert not (tmp_path / "new.txt").exists()


def test_a_link_inside_is_followed_and_stays_a_link(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "calc_link.py").symlink_to("src/calc.py")
    change = Editor(root).plan("write_file", {"path": "calc_link.py", "content": "x = 1\n"})
    assert change.path == "src/calc.py"
    Editor(root).apply("write_file", {"path": "calc_link.py", "content": "x = 1\n"})
    assert (root / "calc_link.py").is_symlink()
    assert (root / "src/calc.py").read_text() == "x = 1\n"


def test_special_and_binary_files_are_refused(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01\xff")
    (tmp_path / "folder").mkdir()
    cases = {"pipe": "FIFO", "blob.bin": "not a UTF-8 text file", "folder": "folder"}
    for path, expected in cases.items():
        with pytest.raises(ToolError, match=expected):
            Editor(tmp_path).apply("write_file", {"path": path, "content": "x"})
    assert (tmp_path / "blob.bin").read_bytes() == b"\x00\x01\xff"


def test_a_file_changed_after_its_diff_was_shown_is_not_overwritten(tmp_path: Path) -> None:
    root = project(tmp_path)
    editor = Editor(root)
    arguments = {"path": "src/calc.py", "content": "print('model')\n"}
    editor.preview("write_file", arguments)
    (root / "src/calc.py").write_text("print('user edit')\n")  # the user saved meanwhile
    with pytest.raises(ChangedOnDisk, match="changed on disk since it was read"):
        editor.apply("write_file", arguments)
    assert (root / "src/calc.py").read_text() == "print('user edit')\n"
    assert editor.checkpoints.items == []


def test_a_file_created_after_its_diff_was_shown_is_not_overwritten(tmp_path: Path) -> None:
    editor = Editor(tmp_path)
    arguments = {"path": "new.txt", "content": "model\n"}
    editor.preview("write_file", arguments)
    (tmp_path / "new.txt").write_text("user\n")
    with pytest.raises(ChangedOnDisk):
        editor.apply("write_file", arguments)
    assert (tmp_path / "new.txt").read_text() == "user\n"


# --------------------------------------------------------------------------- diffs


def test_hostile_text_in_a_diff_is_shown_escaped_never_raw(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("title\x1b]0;pwned\x07\nok\n")
    change = Editor(tmp_path).plan(
        "write_file", {"path": "a.txt", "content": "\x1b[2J\x1b[31mred\u202eevil\r\nok\n"}
    )
    for raw in ("\x1b", "\x07", "\u202e", "\r"):
        assert raw not in change.diff
    assert "-title\\x1b]0;pwned\\x07" in change.diff
    assert "+\\x1b[2J\\x1b[31mred\\u202eevil\\x0d" in change.diff


def test_diff_lines_have_kinds_and_note_a_missing_final_newline() -> None:
    diff = unified_diff("a.py", "-- x\nkeep\n", "y\nkeep")
    kinds = [(line.kind, line.text) for line in diff_lines(diff)]
    assert kinds[:3] == [
        ("file", "--- a/a.py"),
        ("file", "+++ b/a.py"),
        ("hunk", "@@ -1,2 +1,2 @@"),
    ]
    assert ("remove", "--- x") in kinds  # a removed line that looks like a header
    assert ("note", "\\ No newline at end of file") in kinds
    assert unified_diff("a.py", None, "new\n").startswith("--- /dev/null\n+++ b/a.py")


# --------------------------------------------------------------------------- policy


@pytest.mark.parametrize(
    ("glob", "path", "matches"),
    [
        (".env", ".env", True),
        (".env", "app/.env", True),
        (".env", ".envrc", False),
        ("**/*.pem", "certs/deep/key.pem", True),
        ("**/*.pem", "key.pem", True),
        (".git/**", ".git", True),
        (".git/**", ".git/config", True),
        (".git/**", "src/.git/config", False),
        ("src/**", "src/a/b.py", True),
        ("src/*.py", "src/a/b.py", False),
        ("docs/*.md", "x/docs/a.md", False),
        ("build", "build/out.txt", True),
        ("[!a]*.txt", "b.txt", True),
    ],
)
def test_path_globs(glob: str, path: str, matches: bool) -> None:
    assert (PathGlobs((glob,)).match(path) is not None) is matches


def test_a_rule_comes_from_the_name_then_a_pattern_then_the_default() -> None:
    policy, problems = read_policy(
        {
            "permissions": {
                "github__*": "deny",
                "github__search": "allow",
                "run_command": "deny",
                "default": "ask",
            }
        },
        known_tool_names(),
    )
    assert problems == []
    assert policy.rule("github__search", asks=False).permission == "allow"
    assert policy.rule("github__push", asks=False).source == "permissions.github__*"
    assert policy.rule("run_command", asks=True).permission == "deny"
    assert policy.rule("read_file", asks=False).source == "permissions.default"


def test_the_shipped_default_allows_reads_and_asks_before_writes_and_commands() -> None:
    policy = Policy()
    assert policy.rule("read_file", asks=False).permission == "allow"
    assert policy.rule("write_file", asks=True).permission == "ask"
    assert policy.rule("run_command", asks=True).permission == "ask"
    assert policy.deny.globs == DEFAULT_DENY
    assert policy.denied("config/.env") == ".env"
    assert policy.may_write("anything/at/all.py")


def test_a_bad_policy_is_named_with_its_file_and_key(write_pack: PackWriter) -> None:
    folder = write_pack(
        modes={
            "chat": {
                "description": "c",
                "permissions": {"writ_file": "allow", "run_command": "sometimes"},
                "paths": {"write": ["/etc/**"], "deny": ["a/[b"], "read": []},
            }
        }
    )
    with pytest.raises(DeclarationError) as caught:
        load_pack(profiles_dir=folder)
    found = [str(problem) for problem in caught.value.problems]
    expected = [
        "testpack/chat.yaml: permissions.writ_file: unknown tool 'writ_file'; did you mean 'write_file'?",
        "testpack/chat.yaml: permissions.run_command: 'sometimes' is not one of allow, ask, deny",
        "testpack/chat.yaml: paths.read: unknown key; paths takes `write:`, `deny:` and `hard_links:`",
        "testpack/chat.yaml: paths.write[0]: '/etc/**' must be relative to the working directory",
        "testpack/chat.yaml: paths.deny[0]: 'a/[b' has a `[` without its `]`",
    ]
    for text in expected:
        assert any(problem.startswith(text) for problem in found), (text, found)


def test_a_valid_policy_loads_with_the_profile(write_pack: PackWriter) -> None:
    folder = write_pack(
        modes={
            "chat": {
                "description": "c",
                "permissions": {"write_file": "allow", "default": "deny"},
                "paths": {"write": ["src/**"], "deny": []},
            }
        }
    )
    policy = load_pack(profiles_dir=folder).fallback.policy
    assert policy.rule("write_file", asks=True).permission == "allow"
    assert policy.rule("read_file", asks=False).permission == "deny"
    assert policy.may_write("src/a.py") and not policy.may_write("README.md")
    assert policy.denied(".env") is None  # `deny: []` opens it


# --------------------------------------------------------------------------- undo


def turns_of_writes(root: Path) -> Editor:
    turn = {"now": 1}
    editor = Editor(root, turn=lambda: turn["now"])
    editor.apply("write_file", {"path": "src/calc.py", "content": "v1\n"})
    editor.apply("write_file", {"path": "new.txt", "content": "created\n"})
    turn["now"] = 2
    editor.apply("edit_file", {"path": "src/calc.py", "old_text": "v1", "new_text": "v2"})
    return editor


def test_undo_restores_the_last_turn_then_the_one_before(tmp_path: Path) -> None:
    root = project(tmp_path)
    editor = turns_of_writes(root)
    checkpoints = editor.checkpoints
    result = checkpoints.undo(checkpoints.plan_undo(1, root), root)
    assert (result.turns, result.restored) == ((2,), ("src/calc.py",))
    assert (root / "src/calc.py").read_text() == "v1\n"
    result = checkpoints.undo(checkpoints.plan_undo(1, root), root)
    assert result.turns == (1,) and result.removed == ("new.txt",)
    assert (root / "src/calc.py").read_text() == BUGGY
    assert not (root / "new.txt").exists()
    assert "nothing to undo" in checkpoints.undo(checkpoints.plan_undo(1, root), root).text()


def test_undo_n_turns_at_once_goes_back_to_before_the_first(tmp_path: Path) -> None:
    root = project(tmp_path)
    checkpoints = turns_of_writes(root).checkpoints
    result = checkpoints.undo(checkpoints.plan_undo(2, root), root)
    assert result.turns == (2, 1)
    assert (root / "src/calc.py").read_text() == BUGGY
    assert "undid turns 1, 2:" in result.text()


def test_undo_keeps_a_file_changed_since_the_turn_wrote_it(tmp_path: Path) -> None:
    root = project(tmp_path)
    checkpoints = turns_of_writes(root).checkpoints
    (root / "src/calc.py").write_text("the user's own edit\n")
    plan = checkpoints.plan_undo(1, root)
    assert plan.changed == ("src/calc.py",)
    result = checkpoints.undo(plan, root)
    assert result.kept == ("src/calc.py",)
    assert (root / "src/calc.py").read_text() == "the user's own edit\n"
    assert "kept src/calc.py: changed on disk since the turn wrote it" in result.text()


def test_undo_overwrites_a_changed_file_when_told_to(tmp_path: Path) -> None:
    root = project(tmp_path)
    checkpoints = turns_of_writes(root).checkpoints
    (root / "src/calc.py").write_text("the user's own edit\n")
    result = checkpoints.undo(checkpoints.plan_undo(1, root), root, overwrite=True)
    assert result.restored == ("src/calc.py",)
    assert (root / "src/calc.py").read_text() == "v1\n"


def test_a_checkpoint_is_recorded_before_the_file_is_written(tmp_path: Path) -> None:
    root = project(tmp_path)
    seen: list[tuple[Checkpoint, str]] = []

    def record(checkpoint: Checkpoint) -> None:
        seen.append((checkpoint, (root / "src/calc.py").read_text()))

    Editor(root, record=record).apply("write_file", {"path": "src/calc.py", "content": "new\n"})
    [(checkpoint, on_disk)] = seen
    assert on_disk == BUGGY == checkpoint.before  # recorded while the old text was there
    data: dict[str, Any] = checkpoint.to_dict()
    assert data["path"] == "src/calc.py" and data["after_sha256"]


# --------------------------------------------------------------------------- the guard


class Answering:
    """A confirmer that answers `answer` and remembers what it was shown."""

    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.asked: list[tuple[str, Any]] = []

    async def confirm(self, call: Any, tool: Any, preview: Any = None) -> bool:
        self.asked.append((call.name, preview))
        return self.answer


def pending_call(editor: Editor, name: str, arguments: dict[str, Any]) -> Any:
    from modes_tui.core.edits import edit_tools
    from modes_tui.core.engine.verdicts import PendingCall
    from modes_tui.core.model.wire import ToolCall
    from modes_tui.core.tools.workspace import Workspace, file_tools

    tools = {t.name: t for t in (*edit_tools(editor), *file_tools(Workspace(editor.root)))}
    return PendingCall(ToolCall("c1", name, arguments), tools[name], 1, 1, (), ())


async def test_the_guard_asks_with_the_diff_and_a_no_leaves_the_file_untouched(
    tmp_path: Path,
) -> None:
    from modes_tui.core.engine.policy_guard import PolicyGuard
    from modes_tui.core.engine.verdicts import Cancel

    root = project(tmp_path)
    editor = Editor(root)
    confirmer = Answering(False)
    decisions: list[tuple[str, str, bool | None]] = []
    guard = PolicyGuard(
        lambda mode: Policy(),
        root,
        confirmer,
        editor=editor,
        record=lambda d, answer: decisions.append((d.permission, d.source, answer)),
    )
    arguments = {"path": "src/calc.py", "content": "rm -rf\n"}
    verdict = await guard.check(pending_call(editor, "write_file", arguments))
    assert isinstance(verdict, Cancel) and "declined" in verdict.reason
    [(name, preview)] = confirmer.asked
    assert name == "write_file" and "+rm -rf" in preview.diff
    assert decisions == [("ask", "default", False)]
    assert (root / "src/calc.py").read_text() == BUGGY


async def test_a_denied_path_is_refused_without_asking_even_through_a_link(tmp_path: Path) -> None:
    from modes_tui.core.engine.policy_guard import PolicyGuard
    from modes_tui.core.engine.verdicts import Block

    root = project(tmp_path)
    (root / ".env").write_text("TOKEN=secret\n")
    (root / "settings.txt").symlink_to(".env")
    editor = Editor(root)
    confirmer = Answering(True)
    guard = PolicyGuard(lambda mode: Policy(), root, confirmer, editor=editor)
    for name, arguments in [
        ("read_file", {"path": ".env"}),
        ("read_file", {"path": "settings.txt"}),
        ("write_file", {"path": "./sub/../.env", "content": "x"}),
        ("edit_file", {"path": ".git/config", "old_text": "a", "new_text": "b"}),
    ]:
        verdict = await guard.check(pending_call(editor, name, arguments))
        assert isinstance(verdict, Block) and verdict.type == "policy_denied", (name, arguments)
        assert "paths.deny" in verdict.message
    assert confirmer.asked == []
    assert (root / ".env").read_text() == "TOKEN=secret\n"


async def test_allow_runs_without_asking_and_paths_write_limits_writes(tmp_path: Path) -> None:
    from modes_tui.core.engine.policy_guard import PolicyGuard
    from modes_tui.core.engine.verdicts import Block

    root = project(tmp_path)
    policy, _ = read_policy(
        {"permissions": {"write_file": "allow"}, "paths": {"write": ["src/**"]}},
        known_tool_names(),
    )
    editor = Editor(root)
    confirmer = Answering(False)
    guard = PolicyGuard(lambda mode: policy, root, confirmer, editor=editor)
    inside = {"path": "src/new.py", "content": "x = 1\n"}
    assert await guard.check(pending_call(editor, "write_file", inside)) is None
    outside = await guard.check(
        pending_call(editor, "write_file", {"path": "README.md", "content": "x"})
    )
    assert isinstance(outside, Block) and "may write only src/**" in outside.message
    assert confirmer.asked == []


async def test_an_edit_that_cannot_be_planned_is_refused_before_asking(tmp_path: Path) -> None:
    from modes_tui.core.engine.policy_guard import PolicyGuard
    from modes_tui.core.engine.verdicts import Block

    root = project(tmp_path)
    editor = Editor(root)
    confirmer = Answering(True)
    guard = PolicyGuard(lambda mode: Policy(), root, confirmer, editor=editor)
    arguments = {"path": "src/calc.py", "old_text": "return a - b", "new_text": "x"}
    verdict = await guard.check(pending_call(editor, "edit_file", arguments))
    assert isinstance(verdict, Block) and "matched 2 places" in verdict.message
    assert confirmer.asked == []


def test_a_search_skips_what_the_policy_denies(tmp_path: Path) -> None:
    from modes_tui.core.tools.workspace import Workspace, file_tools

    (tmp_path / ".env").write_text("TOKEN=hunter2\n")
    (tmp_path / "app.py").write_text("TOKEN = os.environ['TOKEN']\n")
    policy = Policy()
    tools = {t.name: t for t in file_tools(Workspace(tmp_path, rules=policy.file_rules))}
    found = tools["search_files"].function(pattern="TOKEN")
    assert "app.py" in found and "hunter2" not in found


def test_a_checkpoint_record_round_trips_and_names_a_bad_field() -> None:
    from modes_tui.core.edits import checkpoints
    from modes_tui.core.errors import RecordError
    from modes_tui.core.history import records

    assert checkpoints.SCHEMA_VERSION == records.SCHEMA_VERSION
    checkpoint = Checkpoint(3, "src/a.py", None, "ab" * 32, "--- /dev/null", "write_file", "c9")
    stored = records.CheckpointRecord(checkpoint, at="2026-01-01T00:00:00Z").to_dict()
    assert stored["type"] == "checkpoint" and stored["turn"] == 3 and stored["before"] is None
    parsed = records.parse_record(stored)
    assert isinstance(parsed, records.CheckpointRecord) and parsed.checkpoint == checkpoint
    with pytest.raises(RecordError, match="field 'before'"):
        records.parse_record({**stored, "before": 5})
    with pytest.raises(RecordError, match="field 'path'"):
        records.parse_record({**stored, "path": ""})


# --------------------------------------------------------------------------- the command line


def test_profiles_check_names_a_bad_rule_with_file_and_key(
    write_pack: PackWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    from modes_tui.cli import main

    folder = write_pack(
        modes={"chat": {"description": "c", "permissions": {"run_command": "maybe"}}}
    )
    assert main(["profiles", "--check", "--profiles", str(folder)]) == 1
    err = capsys.readouterr().err
    assert (
        "testpack/chat.yaml: permissions.run_command: 'maybe' is not one of allow, ask, deny" in err
    )


def test_tools_shows_each_tools_permission_and_the_paths(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import json

    from modes_tui.cli import main

    assert main(["tools", "--mode", "code"]) == 0
    out = capsys.readouterr().out
    assert "edit_file     ask (permissions.edit_file)" in out
    assert "read_file     allow (permissions.read_file)" in out
    assert "policy: writes: anywhere in the working directory · denied: .env, .env.*" in out
    assert main(["tools", "--mode", "shell", "--json"]) == 0
    [shell] = json.loads(capsys.readouterr().out)["modes"]
    [command] = [tool for tool in shell["tools"] if tool["name"] == "run_command"]
    assert (command["permission"], command["rule"]) == ("ask", "default")
    assert shell["policy"]["paths"]["deny"][0] == ".env"

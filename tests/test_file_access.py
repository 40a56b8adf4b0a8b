"""Every file the app opens goes through `core.files`, or is on this list with its reason.

`core.files` refuses links, FIFOs and devices, bounds reads and creates private files; a
bare `open()`, `Path.read_text()` or `os.open()` elsewhere would skip all of that (a FIFO
as state.json once hung the app, a link made it overwrite another file). This test reads
the source of `modes_tui` and fails on any such call that is not listed below, and on a
listed one that is gone, so the list stays the truth.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "modes_tui"

SAFE_MODULE = "core/files.py"
"""The one module that opens files by name: every other module calls it."""

PATH_METHODS = frozenset(
    {"open", "read_text", "write_text", "read_bytes", "write_bytes", "touch", "mkdir"}
)
"""Path methods that open or create by name (`Path.mkdir` makes a folder with the umask's
mode instead of 0700)."""

RAW_CALLS = frozenset({"os.open", "os.mkdir", "os.makedirs", "tempfile.mkstemp", "FileHistory"})
"""Calls that open or create by name, spelled as the source spells them."""

ALLOWED: dict[tuple[str, str], tuple[int, str]] = {
    ("setup_local.py", ".read_text"): (
        3,
        "standalone (stdlib only, runs before modes_tui is installed): /proc/cpuinfo, the "
        "build marker and pip's output, never a user's file",
    ),
    ("setup_local.py", ".mkdir"): (1, "the wheel cache folder under the user's cache dir"),
    ("setup_local.py", ".write_text"): (2, "the build marker in the venv, the wheel key"),
    ("setup_steps.py", ".open"): (1, "standalone: the build log of `modes-tui setup local`"),
    ("setup_steps.py", ".read_text"): (1, "standalone: the tail of that build log on failure"),
    ("store/settings.py", ".read_text"): (
        1,
        "config.yaml read again only to place a key's line and column in an error "
        "(already read through core.files; a failure leaves the place out)",
    ),
    ("cli/__init__.py", "os.open"): (
        1,
        "os.devnull, to silence stdout after a broken pipe: a device by design",
    ),
    ("mcp/servers.py", "open"): (1, "os.devnull for a server started without a log folder"),
    ("store/session_log.py", "os.open"): (
        1,
        "creates a new session file with O_CREAT|O_EXCL: never opens an existing file or a link",
    ),
    ("core/tools/confined.py", "os.open"): (
        4,
        "the model's file tools: openat under the working directory's descriptor, one "
        "component at a time with O_NOFOLLOW (issue 20 item 7)",
    ),
    ("core/tools/workspace.py", ".open"): (
        4,
        "the model's file tools, through core/tools/confined.py's ConfinedRoot.open (issue 20 item 7)",
    ),
    ("core/edits/changes.py", "os.open"): (
        4,
        "the edit tools: openat under the working directory's descriptor with O_NOFOLLOW (its "
        "folders, the file, the temp file with O_CREAT|O_EXCL) (issue 23)",
    ),
    ("core/edits/changes.py", ".open"): (
        1,
        "the edit tools look at a file through ConfinedRoot.open, as the read tools do",
    ),
    ("core/edits/changes.py", "os.mkdir"): (
        1,
        "a missing folder of a new file, mkdirat under its parent's descriptor (issue 23)",
    ),
    ("core/tools/resolver.py", ".open"): (
        2,
        "the policy guard learns where a path really is through ConfinedRoot.open (closed at "
        "once) so a link to a denied file is denied too (issue 29)",
    ),
    ("core/tools/ignores.py", "os.open"): (
        2,
        "a .gitignore (O_NOFOLLOW, regular files only) and the folders down to a walk's start, "
        "openat under the working directory's descriptor (issue 34)",
    ),
    ("core/tools/searching.py", ".open"): (
        1,
        "search_files opens each file through ConfinedRoot.open, judged on its descriptor",
    ),
    ("llm/encoders.py", ".open"): (1, "model weights shipped in an installed package, read-only"),
    ("llm/encoders.py", ".read_text"): (
        2,
        "model config shipped in an installed package, read-only",
    ),
    ("llm/gguf.py", ".open"): (
        2,
        "the model's chunks in an installed package, and hashing the assembled model (checked "
        "to be a regular file first) or the user's own local_model_path",
    ),
}
"""(module under modes_tui/, call) -> (how many, why it may open by name)."""


def calls_by_name(tree: ast.AST) -> list[str]:
    found: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id in ("open", *RAW_CALLS):
            found.append(func.id)
        elif isinstance(func, ast.Attribute):
            spelled = ast.unparse(func)
            if spelled in RAW_CALLS:
                found.append(spelled)
            elif func.attr in PATH_METHODS and spelled not in ("os.open",):
                found.append(f".{func.attr}")
    return found


def scan() -> Counter[tuple[str, str]]:
    counted: Counter[tuple[str, str]] = Counter()
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        if module == SAFE_MODULE:
            continue
        for call in calls_by_name(ast.parse(path.read_text(encoding="utf-8"))):
            counted[(module, call)] += 1
    return counted


def test_no_module_opens_a_file_by_name_outside_the_safe_module_unless_listed() -> None:
    found = scan()
    unlisted = {key: count for key, count in found.items() if key not in ALLOWED}
    assert not unlisted, (
        f"{unlisted}: open files through modes_tui.core.files (read_bytes, read_text, "
        "open_append, atomic_write, private_folder), or add the call to ALLOWED with its reason"
    )
    changed = {
        key: (count, ALLOWED[key][0]) for key, count in found.items() if count != ALLOWED[key][0]
    }
    assert not changed, f"(found, allowed) differ: {changed}; update ALLOWED and its reason"
    gone = set(ALLOWED) - set(found)
    assert not gone, f"{gone} are allowed but no longer used: remove them from ALLOWED"


def test_the_scan_sees_each_kind_of_unsafe_call() -> None:
    source = (
        "open(p)\nPath(p).read_text()\nq.write_bytes(b'')\nos.open(p, 0)\n"
        "tempfile.mkstemp()\nFileHistory(p)\nfolder.mkdir()\nread_bytes(p, 'control')\n"
    )
    assert calls_by_name(ast.parse(source)) == [
        "open",
        ".read_text",
        ".write_bytes",
        "os.open",
        "tempfile.mkstemp",
        "FileHistory",
        ".mkdir",
    ]

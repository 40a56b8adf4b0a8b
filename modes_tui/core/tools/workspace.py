"""The working-directory tools: read, list and search files, and run a command.

The file tools never leave the working directory: every path is walked under the working
directory's descriptor (`confined.py`), so a path that escapes it (`..`, an absolute path
elsewhere) or a symbolic link that leads outside it is refused with a message the model
reads, even while another process swaps folders for links. A FIFO, a device, a folder where
a file is meant, a NUL or an over-long path are refused the same way. Everything they return
is capped, so one call cannot flood the model's context, and search_files' regular
expression runs with a time limit (`regex_search.py`, the `regex` library's `timeout=`).
Every file a tool opens is judged by the answering mode's `paths:` rules at its REAL path
and on the descriptor it reads (`access.py`): a link into a denied place or a hard-linked
file is refused (a search skips it). list_files and search_files skip what the working
directory's .gitignore files ignore (`ignores.py`), as ripgrep does; a path the model
names itself is still listed or searched. `run_command`
always asks the user first (the engine's confirmation guard), runs in the working directory
with a timeout, keeps the head and tail of long output, and kills the whole process group
when it times out or the turn is cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import io
import os
import signal
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from modes_tui.core.errors import ToolError
from modes_tui.core.files import describe
from modes_tui.core.tools.access import FileRules, check
from modes_tui.core.tools.confined import ConfinedRoot, Entry, Opened, OutsideError, shown_path
from modes_tui.core.tools.ignores import Ignores
from modes_tui.core.tools.regex_search import RegexSearch, SearchOutcome
from modes_tui.core.tools.registry import Tool, tool
from modes_tui.core.tools.resolver import given_path
from modes_tui.core.tools.searching import Fed, SearchLimits, feed, looks_binary, size_text

SKIPPED_DIRS = frozenset(
    {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".mypy_cache",
     ".ruff_cache", ".pytest_cache", ".tox", "dist", "build", ".idea"}
)  # fmt: skip


_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK
"""Reads open with O_NONBLOCK: a FIFO opens at once (then is refused by its type)."""


@dataclass(frozen=True)
class Workspace:
    """The folder the file tools may see, and their caps."""

    root: Path
    """The working directory (resolved on use)."""
    max_read_chars: int = 60_000
    """read_file returns at most this many characters."""
    max_read_bytes: int = 10_000_000
    """read_file reads at most this many bytes of a file (and says so when it stops)."""
    max_entries: int = 400
    """list_files returns at most this many entries."""
    max_matches: int = 100
    """search_files returns at most this many matching lines."""
    max_search_bytes: int = 1_000_000
    """search_files skips files larger than this."""
    max_search_files: int = 5_000
    """search_files looks at no more than this many files."""
    search_seconds: float = 5.0
    """search_files stops a pattern that matches for longer than this (seconds, in total)."""
    rules: Callable[[], FileRules] | None = None
    """The answering mode's `paths:` rules (None: no deny rules, hard links still refused):
    every file a tool opens is judged by them at its real path and on its descriptor, so
    a read refuses a denied or hard-linked file and a search skips it."""

    def file_rules(self) -> FileRules:
        """The rules that apply now (the policy guard sets the mode before each call)."""
        return self.rules() if self.rules is not None else FileRules()

    @property
    def base(self) -> Path:
        """The resolved working directory."""
        return self.root.resolve()


def file_tools(workspace: Workspace) -> list[Tool]:
    """read_file, list_files and search_files over `workspace`."""

    @tool
    def read_file(path: str, start_line: int = 1, end_line: int | None = None) -> str:
        """Read a text file in the working directory.

        Long files are cut; read them in parts with start_line and end_line.

        Args:
            path: The file, relative to the working directory.
            start_line: The first line to return (1-based).
            end_line: The last line to return (inclusive); omit for the rest of the file.
        """
        start = max(1, start_line)
        if end_line is not None and end_line < start:
            raise ToolError(f"end_line ({end_line}) is before start_line ({start})")
        with ConfinedRoot(workspace.root) as root:
            shown, data, size = _read_text(
                root, path, workspace.max_read_bytes, workspace.file_rules()
            )
        text, last, total, cut_at = _lines(data, start, end_line, workspace.max_read_chars)
        if size > len(data):
            text += (
                f"\n[… the file is {size_text(size)}; only its first {size_text(len(data))} "
                f"(lines 1-{total}) were read. Use search_files to find the lines you need]"
            )
        if cut_at is not None:
            text += (
                f"\n[… cut at line {cut_at} of {total}: more than {workspace.max_read_chars} "
                f"characters; read on with start_line={cut_at}]"
            )
        elif start > 1 or end_line is not None:
            text = f"[{shown}, lines {start}-{last} of {total}]\n{text}"
        return text

    @tool
    def list_files(path: str = ".", recursive: bool = False, pattern: str | None = None) -> str:
        """List the files and folders in a directory of the working directory.

        Folders end with `/`. Version-control and cache folders, and what the .gitignore
        files ignore, are skipped.

        Args:
            path: The directory, relative to the working directory.
            recursive: Also list everything below it.
            pattern: Only names matching this glob, e.g. `*.py`.
        """
        with ConfinedRoot(workspace.root) as root:
            folder = root.open(path, _READ_FLAGS)
            try:
                if not folder.is_dir:
                    raise ToolError(f"`{shown_path(path)}` is not a directory")
                allowed(workspace.file_rules(), root, path, folder)
                entries, more = _listing(
                    root, folder, recursive, pattern, workspace.max_entries, workspace.file_rules()
                )
            finally:
                os.close(folder.fd)
        if not entries:
            return f"{folder.relative}: nothing" + (f" matching {pattern}" if pattern else "")
        header = f"{folder.relative}: {len(entries)} entries"
        if more:
            header += f" (first {workspace.max_entries}; narrow it with path or pattern)"
        return header + "\n" + "\n".join(entries)

    @tool
    def search_files(
        pattern: str, path: str = ".", glob: str | None = None, case_sensitive: bool = False
    ) -> str:
        """Search the text files under a directory for a regular expression.

        Returns matching lines as `file:line: text`. Files that .gitignore ignores are
        skipped unless named as path. A pattern that takes too long (more than a few
        seconds) is stopped with an error; simplify it then.

        Args:
            pattern: A regular expression (Python syntax), e.g. `def main` or `TODO|FIXME`.
            path: The directory (or one file) to search, relative to the working directory.
            glob: Only files whose name matches this glob, e.g. `*.py`.
            case_sensitive: Match letter case exactly.
        """
        limits = SearchLimits(
            workspace.max_search_files,
            workspace.max_search_bytes,
            workspace.file_rules(),
            SKIPPED_DIRS,
        )
        with (
            RegexSearch(
                pattern,
                ignore_case=not case_sensitive,
                seconds=workspace.search_seconds,
                max_matches=workspace.max_matches,
            ) as search,
            ConfinedRoot(workspace.root) as root,
        ):
            folder = root.open(path, _READ_FLAGS)
            try:
                allowed(limits.rules, root, path, folder)
                fed = feed(root, folder, search, glob, limits)
            finally:
                os.close(folder.fd)
            outcome = search.finish()
        return _search_answer(pattern, folder.relative, fed, outcome, workspace)

    return [read_file, list_files, search_files]


def _search_answer(
    pattern: str, where: str, fed: Fed, outcome: SearchOutcome, workspace: Workspace
) -> str:
    """What search_files tells the model: the matches, or why there are none, and what
    was not looked at."""
    note = _hard_link_note(fed.hard_linked)
    if not outcome.matches:
        if fed.stopped:  # "no matches" alone would say the rest was searched too
            return (
                f"no matches for `{pattern}` in {where} in the first "
                f"{workspace.max_search_files} files (stopped there; narrow the search "
                "with path or glob)"
            ) + note
        return f"no matches for `{pattern}` in {where}{note}"
    header = f"{len(outcome.matches)} matches"
    if fed.stopped or outcome.full:
        header += " (stopped early; narrow the search with path, glob or a tighter pattern)"
    lines = [f"{m.file}:{m.line}: {m.text}" for m in outcome.matches]
    return header + "\n" + "\n".join(lines) + note


def _hard_link_note(count: int) -> str:
    if not count:
        return ""
    return (
        f"\n[{count} hard-linked file{'s were' if count > 1 else ' was'} not searched: this "
        "mode does not use files with more than one name (`paths: {hard_links: allow}`)]"
    )


def allowed(rules: FileRules, root: ConfinedRoot, path: str, opened: Opened) -> None:
    """ToolError when `rules` refuse the file `path` opened as (the caller closes it)."""
    refusal = check(
        rules, root, opened.relative, opened.status, writing=False, given=given_path(root, path)
    )
    if refusal is not None:
        raise ToolError(refusal.reason)


def _read_text(root: ConfinedRoot, path: str, cap: int, rules: FileRules) -> tuple[str, bytes, int]:
    """(shown path, at most `cap` bytes, file size) of a regular text file under `root`
    that `rules` let the mode read (judged on the descriptor read from)."""
    opened = root.open(path, _READ_FLAGS)
    shown = shown_path(path)
    try:
        allowed(rules, root, path, opened)
    except ToolError:
        os.close(opened.fd)
        raise
    if not opened.is_regular:
        os.close(opened.fd)
        if opened.is_dir:
            raise ToolError(f"`{shown}` is a directory; use list_files to see what is in it")
        raise ToolError(
            f"`{shown}` {describe(opened.status.st_mode)}, not a regular file; "
            "only text files can be read"
        )
    with os.fdopen(opened.fd, "rb") as handle:
        data = handle.read(cap)
    if looks_binary(data[:8192]):
        raise ToolError(f"`{shown}` is a binary file; only text files can be read")
    return opened.relative, data, max(opened.status.st_size, len(data))


def _lines(data: bytes, start: int, end: int | None, cap: int) -> tuple[str, int, int, int | None]:
    """(text of lines start..end, last line shown, lines in all, line the cap cut at)."""
    lines: list[str] = []
    size = 0
    cut_at: int | None = None
    number = 0
    continuing = False
    stream = io.StringIO(data.decode("utf-8", "replace"))
    # bounded pieces, so one enormous line (a minified file) is cut like many short ones
    while piece := stream.readline(cap + 1):
        if not continuing:
            number += 1
        continuing = not piece.endswith("\n")
        if number < start or (end is not None and number > end):
            continue
        if cut_at is None and size + len(piece) > cap:
            cut_at = number
        if cut_at is None:
            lines.append(piece)
            size += len(piece)
    return "".join(lines), min(end or number, number), number, cut_at


def _listing(
    root: ConfinedRoot,
    folder: Opened,
    recursive: bool,
    pattern: str | None,
    cap: int,
    rules: FileRules,
) -> tuple[list[str], bool]:
    """The lines of a listing of `folder`, and whether the cap stopped it."""
    entries: list[str] = []
    only = Ignores.above(root, folder.relative)
    for entry in root.entries(folder, recursive=recursive, skip=SKIPPED_DIRS, only=only):
        if pattern and not fnmatch.fnmatch(entry.name, pattern):
            continue
        if len(entries) >= cap:
            return entries, True
        entries.append(_listed(root, folder, entry, rules))
    return entries, False


def _listed(root: ConfinedRoot, folder: Opened, entry: Entry, rules: FileRules) -> str:
    if entry.kind == "dir":
        return f"{entry.relative}/"
    if entry.kind == "file":
        return f"{entry.relative}  ({size_text(entry.size)})"
    if entry.kind == "other":
        return f"{entry.relative}  (special file)"
    try:
        target = root.open(_under(folder, entry), _READ_FLAGS)
    except OutsideError:
        return f"{entry.relative}@ (link outside the working directory, not followed)"
    except ToolError:
        return f"{entry.relative}@ (broken link)"
    os.close(target.fd)
    if rules.denied(target.relative) is not None:  # not even its size
        return f"{entry.relative}@ (link to `{shown_path(target.relative)}`, off limits here)"
    if target.is_dir:
        return f"{entry.relative}/"
    return f"{entry.relative}  ({size_text(target.status.st_size)})"


def _under(folder: Opened, entry: Entry) -> str:
    """The entry's path under the root (the walk re-checks it from the root)."""
    return entry.relative if folder.relative == "." else f"{folder.relative}/{entry.relative}"


# --------------------------------------------------------------------------- run_command


def command_tool(
    workspace: Workspace,
    *,
    timeout: float = 30.0,
    max_timeout: float = 300.0,
    output_cap: int = 16_000,
) -> Tool:
    """run_command in `workspace`: confirmed every time, timed out, output capped."""

    async def run_command(command: str, timeout_seconds: float | None = None) -> dict[str, Any]:
        """Run a shell command in the working directory and return its exit code and output.

        The user is asked to confirm every command before it runs. Output (stdout and stderr
        together) is cut in the middle when long.

        Args:
            command: The command line, run by /bin/sh, e.g. `git status --short`.
            timeout_seconds: Stop the command after this many seconds (default 30, at most 300).
        """
        if not command.strip():
            raise ToolError("the command is empty")
        limit = min(float(timeout_seconds or timeout), max_timeout)
        process = await _start(command, workspace.base)
        output = _CappedOutput(output_cap)
        timed_out = False
        try:
            await asyncio.wait_for(_drain(process, output), limit)
        except TimeoutError:
            timed_out = True
            _kill(process)
        except BaseException:
            await asyncio.shield(_stop(process))  # cancelled: nothing may outlive the turn
            raise
        exit_code = await process.wait()
        if timed_out:
            _kill_group(process.pid)  # a child the shell forked as the first kill came
        result: dict[str, Any] = {
            "exit_code": None if timed_out else exit_code,
            "output": output.text(),
        }
        if timed_out:
            result["timed_out"] = f"stopped after {limit:g} seconds"
        return result

    return tool(needs_confirmation=True, timeout=max_timeout + 5)(run_command)


async def _start(command: str, cwd: Path) -> asyncio.subprocess.Process:
    """Start `command` in a process group of its own, so a kill takes its children too.

    A cancel that comes while the process starts (it may already be running its command)
    lets the start finish and kills the whole group: asyncio alone would kill only the
    shell, and a child it had forked (`sleep 30 &`) would outlive the turn."""
    start = asyncio.ensure_future(
        asyncio.create_subprocess_shell(
            command,
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
    )
    try:
        return await asyncio.shield(start)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            await _stop(await start)
        raise


async def _stop(process: asyncio.subprocess.Process) -> None:
    """Kill the command's whole group, give the shell up to 2 s to be reaped, then kill the
    group once more: a child the shell forked as the first kill came is in it too."""
    _kill(process)
    with contextlib.suppress(Exception):
        await asyncio.wait_for(process.wait(), 2)
    _kill_group(process.pid)


async def _drain(process: asyncio.subprocess.Process, output: _CappedOutput) -> None:
    assert process.stdout is not None
    while chunk := await process.stdout.read(65536):
        output.add(chunk)
    await process.wait()


def _kill(process: asyncio.subprocess.Process) -> None:
    if process.returncode is not None:
        return
    if hasattr(os, "killpg"):
        _kill_group(process.pid)
    else:  # pragma: no cover - not POSIX
        with contextlib.suppress(ProcessLookupError):
            process.kill()


def _kill_group(group: int) -> None:
    """SIGKILL every process left in the command's process group (none left: nothing)."""
    if not hasattr(os, "killpg"):  # pragma: no cover - not POSIX
        return
    with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
        os.killpg(group, signal.SIGKILL)


class _CappedOutput:
    """Keeps the head and the tail of a stream, and counts what it dropped."""

    def __init__(self, cap: int) -> None:
        self.half = max(1, cap // 2)
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        room = self.half - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            extra = len(self.tail) - self.half
            if extra > 0:
                del self.tail[:extra]
                self.dropped += extra

    def text(self) -> str:
        head = self.head.decode("utf-8", "replace")
        tail = self.tail.decode("utf-8", "replace")
        if self.dropped:
            return f"{head}\n[… {self.dropped} bytes of output cut …]\n{tail}"
        return head + tail

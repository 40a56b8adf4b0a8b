"""The working-directory tools: read, list and search files, and run a command.

The file tools never leave the working directory: a path that escapes it (`..`, an
absolute path elsewhere) or a symbolic link that leads outside it is refused with a
message the model reads. Everything they return is capped, so one call cannot flood the
model's context. `run_command` always asks the user first (the engine's confirmation
guard), runs in the working directory with a timeout, keeps the head and tail of long
output, and kills the whole process group when it times out or the turn is cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import os
import re
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from modes_tui.core.errors import ToolError
from modes_tui.core.tools import Tool, tool

SKIPPED_DIRS = frozenset(
    {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".mypy_cache",
     ".ruff_cache", ".pytest_cache", ".tox", "dist", "build", ".idea"}
)  # fmt: skip


@dataclass(frozen=True)
class Workspace:
    """The folder the file tools may see, and their caps."""

    root: Path
    """The working directory (resolved on use)."""
    max_read_chars: int = 60_000
    """read_file returns at most this many characters."""
    max_entries: int = 400
    """list_files returns at most this many entries."""
    max_matches: int = 100
    """search_files returns at most this many matching lines."""
    max_search_bytes: int = 1_000_000
    """search_files skips files larger than this."""
    max_search_files: int = 5_000
    """search_files looks at no more than this many files."""

    @property
    def base(self) -> Path:
        """The resolved working directory."""
        return self.root.resolve()

    def resolve(self, path: str) -> Path:
        """The real path of `path` inside the working directory; ToolError if it escapes."""
        base = self.base
        raw = (path or ".").strip()
        candidate = Path(raw).expanduser()
        if not candidate.is_absolute():
            candidate = base / candidate
        lexical = Path(os.path.normpath(candidate))
        if not lexical.is_relative_to(base):
            raise ToolError(
                f"`{raw}` is outside the working directory {base}; only paths inside it "
                "can be used (give a path relative to it)"
            )
        try:
            real = lexical.resolve()
        except (OSError, RuntimeError) as error:  # a link loop, for example
            raise ToolError(f"`{raw}` cannot be resolved: {error}") from None
        if not real.is_relative_to(base):
            raise ToolError(
                f"`{raw}` goes through a symbolic link that leads outside the working "
                f"directory ({real}); links out of {base} are not followed"
            )
        return real

    def show(self, path: Path) -> str:
        """`path` relative to the working directory, for output."""
        try:
            shown = path.relative_to(self.base).as_posix()
        except ValueError:
            return str(path)
        return shown or "."

    def inside(self, path: Path) -> bool:
        """Whether `path` (after following links) stays in the working directory."""
        try:
            return path.resolve().is_relative_to(self.base)
        except OSError:
            return False


def _looks_binary(head: bytes) -> bool:
    return b"\0" in head


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
        target = workspace.resolve(path)
        if not target.exists():
            raise ToolError(f"`{path}` does not exist; use list_files to see what is there")
        if target.is_dir():
            raise ToolError(f"`{path}` is a directory; use list_files to see what is in it")
        if not target.is_file():
            # a FIFO or device would block the worker or never end
            raise ToolError(f"`{path}` is not a regular file; only text files can be read")
        with target.open("rb") as handle:
            if _looks_binary(handle.read(8192)):
                raise ToolError(f"`{path}` is a binary file; only text files can be read")
        start = max(1, start_line)
        if end_line is not None and end_line < start:
            raise ToolError(f"end_line ({end_line}) is before start_line ({start})")
        lines: list[str] = []
        size = 0
        cut_at: int | None = None
        total = 0
        # read in bounded pieces, so one enormous line (a minified file) cannot fill memory
        limit = workspace.max_read_chars + 1
        number = 0
        continuing = False
        with target.open("r", encoding="utf-8", errors="replace") as handle:
            while piece := handle.readline(limit):
                if not continuing:
                    number += 1
                continuing = not piece.endswith("\n")
                total = number
                if number < start or (end_line is not None and number > end_line):
                    continue
                if cut_at is None and size + len(piece) > workspace.max_read_chars:
                    cut_at = number
                if cut_at is None:
                    lines.append(piece)
                    size += len(piece)
        text = "".join(lines)
        if cut_at is not None:
            text += (
                f"\n[… cut at line {cut_at} of {total}: more than {workspace.max_read_chars} "
                f"characters; read on with start_line={cut_at}]"
            )
        elif start > 1 or end_line is not None:
            last = min(end_line or total, total)
            text = f"[{workspace.show(target)}, lines {start}-{last} of {total}]\n{text}"
        return text

    @tool
    def list_files(path: str = ".", recursive: bool = False, pattern: str | None = None) -> str:
        """List the files and folders in a directory of the working directory.

        Folders end with `/`. Version-control and cache folders are skipped when recursive.

        Args:
            path: The directory, relative to the working directory.
            recursive: Also list everything below it.
            pattern: Only names matching this glob, e.g. `*.py`.
        """
        target = workspace.resolve(path)
        if not target.is_dir():
            raise ToolError(f"`{path}` is not a directory")
        entries: list[str] = []
        more = False
        for entry in _walk(target, recursive):
            name = entry.name
            if pattern and not fnmatch.fnmatch(name, pattern):
                continue
            if len(entries) >= workspace.max_entries:
                more = True
                break
            shown = entry.relative_to(target).as_posix()
            if entry.is_symlink() and not workspace.inside(entry):
                entries.append(f"{shown}@ (link outside the working directory, not followed)")
            elif entry.is_dir():
                entries.append(f"{shown}/")
            else:
                entries.append(f"{shown}  ({_size(entry)})")
        if not entries:
            return f"{workspace.show(target)}: nothing" + (
                f" matching {pattern}" if pattern else ""
            )
        header = f"{workspace.show(target)}: {len(entries)} entries"
        if more:
            header += f" (first {workspace.max_entries}; narrow it with path or pattern)"
        return header + "\n" + "\n".join(entries)

    @tool
    def search_files(
        pattern: str, path: str = ".", glob: str | None = None, case_sensitive: bool = False
    ) -> str:
        """Search the text files under a directory for a regular expression.

        Returns matching lines as `file:line: text`.

        Args:
            pattern: A regular expression (Python syntax), e.g. `def main` or `TODO|FIXME`.
            path: The directory (or one file) to search, relative to the working directory.
            glob: Only files whose name matches this glob, e.g. `*.py`.
            case_sensitive: Match letter case exactly.
        """
        try:
            regex = re.compile(pattern, 0 if case_sensitive else re.IGNORECASE)
        except re.error as error:
            raise ToolError(f"`{pattern}` is not a valid regular expression: {error}") from None
        target = workspace.resolve(path)
        files = [target] if target.is_file() else (p for p in _walk(target, True) if p.is_file())
        matches: list[str] = []
        scanned = 0
        more = False
        for file in files:
            if glob and not fnmatch.fnmatch(file.name, glob):
                continue
            if file.is_symlink() and not workspace.inside(file):
                continue
            scanned += 1
            if scanned > workspace.max_search_files:
                more = True
                break
            try:
                if file.stat().st_size > workspace.max_search_bytes:
                    continue
                with file.open("rb") as handle:
                    data = handle.read()
            except OSError:
                continue
            if _looks_binary(data[:8192]):
                continue
            for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
                if regex.search(line):
                    text = line.strip()
                    if len(text) > 200:
                        text = text[:200] + " …"
                    matches.append(f"{workspace.show(file)}:{number}: {text}")
                    if len(matches) >= workspace.max_matches:
                        more = True
                        break
            if more:
                break
        if not matches:
            return f"no matches for `{pattern}` in {workspace.show(target)}"
        header = f"{len(matches)} matches"
        if more:
            header += " (stopped early; narrow the search with path, glob or a tighter pattern)"
        return header + "\n" + "\n".join(matches)

    return [read_file, list_files, search_files]


def _walk(root: Path, recursive: bool) -> Iterator[Path]:
    """Entries under `root`, sorted, never following directory links."""
    try:
        children = sorted(root.iterdir(), key=lambda p: p.name)
    except OSError:
        return
    for child in children:
        yield child
        if (
            recursive
            and child.is_dir()
            and not child.is_symlink()
            and child.name not in SKIPPED_DIRS
        ):
            yield from _walk(child, True)


def _size(path: Path) -> str:
    try:
        size = float(path.stat().st_size)
    except OSError:
        return "?"
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"


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
        process = await asyncio.create_subprocess_shell(
            command,
            cwd=workspace.base,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,  # its own process group, so a kill takes its children too
        )
        output = _CappedOutput(output_cap)
        timed_out = False
        try:
            await asyncio.wait_for(_drain(process, output), limit)
        except TimeoutError:
            timed_out = True
            _kill(process)
        except BaseException:
            _kill(process)  # cancelled: the command must not outlive the turn
            with contextlib.suppress(BaseException):
                await asyncio.shield(asyncio.wait_for(process.wait(), 2))
            raise
        exit_code = await process.wait()
        result: dict[str, Any] = {
            "exit_code": None if timed_out else exit_code,
            "output": output.text(),
        }
        if timed_out:
            result["timed_out"] = f"stopped after {limit:g} seconds"
        return result

    return tool(needs_confirmation=True, timeout=max_timeout + 5)(run_command)


async def _drain(process: asyncio.subprocess.Process, output: _CappedOutput) -> None:
    assert process.stdout is not None
    while chunk := await process.stdout.read(65536):
        output.add(chunk)
    await process.wait()


def _kill(process: asyncio.subprocess.Process) -> None:
    if process.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
        if hasattr(os, "killpg"):
            os.killpg(process.pid, signal.SIGKILL)
        else:  # pragma: no cover - not POSIX
            process.kill()


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

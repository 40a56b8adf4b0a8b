"""The file tools under attack: swapped folders, runaway patterns and odd paths.

A folder swapped for a link to an outside folder while the tools read must never leak an
outside file; a regular expression that backtracks for ever is stopped with a tool error
while the event loop keeps running; every odd path is a tool error the model reads.
"""

from __future__ import annotations

import asyncio
import os
import stat
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from modes_tui.core.errors import ToolError
from modes_tui.core.tools import regex_search
from modes_tui.core.tools.confined import MAX_WALK_DEPTH, ConfinedRoot
from modes_tui.core.tools.registry import Tool
from modes_tui.core.tools.workspace import Workspace, file_tools

SECRET = "SECRET-OUTSIDE-1234"


def tools_for(root: Path, **caps: float) -> dict[str, Tool]:
    return {t.name: t for t in file_tools(Workspace(root, **caps))}  # type: ignore[arg-type]


async def call(t: Tool, **arguments: object) -> str:
    assert t.check_arguments(arguments) is None
    return str(await t.invoke(arguments))


# --------------------------------------------------------------------------- the swap race


@dataclass
class Race:
    """A project folder and the count of swaps its swapper thread has finished so far."""

    root: Path
    swaps: int = 0


@pytest.fixture
def swapping(tmp_path: Path) -> Iterator[Race]:
    """A project whose `d/` is swapped, in a tight loop, for a link to an outside folder."""
    root = tmp_path / "project"
    (root / "d").mkdir(parents=True)
    (root / "d" / "f.txt").write_text("inside\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.txt").write_text(f"{SECRET}\n")
    (outside / f"{SECRET}.txt").write_text("a name only the outside folder has\n")
    stop = threading.Event()
    race = Race(root)

    def swap() -> None:
        folder, parked = root / "d", root / "d.real"
        while not stop.is_set():
            os.rename(folder, parked)
            os.symlink(outside, folder)
            os.unlink(folder)
            os.rename(parked, folder)
            race.swaps += 1

    # switch threads often, so the swap lands between any two steps of a tool
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    swapper = threading.Thread(target=swap, daemon=True)
    swapper.start()
    try:
        yield race
    finally:
        stop.set()
        swapper.join()
        sys.setswitchinterval(interval)


def _attempts(
    race: Race,
    function: Tool,
    count: int,
    min_swaps: int = 100,
    min_inside: int = 0,
    **arguments: object,
) -> tuple[int, int]:
    """(outputs that held the outside secret, outputs that held the inside text).

    Runs `count` calls, and more until the swapper has swapped `min_swaps` times while
    they ran and `min_inside` calls have read the inside text: on a loaded machine the
    swapper thread can be starved, and a race that did not run proves nothing. It can also
    be starved with the folder away (on CI once, all of 10,000 reads were refused), so
    the calls go on until some ran with the folder in place. A swap that failed would end
    the thread, and a tool that never reads would never reach `min_inside`: the deadline
    says so.
    """
    leaks = inside = 0
    first = race.swaps
    deadline = time.monotonic() + 120
    done = 0
    while done < count or race.swaps - first < min_swaps or inside < min_inside:
        assert time.monotonic() < deadline, (
            f"the swapper swapped {race.swaps - first} times; {inside} calls read inside"
        )
        done += 1
        try:
            text = str(function.function(**arguments))
        except ToolError:
            continue  # the folder was mid-swap: a refusal is fine, a leak is not
        leaks += SECRET in text
        inside += "inside" in text
    return leaks, inside


def test_read_file_never_reads_through_a_folder_swapped_for_a_link(swapping: Race) -> None:
    leaks, inside = _attempts(
        swapping, tools_for(swapping.root)["read_file"], 10_000, min_inside=1, path="d/f.txt"
    )
    assert leaks == 0
    assert inside > 0  # the reads did run while the folder was in place


def test_search_and_list_never_show_a_swapped_folders_outside_content(swapping: Race) -> None:
    # the old walk leaked here too, but rarely (1 listing in 2,000): this guards the fds walk
    tools = tools_for(swapping.root)
    leaks, inside = _attempts(
        swapping, tools["search_files"], 20, 20, min_inside=1, pattern="1234|inside"
    )
    assert leaks == 0 and inside > 0
    leaks, inside = _attempts(swapping, tools["list_files"], 1000, path="d")
    assert leaks == 0 and inside == 0  # the names are listed, never the inside text
    leaks, _ = _attempts(swapping, tools["list_files"], 2000, path=".", recursive=True)
    assert leaks == 0


# --------------------------------------------------------------------------- runaway patterns


async def test_a_runaway_pattern_is_stopped_while_the_event_loop_keeps_ticking(
    tmp_path: Path,
) -> None:
    (tmp_path / "fine.txt").write_text("aaa\nnothing here\n")
    (tmp_path / "slow.txt").write_text("first\nsecond\n" + "a" * 40 + "b\n")
    search = tools_for(tmp_path, search_seconds=0.5)["search_files"]
    ticks = 0
    running = True

    async def ticker() -> None:
        nonlocal ticks
        while running:
            await asyncio.sleep(0.01)
            ticks += 1

    ticking = asyncio.create_task(ticker())
    await asyncio.sleep(0)
    with pytest.raises(ToolError) as refused:
        await asyncio.wait_for(call(search, pattern="(a|aa)+$"), 60)
    running = False
    await ticking
    assert "took too long: more than 0.5 s" in refused.value.message
    assert "(stopped at slow.txt)" in refused.value.message
    assert "simplify it" in refused.value.message
    # the regex library lets go of the GIL while it matches: the loop kept turning
    assert ticks >= 10


async def test_search_still_finds_and_caps_matches_through_the_child(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def one():\n    pass\n")
    (tmp_path / "b.py").write_text("\n".join(f"def f{i}(): pass" for i in range(50)) + "\n")
    tools = tools_for(tmp_path, max_matches=5)
    found = await call(tools["search_files"], pattern=r"^def one", case_sensitive=True)
    assert found.splitlines() == ["1 matches", "a.py:1: def one():"]
    capped = await call(tools["search_files"], pattern="def")
    assert (
        capped.splitlines()[0]
        == "5 matches (stopped early; narrow the search with path, glob or a tighter pattern)"
    )
    one_file = await call(tools["search_files"], pattern="f49", path="b.py")
    assert one_file.splitlines() == ["1 matches", "b.py:50: def f49(): pass"]


# --------------------------------------------------------------------------- odd paths


@pytest.fixture
def odd(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "folder").mkdir(parents=True)
    (root / "notes.txt").write_text("one\ntwo\n")
    (root / "blob.bin").write_bytes(b"\x7fELF\x00\x01\x02")
    os.symlink("loop-b", root / "loop-a")
    os.symlink("loop-a", root / "loop-b")
    os.mkfifo(root / "pipe")
    os.symlink("/dev/zero", root / "zero")
    os.symlink("../outside", root / "up")
    (tmp_path / "outside").mkdir()
    return root


ODD_PATHS = [
    ("a" * 5000, "is 5000 characters long; paths longer than 4096"),
    ("notes\0.txt", r"`notes\\x00.txt` contains a NUL character"),
    ("loop-a", "more than 40 symbolic links \\(a link loop"),
    ("pipe", "is a FIFO \\(named pipe\\), not a regular file"),
    ("zero", "symbolic link that leads outside the working directory \\(/dev/zero\\)"),
    ("up/x", "symbolic link that leads outside the working directory \\(../outside\\)"),
    ("folder", "is a directory; use list_files"),
    ("blob.bin", "is a binary file"),
    ("notes.txt/x", "`notes.txt/x` \\(at `notes.txt`\\) is not a directory"),
    ("n" * 300, "has a name longer than the file system allows"),
    ("missing/x", "\\(at `missing`\\) does not exist; use list_files"),
    ("../x", "is outside the working directory"),
]


@pytest.mark.parametrize(("path", "message"), ODD_PATHS, ids=[p[:12] for p, _ in ODD_PATHS])
async def test_read_file_turns_an_odd_path_into_a_tool_error(
    odd: Path, path: str, message: str
) -> None:
    # wait_for only keeps a regression (a FIFO opened blocking) from hanging the suite
    with pytest.raises(ToolError, match=message):
        await asyncio.wait_for(call(tools_for(odd)["read_file"], path=path), 30)


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("a" * 5000, "5000 characters long"),
        ("x\0", "contains a NUL character"),
        ("loop-a", "a link loop"),
        ("notes.txt", "is not a directory"),
        ("pipe", "is not a directory"),
        ("zero", "leads outside the working directory"),
    ],
    ids=["long", "nul", "loop", "file", "fifo", "outside"],
)
async def test_list_and_search_turn_an_odd_path_into_a_tool_error(
    odd: Path, path: str, message: str
) -> None:
    tools = tools_for(odd)
    with pytest.raises(ToolError, match=message):
        await asyncio.wait_for(call(tools["list_files"], path=path), 30)
    if message != "is not a directory":
        with pytest.raises(ToolError, match=message):
            await asyncio.wait_for(call(tools["search_files"], pattern="x", path=path), 30)


async def test_the_odd_files_in_a_folder_are_listed_and_skipped_by_search(odd: Path) -> None:
    tools = tools_for(odd)
    listing = (await call(tools["list_files"])).splitlines()
    assert "loop-a@ (broken link)" in listing
    assert "pipe  (special file)" in listing
    assert "zero@ (link outside the working directory, not followed)" in listing
    found = await asyncio.wait_for(call(tools["search_files"], pattern="o"), 30)
    assert found.splitlines() == ["2 matches", "notes.txt:1: one", "notes.txt:2: two"]


async def test_a_device_node_inside_is_refused_never_read(tmp_path: Path) -> None:
    try:  # /dev/zero's numbers: reading it would never end
        os.mknod(tmp_path / "zero", stat.S_IFCHR | 0o600, os.makedev(1, 5))
    except PermissionError:
        pytest.skip("creating a device node needs root (CAP_MKNOD)")
    tools = tools_for(tmp_path)
    with pytest.raises(ToolError, match="`zero` is a device, not a regular file"):
        await asyncio.wait_for(call(tools["read_file"], path="zero"), 30)
    assert "zero  (special file)" in await call(tools["list_files"])
    assert (await call(tools["search_files"], pattern="x")).startswith("no matches")


async def test_a_file_too_large_is_read_in_part_with_a_note(tmp_path: Path) -> None:
    (tmp_path / "huge.log").write_text("".join(f"line {i:05}\n" for i in range(20_000)))
    read = tools_for(tmp_path, max_read_bytes=1_100)["read_file"]
    text = await call(read, path="huge.log")
    assert text.startswith("line 00000\nline 00001\n")
    assert "line 00100" not in text
    assert "the file is 214.8 KB; only its first 1.1 KB (lines 1-100) were read" in text


# --------------------------------------------------------------------------- links inside


async def test_links_that_stay_inside_are_followed(tmp_path: Path) -> None:
    (tmp_path / "releases" / "v2").mkdir(parents=True)
    (tmp_path / "releases" / "v2" / "notes.md").write_text("version two\n")
    (tmp_path / "docs").mkdir()
    os.symlink("releases/v2", tmp_path / "current")
    os.symlink("../current/notes.md", tmp_path / "docs" / "notes.md")
    os.symlink(tmp_path.resolve() / "docs", tmp_path / "absolute")
    tools = tools_for(tmp_path)
    for path in (
        "current/notes.md",
        "docs/notes.md",
        "absolute/notes.md",
        "docs/../current/notes.md",
    ):
        assert await call(tools["read_file"], path=path) == "version two\n", path
    assert "current/" in (await call(tools["list_files"])).splitlines()
    found = await call(tools["search_files"], pattern="version", path="docs")
    assert found.splitlines() == ["1 matches", "docs/notes.md:1: version two"]


def test_the_confined_open_can_create_a_file_and_never_through_a_link_out(tmp_path: Path) -> None:
    # issue 23's write tools open through the same walk: creating inside works, a link out not
    root = tmp_path / "project"
    root.mkdir()
    os.symlink(tmp_path, root / "out")
    with ConfinedRoot(root) as confined:
        opened = confined.open("new.txt", os.O_WRONLY | os.O_CREAT | os.O_EXCL)
        os.write(opened.fd, b"written")
        os.close(opened.fd)
        with pytest.raises(ToolError, match="leads outside the working directory"):
            confined.open("out/escaped.txt", os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    assert (root / "new.txt").read_text() == "written"
    assert not (tmp_path / "escaped.txt").exists()


def test_a_runaway_pattern_stops_without_any_signal_or_child_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # issue 34: the old search needed a fresh interpreter and SIGALRM (main thread only, not
    # on every platform); the regex library's timeout= needs neither
    import signal
    import subprocess

    def forbidden(*args: object, **kwargs: object) -> None:
        raise AssertionError("the search must not use signals or child processes")

    monkeypatch.setattr(signal, "setitimer", forbidden)
    monkeypatch.setattr(signal, "signal", forbidden)
    monkeypatch.setattr(subprocess, "Popen", forbidden)
    (tmp_path / "slow.txt").write_text("a" * 40 + "b\n")
    (tmp_path / "fine.txt").write_text("needle here\n")
    search = tools_for(tmp_path, search_seconds=0.3)["search_files"].function
    results: list[object] = []

    def run() -> None:  # not the main thread: SIGALRM could not even be armed here
        for pattern in ("(a|aa)+$", "needle"):
            try:
                results.append(search(pattern=pattern))
            except ToolError as error:
                results.append(error)

    worker = threading.Thread(target=run)
    worker.start()
    worker.join(60)
    stopped, found = results
    assert isinstance(stopped, ToolError)
    assert "took too long: more than 0.3 s of matching (stopped at slow.txt)" in str(stopped)
    assert str(found).splitlines() == ["1 matches", "fine.txt:1: needle here"]


def test_the_worker_script_and_its_child_process_are_gone() -> None:
    import modes_tui.core.tools as tools_package

    folder = Path(tools_package.__file__).parent
    assert not (folder / "regex_worker.py").exists()
    assert not hasattr(regex_search, "subprocess")


async def test_a_deep_tree_is_walked_to_a_bounded_depth(tmp_path: Path) -> None:
    folder = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(80):  # relative steps: the whole path is longer than the 4,096 limit
        os.mkdir("sub" + "x" * 60, dir_fd=folder)
        deeper = os.open("sub" + "x" * 60, os.O_RDONLY | os.O_DIRECTORY, dir_fd=folder)
        os.close(folder)
        folder = deeper
    os.close(folder)
    tools = tools_for(tmp_path, max_entries=1000)
    listing = (await call(tools["list_files"], recursive=True)).splitlines()
    assert max(line.count("/") for line in listing[1:]) == MAX_WALK_DEPTH + 1
    assert (await call(tools["search_files"], pattern="x")).startswith("no matches")


# --------------------------------------------------------------------------- review findings


async def test_a_path_with_a_lone_surrogate_is_a_tool_error(tmp_path: Path) -> None:
    # JSON allows "\ud800" in the model's arguments; no file name can hold it
    tools = tools_for(tmp_path)
    for name, arguments in (
        ("read_file", {"path": "a\ud800"}),
        ("list_files", {"path": "\ud800"}),
        ("search_files", {"pattern": "x", "path": "\ud800/x"}),
    ):
        with pytest.raises(ToolError, match="cannot be a file name"):
            await call(tools[name], **arguments)


async def test_an_absolute_link_through_a_linked_alias_of_the_folder_is_followed(
    tmp_path: Path,
) -> None:
    # `ln -s "$PWD/notes.md" alias` in a project reached through a link (a symlinked home,
    # macOS's /tmp): the target names the folder by its alias, yet it stays inside
    real = tmp_path / "real"
    real.mkdir()
    (real / "notes.md").write_text("inside\n")
    os.symlink(real, tmp_path / "alias")
    os.symlink(tmp_path / "alias" / "notes.md", real / "by-alias")
    os.symlink(tmp_path / "alias" / ".." / "secret", real / "alias-out")
    (tmp_path / "secret").write_text(SECRET)
    tools = tools_for(real)
    assert await call(tools["read_file"], path="by-alias") == "inside\n"
    assert await call(tools["read_file"], path=str(tmp_path / "alias" / "notes.md")) == "inside\n"
    with pytest.raises(ToolError, match="leads outside the working directory"):
        await call(tools["read_file"], path="alias-out")


async def test_the_search_cap_counts_every_file_it_opens(tmp_path: Path) -> None:
    # binary and oversized files cost an open and a read too: they count against the cap
    for index in range(5):
        (tmp_path / f"a{index}.bin").write_bytes(b"\0needle")
    (tmp_path / "z.txt").write_text("needle\n")
    tools = tools_for(tmp_path, max_search_files=3)
    found = await call(tools["search_files"], pattern="needle")
    assert found.startswith("no matches for `needle` in . in the first 3 files")
    assert "narrow the search with path or glob" in found


async def test_search_numbers_lines_as_read_file_does(tmp_path: Path) -> None:
    # a form feed (a page break in C and Python sources), a lone CR, U+2028: not line breaks
    # for read_file, so not for search either, or start_line=N reads the wrong line
    (tmp_path / "paged.py").write_text("a = 1\n\x0c\nb = 2\r\nx\ry\u2028z\nneedle = 3\r\n")
    tools = tools_for(tmp_path)
    found = await call(tools["search_files"], pattern="^needle = 3$", path="paged.py")
    assert found.splitlines() == ["1 matches", "paged.py:5: needle = 3"]
    line = await call(tools["read_file"], path="paged.py", start_line=5, end_line=5)
    assert line.splitlines()[1] == "needle = 3"


async def test_a_file_named_for_search_but_not_searched_says_why(tmp_path: Path) -> None:
    # "no matches" would tell the model the text is not there; it was never looked at
    (tmp_path / "big.log").write_text("needle\n" * 300)
    (tmp_path / "blob.bin").write_bytes(b"needle\0")
    search = tools_for(tmp_path, max_search_bytes=1_000)["search_files"]
    with pytest.raises(
        ToolError, match=r"`big\.log` is 2\.1 KB; search_files looks in files up to "
    ):
        await call(search, pattern="needle", path="big.log")
    with pytest.raises(
        ToolError, match=r"`blob\.bin` is a binary file; search_files looks in text"
    ):
        await call(search, pattern="needle", path="blob.bin")

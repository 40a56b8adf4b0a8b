"""The control file: reading never crashes, writing is atomic, watching sees other processes."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from modes_tui.core.control_setting import ControlReading
from modes_tui.core.errors import UnknownMode
from modes_tui.store.control import ControlFile

REPO = Path(__file__).resolve().parents[2]
MODES = ("chat", "code", "shell")


def settings_in(path: Path) -> object:
    """The control file's settings, without the times they were made (`since`)."""
    data = json.loads(path.read_text())
    data.pop("since", None)
    return data


def control(tmp_path: Path) -> ControlFile:
    return ControlFile(tmp_path / "config" / "state.json", modes=lambda: MODES)


def child_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


def test_a_missing_file_is_auto_without_a_warning(tmp_path: Path) -> None:
    assert control(tmp_path).read() == ControlReading("auto", None)


@pytest.mark.parametrize("mode", ["auto", "off", "code"])
def test_valid_settings_read_back(tmp_path: Path, mode: str) -> None:
    file = control(tmp_path)
    file.path.parent.mkdir(parents=True)
    file.path.write_text(json.dumps({"mode": mode}))
    assert file.read() == ControlReading(mode, None, source="file")  # the file-wide setting


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"mode": "code"', "not valid JSON (line 1, column"),
        ("", "not valid JSON"),
        (b"\xff\xfe{", "not UTF-8 text"),
        ('{"mode": 3}', "'mode' is a JSON number, expected a string"),
        ('{"mode": null}', "'mode' is a JSON null, expected a string"),
        ('["code"]', "a JSON array, expected an object"),
        (
            '{"mode": "code", "extra": 1}',
            "unknown keys 'extra'; the file holds 'mode' (every pack)",
        ),
        ("{}", "no 'mode' key"),
        ('{"packs": ["code"]}', "'packs' is a JSON array, expected an object of pack: setting"),
        ('{"mode": "poetry"}', "mode 'poetry' is not in the active pack"),
    ],
)
def test_unusable_files_mean_auto_with_a_warning_naming_the_file(
    tmp_path: Path, content: str | bytes, expected: str
) -> None:
    file = control(tmp_path)
    file.path.parent.mkdir(parents=True)
    if isinstance(content, bytes):
        file.path.write_bytes(content)
    else:
        file.path.write_text(content)
    reading = file.read()
    assert reading.mode == "auto"
    assert reading.warning is not None
    assert reading.warning.startswith(f"control file {file.path}: ")
    assert expected in reading.warning
    assert "modes-tui mode auto" in reading.warning


def test_an_unknown_mode_warning_lists_the_valid_values(tmp_path: Path) -> None:
    file = control(tmp_path)
    file.path.parent.mkdir(parents=True)
    file.path.write_text('{"mode": "poetry"}')
    assert "(auto, off, chat, code, shell)" in (file.read().warning or "")


def test_a_folder_in_place_of_the_file_is_a_warning(tmp_path: Path) -> None:
    file = control(tmp_path)
    file.path.mkdir(parents=True)
    reading = file.read()
    assert reading.mode == "auto" and "is a folder, not a regular file" in (reading.warning or "")


def test_without_a_pack_any_well_formed_name_is_accepted(tmp_path: Path) -> None:
    file = ControlFile(tmp_path / "state.json")
    file.write("anything")
    assert file.read() == ControlReading("anything", source="file")
    file.path.write_text('{"mode": "Not A Name!"}')
    assert "not a mode name" in (file.read().warning or "")
    with pytest.raises(UnknownMode):
        file.write("Not A Name!")


def test_write_creates_the_folder_and_leaves_no_temp_files(tmp_path: Path) -> None:
    file = control(tmp_path)
    assert file.write("shell") == ControlReading("shell", source="file")
    assert settings_in(file.path) == {"mode": "shell"}
    names = sorted(p.name for p in file.path.parent.iterdir())
    assert names == [".state.json.lock", "state.json"]  # the lock file stays, empty


def test_write_rejects_unknown_names_listing_valid_ones(tmp_path: Path) -> None:
    file = control(tmp_path)
    with pytest.raises(UnknownMode) as caught:
        file.write("poetry")
    assert (
        str(caught.value) == "unknown mode 'poetry'; available modes: auto, off, chat, code, shell"
    )
    assert not file.path.exists()


WRITER = """
import sys
from modes_tui.store.control import ControlFile
file = ControlFile(sys.argv[1])
values = sys.argv[2].split(",")
for i in range(int(sys.argv[3])):
    file.write(values[i % len(values)])
"""


def test_concurrent_writers_never_leave_a_torn_file(tmp_path: Path) -> None:
    file = control(tmp_path)
    file.write("auto")
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(file.path), values, "150"], env=child_env()
        )
        for values in ("chat,code", "shell,off", "auto,code", "off,chat")
    ]
    seen: set[str] = set()
    reads = 0
    while any(w.poll() is None for w in writers):
        raw = file.path.read_bytes()  # a torn file would fail here or below
        assert json.loads(raw)["mode"] in {"auto", "off", *MODES}
        reading = file.read()
        assert reading.warning is None, reading.warning
        seen.add(reading.mode)
        reads += 1
    assert [w.returncode for w in writers] == [0, 0, 0, 0]
    assert reads > 0
    assert file.read().warning is None
    leftovers = [
        p.name
        for p in file.path.parent.iterdir()
        if p.name not in ("state.json", ".state.json.lock")
    ]
    assert leftovers == []


async def collect(file: ControlFile, queue: asyncio.Queue[ControlReading], **kw: bool) -> None:
    async for reading in file.watch(**kw):
        await queue.put(reading)


async def test_watch_reports_a_change_made_by_another_process(tmp_path: Path) -> None:
    file = control(tmp_path)
    file.write("chat")
    queue: asyncio.Queue[ControlReading] = asyncio.Queue()
    task = asyncio.create_task(collect(file, queue))
    await asyncio.sleep(0)  # let the watcher take its first look
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", WRITER, str(file.path), "code", "1", env=child_env()
    )
    assert await process.wait() == 0
    reading = await asyncio.wait_for(queue.get(), timeout=5)
    assert reading == ControlReading("code", source="file")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert task.cancelled()


async def test_watch_reports_an_invalid_edit_and_a_deletion(tmp_path: Path) -> None:
    file = control(tmp_path)
    file.write("code")
    queue: asyncio.Queue[ControlReading] = asyncio.Queue()
    task = asyncio.create_task(collect(file, queue, include_current=True))
    assert await asyncio.wait_for(queue.get(), timeout=5) == ControlReading("code", source="file")
    file.path.write_text("{not json")
    broken = await asyncio.wait_for(queue.get(), timeout=5)
    assert broken.mode == "auto" and "not valid JSON" in (broken.warning or "")
    file.path.unlink()
    assert await asyncio.wait_for(queue.get(), timeout=5) == ControlReading("auto")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_watch_stays_quiet_when_the_setting_is_rewritten_unchanged(tmp_path: Path) -> None:
    file = control(tmp_path)
    file.write("shell")
    queue: asyncio.Queue[ControlReading] = asyncio.Queue()
    task = asyncio.create_task(collect(file, queue))
    await asyncio.sleep(0)
    file.write("shell")
    # Give the watcher a few looks at the rewrite (a new inode), then change for real:
    # had it reported the rewrite, "shell" would come out of the queue first.
    await asyncio.sleep(file.poll_seconds * 3)
    file.write("off")
    assert await asyncio.wait_for(queue.get(), timeout=5) == ControlReading("off", source="file")
    assert queue.empty()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def test_a_write_removes_temp_files_a_killed_writer_left_behind(tmp_path: Path) -> None:
    import time

    target = tmp_path / "state.json"
    stale = tmp_path / ".state.json.abc123.tmp"
    fresh = tmp_path / ".state.json.def456.tmp"
    stale.write_text("{")
    fresh.write_text("{")
    old = time.time() - 3600
    os.utime(stale, (old, old))
    ControlFile(target).write("auto")
    assert not stale.exists()
    assert fresh.exists()  # another writer may be using it right now
    assert settings_in(target) == {"mode": "auto"}

"""Files the app reads or writes are what they claim to be: regular files, bounded, private.

A symlinked state.json once made `modes-tui mode code` replace the file it pointed at (as
root, a symlink to /dev/zero replaced the device node); a FIFO hung `modes-tui mode` and
`chat`; a link to /dev/zero ended in a MemoryError. input_history and the MCP logs were 0644.
Each store is fed the same hostile files: a link to another file, a FIFO, a link to a
device, and a file over its size limit.
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from modes_tui.core import files
from modes_tui.core.errors import (
    CorrectionsError,
    FileReadError,
    FileTooLargeError,
    FileWriteError,
    ModesError,
    SessionError,
    SettingsError,
)
from modes_tui.core.files import (
    atomic_write,
    open_append,
    private_folder,
    read_bytes,
)
from modes_tui.core.paths import Dirs, app_dirs
from modes_tui.store.control import ControlFile
from modes_tui.store.corrections import CorrectionStore
from modes_tui.store.export import write_export
from modes_tui.store.runtime import append_input_history, read_input_history
from modes_tui.store.session_log import SessionLog
from modes_tui.store.session_reader import load_session
from modes_tui.store.settings import load_settings, save_setting
from tests.support.cli_support import run_cli

Hostile = Callable[[Path], str]
"""Puts something that is not a regular file at a path; returns what it is called."""


def link_to_a_file(path: Path) -> str:
    other = path.parent / "precious.txt"
    other.write_bytes(b"precious")
    path.symlink_to(other)
    return "is a symlink"


def fifo(path: Path) -> str:
    os.mkfifo(path)
    return "is a FIFO"


def link_to_dev_zero(path: Path) -> str:
    path.symlink_to("/dev/zero")
    return "is a symlink (to /dev/zero)"


HOSTILE = [link_to_a_file, fifo, link_to_dev_zero]


def hostile_at(hostile: Hostile, path: Path) -> str:
    """Make `path`'s folder and put `hostile` at `path`; what it is, as errors name it."""
    path.parent.mkdir(parents=True)
    return hostile(path)


def mode_of(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def within(seconds: float, call: Callable[[], Any]) -> Any:
    """`call()`, failing the test (not hanging it) if it takes longer than `seconds`."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as error:  # noqa: BLE001 - handed back to the test
            outcome["error"] = error

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"still blocked after {seconds} s"
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


@pytest.fixture
def here(tmp_path: Path) -> Path:
    folder = tmp_path / "here"
    folder.mkdir()
    return folder


@pytest.fixture
def dirs(modes_home: Path) -> Dirs:
    return app_dirs(modes_home)


# --------------------------------------------------------------------------- primitives


@pytest.mark.parametrize("hostile", HOSTILE)
def test_a_read_refuses_what_is_not_a_regular_file_and_says_what_it_is(
    here: Path, hostile: Hostile
) -> None:
    path = here / "state.json"
    what = hostile(path)
    with pytest.raises(FileReadError) as caught:
        within(5, lambda: read_bytes(path, "control"))
    assert str(path) in str(caught.value) and what in str(caught.value)
    assert isinstance(caught.value, ModesError) and isinstance(caught.value, OSError)


def test_a_device_or_a_folder_at_the_path_is_named_as_such(here: Path) -> None:
    with pytest.raises(FileReadError, match="/dev/null is a device"):
        read_bytes("/dev/null", "control")
    with pytest.raises(FileReadError, match="is a folder"):
        read_bytes(here, "control")


def test_a_file_over_its_limit_names_the_file_its_size_and_the_limit(here: Path) -> None:
    path = here / "state.json"
    path.write_bytes(b" " * (files.LIMITS["control"] + 1))
    with pytest.raises(FileTooLargeError) as caught:
        read_bytes(path, "control")
    error = caught.value
    assert (error.size, error.limit) == (65_537, 65_536)
    assert str(path) in str(error) and "65,537 bytes, over the 65,536-byte limit" in str(error)


def test_a_file_at_its_limit_reads_whole(here: Path) -> None:
    path = here / "state.json"
    path.write_bytes(b"x" * files.LIMITS["control"])
    assert len(read_bytes(path, "control")) == files.LIMITS["control"]


@pytest.mark.parametrize("hostile", HOSTILE)
def test_an_append_refuses_what_is_not_a_regular_file(here: Path, hostile: Hostile) -> None:
    path = here / "input_history"
    what = hostile(path)
    with pytest.raises(FileReadError, match=what.replace("(", r"\(").replace(")", r"\)")):
        within(5, lambda: open_append(path))
    if what == "is a symlink":
        assert (here / "precious.txt").read_bytes() == b"precious"


def test_an_append_creates_0600_and_tightens_an_older_0644_file(here: Path) -> None:
    fresh = here / "fresh.log"
    os.close(open_append(fresh))
    assert mode_of(fresh) == 0o600
    old = here / "input_history"
    old.write_text("+typed before\n")
    old.chmod(0o644)
    os.close(open_append(old))
    assert mode_of(old) == 0o600 and old.read_text() == "+typed before\n"


@pytest.mark.parametrize("hostile", [fifo, link_to_dev_zero])
def test_an_atomic_write_refuses_a_special_file_or_a_link_at_the_target(
    here: Path, hostile: Hostile
) -> None:
    path = here / "state.json"
    hostile(path)
    with pytest.raises(FileWriteError, match="nothing was written"):
        within(5, lambda: atomic_write(path, b'{"mode": "code"}\n'))
    assert not stat.S_ISREG(os.lstat(path).st_mode)  # left as it was
    assert sorted(p.name for p in here.iterdir()) == ["state.json"]  # no temp file


def test_private_folders_are_0700_parents_included_and_an_old_0755_one_is_tightened(
    here: Path,
) -> None:
    deep = here / "state" / "mcp"
    private_folder(deep)
    assert mode_of(here / "state") == mode_of(deep) == 0o700
    loose = here / "sessions"
    loose.mkdir(mode=0o755)
    loose.chmod(0o755)
    private_folder(loose)
    assert mode_of(loose) == 0o700


# --------------------------------------------------------------------------- control file


@pytest.mark.parametrize("hostile", HOSTILE)
def test_the_control_file_reads_as_auto_with_a_warning_naming_it(
    dirs: Dirs, hostile: Hostile
) -> None:
    what = hostile_at(hostile, dirs.control_file)
    reading = within(5, ControlFile(dirs.control_file).read)
    assert reading.mode == "auto"
    assert str(dirs.control_file) in (reading.warning or "")
    assert what in (reading.warning or "") and "Remove it" in (reading.warning or "")


def test_an_oversized_control_file_reads_as_auto_with_a_warning(dirs: Dirs) -> None:
    dirs.config.mkdir(parents=True)
    dirs.control_file.write_bytes(b" " * 100_000 + b'{"mode": "code"}')
    reading = ControlFile(dirs.control_file).read()
    assert reading.mode == "auto" and "over the 65,536-byte limit" in (reading.warning or "")


def test_writing_the_control_file_never_writes_through_a_link(dirs: Dirs) -> None:
    dirs.config.mkdir(parents=True)
    link_to_a_file(dirs.control_file)
    with pytest.raises(ModesError, match="is a symlink"):
        ControlFile(dirs.control_file).write("code")
    assert (dirs.config / "precious.txt").read_bytes() == b"precious"
    assert dirs.control_file.is_symlink()


async def test_the_watcher_notices_a_link_swapped_in(dirs: Dirs) -> None:
    control = ControlFile(dirs.control_file, poll_seconds=0.01)
    control.write("code")
    watching = control.watch(include_current=True)
    assert (await within_async(watching.__anext__())).mode == "code"
    dirs.control_file.unlink()
    link_to_dev_zero(dirs.control_file)
    reading = await within_async(watching.__anext__())
    assert reading.mode == "auto" and "is a symlink (to /dev/zero)" in (reading.warning or "")
    await watching.aclose()


async def within_async(step: Any) -> Any:
    import asyncio

    return await asyncio.wait_for(step, 5)


def test_mode_code_with_a_symlinked_state_json_fails_and_leaves_the_target_alone(
    modes_home: Path,
) -> None:
    dirs = app_dirs(modes_home)
    dirs.config.mkdir(parents=True)
    link_to_a_file(dirs.control_file)
    done = run_cli("", "mode", "code", home=modes_home)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert str(dirs.control_file) in done.stderr and "Remove the link" in done.stderr
    assert (dirs.config / "precious.txt").read_bytes() == b"precious"


@pytest.mark.parametrize("hostile", [fifo, link_to_dev_zero])
def test_mode_and_chat_with_a_fifo_or_dev_zero_warn_and_use_auto(
    modes_home: Path, hostile: Hostile
) -> None:
    dirs = app_dirs(modes_home)
    what = hostile_at(hostile, dirs.control_file)
    shown = run_cli("", "mode", home=modes_home)  # run_cli fails the test after 120 s
    assert shown.returncode == 0 and "Traceback" not in shown.stderr
    assert "mode: auto" in shown.stdout and what in shown.stdout
    chat = run_cli(
        "hello\n", "chat", "--plain", "--model", "scripted/echo", "--classifier", "keyword",
        home=modes_home,
    )  # fmt: skip
    assert chat.returncode == 0 and "Traceback" not in chat.stderr
    assert what in chat.stdout + chat.stderr and "You said: hello" in chat.stdout


# --------------------------------------------------------------------------- settings


@pytest.mark.parametrize("hostile", HOSTILE)
def test_a_settings_file_that_is_not_a_regular_file_is_a_settings_error(
    dirs: Dirs, hostile: Hostile
) -> None:
    what = hostile_at(hostile, dirs.settings_file)
    with pytest.raises(SettingsError) as caught:
        within(5, lambda: load_settings(dirs, env={}))
    assert str(dirs.settings_file) in str(caught.value) and what in str(caught.value)


def test_an_oversized_settings_file_is_a_settings_error(dirs: Dirs) -> None:
    dirs.config.mkdir(parents=True)
    dirs.settings_file.write_bytes(b"# padding\n" * 500_000)
    with pytest.raises(SettingsError, match="over the 4,194,304-byte limit"):
        load_settings(dirs, env={})


def test_saving_a_setting_never_writes_through_a_link(dirs: Dirs) -> None:
    dirs.config.mkdir(parents=True)
    link_to_a_file(dirs.settings_file)
    with pytest.raises(ModesError, match="is a symlink"):
        save_setting(dirs, "theme", "light")
    assert (dirs.config / "precious.txt").read_bytes() == b"precious"


def test_a_saved_setting_is_0600_in_a_0700_folder(dirs: Dirs) -> None:
    path = save_setting(dirs, "theme", "light")
    assert mode_of(path) == 0o600 and mode_of(dirs.config) == 0o700


# --------------------------------------------------------------------------- corrections


@pytest.mark.parametrize("hostile", HOSTILE)
def test_a_corrections_file_that_is_not_a_regular_file_is_refused(
    dirs: Dirs, hostile: Hostile
) -> None:
    store = CorrectionStore.for_pack(dirs.data, "default")
    what = hostile_at(hostile, store.path)
    with pytest.raises(CorrectionsError) as caught:
        within(5, store.corrections)
    assert str(store.path) in str(caught.value) and what in str(caught.value)
    if what == "is a symlink":
        assert (store.path.parent / "precious.txt").read_bytes() == b"precious"


def test_an_oversized_corrections_file_is_refused(
    dirs: Dirs, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(files.LIMITS, "corrections", 1000)
    store = CorrectionStore.for_pack(dirs.data, "default")
    store.path.parent.mkdir(parents=True)
    store.path.write_bytes(b"\n" * 1001)
    with pytest.raises(CorrectionsError, match="1,001 bytes, over the 1,000-byte limit"):
        store.corrections()


# --------------------------------------------------------------------------- sessions


@pytest.mark.parametrize("hostile", HOSTILE)
def test_a_session_file_that_is_not_a_regular_file_is_a_session_error(
    dirs: Dirs, hostile: Hostile
) -> None:
    path = dirs.sessions / "20260101-000000-beef.jsonl"
    what = hostile_at(hostile, path)
    for ref in (path.stem, str(path)):  # by id, as `replay ID` does, and by path
        with pytest.raises(SessionError) as caught:
            within(5, lambda ref=ref: load_session(ref, dirs))  # type: ignore[misc]
        assert str(path) in str(caught.value) and what in str(caught.value)


def test_an_oversized_session_file_is_a_session_error(
    dirs: Dirs, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(files.LIMITS, "session", 2000)
    log = SessionLog.create(dirs, pack="default", model="m")
    log.record("user", 1, content="x" * 3000)
    log.close()
    with pytest.raises(SessionError, match="over the 2,000-byte limit"):
        load_session(log.path)


def test_session_files_are_0600_in_0700_folders(dirs: Dirs) -> None:
    log = SessionLog.create(dirs, pack="default", model="m")
    log.record("user", 1, content="private")
    log.close()
    assert mode_of(log.path) == mode_of(log.summary_path) == 0o600
    assert mode_of(dirs.data) == mode_of(dirs.sessions) == mode_of(log.summary_path.parent) == 0o700


def test_a_log_replaced_by_a_link_is_never_appended_through(dirs: Dirs) -> None:
    log = SessionLog.create(dirs, pack="default", model="m")
    log.close()
    log.path.unlink()
    link_to_a_file(log.path)
    with pytest.raises(SessionError, match="is a symlink"):
        log.record("user", 1, content="hello")
    assert (dirs.sessions / "precious.txt").read_bytes() == b"precious"


def test_a_linked_summary_is_ignored_and_the_list_reads_the_log(dirs: Dirs) -> None:
    from modes_tui.store.sessions import list_sessions

    log = SessionLog.create(dirs, pack="default", model="m", title="Real title")
    log.record("user", 1, content="hi")
    log.close()
    log.summary_path.unlink()
    log.summary_path.symlink_to("/dev/zero")
    (listed,) = within(5, lambda: list_sessions(dirs))
    assert listed.title == "Real title" and listed.problem is None


# --------------------------------------------------------------------------- exports


def test_an_export_is_0644_and_never_written_through_a_link(here: Path) -> None:
    target = here / "transcript.md"
    write_export(target, "# hello\n")
    assert target.read_text() == "# hello\n" and mode_of(target) == 0o644
    linked = here / "linked.md"
    link_to_a_file(linked)
    with pytest.raises(FileWriteError, match="is a symlink"):
        write_export(linked, "# hello\n")
    assert (here / "precious.txt").read_bytes() == b"precious"


def test_export_dash_o_onto_a_link_fails_cleanly(modes_home: Path, here: Path) -> None:
    dirs = app_dirs(modes_home)
    log = SessionLog.create(dirs, pack="default", model="m")
    log.record("user", 1, content="hello")
    log.close()
    target = here / "out.md"
    link_to_a_file(target)
    done = run_cli("", "export", log.id, "-o", str(target), home=modes_home)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "is a symlink" in done.stderr and "pick another file with -o" in done.stderr
    assert (here / "precious.txt").read_bytes() == b"precious"


# --------------------------------------------------------------------------- caches


@pytest.mark.parametrize("hostile", HOSTILE)
def test_the_embedding_cache_ignores_and_never_writes_through_a_hostile_file(
    dirs: Dirs, hostile: Hostile
) -> None:
    from modes_tui.core.routing.classifiers.embedding import EmbeddingCache

    cache = EmbeddingCache(dirs.cache / "embeddings")
    path = cache.path_for("enc")
    what = hostile_at(hostile, path)
    assert within(5, lambda: cache.load("enc", ["hello"])) == {}
    cache.store("enc", {"hello": np.ones(3, np.float32)})  # a cache: skipped, no error
    assert not stat.S_ISREG(os.lstat(path).st_mode)
    if what == "is a symlink":
        assert (path.parent / "precious.txt").read_bytes() == b"precious"


def test_the_embedding_cache_is_0600_in_0700_folders(dirs: Dirs) -> None:
    from modes_tui.core.routing.classifiers.embedding import EmbeddingCache

    cache = EmbeddingCache(dirs.cache / "embeddings")
    cache.store("enc", {"hello": np.ones(3, np.float32)})
    assert mode_of(cache.path_for("enc")) == 0o600
    assert mode_of(dirs.cache) == mode_of(dirs.cache / "embeddings") == 0o700
    assert list(cache.load("enc", ["hello"])) == ["hello"]


# --------------------------------------------------------------------------- state dir


def test_the_input_history_is_0600_in_a_0700_folder_and_reads_back(dirs: Dirs) -> None:
    path = dirs.state / "input_history"
    append_input_history(path, "first")
    append_input_history(path, "two\nlines")
    assert read_input_history(path) == ["two\nlines", "first"]
    assert mode_of(path) == 0o600 and mode_of(dirs.state) == 0o700


@pytest.mark.parametrize("hostile", HOSTILE)
def test_a_hostile_input_history_is_a_warning_and_a_history_in_memory(
    dirs: Dirs, hostile: Hostile
) -> None:
    import io

    from modes_tui.repl import Printer, input_history

    path = dirs.state / "input_history"
    what = hostile_at(hostile, path)
    out = io.StringIO()
    history = within(5, lambda: input_history(path, Printer(out)))
    assert what in out.getvalue() and "in memory only" in out.getvalue()
    history.store_string("typed")  # kept for this run, never written through the link
    if what == "is a symlink":
        assert (dirs.state / "precious.txt").read_bytes() == b"precious"


def test_mcp_logs_are_0600_in_a_0700_folder(dirs: Dirs) -> None:
    from modes_tui.mcp.config import McpServer
    from modes_tui.mcp.servers import _Connection

    connection = _Connection(McpServer("time", "stdio", command="true"), dirs.state / "mcp", {})
    handle = connection._open_log()
    handle.write("started\n")
    handle.close()
    log = dirs.state / "mcp" / "mcp-time.log"
    assert mode_of(log) == 0o600 and mode_of(dirs.state / "mcp") == 0o700
    assert connection._log_tail() == "started"


@pytest.mark.parametrize("hostile", [fifo, link_to_dev_zero])
async def test_the_tui_starts_on_a_hostile_control_file_with_a_warning_and_auto(
    dirs: Dirs, hostile: Hostile
) -> None:
    from datetime import UTC

    from modes_tui.tui.app import build_app
    from tests.support.tui_support import default_pack, plain, services, started, until

    what = hostile_at(hostile, dirs.control_file)
    pack = default_pack()
    app_services = services(pack=pack)
    app_services.control = ControlFile(dirs.control_file, modes=lambda: pack.names)
    async with build_app(app_services, tz=UTC).run_test(size=(120, 40)) as pilot:
        app = await started(pilot)
        await until(pilot, lambda: what in app.conversation.header.render_text().plain)
        assert "setting auto" in app.conversation.header.render_text().plain
        await pilot.press("f3")  # forcing a mode must not write through it either
        await until(pilot, lambda: "not a regular file" in plain(app.conversation.status))
        assert not stat.S_ISREG(os.lstat(dirs.control_file).st_mode)

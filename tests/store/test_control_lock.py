"""Writers of the control file and of config.yaml at once: nobody's change is lost.

`modes-tui mode X --pack P` reads state.json, changes P's entry and replaces the file. Four
of them at once for four packs used to lose a pack's setting in most rounds (each read the
file before another's rename). They now hold `core.files.locked` around the whole
read-modify-write, and so does every writer of config.yaml.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from modes_tui.core.errors import FileWriteError, ModesError
from modes_tui.core.files import locked
from modes_tui.core.paths import Dirs, app_dirs
from modes_tui.store.control import ControlFile
from modes_tui.store.settings import load_settings, save_setting
from tests.support.cli_support import REPO

PACKS = ("alpha", "beta", "gamma", "delta")
ROUNDS = 20


def settings_in(path: Path) -> object:
    """The control file's settings, without the times they were made (`since`)."""
    data = json.loads(path.read_text())
    data.pop("since", None)
    return data


def mode_writer(home: Path, pack: str, mode: str) -> subprocess.Popen[str]:
    """`python -m modes_tui mode MODE --pack PACK` (a pack that does not load: any auto/off
    setting is still written, as for a user whose pack is broken)."""
    env = {**os.environ, "MODES_TUI_HOME": str(home), "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-m", "modes_tui", "mode", mode, "--pack", pack],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO,
    )


def test_four_mode_commands_at_once_for_four_packs_lose_no_setting(tmp_path: Path) -> None:
    control = tmp_path / "config" / "state.json"
    lost: list[str] = []
    for round_number in range(ROUNDS):
        wanted = {pack: ("off", "auto")[(round_number + i) % 2] for i, pack in enumerate(PACKS)}
        writers = [mode_writer(tmp_path, pack, mode) for pack, mode in wanted.items()]
        for writer in writers:
            _out, err = writer.communicate(timeout=120)
            assert writer.returncode == 0, err
        packs = json.loads(control.read_text())["packs"]
        if packs != wanted:
            lost.append(f"round {round_number}: {packs} instead of {wanted}")
    assert not lost, f"lost updates in {len(lost)} of {ROUNDS} rounds:\n" + "\n".join(lost)


def test_threads_writing_every_pack_at_once_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    names = [f"pack{number}" for number in range(12)]
    start = threading.Barrier(len(names))
    errors: list[BaseException] = []

    def write(pack: str) -> None:
        try:
            start.wait()
            for mode in ("off", "auto", "off"):
                ControlFile(path, pack=pack).write(mode)
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=write, args=(name,)) for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors
    assert settings_in(path) == {"packs": dict.fromkeys(names, "off")}
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_a_held_lock_makes_a_write_fail_naming_the_lock_file_and_change_nothing(
    tmp_path: Path,
) -> None:
    path = tmp_path / "state.json"
    ControlFile(path, pack="alpha").write("off")
    before = path.read_bytes()
    with locked(path) as lock_file:
        assert lock_file == tmp_path / ".state.json.lock"
        with pytest.raises(FileWriteError) as raised, locked(path, timeout=0.2):
            pass  # pragma: no cover - never entered
    assert str(lock_file) in str(raised.value) and "nothing was written" in str(raised.value)
    assert path.read_bytes() == before


def test_a_control_write_behind_a_held_lock_says_the_file_was_not_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import modes_tui.core.files as files

    path = tmp_path / "state.json"
    monkeypatch.setattr(files, "LOCK_TIMEOUT_SECONDS", 0.2)
    with (
        locked(path),
        pytest.raises(ModesError, match=r"the control file was not changed: .*\.state\.json\.lock"),
    ):
        ControlFile(path, pack="alpha").write("off")
    assert not path.exists()


def test_a_link_at_the_lock_files_place_is_refused_not_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("keep me")
    (tmp_path / ".state.json.lock").symlink_to(victim)
    with (
        pytest.raises(FileWriteError, match=r"cannot lock .*state\.json: .*symlink"),
        locked(tmp_path / "state.json"),
    ):
        pass  # pragma: no cover - never entered
    assert victim.read_text() == "keep me"


def test_config_yaml_writers_at_once_keep_every_setting(tmp_path: Path) -> None:
    dirs = Dirs(config=tmp_path / "config", state=tmp_path / "state", data=tmp_path / "data")
    dirs.config.mkdir(parents=True)
    dirs.settings_file.write_text("# mine\nsweep_days: 3\n")
    values = {"default_model": "scripted/echo", "pack": "support", "theme": "nord"}
    start = threading.Barrier(len(values))

    def write(key: str, value: str) -> None:
        start.wait()
        for _ in range(5):
            save_setting(dirs, key, value)

    threads = [threading.Thread(target=write, args=item) for item in values.items()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    settings = load_settings(dirs, env={})
    assert (settings.default_model, settings.pack, settings.theme) == tuple(values.values())
    assert settings.sweep_days == 3 and dirs.settings_file.read_text().startswith("# mine\n")


def test_init_writes_nothing_over_a_config_changed_while_it_ran(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from modes_tui.cli import init

    path = app_dirs().settings_file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("theme: nord\n")
    assert init.write(path, "theme: nord\n", "theme: nord\npack: support\n")
    assert path.read_text() == "theme: nord\npack: support\n"
    assert not init.write(path, "theme: nord\n", "theme: nord\ndefault_model: x\n")
    assert path.read_text() == "theme: nord\npack: support\n"

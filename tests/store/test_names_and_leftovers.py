"""Pack names are names, never paths; the temp files of killed writers are swept.

`--pack ../../etc` used to be accepted (and became a key of the control file); now every
place a pack name comes from refuses a path, `..`, a separator or an empty name with an
error that names where it came from. A writer killed between its temp file and its rename
used to leave `.state.json.x1y2z3w4.tmp` (or a 3.5 MB `.<session>.….tmp`) for good; the
next start removes this program's own temp files once they are a minute old, and nothing
else.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from modes_tui.cli import main
from modes_tui.core.errors import ModesError, SettingsError
from modes_tui.core.paths import Dirs, app_dirs
from modes_tui.store.control import ControlFile
from modes_tui.store.runtime import sweep, sweep_temps
from modes_tui.store.settings import load_settings
from tests.support.cli_support import REPO

BAD_NAMES = ["../../etc", "..", ".", "a/b", "a\\b", "", "/etc", " default", "x\n"]

# --------------------------------------------------------------------------- pack names


@pytest.mark.parametrize("name", BAD_NAMES)
def test_mode_pack_refuses_a_path_naming_the_option(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["mode", "off", "--pack", name]) == 2
    err = capsys.readouterr().err
    assert f"argument --pack: {name!r} is" in err and "a pack name is a name, not a path" in err
    assert not app_dirs().control_file.exists()


def test_the_top_level_pack_option_refuses_a_path(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--pack", "../../etc", "mode"]) == 2
    assert "argument --pack: '../../etc' is a path" in capsys.readouterr().err


def test_a_path_from_the_command_line_of_a_real_process_is_refused(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "modes_tui", "mode", "code", "--pack", "../../etc"],
        capture_output=True,
        text=True,
        env={**os.environ, "MODES_TUI_HOME": str(tmp_path), "PYTHONPATH": str(REPO)},
        cwd=REPO,
        timeout=60,
    )
    assert done.returncode == 2
    assert "argument --pack: '../../etc' is a path" in done.stderr
    assert not (tmp_path / "config" / "state.json").exists()


def test_the_pack_variable_and_setting_refuse_a_path(tmp_path: Path) -> None:
    dirs = Dirs(config=tmp_path / "c", state=tmp_path / "s", data=tmp_path / "d")
    with pytest.raises(SettingsError, match=r"MODES_TUI_PACK.* must be a pack name"):
        load_settings(dirs, env={"MODES_TUI_PACK": "../secret"})
    dirs.config.mkdir()
    dirs.settings_file.write_text("pack: ../../etc\n")
    with pytest.raises(SettingsError, match=r"config\.yaml.*pack must be a pack name"):
        load_settings(dirs, env={})


def test_the_control_file_refuses_a_path_as_a_pack_key(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_text(json.dumps({"packs": {"../../etc": "code", "default": "off"}}))
    reading = ControlFile(path, pack="default").read()
    assert reading.mode == "auto"
    assert reading.warning is not None
    assert "'packs' has the key '../../etc', which is a path" in reading.warning
    ControlFile(path, pack="support").write("off")  # a write drops the bad key, keeps the rest
    assert settings_in(path) == {"packs": {"default": "off", "support": "off"}}
    with pytest.raises(ModesError, match=r"pack '\.\./x': it is a path"):
        ControlFile(path, pack="../x").write("off")
    odd = ControlFile(path, pack="my pack")  # a --profiles folder: it reads, it is no key
    assert odd.read().mode == "auto"
    with pytest.raises(ModesError, match=r"pack 'my pack': it is not a pack name.*Rename"):
        odd.write("off")
    assert settings_in(path) == {"packs": {"default": "off", "support": "off"}}


# --------------------------------------------------------------------------- leftovers


def age(path: Path, seconds: float) -> Path:
    """Make `path` look `seconds` old."""
    then = time.time() - seconds
    os.utime(path, (then, then))
    return path


def test_old_own_temp_files_go_young_ones_and_foreign_files_stay(tmp_path: Path) -> None:
    dirs = Dirs(config=tmp_path / "c", state=tmp_path / "s", data=tmp_path / "d")
    sessions = dirs.sessions
    for folder in (dirs.config, sessions, dirs.cache / "embeddings", dirs.user_profiles / "mine"):
        folder.mkdir(parents=True)
    old_own = [
        dirs.config / ".state.json.k2j4h5g6.tmp",
        dirs.config / ".config.yaml.abcd_123.tmp",
        sessions / ".20260101-abc.jsonl.zz9yy8xx.tmp",
        dirs.cache / "embeddings" / ".default.npz.q1w2e3r4.tmp",
        dirs.data / ".modes-tui-0123456789ab.tmp",
    ]
    for path in old_own:
        path.write_bytes(b"x" * 1024)
        age(path, 120)
    young = dirs.config / ".state.json.young123.tmp"
    young.write_bytes(b"{}")
    foreign = [
        dirs.config / "notes.tmp",  # not a temp name of ours
        dirs.config / "state.json",
        dirs.config / ".state.json.lock",
        sessions / ".hidden.tmp",  # no random part
        dirs.user_profiles / "mine" / ".router.yaml.abcdefgh.tmp",  # in the user's pack
    ]
    for path in foreign:
        path.write_text("keep")
        age(path, 3600)
    link = sessions / ".linked.jsonl.abcdefgh.tmp"
    link.symlink_to(dirs.config / "notes.tmp")

    removed = sweep_temps(dirs)

    assert sorted(removed) == sorted(old_own)
    assert not any(path.exists() for path in old_own)
    assert young.exists() and link.is_symlink()
    assert all(path.exists() for path in foreign)


def test_the_start_of_a_chat_sweeps_what_a_killed_writer_left(tmp_path: Path) -> None:
    dirs = app_dirs()
    dirs.sessions.mkdir(parents=True)
    leftover = dirs.sessions / ".20260101-0000.jsonl.a1b2c3d4.tmp"
    leftover.write_bytes(b"x" * 3_500_000)
    age(leftover, 300)
    assert leftover in sweep(dirs)
    assert not leftover.exists()


def test_a_writer_killed_before_its_rename_leaves_a_temp_file_the_next_start_removes(
    tmp_path: Path,
) -> None:
    target = tmp_path / "config" / "state.json"
    target.parent.mkdir(parents=True)
    code = (
        "import os, sys\n"
        "from modes_tui.core.files import atomic_file\n"
        f"with atomic_file({str(target)!r}) as out:\n"
        "    out.write(b'half'); out.flush(); os.kill(os.getpid(), 9)\n"
    )
    killed = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        cwd=REPO,
        timeout=60,
        check=False,
    )
    assert killed.returncode == -9
    left = [p for p in target.parent.iterdir() if p.name.endswith(".tmp")]
    assert len(left) == 1 and not target.exists()
    dirs = Dirs(config=tmp_path / "config", state=tmp_path / "state", data=tmp_path / "data")
    assert sweep_temps(dirs) == []  # young: it could be a live writer's
    age(left[0], 61)
    assert sweep_temps(dirs) == left


def settings_in(path: Path) -> dict[str, object]:
    """The control file's settings, without the times they were set (`since`)."""
    data = json.loads(path.read_text())
    data.pop("since", None)
    return dict(data)

"""Settings precedence and errors; runtime state and the 7-day sweep."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from modes_tui.core.errors import SettingsError
from modes_tui.core.paths import Dirs, app_dirs
from modes_tui.store.runtime import runtime_state, sweep
from modes_tui.store.settings import KEYS, Settings, load_settings, save_setting


@pytest.fixture
def dirs() -> Dirs:
    return app_dirs()


def write_config(dirs: Dirs, text: str) -> Path:
    dirs.config.mkdir(parents=True, exist_ok=True)
    dirs.settings_file.write_text(text, encoding="utf-8")
    return dirs.settings_file


def test_defaults_without_a_file(dirs: Dirs) -> None:
    settings = load_settings(dirs, env={})
    assert settings == Settings()
    assert settings.default_model == "local/gemma-3-270m"
    assert settings.pack == "default" and settings.theme == "textual-dark"
    assert settings.keymap == {} and settings.local_model_path is None
    assert settings.origin("pack") == "default"


def test_file_then_environment_then_overrides(dirs: Dirs) -> None:
    path = write_config(
        dirs,
        "default_model: openai/gpt-4.1-mini\npack: support\ntheme: nord\n"
        "keymap: {auto: f12}\nlocal_model_path: ~/models/x.gguf\n",
    )
    env = {"MODES_TUI_PACK": "default", "MODES_TUI_THEME": "gruvbox", "MODES_TUI_HOME": "/x"}
    settings = load_settings(dirs, env=env, overrides={"theme": "dracula", "pack": None})
    assert settings.default_model == "openai/gpt-4.1-mini"  # file only
    assert settings.pack == "default"  # env beats file; a None override is "not given"
    assert settings.theme == "dracula"  # override beats env and file
    assert settings.keymap == {"auto": "f12"}
    assert settings.local_model_path == Path("~/models/x.gguf").expanduser()
    assert settings.origin("default_model") == str(path)
    assert settings.origin("pack") == "MODES_TUI_PACK"
    assert settings.origin("theme") == "command line"
    assert settings.warnings == ()  # MODES_TUI_HOME is not a setting, and not unknown


def test_variables_read_elsewhere_are_not_called_ignored(dirs: Dirs) -> None:
    # MODES_TUI_ENCODER_BACKEND=numpy is honoured by the encoder: "ignored" was untrue
    env = {
        "MODES_TUI_ENCODER_BACKEND": "numpy",
        "MODES_TUI_CPUINFO": "/x",
        "MODES_TUI_INIT_PORTS": "",
    }
    assert load_settings(dirs, env=env).warnings == ()


def test_environment_values_are_parsed_by_type(dirs: Dirs) -> None:
    settings = load_settings(
        dirs,
        env={
            "MODES_TUI_KEYMAP": "auto=f12, mode.code=f3",
            "MODES_TUI_SESSIONS_FSYNC": "yes",
            "MODES_TUI_SWEEP_DAYS": "3",
            "MODES_TUI_ROUTER_CLASSIFIER": "keyword",
            "MODES_TUI_LOCAL_MODEL_PATH": "",
        },
    )
    assert settings.keymap == {"auto": "f12", "mode.code": "f3"}
    assert settings.sessions_fsync is True and settings.sweep_days == 3
    assert settings.router_classifier == "keyword" and settings.local_model_path is None
    json_keymap = load_settings(dirs, env={"MODES_TUI_KEYMAP": '{"auto": "ctrl+a"}'})
    assert json_keymap.keymap == {"auto": "ctrl+a"}


def test_an_unknown_key_in_the_file_names_file_key_and_choices(dirs: Dirs) -> None:
    path = write_config(dirs, "pack: default\ncolour: red\n")
    with pytest.raises(SettingsError) as caught:
        load_settings(dirs, env={})
    message = str(caught.value)
    assert message.startswith(f"{path}: unknown key 'colour'; remove it or use one of: ")
    assert "default_model" in message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("pack: 3\n", "pack must be text, got int 3"),
        ("keymap: [f1, f2]\n", "keymap must be a mapping of action id to key"),
        (
            "keymap: {auto: 12}\n",
            "keymap must be a mapping of action id to key, e.g. {auto: f12}, got entry 'auto': 12",
        ),
        ("sessions_fsync: maybe\n", "sessions_fsync must be true or false, got str 'maybe'"),
        ("sweep_days: 0\n", "sweep_days must be a whole number of days, 1 or more"),
    ],
)
def test_a_wrong_type_in_the_file_names_file_and_key(dirs: Dirs, text: str, expected: str) -> None:
    path = write_config(dirs, text)
    with pytest.raises(SettingsError) as caught:
        load_settings(dirs, env={})
    assert str(caught.value).startswith(f"{path}: ")
    assert expected in str(caught.value)
    assert f"edit {path}" in str(caught.value)


def test_a_wrong_type_in_a_variable_names_the_variable(dirs: Dirs) -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings(dirs, env={"MODES_TUI_SWEEP_DAYS": "soon"})
    assert str(caught.value) == (
        "MODES_TUI_SWEEP_DAYS: sweep_days must be a whole number of days, 1 or more, "
        "got str 'soon'; set MODES_TUI_SWEEP_DAYS to 7, or unset it"
    )
    with pytest.raises(SettingsError, match=r"^MODES_TUI_KEYMAP: keymap entry 'f12' is not"):
        load_settings(dirs, env={"MODES_TUI_KEYMAP": "f12"})


def test_an_unknown_variable_is_a_warning_not_an_error(dirs: Dirs) -> None:
    settings = load_settings(dirs, env={"MODES_TUI_DEFAULT_MODLE": "x"})
    assert settings.default_model == "local/gemma-3-270m"
    assert len(settings.warnings) == 1
    assert settings.warnings[0].startswith("MODES_TUI_DEFAULT_MODLE is not a setting")
    assert "MODES_TUI_DEFAULT_MODEL" in settings.warnings[0]


def test_override_errors_name_the_option(dirs: Dirs) -> None:
    with pytest.raises(SettingsError, match=r"^command line: 'colour' is not a setting"):
        load_settings(dirs, env={}, overrides={"colour": "red"})
    with pytest.raises(SettingsError, match=r"^--sweep-days: sweep_days must be"):
        load_settings(dirs, env={}, overrides={"sweep_days": "-2"})


def test_broken_yaml_names_the_line(dirs: Dirs) -> None:
    path = write_config(dirs, "pack: default\ntheme: [unclosed\n")
    with pytest.raises(SettingsError, match=rf"^{path}: not valid YAML at line \d+"):
        load_settings(dirs, env={})
    write_config(dirs, "- a list\n")
    with pytest.raises(SettingsError, match="expected a mapping of settings"):
        load_settings(dirs, env={})


def test_an_empty_file_is_all_defaults(dirs: Dirs) -> None:
    write_config(dirs, "# nothing yet\n")
    assert load_settings(dirs, env={}) == Settings()


def test_every_key_has_a_type_check(dirs: Dirs) -> None:
    defaults = Settings()
    for key in KEYS:
        value = getattr(defaults, key)
        loaded = load_settings(dirs, env={}, overrides={key: value})
        assert getattr(loaded, key) == value


# --------------------------------------------------------------------------- runtime


def age(path: Path, days: float) -> None:
    stamp = time.time() - days * 86400
    os.utime(path, (stamp, stamp))


def test_runtime_state_lives_in_the_state_dir_apart_from_the_control_file(dirs: Dirs) -> None:
    state = runtime_state(dirs).ensure()
    assert state.input_history.parent == dirs.state
    assert state.cache.is_dir() and state.scratch.is_dir()
    assert dirs.control_file.parent == dirs.config != dirs.state


def test_sweep_removes_old_runtime_files_only(dirs: Dirs) -> None:
    state = runtime_state(dirs).ensure()
    old_cache = state.cache / "embeddings" / "old.npy"
    new_cache = state.cache / "embeddings" / "new.npy"
    old_tmp = state.scratch / "download.part"
    for path in (old_cache, new_cache, old_tmp, state.input_history):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
    for path in (old_cache, old_tmp, state.input_history):
        age(path, 8)
    # Old files that are not runtime state: configuration and sessions.
    dirs.sessions.mkdir(parents=True)
    keep = [dirs.settings_file, dirs.control_file, dirs.sessions / "20200101-000000-abcd.jsonl"]
    dirs.config.mkdir(parents=True, exist_ok=True)
    for path in keep:
        path.write_text("{}")
        age(path, 400)
    removed = sweep(dirs)
    assert sorted(removed) == sorted([old_cache, old_tmp, state.input_history])
    assert new_cache.exists() and all(path.exists() for path in keep)


def test_sweep_never_touches_config_or_sessions_even_when_dirs_coincide(tmp_path: Path) -> None:
    # On macOS platformdirs gives one folder for config, state and data.
    same = tmp_path / "one"
    dirs = Dirs(config=same, state=same, data=same)
    state = runtime_state(dirs).ensure()
    old_cache = state.cache / "old"
    old_cache.write_text("x")
    dirs.sessions.mkdir(parents=True)
    keep = [dirs.settings_file, dirs.control_file, dirs.sessions / "s.jsonl", same / "notes.txt"]
    for path in [*keep, old_cache]:
        path.write_text("x")
        age(path, 30)
    assert sweep(dirs) == [old_cache]
    assert all(path.exists() for path in keep)


def test_sweep_respects_the_age_and_tolerates_missing_folders(dirs: Dirs) -> None:
    assert sweep(dirs) == []
    state = runtime_state(dirs).ensure()
    file = state.cache / "three-days-old"
    file.write_text("x")
    age(file, 3)
    assert sweep(dirs, max_age_days=7) == []
    assert sweep(dirs, max_age_days=2) == [file]


def test_the_guard_holds_when_the_cache_points_into_the_sessions_folder(dirs: Dirs) -> None:
    dirs.sessions.mkdir(parents=True)
    log = dirs.sessions / "20200101-000000-abcd.jsonl"
    log.write_text("{}")
    age(log, 100)
    dirs.state.mkdir(parents=True)
    dirs.cache.symlink_to(dirs.sessions, target_is_directory=True)
    assert sweep(dirs) == []
    assert log.exists()


def test_a_saved_theme_replaces_its_line_and_keeps_the_rest(dirs: Dirs) -> None:
    path = write_config(dirs, "# my settings\npack: default  # the usual\ntheme: textual-dark\n")
    assert save_setting(dirs, "theme", "nord") == path
    assert path.read_text() == '# my settings\npack: default  # the usual\ntheme: "nord"\n'
    assert load_settings(dirs, env={}).theme == "nord"


def test_a_saved_theme_is_added_to_a_file_without_one_or_no_file(dirs: Dirs) -> None:
    save_setting(dirs, "theme", "gruvbox")
    assert load_settings(dirs, env={}).theme == "gruvbox"
    write_config(dirs, "pack: support\n")
    save_setting(dirs, "theme", "nord")
    settings = load_settings(dirs, env={})
    assert (settings.pack, settings.theme) == ("support", "nord")


def test_saving_into_a_broken_file_or_a_key_the_app_does_not_own_is_refused(dirs: Dirs) -> None:
    path = write_config(dirs, "theme: [unclosed\n")
    with pytest.raises(SettingsError, match="not valid YAML"):
        save_setting(dirs, "theme", "nord")
    assert path.read_text() == "theme: [unclosed\n"  # left alone
    with pytest.raises(SettingsError, match="keymap cannot be saved"):
        save_setting(dirs, "keymap", "x")

"""One settings validator: config.yaml's keys, `models:` and `mcp_servers:` share one reader.

The wording pinned elsewhere (test_store_settings, test_models_config, test_mcp_config) is
unchanged; these tests pin what the shared reader evened out between the three sections.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from modes_tui.core.config.settings import SettingReader, is_number, is_whole
from modes_tui.core.errors import SettingsError
from modes_tui.core.paths import Dirs, app_dirs
from modes_tui.store.settings import load_settings


@pytest.fixture
def dirs() -> Dirs:
    return app_dirs()


def write_config(dirs: Dirs, data: object) -> Path:
    dirs.config.mkdir(parents=True, exist_ok=True)
    dirs.settings_file.write_text(yaml.safe_dump(data), encoding="utf-8")
    return dirs.settings_file


def error_of(dirs: Dirs, data: object, env: dict[str, str] | None = None) -> str:
    write_config(dirs, data)
    with pytest.raises(SettingsError) as caught:
        load_settings(dirs, env=env or {})
    return str(caught.value)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"sessions_fsync": "yes"}, "sessions_fsync must be true or false, got str 'yes'"),
        (
            {"models": {"fast": {"model": "openai/x", "tools": "yes"}}},
            "models.fast.tools must be true or false, got 'yes'",
        ),
        (
            {"mcp_servers": {"t": {"command": "c", "trust": "yes"}}},
            "mcp_servers.t.trust must be true or false, got str 'yes'",
        ),
    ],
)
def test_a_flag_reads_the_same_in_every_section(dirs: Dirs, data: object, expected: str) -> None:
    message = error_of(dirs, data)
    assert message.startswith(f"{dirs.settings_file}: {expected}")


def test_a_start_timeout_that_is_not_a_number_is_refused(dirs: Dirs) -> None:
    # `.nan` slipped past `timeout <= 0` before; the shared number check refuses it
    message = error_of(
        dirs, {"mcp_servers": {"t": {"command": "c", "start_timeout": float("nan")}}}
    )
    assert message == (
        f"{dirs.settings_file}: mcp_servers.t.start_timeout must be a positive number of "
        f"seconds, got float nan (line 4, column 5); edit {dirs.settings_file}"
    )


def test_a_huge_budget_value_is_shown_cut_like_every_other_value(dirs: Dirs) -> None:
    message = error_of(dirs, {}, env={"MODES_TUI_BUDGET": "y" * 5000})
    assert message.startswith("MODES_TUI_BUDGET: budget must be a price in USD greater than 0")
    assert "…" in message and len(message) < 400


def test_several_unknown_model_keys_are_counted_like_other_sections(dirs: Dirs) -> None:
    message = error_of(dirs, {"models": {"fast": {"model": "openai/x", "colour": 1, "zz": 2}}})
    assert (
        f"{dirs.settings_file}: models.fast: unknown keys 'colour', 'zz'; known keys: " in message
    )


def test_the_reader_names_where_the_key_path_and_the_fix() -> None:
    fields = SettingReader("/h/config.yaml", fix="edit /h/config.yaml").child("mcp_servers.git")
    assert str(fields.wrong("args[0]", "text or a number", None)) == (
        "/h/config.yaml: mcp_servers.git.args[0] must be text or a number, got NoneType None; "
        "edit /h/config.yaml"
    )
    assert str(fields.child("env").problem("", "'' is not a valid name")) == (
        "/h/config.yaml: mcp_servers.git.env: '' is not a valid name; edit /h/config.yaml"
    )
    untyped = SettingReader("X", "models.fast", typed=False)
    assert str(untyped.wrong("tools", "true or false", 1)) == (
        "X: models.fast.tools must be true or false, got 1"
    )
    with pytest.raises(SettingsError, match=r"^X: models.fast: unknown key 'a'; see docs$"):
        untyped.unknown_keys({"a": 1, "model": 2}, {"model"}, "see docs")


def test_the_predicates_do_not_take_true_for_one_or_inf_for_a_price() -> None:
    assert not is_whole(True, 0) and is_whole(0, 0) and not is_whole(19, 20)
    assert not is_number(True, 0) and is_number(0, 0) and not is_number(0, 0, above=True)
    assert is_number(float("inf"), 0) and not is_number(float("inf"), 0, finite=True)
    assert not is_number(float("nan"), 0)

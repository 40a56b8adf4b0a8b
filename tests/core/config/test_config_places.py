"""Every config error says where (issue 30, item 7): the file, the line and the column, on
the command line, in `init` and in the app's note; a key written twice is an error naming
both lines; an unknown key says what was meant; the REPL's `/why` says the decision in the
route panel's words."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from modes_tui.core.errors import DeclarationError, SettingsError
from modes_tui.core.packs.profiles import load_pack
from modes_tui.core.paths import app_dirs
from modes_tui.core.yaml_files import key_place, load_yaml, yaml_problem
from modes_tui.frontend.startup import setting_failure
from modes_tui.store.settings import load_settings
from tests.support.cli_support import run_cli, run_piped_chat

TWO_MODELS = (
    "default_model: fast\n"
    "models:\n"
    "  fast: {model: openai/gpt-4.1-mini}\n"
    "roles: {}\n"
    "models:\n"
    "  strong: {model: openai/gpt-4.1}\n"
)


def write_config(home: Path, text: str) -> Path:
    path = home / "config" / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# --------------------------------------------------------------------------- duplicate keys


def test_a_key_written_twice_is_an_error_naming_both_lines() -> None:
    with pytest.raises(yaml.YAMLError) as caught:
        load_yaml(TWO_MODELS)
    where, reason = yaml_problem(caught.value)
    assert where == "line 5, column 1"
    assert reason.startswith("the key 'models' is written twice, on line 2 and on line 5")


def test_a_key_twice_on_one_line_names_both_columns() -> None:
    with pytest.raises(yaml.YAMLError) as caught:
        load_yaml("roles: {fast: a, fast: b}\n")
    assert "on line 1, at columns 9 and 18" in yaml_problem(caught.value)[1]


def test_a_merged_key_may_be_set_again_and_nested_duplicates_are_caught() -> None:
    merged = load_yaml("base: &b {model: a, timeout: 5}\nfast:\n  <<: *b\n  model: c\n")
    assert merged["fast"] == {"model": "c", "timeout": 5}
    with pytest.raises(yaml.YAMLError) as caught:
        load_yaml("models:\n  fast:\n    model: a\n    model: b\n")
    assert "'model' is written twice, on line 3 and on line 4" in str(caught.value)


def test_a_duplicate_models_key_in_config_yaml_stops_the_cli(modes_home: Path) -> None:
    path = write_config(modes_home, TWO_MODELS)
    result = run_cli("", "models", home=modes_home)
    assert result.returncode == 1
    assert f"{path}: not valid YAML at line 5, column 1: the key 'models' is written twice, " in (
        result.stderr
    )
    assert "on line 2 and on line 5" in result.stderr


def test_a_duplicate_key_in_a_profile_names_the_file_and_both_lines(tmp_path: Path) -> None:
    folder = tmp_path / "twice"
    folder.mkdir()
    (folder / "router.yaml").write_text("classifier: keyword\nfallback: chat\n", "utf-8")
    (folder / "chat.yaml").write_text(
        "description: Chat.\nexamples: [hi]\ndescription: Again.\n", "utf-8"
    )
    with pytest.raises(DeclarationError) as caught:
        load_pack(profiles_dir=folder)
    assert "twice/chat.yaml: line 3, column 1: not valid YAML: the key 'description' is " in (
        str(caught.value)
    )
    assert "on line 1 and on line 3" in str(caught.value)


# --------------------------------------------------------------------------- places


def test_key_place_finds_nested_keys_and_list_items() -> None:
    text = "models:\n  fast:\n    model: x\nexamples:\n  - a\n  - b\n"
    assert key_place(text, "models.fast.model") == "line 3, column 5"
    assert key_place(text, "examples[1]") == "line 6, column 5"
    assert key_place(text, "models.slow") == ""
    assert key_place("a: [", "a") == ""  # a text that does not parse has no places


def test_an_unknown_config_key_says_what_was_meant_and_where(modes_home: Path) -> None:
    path = write_config(modes_home, "pack: default\ndefault_modle: openai/x\n")
    result = run_cli("", "models", home=modes_home)
    assert result.returncode == 1
    assert (
        f"{path}: unknown key 'default_modle': did you mean 'default_model'? "
        "(line 2, column 1; keys: default_model, pack," in result.stderr
    )


def test_a_wrong_value_names_the_line_and_column_of_its_key(modes_home: Path) -> None:
    path = write_config(modes_home, "pack: default\nmodels:\n  fast:\n    model: 3\n")
    with pytest.raises(SettingsError) as caught:
        load_settings(app_dirs())
    assert str(caught.value).startswith(f"{path}: models.fast.model ")
    assert "(line 4, column 5)" in str(caught.value)


def test_an_unknown_profile_key_says_what_was_meant_and_where(tmp_path: Path) -> None:
    folder = tmp_path / "slip"
    folder.mkdir()
    (folder / "router.yaml").write_text("classifier: keyword\nfallback: chat\n", "utf-8")
    (folder / "chat.yaml").write_text("description: Chat.\ntemprature: 0.2\n", "utf-8")
    with pytest.raises(DeclarationError) as caught:
        load_pack(profiles_dir=folder)
    assert [str(p) for p in caught.value.problems] == [
        "slip/chat.yaml: temprature: unknown key; did you mean 'temperature'? (line 2, column 1)"
    ]


def test_an_unknown_router_key_says_what_was_meant_and_where(modes_home: Path) -> None:
    folder = modes_home / "slip"
    folder.mkdir()
    (folder / "router.yaml").write_text("classifier: keyword\nfalback: chat\n", "utf-8")
    (folder / "chat.yaml").write_text("description: Chat.\n", "utf-8")
    result = run_cli("", "profiles", "--check", "--profiles", str(folder), home=modes_home)
    assert result.returncode == 1
    assert (
        "slip/router.yaml: falback: unknown key; did you mean 'fallback'? (line 2, column 1)"
        in (result.stderr + result.stdout)
    )


# --------------------------------------------------------------------------- init and the app


def test_init_on_a_broken_config_names_the_line_and_column(
    modes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_config(modes_home, "pack: default\nmodels:\n  fast: [a\n")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # a provider found: init reads the file
    monkeypatch.setenv("MODES_TUI_INIT_PORTS", "ollama=9")  # nothing listens there
    result = run_cli("", "init", "--print", home=modes_home)
    assert result.returncode == 1, result
    assert f"{path}: not valid YAML at line 4, column 1: expected ',' or ']'" in result.stderr
    assert "(ParserError)" not in result.stderr


def test_the_apps_note_names_the_file_and_line_of_a_broken_config(modes_home: Path) -> None:
    path = write_config(modes_home, TWO_MODELS)
    with pytest.raises(SettingsError) as caught:
        load_settings(app_dirs())
    headline, hint = setting_failure(caught.value)
    assert headline.startswith(f"a setting is wrong: {path}: not valid YAML at line 5, column 1")
    assert hint == f"fix {path}, then restart"
    assert "named in the note" not in hint

    from modes_tui.tui.startup import StartupProblem

    problem = StartupProblem.of(caught.value)  # what a message sent in the app fails with
    assert (problem.headline, problem.hint) == (headline, hint)


def test_a_bad_variable_is_named_in_the_apps_note(modes_home: Path) -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings(app_dirs(), env={"MODES_TUI_SWEEP_DAYS": "soon"})
    headline, hint = setting_failure(caught.value)
    assert headline.startswith("a setting is wrong: MODES_TUI_SWEEP_DAYS")
    assert hint == "fix MODES_TUI_SWEEP_DAYS, then restart"


# --------------------------------------------------------------------------- /why


def test_why_in_the_repl_says_the_decision_in_the_panels_words(modes_home: Path) -> None:
    result = run_piped_chat("how do I write a python function\n/why\n", home=modes_home)
    assert result.returncode == 0, result.stderr
    shown = result.stdout[result.stdout.index("turn 1: [code") :]
    assert "  by classifier · confidence 0.99 · " in shown
    assert "  code ██████████████ 0.99" in shown
    assert "  reason: keywords: python" in shown
    assert "  via keyword" in shown
    assert "  request: scripted/echo, 2 message(s)" in shown
    assert '"route":' not in shown and "{" not in shown  # no JSON dump

"""Bounded parsing (issue 20, item 6): no YAML file we read may expand its aliases past a
bound, and an error message quotes at most a cut value, never a whole `repr`.

The bombs nest nine levels of nine aliases: expanded, they hold 9**9 (387 million) strings,
and walking or printing them takes minutes and all the memory there is. A test that simply
returns proves they were refused before anything was built (no timing needed).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from modes_tui.cli import main
from modes_tui.core.errors import SHOWN_AT_MOST, DeclarationError, SettingsError, cut_repr
from modes_tui.core.packs.profiles import load_pack
from modes_tui.core.paths import app_dirs
from modes_tui.core.yaml_files import (
    ALIAS_RECURSIVE,
    ALIASES_TOO_LARGE,
    MAX_EXPANDED_VALUES,
    load_yaml,
)
from modes_tui.store.settings import load_settings


def bomb(key: str) -> str:
    """`key:` holding nine levels of nine aliases each."""
    lines = [f"{key}:", "  - &l0 [" + ", ".join(['"lol"'] * 9) + "]"]
    for level in range(1, 9):
        lines.append(f"  - &l{level} [" + ", ".join([f"*l{level - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def test_the_loader_keeps_ordinary_aliases() -> None:
    assert load_yaml("a: &x 1\nb: [2, 3]\n") == {"a": 1, "b": [2, 3]}  # an anchor alone
    assert load_yaml("a: &x [1]\nb: *x\n") == {"a": [1], "b": [1]}
    shared = {"X-Team": "blue"}  # PyYAML's own dump writes &id001 / *id001 for this
    dumped = yaml.safe_dump({"models": {"one": {"headers": shared}, "two": {"headers": shared}}})
    assert "*id001" in dumped
    assert load_yaml(dumped)["models"]["two"]["headers"] == {"X-Team": "blue"}


def test_the_loader_refuses_aliases_that_expand_too_far_with_their_line() -> None:
    with pytest.raises(yaml.YAMLError) as raised:
        load_yaml(bomb("theme"))
    assert raised.value.problem == ALIASES_TOO_LARGE  # type: ignore[attr-defined]
    # levels 0-4 hold 66,430 values; level 5 (line 7) is the first past 100,000
    assert raised.value.problem_mark.line + 1 == 7  # type: ignore[attr-defined]
    # the document, two keys, `a` (1,000 values) and `b` (1 + 98 x 1,000): 99,004 values
    wide = "a: &a [" + ", ".join(["1"] * 999) + "]\nb: [" + ", ".join(["*a"] * 98) + "]\n"
    assert len(load_yaml(wide)["b"]) == 98
    with pytest.raises(yaml.YAMLError):
        load_yaml(wide.replace("*a]", "*a, *a]"))  # one more alias: 100,004
    assert MAX_EXPANDED_VALUES == 100_000


@pytest.mark.parametrize("text", ["a: &x [1, *x]\n", "a: &x {b: {c: *x}}\n"])
def test_the_loader_refuses_a_value_that_contains_itself(text: str) -> None:
    with pytest.raises(yaml.YAMLError) as raised:
        load_yaml(text)
    assert raised.value.problem == ALIAS_RECURSIVE  # type: ignore[attr-defined]


def test_an_alias_bomb_in_config_yaml_is_a_clear_error(
    modes_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = modes_home / "config" / "config.yaml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(bomb("theme"), encoding="utf-8")
    with pytest.raises(SettingsError) as raised:
        load_settings(app_dirs())
    message = str(raised.value)
    assert message.startswith(f"{config}: not valid YAML at line 7, column "), message
    assert ALIASES_TOO_LARGE in message
    assert main(["models"]) == 1
    err = capsys.readouterr().err
    assert "aliases (*name) expand this document past" in err and "Traceback" not in err
    assert len(err.replace(str(config), "config.yaml")) < 400  # short whatever the temp path


def test_an_alias_bomb_in_a_profile_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pack = tmp_path / "bombed"
    pack.mkdir()
    (pack / "router.yaml").write_text("classifier: keyword\nfallback: chat\n", encoding="utf-8")
    (pack / "chat.yaml").write_text("description: Chat.\n" + bomb("examples"), encoding="utf-8")
    (pack / "code.yaml").write_text("description: Code.\n", encoding="utf-8")
    with pytest.raises(DeclarationError) as raised:
        load_pack(profiles_dir=pack)
    assert "bombed/chat.yaml: line 8, column 5: not valid YAML: aliases" in str(raised.value)
    assert main(["profiles", "--profiles", str(pack)]) == 1
    err = capsys.readouterr().err
    assert "aliases (*name) expand this document past" in err and "Traceback" not in err


def test_router_yaml_goes_through_the_same_loader(tmp_path: Path) -> None:
    pack = tmp_path / "p"
    pack.mkdir()
    (pack / "router.yaml").write_text(
        "classifier: keyword\nfallback: &f chat\ninstructions: *f\n", encoding="utf-8"
    )
    (pack / "chat.yaml").write_text("description: Chat.\n", encoding="utf-8")
    assert load_pack(profiles_dir=pack).router.instructions == "chat"  # an alias is fine
    (pack / "router.yaml").write_text("classifier: keyword\n" + bomb("x"), encoding="utf-8")
    with pytest.raises(DeclarationError, match=r"p/router.yaml: line 8, column 5: not valid"):
        load_pack(profiles_dir=pack)


def test_an_error_quotes_a_cut_value(modes_home: Path) -> None:
    config = modes_home / "config" / "config.yaml"
    config.parent.mkdir(parents=True, exist_ok=True)
    huge = [["x" * 200 for _ in range(200)] for _ in range(5)]  # no repeats: no anchors
    config.write_text(yaml.safe_dump({"theme": huge, "pack": "y" * 5000}), encoding="utf-8")
    with pytest.raises(SettingsError) as raised:
        load_settings(app_dirs())
    said = str(raised.value).replace(str(config), "")  # the temp path's length is pytest's
    assert len(said) < 400, str(raised.value)
    assert "…" in str(raised.value)


@pytest.mark.parametrize(
    "value",
    ["x" * 10_000, ["y" * 100] * 10_000, {"k": {"k": {"k": {"k": 1}}}}, 7, None],
)
def test_cut_repr_is_bounded(value: object) -> None:
    shown = cut_repr(value)
    assert len(shown) <= SHOWN_AT_MOST + 3  # the quotes of a cut string, and the …
    assert shown == repr(value) or shown.endswith("…") or "..." in shown


def test_an_eval_file_error_quotes_a_cut_value(tmp_path: Path) -> None:
    import json

    from modes_tui.core.errors import ModesError
    from modes_tui.core.evals.cases import read_eval_file

    cases = tmp_path / "cases.jsonl"
    huge = [["z" * 100 for _ in range(100)] for _ in range(100)]  # a megabyte of JSON
    cases.write_text(json.dumps({"text": "hi", "mode": huge}) + "\n", encoding="utf-8")
    with pytest.raises(ModesError) as raised:
        read_eval_file(cases, ["chat"])
    assert "`mode` must be a mode name or null, not [[" in str(raised.value)
    assert len(str(raised.value)) < 400, str(raised.value)

"""Packs: loading, shadowing, prompts, and every kind of broken pack named with file and field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from modes_tui.core.errors import DeclarationError
from modes_tui.core.packs.profiles import available_packs, load_pack
from modes_tui.core.packs.prompts import template_locals
from modes_tui.core.paths import app_dirs
from tests.conftest import PackWriter


def problems_of(folder: Path) -> list[str]:
    with pytest.raises(DeclarationError) as caught:
        load_pack(profiles_dir=folder)
    return [str(problem) for problem in caught.value.problems]


BROKEN: list[tuple[str, dict[str, Any], dict[str, Any], str]] = [
    # (case, router, modes, expected problem text)
    (
        "unknown key",
        {"fallback": "chat"},
        {"chat": {"description": "c", "tool": ["x"]}},
        "testpack/chat.yaml: tool: unknown key; did you mean 'tools'?",
    ),
    (
        "missing description",
        {"fallback": "chat"},
        {"chat": {"examples": ["hi"]}},
        "testpack/chat.yaml: description: missing;",
    ),
    (
        "duplicate name",
        {"fallback": "chat"},
        {"chat": {"description": "c"}, "other": {"name": "chat", "description": "d"}},
        "testpack/other.yaml: name: duplicate mode name 'chat' (also in chat.yaml)",
    ),
    (
        "fallback not a mode",
        {"fallback": "help"},
        {"chat": {"description": "c"}},
        "testpack/router.yaml: fallback: 'help' is not a mode of this pack; modes: chat",
    ),
    (
        "missing fallback",
        {},
        {"chat": {"description": "c"}},
        "testpack/router.yaml: fallback: missing;",
    ),
    (
        "threshold outside 0..1",
        {"fallback": "chat", "below_confidence": 1.5},
        {"chat": {"description": "c"}},
        "testpack/router.yaml: below_confidence: 1.5 must be a number from 0 to 1",
    ),
    (
        "sticky outside 0..1",
        {"fallback": "chat", "sticky": -0.1},
        {"chat": {"description": "c"}},
        "testpack/router.yaml: sticky: -0.1 must be a number from 0 to 1",
    ),
    (
        "unknown tool",
        {"fallback": "chat"},
        {"chat": {"description": "c", "tools": ["read_fil"]}},
        "testpack/chat.yaml: tools[0]: unknown tool 'read_fil'; did you mean 'read_file'?",
    ),
    (
        "unknown classifier",
        {"fallback": "chat", "classifier": "magic"},
        {"chat": {"description": "c"}},
        "testpack/router.yaml: classifier: 'magic' is not one of",
    ),
    (
        "bad thinking",
        {"fallback": "chat"},
        {"chat": {"description": "c", "thinking": "max"}},
        "testpack/chat.yaml: thinking: 'max' is not one of off, low, medium, high",
    ),
    (
        "bad temperature",
        {"fallback": "chat"},
        {"chat": {"description": "c", "temperature": "hot"}},
        "testpack/chat.yaml: temperature: 'hot' must be a number from 0 to 2",
    ),
    (
        "bad history",
        {"fallback": "chat"},
        {"chat": {"description": "c", "history": {"last": -1}}},
        "testpack/chat.yaml: history: {'last': -1} must be `all` or {last: N} with N >= 0",
    ),
    (
        "bad example",
        {"fallback": "chat"},
        {"chat": {"description": "c", "examples": ["ok", 3]}},
        "testpack/chat.yaml: examples[1]: 3 must be non-empty text",
    ),
    (
        "reserved name",
        {"fallback": "chat"},
        {"chat": {"description": "c"}, "auto": {"description": "a"}},
        "testpack/auto.yaml: name: 'auto' is reserved",
    ),
    (
        "bad truncate",
        {"fallback": "chat", "truncate": {"message": 5}},
        {"chat": {"description": "c"}},
        "testpack/router.yaml: truncate.message: 5 must be a whole number >= 20, or null",
    ),
    (
        "duplicate key",
        {"fallback": "chat"},
        {"chat": {"description": "c", "key": "f2"}, "code": {"description": "d", "key": "F2"}},
        "testpack/code.yaml: key: 'f2' is also the key of mode 'chat'",
    ),
    (
        "bad availability",
        {"fallback": "chat"},
        {"chat": {"description": "c", "available": "VIP"}},
        "testpack/chat.yaml: available: 'VIP' must be {env: VARIABLE_NAME}",
    ),
    (
        "cascade without stages",
        {"fallback": "chat", "classifier": "cascade"},
        {"chat": {"description": "c"}},
        "testpack/router.yaml: cascade: the cascade classifier needs",
    ),
]


@pytest.mark.parametrize(
    ("case", "router", "modes", "expected"), BROKEN, ids=[b[0] for b in BROKEN]
)
def test_each_broken_pack_names_file_and_field(
    write_pack: PackWriter, case: str, router: dict[str, Any], modes: dict[str, Any], expected: str
) -> None:
    found = problems_of(write_pack(router=router, modes=modes))
    assert any(problem.startswith(expected) for problem in found), found


def test_every_problem_is_reported_at_once(write_pack: PackWriter) -> None:
    folder = write_pack(
        router={"fallback": "nope", "below_confidence": 2, "colour": "red"},
        modes={"chat": {"thinking": "max"}, "code": {"description": "d", "tools": ["rm_rf"]}},
    )
    found = problems_of(folder)
    assert len(found) == 6, found
    with pytest.raises(DeclarationError) as caught:
        load_pack(profiles_dir=folder)
    assert str(caught.value).startswith("pack 'testpack' has 6 problems:")


def test_invalid_yaml_names_the_line(write_pack: PackWriter) -> None:
    found = problems_of(write_pack(modes={"chat": "description: [unclosed\n"}))
    assert any(p.startswith("testpack/chat.yaml: line") and "not valid YAML" in p for p in found), (
        found
    )


def test_a_profile_that_is_not_a_mapping(write_pack: PackWriter) -> None:
    found = problems_of(write_pack(modes={"chat": "- just\n- a list\n"}))
    assert "testpack/chat.yaml: must be a mapping of keys to values, not a list" in found


def test_a_profile_linked_to_some_other_file_is_one_problem_that_does_not_print_it(
    write_pack: PackWriter, tmp_path: Path
) -> None:
    # A file of `name:secret:...:::` lines parses as a mapping of 24 unknown keys: listing
    # them printed the linked file (here a stand-in for /etc/shadow) line by line.
    secret = tmp_path / "shadow"
    secret.write_text("".join(f"user{n}:$y$hash{n}:20228:0:99999:7:::\n" for n in range(24)))
    folder = write_pack()
    (folder / "code.yaml").unlink()
    (folder / "code.yaml").symlink_to(secret)
    found = problems_of(folder)
    assert any(
        "testpack/code.yaml: not a file of this kind: none of its 24 keys" in p for p in found
    )
    assert not any("$y$hash" in p or "user1" in p for p in found)


def test_many_typos_name_five_keys_and_count_the_rest(write_pack: PackWriter) -> None:
    typos = {f"colour{n}": "x" for n in range(8)}
    found = problems_of(write_pack(modes={"chat": {"description": "c", **typos}}))
    named = [p for p in found if ": unknown key" in p]
    assert len(named) == 5 and "testpack/chat.yaml: colour0: unknown key" in named[0]
    assert "testpack/chat.yaml: and 3 more unknown keys" in found


def test_a_template_that_does_not_render_is_a_problem(write_pack: PackWriter) -> None:
    folder = write_pack(
        modes={
            "chat": {"description": "c"},
            "code": {"description": "d", "instructions": "Hi {{ usr }}"},
        },
        prompts={
            "system.md": "Today {{ date }} in {{ nowhere }}",
            "chat/instructions.md": "{% if %}",
        },
    )
    found = problems_of(folder)
    assert any("system.md: system: does not render" in p and "nowhere" in p for p in found), found
    assert any("chat/instructions.md: instructions: does not render" in p for p in found), found
    assert any(
        "code.yaml: instructions (inline): does not render" in p and "usr" in p for p in found
    ), found


def test_empty_folder_and_missing_router(tmp_path: Path) -> None:
    folder = tmp_path / "empty"
    folder.mkdir()
    found = problems_of(folder)
    assert any("router.yaml" in p and "missing" in p for p in found)
    assert any("no profiles" in p for p in found)


def test_missing_pack_names_the_known_ones() -> None:
    with pytest.raises(
        DeclarationError, match="no pack called 'nope'; known packs: default, support"
    ):
        load_pack("nope")


def test_a_valid_pack_loads_with_defaults(write_pack: PackWriter) -> None:
    pack = load_pack(profiles_dir=write_pack())
    assert pack.names == ("chat", "code")
    code = pack.get("code")
    assert code is not None
    assert (code.model, code.thinking, code.tools, code.history.last) == ("default", "off", (), 20)
    assert pack.router.truncate_message == 30_000 and pack.router.truncate_history_entry == 2_000
    assert pack.fallback.name == "chat"


def test_description_can_come_from_a_prompt_file(write_pack: PackWriter) -> None:
    folder = write_pack(
        modes={"chat": {"description": "c"}, "code": {"examples": ["x"]}},
        prompts={"code/description.md": "Code questions,\nfrom a file."},
    )
    assert load_pack(profiles_dir=folder).get("code").description == "Code questions, from a file."  # type: ignore[union-attr]


def test_instructions_render_with_mode_inputs_date_and_cwd(write_pack: PackWriter) -> None:
    folder = write_pack(
        prompts={
            "system.md": "Base for {{ date }}.",
            "code/instructions.md": "You are in {{ mode.name }} at {{ cwd }}; user {{ inputs.get('user', 'anon') }}.",
        }
    )
    pack = load_pack(profiles_dir=folder)
    code = pack.get("code")
    assert code is not None
    rendered = pack.prompts.render_instructions(
        code, template_locals(code, {"user": "ada"}, cwd="/src")
    )
    assert rendered == "You are in code at /src; user ada."
    assert pack.prompts.render_instructions(pack.fallback, template_locals(pack.fallback)) == ""


def test_user_pack_shadows_the_shipped_one(modes_home: Path) -> None:
    user_default = app_dirs().user_profiles / "default"
    user_default.mkdir(parents=True)
    (user_default / "router.yaml").write_text(
        yaml.safe_dump({"fallback": "only", "classifier": "keyword"})
    )
    (user_default / "only.yaml").write_text(yaml.safe_dump({"description": "The only mode."}))
    assert available_packs()["default"] == user_default
    assert load_pack("default").names == ("only",)
    assert "support" in available_packs()


@pytest.mark.parametrize("name", ["default", "support"])
def test_shipped_packs_are_valid_and_rich(name: str) -> None:
    pack = load_pack(name)
    assert len(pack.profiles) >= 4
    for profile in pack.profiles:
        assert len(profile.examples) >= 20, profile.name
        assert pack.prompts.instructions_for(profile) is not None, profile.name
        assert len(profile.description) > 80, profile.name
    all_examples = [e.lower() for p in pack.profiles for e in p.examples]
    assert len(all_examples) == len(set(all_examples)), "an example belongs to two modes"


def test_shipped_default_pack_has_the_agreed_modes() -> None:
    pack = load_pack("default")
    assert set(pack.names) == {"chat", "code", "shell", "write", "reason"}
    assert pack.router.fallback == "chat"
    shell = pack.get("shell")
    assert shell is not None and "run_command" in shell.tools
    assert load_pack("support").names == ("escalate", "help", "orders", "returns")

"""`modes-tui mode`, `sessions`, `export` and `replay`: output, exit codes and errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from modes_tui.cli import main
from modes_tui.core.paths import Dirs, app_dirs
from tests.conftest import PackWriter
from tests.support.store_records import write_demo_session

Capture = pytest.CaptureFixture[str]


@pytest.fixture
def dirs() -> Dirs:
    return app_dirs()


# --------------------------------------------------------------------------- mode


def test_mode_shows_the_default_and_the_routing_rule(dirs: Dirs, capsys: Capture) -> None:
    assert main(["mode"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"mode: auto (default: no control file at {dirs.control_file})\n")
    assert "  the router picks the mode of every turn\n" in out
    assert "pack: default (" in out
    assert "routing: classifier embedding, fallback chat, below_confidence 0.65, sticky 0.1" in out
    assert "modes: chat, code, reason, shell, write" in out


def test_mode_sets_a_mode_and_shows_where_it_came_from(dirs: Dirs, capsys: Capture) -> None:
    assert main(["mode", "code"]) == 0
    assert capsys.readouterr().out == (
        f"mode: code for pack default (written to {dirs.control_file})\n"
        "  every turn goes to code; `modes-tui mode auto` hands it back to the router\n"
    )
    assert settings_in(dirs.control_file) == {"packs": {"default": "code"}}
    assert main(["mode"]) == 0
    assert capsys.readouterr().out.startswith(
        f"mode: code (this pack's setting, from {dirs.control_file})"
    )
    assert main(["mode", "off"]) == 0
    assert "no mode: the base prompt and the default model only" in capsys.readouterr().out


def test_mode_rejects_an_unknown_name_listing_valid_ones(dirs: Dirs, capsys: Capture) -> None:
    assert main(["mode", "shell"]) == 0
    assert main(["mode", "refunds"]) == 1
    err = capsys.readouterr().err
    assert err == (
        "modes-tui: unknown mode 'refunds' in pack default; "
        "choose one of: auto, off, chat, code, reason, shell, write\n"
    )
    assert settings_in(dirs.control_file) == {"packs": {"default": "shell"}}  # kept
    assert main(["mode", "--pack", "support", "refunds"]) == 1
    assert "choose one of: auto, off, escalate, help, orders, returns" in capsys.readouterr().err


def test_mode_shows_the_warning_of_an_unusable_file(dirs: Dirs, capsys: Capture) -> None:
    dirs.config.mkdir(parents=True)
    dirs.control_file.write_text('{"mode": "poetry"}')
    assert main(["mode"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"mode: auto (default: the control file {dirs.control_file} cannot")
    assert (
        f"warning: control file {dirs.control_file}: mode 'poetry' is not in the active pack" in out
    )


def test_mode_json_and_a_pack_folder(write_pack: PackWriter, capsys: Capture) -> None:
    folder = write_pack()
    assert main(["mode", "--profiles", str(folder), "code"]) == 0
    capsys.readouterr()
    assert main(["mode", "--profiles", str(folder), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["mode"] == "code" and data["source"] == "control file"
    assert data["router"] == {
        "classifier": "keyword",
        "fallback": "chat",
        "below_confidence": None,
        "sticky": 0.0,
    }
    assert data["modes"] == ["chat", "code"] and data["warning"] is None


def test_mode_names_a_classifier_set_by_the_environment(
    capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MODES_TUI_ROUTER_CLASSIFIER", "keyword")
    assert main(["mode"]) == 0
    assert (
        "routing: classifier keyword (set by MODES_TUI_ROUTER_CLASSIFIER; the pack says embedding)"
        in capsys.readouterr().out
    )


def test_mode_with_a_broken_pack_still_allows_auto_and_off(
    write_pack: PackWriter, capsys: Capture
) -> None:
    folder = write_pack(router={"classifier": "keyword", "fallback": "nope"})
    assert main(["mode", "--profiles", str(folder), "code"]) == 1
    err = capsys.readouterr().err
    assert "fallback: 'nope' is not a mode" in err
    assert "use `modes-tui mode auto` or `modes-tui mode off`" in err
    assert main(["mode", "--profiles", str(folder), "off"]) == 0
    assert main(["mode", "--profiles", str(folder)]) == 0
    assert "cannot be loaded" in capsys.readouterr().out


def test_mode_usage_and_settings_errors(dirs: Dirs, capsys: Capture) -> None:
    assert main(["mode", "code", "chat"]) == 2
    assert "unrecognized arguments: chat" in capsys.readouterr().err
    dirs.config.mkdir(parents=True)
    dirs.settings_file.write_text("colour: red\n")
    assert main(["mode"]) == 1
    assert f"modes-tui: {dirs.settings_file}: unknown key 'colour'" in capsys.readouterr().err


# --------------------------------------------------------------------------- sessions


def test_sessions_when_there_are_none(dirs: Dirs, capsys: Capture) -> None:
    assert main(["sessions"]) == 0
    assert capsys.readouterr().out == f"no sessions yet in {dirs.sessions}\n"
    assert main(["sessions", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_sessions_lists_newest_first(dirs: Dirs, capsys: Capture) -> None:
    write_demo_session(dirs, session_id="20260101-090000-aaaa")
    write_demo_session(dirs, session_id="20260102-090000-bbbb", pack="support")
    assert main(["sessions"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["ID", "CREATED", "TURNS", "PACK", "TITLE"]
    assert lines[1].startswith("20260102-090000-bbbb")
    assert lines[1].split()[3:5] == ["4", "support"]
    assert lines[1].endswith("my python script segfaults, see main.py")
    assert lines[2].startswith("20260101-090000-aaaa")
    assert main(["sessions", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [s["id"] for s in listed] == ["20260102-090000-bbbb", "20260101-090000-aaaa"]
    assert listed[0]["turns"] == 4 and listed[0]["pack"] == "support"


def test_sessions_rejects_unknown_options(capsys: Capture) -> None:
    assert main(["sessions", "--all"]) == 2


# --------------------------------------------------------------------------- export


def test_export_markdown_has_a_route_line_per_turn(dirs: Dirs, capsys: Capture) -> None:
    write_demo_session(dirs)
    assert main(["export", "latest"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# modes-tui session 20261202-141503-3f9a\n")
    assert out.count("\n> route: ") == 4
    assert "> route: code by classifier, confidence 0.90, 1.5 ms: keywords: python" in out
    assert "> route: code by caller [forced]: Mode requested by caller" in out
    assert "**You**\n\nmy python script segfaults, see main.py\n" in out
    assert "Tool call: `read_file main.py`\n" in out  # as a person writes it, not JSON
    assert "<details><summary>reasoning</summary>\n\nBe brief.\n\n</details>" in out
    assert "*(cancelled by the user)*" in out
    assert "*(failed: timeout (openai/gpt-4.1-mini): Request timed out)*" in out
    assert "\n\n\n" not in out


def test_export_json_to_a_file(dirs: Dirs, tmp_path: Path, capsys: Capture) -> None:
    demo = write_demo_session(dirs)
    target = tmp_path / "out.json"
    assert main(["export", demo.log.id[:8], "--format", "json", "-o", str(target)]) == 0
    assert capsys.readouterr().out == f"exported session {demo.log.id} to {target}\n"
    data = json.loads(target.read_text())
    assert data["id"] == demo.log.id and data["problems"] == []
    lines = demo.log.path.read_text().splitlines()
    assert data["records"] == [json.loads(line) for line in lines]


def test_export_reports_problems_on_stderr(dirs: Dirs, capsys: Capture) -> None:
    demo = write_demo_session(dirs)
    with open(demo.log.path, "a") as handle:
        handle.write('{"v": 1, "type": "user", "turn": 5, "cont')
    assert main(["export", "latest"]) == 0
    captured = capsys.readouterr()
    assert f"modes-tui: warning: {demo.log.path}:" in captured.err
    assert "torn last line" in captured.err
    assert "Problems found while reading the log:" in captured.out


def test_export_errors(dirs: Dirs, tmp_path: Path, capsys: Capture) -> None:
    assert main(["export", "nope"]) == 1
    assert "list session ids with `modes-tui sessions`" in capsys.readouterr().err
    assert main(["export", "latest", "--format", "html"]) == 2
    assert "invalid choice: 'html'" in capsys.readouterr().err
    assert main(["export"]) == 2
    write_demo_session(dirs)
    assert main(["export", "latest", "-o", str(tmp_path / "no" / "such" / "dir.md")]) == 1
    assert "pick another file with -o" in capsys.readouterr().err


@pytest.mark.parametrize("verb", [["export"], ["replay"], ["replay", "--reroute"]])
def test_a_file_that_is_no_session_log_is_an_error_not_an_empty_session(
    dirs: Dirs, tmp_path: Path, capsys: Capture, verb: list[str]
) -> None:
    # `export /etc/passwd` printed 24 skipped lines, then "turns: 0", and exited 0
    text = tmp_path / "notes.txt"
    text.write_text("root:x:0:0:root:/root:/bin/bash\nsecond line\n")
    assert main([*verb, str(text)]) == 1
    err = capsys.readouterr().err
    assert f"{text} holds no session record: 2 line(s) could not be read (line 1:" in err
    assert "is it a modes-tui session log?" in err


# --------------------------------------------------------------------------- replay


def test_replay_prints_the_transcript(dirs: Dirs, capsys: Capture) -> None:
    write_demo_session(dirs)
    assert main(["replay", "latest"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n> route: ") == 4 and "Line 3 dereferences NULL." in out


def test_replay_json_gives_the_event_stream(dirs: Dirs, capsys: Capture) -> None:
    write_demo_session(dirs)
    assert main(["replay", "latest", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [t["turn"] for t in data["turns"]] == [1, 2, 3, 4]
    assert [e["type"] for e in data["turns"][1]["events"]] == [
        "route_decided",
        "mode_changed",
        "request_built",
        "reasoning_delta",
        "text_delta",
        "usage",
        "turn_finished",
    ]


def test_replay_reroute_prints_the_table_and_summary(dirs: Dirs, capsys: Capture) -> None:
    write_demo_session(dirs, pack="default")
    assert main(["replay", "latest", "--reroute", "--classifier", "keyword"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == (
        "reroute of session 20261202-141503-3f9a (recorded with pack default, "
        "rerouted with pack default, classifier keyword)"
    )
    assert lines[2].split() == [
        "TURN", "RECORDED", "BY", "CONF", "NEW", "BY", "CONF", "CHANGED", "MS", "TEXT"
    ]  # fmt: skip
    assert lines[5].split()[:8] == ["3", "code", "caller", "n/a", "chat", "fallback", "n/a", "yes"]
    assert "agreement: 3/4 turns (75%)" in out
    assert "gained: chat +1" in out and "lost: code -1" in out
    assert "decision latency: p50 " in out


def test_replay_reroute_with_a_pack_that_lost_a_mode(
    dirs: Dirs, write_pack: PackWriter, capsys: Capture
) -> None:
    write_demo_session(dirs)
    folder = write_pack(
        modes={"chat": {"description": "Chat.", "keywords": ["hello"]}}, name="chatonly"
    )
    assert main(["replay", "latest", "--reroute", "--profiles", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "   1  code*" in out
    assert "* not in pack chatonly any more: code" in out
    assert "agreement: 2/4 turns (50%)" in out
    assert main(["replay", "latest", "--reroute", "--profiles", str(folder), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["summary"]["missing_modes"] == ["code"]
    assert report["turns"][0]["recorded"] == {
        "mode": "code",
        "decided_by": "classifier",
        "confidence": 0.9,
        "missing": True,
    }


def test_replay_reroute_of_a_pack_no_longer_installed(dirs: Dirs, capsys: Capture) -> None:
    write_demo_session(dirs, pack="vanished")
    assert main(["replay", "latest", "--reroute", "--classifier", "keyword"]) == 0
    captured = capsys.readouterr()
    assert "recorded with pack 'vanished', which is not installed; rerouting with 'default'" in (
        captured.err
    )
    assert "agreement: 3/4 turns (75%)" in captured.out


def test_replay_errors(dirs: Dirs, capsys: Capture) -> None:
    assert main(["replay", "latest"]) == 1
    assert "there are no sessions yet" in capsys.readouterr().err
    assert main(["replay"]) == 2
    write_demo_session(dirs)
    assert main(["replay", "latest", "--reroute", "--classifier", "psychic"]) == 1
    assert "backend 'psychic' is not available here" in capsys.readouterr().err


def settings_in(path: Path) -> dict[str, object]:
    """The control file's settings, without the times they were set (`since`)."""
    data = json.loads(path.read_text())
    data.pop("since", None)
    return dict(data)

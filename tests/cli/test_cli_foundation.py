"""`modes-tui profiles` and `modes-tui route`: output, exit codes and errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from modes_tui.cli import main
from tests.conftest import PackWriter
from tests.support.cli_support import run_python


def test_route_json_prints_a_valid_route(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["route", "my build fails with a segfault", "--json", "--classifier", "keyword"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["mode_name"] == "code" and out["decided_by"] == "classifier"
    assert out["classifier"] == {"with": "keyword", "model": None}
    assert set(out["decision"]["probabilities"]) == {"chat", "code", "reason", "shell", "write"}


def test_route_text_output_names_mode_and_reason(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["route", "--classifier", "keyword", "git", "rebase", "conflict"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("shell  (by classifier, confidence")
    assert "reason: keywords:" in out


def test_route_without_a_keyword_match_falls_back(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["route", "--classifier", "keyword", "--json", "zzzz qqqq"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["mode_name"], out["decided_by"], out["reason"]) == (
        "chat",
        "fallback",
        "No mode chosen",
    )


def test_route_in_another_pack(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["route", "--pack", "support", "--classifier", "keyword", "--json", "I want a refund"])
        == 0
    )
    assert json.loads(capsys.readouterr().out)["mode_name"] == "returns"


def test_route_with_an_unknown_classifier_says_what_exists(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["route", "--classifier", "psychic", "hi"]) == 1
    assert "backend 'psychic' is not available here; available: keyword" in capsys.readouterr().err


def test_profiles_lists_modes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["profiles"]) == 0
    out = capsys.readouterr().out
    for mode in ("chat", "code", "shell", "write", "reason"):
        assert f"\n  {mode}" in out


def test_profiles_check_passes_on_shipped_packs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["profiles", "--check", "--pack", "support"]) == 0
    assert "pack 'support' is valid: 4 modes" in capsys.readouterr().out


def test_profiles_check_names_every_problem(
    write_pack: PackWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = write_pack(
        router={"fallback": "help", "below_confidence": 7},
        modes={"chat": {"examples": ["hi"]}, "code": {"description": "d", "tools": ["nuke"]}},
    )
    assert main(["profiles", "--check", "--profiles", str(folder)]) == 1
    err = capsys.readouterr().err
    assert "has 4 problems" in err
    assert "testpack/chat.yaml: description: missing" in err
    assert "testpack/code.yaml: tools[0]: unknown tool 'nuke'" in err
    assert "testpack/router.yaml: fallback: 'help' is not a mode" in err
    assert "testpack/router.yaml: below_confidence: 7 must be a number from 0 to 1" in err


def test_profiles_of_a_missing_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["profiles", "--profiles", str(tmp_path / "nope")]) == 1
    assert "no such folder" in capsys.readouterr().err


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["route"]) == 2
    assert main(["frobnicate"]) == 2
    assert "invalid choice" in capsys.readouterr().err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == "modes-tui 0.1.0"


def test_a_closed_pipe_is_not_a_traceback(tmp_path: Path, write_pack: PackWriter) -> None:
    import subprocess
    import sys

    # far more output than a pipe buffers, so the writer meets the closed pipe
    folder = write_pack(modes={"chat": {"description": "word " * 60_000}})
    script = f"import sys; from modes_tui.cli import main; sys.exit(main(['profiles', '--profiles', {str(folder)!r}]))"
    proc = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={
            "MODES_TUI_HOME": str(tmp_path),
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
        },
    )
    assert proc.stdout is not None
    proc.stdout.read(10)
    proc.stdout.close()
    _, err = proc.communicate(timeout=60)
    assert b"Traceback" not in err


VERBS = ["profiles", "route", "eval", "mode", "sessions", "export", "replay", "chat"]


@pytest.mark.parametrize("verb", VERBS)
def test_every_verb_has_help(verb: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([verb, "--help"]) == 0
    assert capsys.readouterr().out.startswith(f"usage: modes-tui {verb}")


@pytest.mark.parametrize("verb", VERBS)
def test_every_verb_rejects_an_unknown_option_as_a_usage_error(
    verb: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # `sessions` takes an action (rename, rm) where the others take a value
    args = [verb, "--no-such-option"] if verb == "sessions" else [verb, "x", "--no-such-option"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "unrecognized arguments:" in err and "--no-such-option" in err


def test_home_relocates_every_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home = tmp_path / "elsewhere"
    assert main(["--home", str(home), "mode", "code"]) == 0
    assert (home / "config" / "state.json").read_text().strip().startswith("{")
    capsys.readouterr()
    assert main(["--home", str(home), "mode", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["mode"] == "code"


def test_route_follows_the_settings_pack_and_classifier(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MODES_TUI_PACK", "support")
    monkeypatch.setenv("MODES_TUI_ROUTER_CLASSIFIER", "keyword")
    assert main(["route", "--json", "I want a refund for my jacket"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["mode_name"] == "returns" and out["classifier"]["with"] == "keyword"
    assert main(["profiles"]) == 0
    assert capsys.readouterr().out.startswith("pack support")


def test_the_app_alone_gets_the_options_the_parser_gives_no_arguments() -> None:
    """`modes-tui` with no arguments is not parsed (argparse is not imported on the way to
    the first frame); the options it hands the app are the ones the parser gives."""
    from modes_tui.cli.common import no_arguments
    from modes_tui.cli.parser import build_parser

    parsed = vars(build_parser().parse_args([]))
    assert vars(no_arguments()) == parsed
    assert "handler" not in parsed  # so `main` opens the terminal UI


def test_the_app_alone_starts_without_the_parser_the_runtime_or_the_settings(
    tmp_path: Path,
) -> None:
    """When `modes-tui` alone starts the app running (`run_async`), neither argparse nor the
    parser is loaded (the parser would cost milliseconds before the first frame), nor the
    runtime, the settings' models or the routing values: those load in the app's worker
    after the first frame (each is milliseconds of start-up, `bench/tui_startup.py`). What
    the first frame itself composes is our widgets, which import none of them; the footer
    and the prompt's editor (ours and Textual's `TextArea`) are mounted right after that
    frame, in the places an empty bar and `EarlyPrompt` kept for them."""
    code = (
        "import json, sys\n"
        "import modes_tui.tui.app as app\n"
        "async def run_async(self):\n"
        "    watched = ('argparse', 'modes_tui.cli.parser', 'modes_tui.runtime',\n"
        "               'modes_tui.core.config', 'modes_tui.core.values',\n"
        "               'modes_tui.tui.footer', 'textual.widgets._footer',\n"
        "               'modes_tui.tui.prompt', 'textual.widgets._text_area')\n"
        "    print(json.dumps([m for m in watched if m in sys.modules]))\n"
        "app.ModesApp.run_async = run_async\n"
        "from modes_tui.cli import main\n"
        "main([])\n"
    )
    out = run_python(code, env={"MODES_TUI_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert json.loads(out.strip().splitlines()[-1]) == []


def test_a_verb_loads_its_own_module_and_no_other(tmp_path: Path) -> None:
    code = (
        "import sys; from modes_tui.cli import main; main(['mode', '--json']); "
        "print(sorted(m for m in sys.modules if m.startswith('modes_tui.cli.')))"
    )
    out = run_python(code, env={"MODES_TUI_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
    loaded = out.strip().splitlines()[-1]
    assert "modes_tui.cli.mode" in loaded
    for other in ("eval", "replay", "sessions", "corrections", "models", "tools", "export"):
        assert f"modes_tui.cli.{other}'" not in loaded

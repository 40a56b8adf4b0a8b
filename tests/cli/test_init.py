"""`modes-tui init`: providers found by key variables and by fake local servers on 127.0.0.1,
the proposal it shows, what it writes (and never overwrites unseen), hostile model names."""

from __future__ import annotations

import re
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from modes_tui.cli import main
from modes_tui.core.paths import app_dirs
from modes_tui.llm.discovery import KEY_PROVIDERS, PORTS_ENV
from modes_tui.store.settings import load_settings
from tests.support.fake_model_servers import model_list_server
from tests.support.fake_openai_server import closed_port

OLLAMA_MODELS = [
    {"name": "qwen2.5:14b", "size": 9_000_000_000},
    {"name": "llama3.2:latest", "size": 2_000_000_000},
]
HOSTILE = "\x1b]0;pwned\x07evil\x1b[2J"


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the keys a test sets are found (the machine's own never are)."""
    for provider in KEY_PROVIDERS:
        monkeypatch.delenv(provider.env, raising=False)


@pytest.fixture
def nothing_local(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every local port points where nothing listens."""
    ports = ",".join(f"{name}={closed_port()}" for name in ("ollama", "lmstudio", "llamacpp"))
    monkeypatch.setenv(PORTS_ENV, ports)


@pytest.fixture
def servers(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A fake Ollama with two models and a fake llama.cpp server with one."""
    with (
        model_list_server("ollama", OLLAMA_MODELS) as ollama,
        model_list_server("openai", [{"id": "gemma-3-4b-it", "object": "model"}]) as llamacpp,
    ):
        monkeypatch.setenv(
            PORTS_ENV, f"ollama={ollama},lmstudio={closed_port()},llamacpp={llamacpp}"
        )
        yield


def config() -> Path:
    return app_dirs().settings_file


def test_init_finds_local_servers_and_writes_aliases_and_roles_with_yes(
    servers: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["init", "--yes"]) == 0
    out = capsys.readouterr().out
    assert "found Ollama on 127.0.0.1:" in out and "qwen2.5:14b, llama3.2:latest" in out
    assert "found llama.cpp server on 127.0.0.1:" in out and "gemma-3-4b-it" in out
    assert "fast = llama3.2 (the smallest local model, by size), strong = qwen2.5:14b" in out
    assert stat.S_IMODE(config().stat().st_mode) == 0o600

    settings = load_settings(app_dirs(), env={})
    models = settings.catalog()
    assert models.resolve("fast").model == "ollama_chat/llama3.2:latest"
    assert models.resolve("strong").model == "ollama_chat/qwen2.5:14b"
    assert models.resolve("gemma-3-4b-it").model == "llamafile/gemma-3-4b-it"
    assert models.resolve("gemma-3-4b-it").api_base.endswith("/v1")  # type: ignore[union-attr]
    assert models.resolve("fast").price is not None  # local: priced at 0, so costs add up

    assert main(["models"]) == 0
    assert re.search(r"\nfast +llama3.2 +ollama_chat/llama3.2:latest\n", capsys.readouterr().out)


def test_a_key_variable_gives_the_roles_and_only_its_name_is_written(
    nothing_local: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-very-secret-value")
    assert main(["init", "--yes"]) == 0
    out = capsys.readouterr().out
    assert "found Anthropic: ANTHROPIC_API_KEY is set" in out
    assert "fast = claude-haiku-4-5 (its small, cheap model)" in out
    text = config().read_text()
    assert "sk-ant-very-secret-value" not in text and "sk-ant-very-secret-value" not in out
    data = yaml.safe_load(text)
    assert data["models"]["claude-sonnet-4-5"] == {
        "model": "anthropic/claude-sonnet-4-5",
        "api_key_env": "ANTHROPIC_API_KEY",
    }
    assert data["roles"] == {"fast": "claude-haiku-4-5", "strong": "claude-sonnet-4-5"}
    assert data["default_model"] == "claude-haiku-4-5"


def test_nothing_found_says_what_to_do_and_writes_nothing(
    nothing_local: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["init", "--yes"]) == 1
    out = capsys.readouterr().out
    assert "nothing found: set a key variable" in out
    assert not config().exists()


def test_an_existing_config_is_shown_as_a_diff_and_kept_without_yes(
    servers: None, capsys: pytest.CaptureFixture[str]
) -> None:
    config().parent.mkdir(parents=True, exist_ok=True)
    mine = "# my settings\ntheme: nord\nmodels:\n  mine: {model: openai/gpt-4o}  # the big one\n"
    config().write_text(mine)
    assert main(["init"]) == 1  # no terminal to ask, no --yes
    out = capsys.readouterr().out
    assert "exists; the changes:" in out
    assert "+  fast: llama3.2" in out and "+  llama3.2:\n" in out
    assert not re.search(r"\n-(?!--)", out)  # only added lines: theirs stay as written
    assert "not written (no terminal to ask): run `modes-tui init --yes`" in out
    assert config().read_text() == mine

    assert main(["init", "--yes"]) == 0
    written = config().read_text()
    assert written.startswith(mine)  # their lines first, untouched; ours after them
    data = yaml.safe_load(written)
    assert data["theme"] == "nord" and data["models"]["mine"] == {"model": "openai/gpt-4o"}
    assert data["roles"]["strong"] == "qwen2.5:14b"
    assert main(["init", "--yes"]) == 0  # nothing new found: nothing to write
    assert "already says this; nothing to write" in capsys.readouterr().out


def test_a_flow_style_config_is_rewritten_whole_and_the_diff_says_so(
    servers: None, capsys: pytest.CaptureFixture[str]
) -> None:
    config().parent.mkdir(parents=True, exist_ok=True)
    config().write_text("{theme: nord, models: {mine: openai/gpt-4o}, roles: {deep: mine}}\n")
    assert main(["init", "--yes"]) == 0
    assert "-{theme: nord, models: {mine: openai/gpt-4o}, roles: {deep: mine}}" in (
        capsys.readouterr().out
    )
    data = yaml.safe_load(config().read_text())
    assert data["models"]["mine"] == "openai/gpt-4o" and data["theme"] == "nord"
    assert data["roles"] == {"deep": "mine", "fast": "llama3.2", "strong": "qwen2.5:14b"}


def test_init_asks_at_a_terminal_and_a_no_writes_nothing(
    servers: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    answers = iter(["n", "y"])
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("builtins.input", lambda _question: next(answers))
    assert main(["init"]) == 0
    assert "not written" in capsys.readouterr().out and not config().exists()
    assert main(["init"]) == 0
    assert config().exists()


def test_print_only_shows_the_file(servers: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", "--print"]) == 0
    assert "would be:" in capsys.readouterr().out and not config().exists()


def test_hostile_model_names_are_neither_shown_raw_nor_written(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    listed = [
        {"name": HOSTILE, "size": 1},
        {"name": "fine\nroles: {fast: evil}", "size": 2},
        {"name": "x" * 500, "size": 3},
        {"name": "ok-model:1b", "size": 4},
    ]
    with model_list_server("ollama", listed) as port:
        monkeypatch.setenv(
            PORTS_ENV, f"ollama={port},lmstudio={closed_port()},llamacpp={closed_port()}"
        )
        assert main(["init", "--yes"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "ok-model:1b (+3 left out: unprintable, too long or too many)" in out
    data = yaml.safe_load(config().read_text())
    assert list(data["models"]) == ["ok-model:1b"]
    assert data["roles"] == {"fast": "ok-model:1b", "strong": "ok-model:1b"}
    assert "evil" not in config().read_text()


def test_a_server_that_answers_garbage_is_reported_not_fatal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with (
        model_list_server("ollama", [], raw=b"<html>hello</html>") as html,
        model_list_server("openai", [], raw=b'{"unexpected": 1}') as odd,
        model_list_server("openai", []) as empty,
    ):
        monkeypatch.setenv(PORTS_ENV, f"ollama={html},lmstudio={odd},llamacpp={empty}")
        assert main(["init", "--print"]) == 1
    out = capsys.readouterr().out
    assert (
        f"! ollama on 127.0.0.1:{html}: not an Ollama server (/api/tags answered, but not "
        "with JSON); skipped"
    ) in out
    assert (
        f"! lmstudio on 127.0.0.1:{odd}: not OpenAI-compatible (/v1/models answered, but not "
        "with a model list (no data list)); skipped"
    ) in out
    assert f"found llama.cpp server on 127.0.0.1:{empty}: no models yet" in out
    assert "nothing found" in out


def test_a_bad_port_setting_names_the_variable(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(PORTS_ENV, "ollama=eleven")
    assert main(["init"]) == 1
    assert f"{PORTS_ENV}: 'ollama=eleven' is not NAME=PORT" in capsys.readouterr().err
    assert main(["init", "--ports", "vllm=8000"]) == 1
    assert "--ports: 'vllm=8000' is not NAME=PORT" in capsys.readouterr().err


# --------------------------------------------------------------------------- first start


def test_a_first_start_without_config_offers_init_in_one_line(nothing_local: None) -> None:
    from modes_tui.runtime import RunOptions, Runtime

    runtime = Runtime.for_chat(RunOptions())
    try:
        hint = runtime.first_start_hint()
        assert hint is not None and "`modes-tui init` finds your providers" in hint
        assert hint in runtime.tui_services().warnings
    finally:
        runtime.current.close()  # type: ignore[union-attr]
    assert Runtime.for_chat(RunOptions(model="scripted/echo")).first_start_hint() is None
    config().parent.mkdir(parents=True, exist_ok=True)
    config().write_text("theme: nord\n")
    assert Runtime.for_chat(RunOptions()).first_start_hint() is None

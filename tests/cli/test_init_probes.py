"""`modes-tui init` against servers that misbehave, and the aliases it writes answering.

Each probe has a deadline and the whole lookup another, so a server that trickles cannot
hold init; every server given up on is named with its port and why. Probes of 127.0.0.1
never go through a proxy. A local server that needs no key gets an alias that answers with
no key variable set, with the context window the server reports.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from modes_tui.cli import main
from modes_tui.core.paths import app_dirs
from modes_tui.llm.discovery import KEY_PROVIDERS, PORTS_ENV, discover
from tests.support.cli_support import REPO
from tests.support.fake_model_servers import ANSWER, CONTEXT_LENGTH, model_server
from tests.support.fake_openai_server import closed_port

PROXY_VARIABLES = (
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "no_proxy",
    "NO_PROXY",
)
KEY_VARIABLES = (*(p.env for p in KEY_PROVIDERS), "LLAMAFILE_API_KEY", "LM_STUDIO_API_KEY")


@pytest.fixture(autouse=True)
def no_keys_no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Neither the machine's keys nor its proxy settings reach these tests."""
    for name in (*KEY_VARIABLES, *PROXY_VARIABLES):
        monkeypatch.delenv(name, raising=False)


def ports(**given: int) -> str:
    """MODES_TUI_INIT_PORTS with the given ports, every other one closed."""
    chosen = {name: given.get(name) or closed_port() for name in ("ollama", "lmstudio", "llamacpp")}
    return ",".join(f"{name}={port}" for name, port in chosen.items())


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """This environment without key or proxy variables, with `home` as MODES_TUI_HOME."""
    drop = {*KEY_VARIABLES, *PROXY_VARIABLES}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    return {**env, "MODES_TUI_HOME": str(home), "PYTHONPATH": str(REPO), **extra}


def run(args: list[str], env: dict[str, str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    """`python -m modes_tui ARGS`; a run that hangs fails the test after 90 s."""
    return subprocess.run(
        [sys.executable, "-m", "modes_tui", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=90,
    )


# --------------------------------------------------------------------------- giving up


def test_a_server_that_trickles_is_given_up_on_and_named_as_slow(tmp_path: Path) -> None:
    long_list = [{"id": "m", "description": "x" * 2000}]  # ~9 minutes at this pace
    with model_server("openai", long_list, trickle=0.25) as (port, seen):
        done = run(["init", "--print"], clean_env(tmp_path, **{PORTS_ENV: ports(llamacpp=port)}))
    assert seen.paths  # it was asked, and it answered, slowly
    assert f"! llamacpp on 127.0.0.1:{port}: slow (no whole answer to /v1/models" in done.stdout
    assert "skipped" in done.stdout and "nothing found" in done.stdout
    assert done.returncode == 1


def test_the_whole_lookup_has_a_deadline_of_its_own() -> None:
    with (
        model_server("ollama", [{"name": "a"}], trickle=0.25) as (ollama, _),
        model_server("openai", [{"id": "b"}], trickle=0.25) as (lmstudio, _),
    ):
        found = discover({}, {"ollama": ollama, "lmstudio": lmstudio}, run_seconds=0.5)
    assert found.servers == ()
    assert [(g.port, g.why) for g in found.gave_up] == [(ollama, "slow"), (lmstudio, "slow")]


def test_a_refused_port_is_named_with_refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    port = closed_port()
    monkeypatch.setenv(PORTS_ENV, ports(lmstudio=port))
    assert main(["init", "--print"]) == 1
    out = capsys.readouterr().out
    assert f"  lmstudio on 127.0.0.1:{port}: refused (nothing listens there)" in out


def test_a_server_that_is_not_openai_compatible_is_named_so(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with (
        model_server("openai", [], raw=b"<html>router login</html>") as (html, _),
        model_server("ollama", []) as (ollama_at_llamacpp, _),  # answers 404 on /v1/models
    ):
        monkeypatch.setenv(PORTS_ENV, ports(lmstudio=html, llamacpp=ollama_at_llamacpp))
        assert main(["init", "--print"]) == 1
    out = capsys.readouterr().out
    assert (
        f"! lmstudio on 127.0.0.1:{html}: not OpenAI-compatible (/v1/models answered, but not with JSON); skipped"
        in out
    )
    assert (
        f"! llamacpp on 127.0.0.1:{ollama_at_llamacpp}: not OpenAI-compatible "
        "(/v1/models answered HTTP 404); skipped"
    ) in out


# --------------------------------------------------------------------------- proxies


def test_probes_of_loopback_never_go_through_a_proxy(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    dead = f"http://127.0.0.1:{closed_port()}"
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "ALL_PROXY"):
        monkeypatch.setenv(name, dead)
    with model_server("openai", [{"id": "gemma"}], n_ctx=4096) as (port, seen):
        monkeypatch.setenv(PORTS_ENV, ports(llamacpp=port))
        assert main(["init", "--print"]) == 0
    out = capsys.readouterr().out
    assert f"found llama.cpp server on 127.0.0.1:{port}: gemma" in out
    assert seen.paths == ["/v1/models", "/props"]


# --------------------------------------------------------------------------- keyless servers


@pytest.fixture
def local_servers(
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[tuple[list[str | None], list[str | None]]]:
    """A fake llama.cpp server (n_ctx 8192) and a fake Ollama (num_ctx 16384 on its models)."""
    with (
        model_server("openai", [{"id": "gemma-3-4b-it", "object": "model"}], n_ctx=8192) as (
            llamacpp,
            llamacpp_seen,
        ),
        model_server("ollama", [{"name": "qwen3:8b", "size": 5_000_000_000}], num_ctx=16384) as (
            ollama,
            ollama_seen,
        ),
    ):
        monkeypatch.setenv(PORTS_ENV, ports(llamacpp=llamacpp, ollama=ollama))
        yield llamacpp_seen.auth, ollama_seen.auth


def test_every_alias_init_writes_answers_its_first_turn_with_no_key_set(
    tmp_path: Path, local_servers: tuple[list[str | None], list[str | None]]
) -> None:
    llamacpp_auth, ollama_auth = local_servers
    env = clean_env(tmp_path, **{PORTS_ENV: os.environ[PORTS_ENV]})
    done = run(["init", "--yes"], env)
    assert done.returncode == 0, done.stdout + done.stderr
    written = yaml.safe_load((tmp_path / "config" / "config.yaml").read_text())
    models = written["models"]
    assert models["gemma-3-4b-it"]["context_window"] == 8192  # /props n_ctx
    assert models["qwen3:8b"]["context_window"] == 16384  # /api/show num_ctx
    assert all("api_key_env" not in body for body in models.values())

    for alias in ("gemma-3-4b-it", "qwen3:8b"):
        turn = run(["--model", alias, "chat", "--plain", "--classifier", "keyword"], env, "hello\n")
        assert ANSWER in turn.stdout, f"{alias}:\n{turn.stdout}\n{turn.stderr}"
        assert "Missing credentials" not in turn.stdout + turn.stderr
    assert llamacpp_auth and ollama_auth  # each answered a chat

    listing = run(["models"], env)
    assert "8192" in listing.stdout and "16384" in listing.stdout


def test_ollama_without_num_ctx_gives_the_models_own_context_length(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with model_server("ollama", [{"name": "llama3.2:latest"}]) as (port, _):
        monkeypatch.setenv(PORTS_ENV, ports(ollama=port))
        assert main(["init", "--yes"]) == 0
    written = yaml.safe_load(app_dirs().settings_file.read_text())
    assert written["models"]["llama3.2"]["context_window"] == CONTEXT_LENGTH


def test_a_server_that_does_not_say_its_context_leaves_it_unset(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with model_server("openai", [{"id": "qwen"}]) as (port, _):  # no /props, no /api/v0
        monkeypatch.setenv(PORTS_ENV, ports(lmstudio=port))
        assert main(["init", "--yes"]) == 0
    written = yaml.safe_load(app_dirs().settings_file.read_text())
    assert written["models"]["qwen"] == {
        "model": "lm_studio/qwen",
        "api_base": f"http://127.0.0.1:{port}/v1",
        "input_cost_per_token": 0,
        "output_cost_per_token": 0,
    }


def test_lm_studio_says_its_context_in_its_own_api(monkeypatch: pytest.MonkeyPatch) -> None:
    with model_server("openai", [{"id": "qwen"}], n_ctx=32768) as (port, seen):
        monkeypatch.setenv(PORTS_ENV, ports(lmstudio=port))
        assert main(["init", "--yes"]) == 0
    written = yaml.safe_load(app_dirs().settings_file.read_text())
    assert written["models"]["qwen"]["context_window"] == 32768
    assert seen.paths == ["/v1/models", "/api/v0/models"]

"""Configured keys are redacted by value wherever they turn up (issue 20, item 5).

A provider that echoes the key in its error ("Incorrect API key provided: Bearer sk-...")
must not get it into the session file, `replay`, `export`, the REPL or the TUI; `${VAR}`
in a model's headers is expanded like in `mcp_servers`, and the value is a secret too.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from modes_tui.cli import main
from modes_tui.core.errors import SettingsError
from modes_tui.core.history.events import TurnFailed
from modes_tui.core.paths import app_dirs
from modes_tui.core.redaction import REDACTED, redact_values, remember_environment
from modes_tui.store.settings import load_settings
from tests.support.fake_openai_server import fake_openai_server

SECRET = "sk-test-123456abcdef7890"
TEAM_TOKEN = "team-token-0a1b2c3d4e5f"


@pytest.fixture
def server() -> Iterator[str]:
    with fake_openai_server() as url:
        yield url


async def one_turn(model: str, models: Any = None) -> tuple[list[Any], Path]:
    """One turn through the real engine, litellm and the session log."""
    from modes_tui.llm.litellm_model import LiteLLMChatModel
    from modes_tui.runtime import build_engine, load_pack
    from modes_tui.store.session_log import SessionLog
    from tests.support.engine_support import engine_config

    log = SessionLog.create(app_dirs(), pack="default", model=model)
    engine = build_engine(
        engine_config(model_override=model, models=models),
        pack=load_pack("default"),
        classifier="keyword",
        model=LiteLLMChatModel(timeout=10.0, models=models),
        session=log,
    )
    events = [event async for event in engine.run_turn("hello there")]
    log.close()
    return events, log.path


async def test_a_provider_error_that_echoes_the_key_is_never_stored_or_shown(
    server: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from modes_tui.core.history.safe_events import safe_event
    from modes_tui.repl import Printer, ReplContext

    monkeypatch.setenv("OPENAI_API_BASE", server)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    load_settings(app_dirs())  # what every start does: the key variables are now known
    events, path = await one_turn("openai/http-401-echo")
    failed = events[-1]
    assert isinstance(failed, TurnFailed) and failed.kind == "auth"
    assert f"Incorrect API key provided: Bearer {REDACTED}" in safe_event(failed).error  # type: ignore[attr-defined]

    stored = path.read_text(encoding="utf-8")
    assert SECRET not in stored and "Incorrect API key provided: Bearer [redacted]" in stored

    session = path.name.removesuffix(".jsonl")
    for argv in (
        ["replay", session],
        ["replay", session, "--json"],
        ["export", session],
        ["export", session, "--format", "json"],
    ):
        assert main(argv) == 0
        out = capsys.readouterr()
        assert SECRET not in out.out + out.err, argv
        assert "Incorrect API key provided" in out.out, argv

    shown = io.StringIO()
    context = ReplContext(
        engine=None,  # type: ignore[arg-type]
        mode_names=lambda: (),
        describe_modes=lambda: "",
        set_mode=lambda value: value,
    )
    Printer(shown).event(failed, context)
    assert SECRET not in shown.getvalue() and "Bearer [redacted]" in shown.getvalue()


async def test_the_tui_never_shows_the_key() -> None:
    from modes_tui.tui.app import build_app
    from tests.support.tui_support import ScriptEngine, answer_events, services, started, until

    remember_environment({"OPENAI_API_KEY": SECRET})
    events = answer_events(f"the key is {SECRET}, really", "chat", "hi", chunk=3)
    failed = TurnFailed(f"auth: Incorrect API key provided: Bearer {SECRET}", "auth", "fix it")
    engine = ScriptEngine().script(events, [*events[:2], failed])
    async with build_app(services(engine)).run_test(size=(120, 40)) as pilot:
        app = await started(pilot)
        for text in ("hi", "again"):
            app.conversation.prompt.value = text  # type: ignore[attr-defined]
            await pilot.press("enter")
            await until(
                pilot,
                lambda: (
                    app.conversation.records and app.conversation.records[-1].status != "running"
                ),
            )  # type: ignore[attr-defined]
        await until(
            pilot,
            lambda: (
                len(app.conversation.records) == 2
                and app.conversation.records[-1].status == "failed"
            ),
        )  # type: ignore[attr-defined]
        await pilot.pause(0.1)
        frame = app.screen._compositor.render_full_update().render_segments(app.console)
    assert SECRET not in frame
    assert "[redacted]" in frame and "Incorrect API key provided" in frame


def write_config(home: Path, headers: dict[str, str], server: str) -> Path:
    path = home / "config" / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    box = {"model": "openai/echo-headers", "api_base": server, "headers": headers}
    path.write_text(yaml.safe_dump({"models": {"box": box}}), encoding="utf-8")
    return path


async def test_a_variable_in_model_headers_is_expanded_sent_and_redacted(
    server: str, modes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from modes_tui.core.history.safe_events import safe_event

    monkeypatch.setenv("OPENAI_API_KEY", "sk-unused")
    monkeypatch.setenv("TEAM_TOKEN", TEAM_TOKEN)
    write_config(modes_home, {"X-Team-Token": "tok ${TEAM_TOKEN}", "X-Team": "research"}, server)
    settings = load_settings(app_dirs())
    events, path = await one_turn("box", models=settings.catalog())
    answer = events[-1].message.content
    assert json.loads(answer) == {"x-team": "research", "x-team-token": f"tok {TEAM_TOKEN}"}
    assert TEAM_TOKEN not in path.read_text(encoding="utf-8")  # sent, never stored
    assert TEAM_TOKEN not in safe_event(events[-1]).message.content  # type: ignore[attr-defined]
    assert redact_values(f"a {TEAM_TOKEN} b") == f"a {REDACTED} b"
    assert redact_values("research") == "research"  # a plain header is no secret


def test_a_header_variable_that_is_not_set_names_the_file_the_alias_and_the_header(
    modes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TEAM_TOKEN", raising=False)
    path = write_config(modes_home, {"X-Team-Token": "${TEAM_TOKEN}"}, "http://127.0.0.1:9/v1")
    config = load_settings(app_dirs()).catalog().resolve("box")
    with pytest.raises(SettingsError) as raised:
        config.call_params({})
    assert str(raised.value) == (
        f"{path}: models.box.headers.X-Team-Token uses ${{TEAM_TOKEN}}, which is not set; "
        "set TEAM_TOKEN or edit it"
    )


def test_short_or_plain_values_are_not_redacted() -> None:
    remember_environment({"SOME_KEY": "short", "HOME": "/root/a/long/path", "X_TOKEN": SECRET})
    assert redact_values("short /root/a/long/path") == "short /root/a/long/path"
    assert redact_values(f"a{SECRET}b") == f"a{REDACTED}b"


def test_loading_the_settings_registers_every_configured_secret(
    modes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = modes_home / "config" / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    config = {
        "models": {"corp": {"model": "openai/x", "api_key_env": "CORP_LLM"}},
        "mcp_servers": {
            "git": {"command": "git-mcp", "env": {"GH": "${GH_VALUE}", "NAME": "plain-name-1"}},
            "docs": {
                "url": "http://127.0.0.1:9/mcp",
                "headers": {"Authorization": "Bearer lit-123456789"},
            },
        },
    }
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    env = {
        "CORP_LLM": "corp-key-abcdefgh",
        "GH_VALUE": "gh-value-12345678",
        "HOME": "/home/someone",
    }
    load_settings(app_dirs(), env=env)
    shown = redact_values(
        "corp-key-abcdefgh gh-value-12345678 lit-123456789 plain-name-1 /home/someone"
    )
    assert shown == f"{REDACTED} {REDACTED} {REDACTED} plain-name-1 /home/someone"

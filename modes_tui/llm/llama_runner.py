"""The llama.cpp runner: one in-process model, loaded on first use, one generation at a time.

`LlamaRunner` holds one `llama_cpp.Llama`, loaded lazily (assembling the GGUF first if
needed), with generation serialised because a llama.cpp context is not re-entrant; a
generation streams `Piece`s and stops within one token when asked. `llama_cpp` is imported
only inside functions, so importing this module does not load the native library.

The app never runs this in its own process: `model_child.py` runs it in a child process and
`model_process.py` talks to that child, so a native crash in llama.cpp costs a turn, not the
app. `ModelRunner` is what both offer to the litellm handler.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from modes_tui.core.config.models import EMBEDDED_MODEL
from modes_tui.core.errors import ProviderError
from modes_tui.llm.transcript import STOP_SEQUENCES, fit_transcript

N_CTX = 4096
DEFAULT_MAX_TOKENS = 256
DEFAULT_TEMPERATURE = 0.7
DEFAULT_TOP_P = 0.95
REPEAT_PENALTY = 1.1

LLAMA_INSTALL_HINT = (
    "run modes-tui setup local (in a checkout: ./scripts/setup): it builds llama-cpp-python "
    "portably (pip's own build is tuned to the build machine's CPU); see the README"
)

_LOCK_POLL_SECONDS = 0.05
_CLOSE_WAIT_SECONDS = 10.0


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


def fit_prompt(
    messages: Sequence[Mapping[str, Any]],
    params: GenerationParams,
    n_ctx: int,
    count_tokens: Callable[[str], int],
) -> str:
    """The transcript of `messages` that leaves room in `n_ctx` for the answer."""
    # Keep at least half the context for the prompt, whatever max_tokens asks for.
    max_tokens = min(params.max_tokens, n_ctx // 2)
    return fit_transcript(messages, count_tokens, n_ctx - max_tokens)


class ModelRunner(Protocol):
    """What the litellm handler needs of a model: load it, answer chat messages, free it."""

    n_ctx: int

    @property
    def loaded(self) -> bool:
        """Whether the model is ready to answer."""
        ...

    def load(self) -> object:
        """Load the model now (it is loaded on first use otherwise)."""
        ...

    def chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        params: GenerationParams,
        stop_event: threading.Event | None = None,
    ) -> Iterator[Piece]:
        """Stream the answer to `messages`: text pieces, then one `Piece` with the usage."""
        ...

    def close(self) -> None:
        """Free the model; a later call loads it again."""
        ...


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
                    hint=LLAMA_INSTALL_HINT,
                    model=EMBEDDED_MODEL,
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
                    model=EMBEDDED_MODEL,
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

    def count_texts(self, texts: Sequence[str]) -> list[int]:
        """Tokens of each text as part of a prompt (no BOS; special tokens as text)."""
        llama = self.load()
        return [len(llama.tokenize(text.encode("utf-8"), add_bos=False)) for text in texts]

    def chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        params: GenerationParams,
        stop_event: threading.Event | None = None,
    ) -> Iterator[Piece]:
        """Fit `messages` into the context as a transcript, then stream its completion."""
        prompt = fit_prompt(messages, params, self.n_ctx, self.count_tokens)
        yield from self.generate(prompt, params, stop_event)

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
                model=EMBEDDED_MODEL,
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

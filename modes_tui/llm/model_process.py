"""The embedded model in a child process: a native crash there is a failed turn, not the app's.

llama.cpp is native code: a bug in it (e.g. the AMX matrix code of a build tuned to the
build machine) kills the process it runs in with SIGSEGV, and the out-of-memory killer picks
the process that holds the model. So the app never loads it: `ModelProcess` starts
`model_child.py` in a child process, sends it one request at a time over a socket pair and
streams its answer back. When the child dies (a signal, an exit, a kill) the request raises
`ProviderError` of kind `crashed` naming the signal ("the local model process died:
SIGSEGV"), what was already streamed stays with the caller, and the next request starts a
new child. The protocol is described in `model_child.py`.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import json
import logging
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict
from multiprocessing import Pipe
from multiprocessing.connection import Connection
from pathlib import Path
from typing import IO, Any

import modes_tui
from modes_tui.core.config.models import EMBEDDED_MODEL
from modes_tui.core.errors import ProviderError
from modes_tui.llm.llama_runner import N_CTX, GenerationParams, Piece, default_threads

_POLL_SECONDS = 0.02
"""How often a waiting reader looks at the caller's stop flag (cancel reaches the child
within this plus one token)."""
_STOP_GRACE_SECONDS = 5.0
"""How long a stopped generation may take to end before its process is killed."""
_EXIT_WAIT_SECONDS = 5.0
_LOCK_POLL_SECONDS = 0.05
_STDERR_LINES = 20

_log = logging.getLogger("modes_tui.llama_cpp")

_BOOT = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from modes_tui.llm.model_child import main; main(int(sys.argv[2]))"
)
"""The child's command: the package root first on the path, so the child runs the same
`modes_tui` as the app (a source checkout as well as an installed one)."""

CRASH_HINT = (
    "Retry starts a new model process; the conversation is kept. If it keeps happening, "
    "llama-cpp-python may be built for another CPU: run ./scripts/setup again"
)
OOM_HINT = (
    "SIGKILL usually means the system ran out of memory (or someone killed it); Retry starts "
    "a new model process"
)


def death_reason(returncode: int | None) -> str:
    """How a process ended, in words: `SIGSEGV`, `exit status 1`, `no exit status`."""
    if returncode is None:
        return "no exit status"
    if returncode < 0:
        try:
            return signal.Signals(-returncode).name
        except ValueError:
            return f"signal {-returncode}"
    return f"exit status {returncode}"


class _Child:
    """One running model process: its handle, its socket and the tail of its stderr."""

    def __init__(self, process: subprocess.Popen[bytes], connection: Connection) -> None:
        self.process = process
        self.connection = connection
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=_STDERR_LINES)
        assert process.stderr is not None
        self._drain = threading.Thread(
            target=self._log_stderr, args=(process.stderr,), name="modes-tui-model-stderr"
        )
        self._drain.daemon = True
        self._drain.start()

    @classmethod
    def start(cls) -> _Child:
        ours, theirs = Pipe(duplex=True)
        root = str(Path(modes_tui.__file__).resolve().parent.parent)
        try:
            process = subprocess.Popen(
                [sys.executable, "-c", _BOOT, root, str(theirs.fileno())],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                # stdout too: a stray native print must not reach the app's screen
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                # not in the terminal's process group: Ctrl+C and Ctrl+Z are the app's
                start_new_session=True,
            )
        finally:
            theirs.close()
        return cls(process, ours)

    def _log_stderr(self, stream: IO[bytes]) -> None:
        for raw in stream:
            line = raw.decode("utf-8", "replace").rstrip()
            self.stderr_tail.append(line)
            _log.debug("model process: %s", line)

    def running(self) -> bool:
        return self.process.poll() is None

    def idle_and_alive(self) -> bool:
        """Between requests: running, and its socket not at end of file (an idle child
        sends nothing, so anything readable means it died)."""
        return self.process.poll() is None and not self.poll(0)

    def send(self, message: Mapping[str, Any]) -> None:
        try:
            self.connection.send_bytes(json.dumps(message).encode("utf-8"))
        except (OSError, ValueError) as exc:
            raise self.died() from exc

    def poll(self, timeout: float) -> bool:
        try:
            return self.connection.poll(timeout)
        except (OSError, ValueError):
            return True  # the next receive reports the death

    def receive(self) -> dict[str, Any]:
        try:
            data = self.connection.recv_bytes()
        except (EOFError, OSError, ValueError) as exc:
            raise self.died() from exc
        message: dict[str, Any] = json.loads(data)
        if "error" in message:
            error = message["error"]
            raise ProviderError(
                error["kind"], error["message"], hint=error["hint"], model=EMBEDDED_MODEL
            )
        return message

    def died(self) -> ProviderError:
        """The error for a child that went away; reaps it (killing it if it lingers)."""
        try:
            returncode = self.process.wait(timeout=_EXIT_WAIT_SECONDS)
        except subprocess.TimeoutExpired:
            self.kill()
            returncode = self.process.returncode
        self.connection.close()
        self._drain.join(timeout=1.0)
        reason = death_reason(returncode)
        # info, not warning: an unconfigured log prints warnings on the terminal, over the UI
        _log.info("the local model process died (%s); its last words:", reason)
        for line in self.stderr_tail:
            _log.info("  %s", line)
        hint = OOM_HINT if returncode == -signal.SIGKILL else CRASH_HINT
        return ProviderError(
            "crashed", f"the local model process died: {reason}", hint=hint, model=EMBEDDED_MODEL
        )

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=_EXIT_WAIT_SECONDS)

    def close(self) -> None:
        """Ask the child to exit (end of file on its socket), killing it if it does not."""
        self.connection.close()
        try:
            self.process.wait(timeout=_EXIT_WAIT_SECONDS)
        except subprocess.TimeoutExpired:
            self.kill()
        self._drain.join(timeout=1.0)


class ModelProcess:
    """The local model, run by a child process: loaded on first use, one answer at a time.

    Offers what `LlamaRunner` offers the litellm handler (`ModelRunner`). After the child
    dies, the next `load` or `chat` starts a new one.
    """

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
        self._child: _Child | None = None
        self._load_lock = threading.Lock()
        # The child answers one request at a time, in order.
        self._generate_lock = threading.Lock()
        self._ids = itertools.count(1)
        self.model_path: Path | None = None
        self.load_seconds: float | None = None
        self.starts = 0
        """How many model processes this runner started (a new one after each death)."""

    @property
    def loaded(self) -> bool:
        """Whether a model process is running with the model loaded."""
        child = self._child
        return child is not None and child.process.poll() is None

    @property
    def pid(self) -> int | None:
        """The model process's id, None when none runs."""
        child = self._child
        return child.process.pid if child is not None else None

    def load(self, on_phase: Callable[[str], None] | None = None) -> object:
        """Start the model process and load the model in it (once); return the process id."""
        return self._ready(on_phase).process.pid

    def _ready(
        self, on_phase: Callable[[str], None] | None = None, *, idle: bool = False
    ) -> _Child:
        """The running child, else a new one with the model loaded. `idle`: the caller holds
        the generation lock, so the socket may be checked too (readable means dead)."""
        say = on_phase or _silent
        with self._load_lock:
            child = self._child
            if child is not None and (child.idle_and_alive() if idle else child.running()):
                return child
            if child is not None:  # died between requests: reap it before starting anew
                _log.info("the idle local model process died: %s", child.died())
            self._child = None
            path = self._locate()
            say("starting the model process")
            started = time.perf_counter()
            child = _Child.start()
            self.starts += 1
            try:
                child.send(
                    {
                        "op": "load",
                        "path": str(path),
                        "n_ctx": self.n_ctx,
                        "n_threads": self.n_threads,
                    }
                )
                say("loading the model into llama.cpp")
                child.receive()
            except BaseException:
                child.kill()
                child.connection.close()
                raise
            self.load_seconds = time.perf_counter() - started
            self.model_path = path
            self._child = child
            return child

    def chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        params: GenerationParams,
        stop_event: threading.Event | None = None,
    ) -> Iterator[Piece]:
        """Stream the answer to `messages` from the model process.

        Setting `stop_event` ends generation within one token (also while still waiting for
        another generation to finish); the last piece then has finish_reason `"cancelled"`.
        Raises `ProviderError` (kind `crashed`) when the process dies on the way.
        """
        stop = stop_event if stop_event is not None else threading.Event()
        self._ready()  # a model that cannot load fails now, not after the wait
        if not self._acquire(stop):
            return
        try:
            # the process may have died since, even while idle (a kill, the OOM killer)
            child = self._ready(idle=True)
            yield from self._exchange(child, messages, params, stop)
        finally:
            self._generate_lock.release()

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Tokens of each text by the GGUF's own tokenizer, counted in the model process
        (loading it first if needed). Raises `ProviderError` when the process dies."""
        self._ready()
        with self._generate_lock:  # one request at a time on the socket
            child = self._ready(idle=True)
            child.send({"op": "tokenize", "texts": list(texts)})
            try:
                answer = child.receive()
            except ProviderError as error:
                if error.kind == "crashed":
                    self._forget(child)
                raise
        return [int(count) for count in answer["tokens"]]

    def _acquire(self, stop: threading.Event) -> bool:
        # Poll, so a request cancelled while queued behind another one gives up its place.
        while not self._generate_lock.acquire(timeout=_LOCK_POLL_SECONDS):
            if stop.is_set():
                return False
        return True

    def _exchange(
        self,
        child: _Child,
        messages: Sequence[Mapping[str, Any]],
        params: GenerationParams,
        stop: threading.Event,
    ) -> Iterator[Piece]:
        request_id = next(self._ids)
        # JSON, not pickle: plain data only, whatever objects the messages carry
        plain = json.loads(json.dumps(list(messages), default=str))
        child.send({"op": "chat", "id": request_id, "messages": plain, "params": asdict(params)})
        exchange = _Exchange(child, request_id, stop)
        try:
            while (piece := exchange.next_piece()) is not None:
                yield piece
        except ProviderError as error:
            if error.kind == "crashed":
                self._forget(child)
            raise
        finally:
            # Closed early (the consumer went away): end the generation so the next
            # request starts on a quiet socket.
            if not exchange.finished and not exchange.drain():
                self._forget(child)

    def _forget(self, child: _Child) -> None:
        with self._load_lock:
            if self._child is child:
                self._child = None

    def close(self) -> None:
        """Stop the model process. Safe to call twice; a later request starts a new one."""
        with self._load_lock:
            child, self._child = self._child, None
        if child is not None:
            child.close()


class _Exchange:
    """One chat request's replies, with the caller's stop flag passed on to the child."""

    def __init__(self, child: _Child, request_id: int, stop: threading.Event) -> None:
        self.child = child
        self.request_id = request_id
        self.stop = stop
        self.finished = False
        self._abandoned = False
        self._stop_sent_at: float | None = None

    def _stopping(self) -> bool:
        return self._abandoned or self.stop.is_set()

    def next_piece(self) -> Piece | None:
        """The next piece to hand on, None after the last one."""
        try:
            return self._next_piece()
        except ProviderError:
            self.finished = True  # the child died or refused: nothing more will come
            raise

    def _next_piece(self) -> Piece | None:
        while not self.finished:
            if self._stopping() and self._stop_sent_at is None:
                self.child.send({"op": "stop", "id": self.request_id})
                self._stop_sent_at = time.monotonic()
            if not self.child.poll(_POLL_SECONDS):
                if self._overdue():
                    self.child.kill()
                    self.finished = True
                    return Piece("", "cancelled")
                continue
            message = self.child.receive()
            if "finish" in message:
                self.finished = True
                return Piece(
                    "",
                    str(message["finish"]),
                    int(message["prompt_tokens"]),
                    int(message["completion_tokens"]),
                )
            if not self._stopping():  # text after a stop is not shown (as in-process)
                return Piece(str(message["piece"]))
        return None

    def _overdue(self) -> bool:
        sent = self._stop_sent_at
        return sent is not None and time.monotonic() - sent > _STOP_GRACE_SECONDS

    def drain(self) -> bool:
        """Stop the generation and read to its end; False when the child had to be killed."""
        self._abandoned = True
        try:
            while self.next_piece() is not None:
                pass
        except ProviderError:
            return False
        return self.child.process.poll() is None


def _silent(_message: str) -> None:
    return None

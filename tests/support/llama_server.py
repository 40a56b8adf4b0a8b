"""A real OpenAI-compatible server for tests: `llama_cpp.server` with the embedded GGUF.

`start_server(gguf)` launches `python -m llama_cpp.server` on 127.0.0.1 at a free port and
waits (bounded) until `/v1/models` answers; `LlamaServer.stop()` kills it. Tests marked
`local` use it through a configured alias (`openai/<name>` with `api_base`), so every call
goes through litellm's real OpenAI client over HTTP.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

SERVED_NAME = "gemma"
"""The model name the server answers to (`--model_alias`)."""
READY_SECONDS = 90.0
END_OF_GENERATION = {"1": -100, "106": -100, "212": -100}
"""A `logit_bias` that bars the tokens llama.cpp ends generation on for Gemma 3 (`<eos>`,
`<end_of_turn>`, `</s>`), so an answer runs to its `max_tokens`. The served GGUF has no chat
template, so the server falls back to the llama-2 format, whose literal `<s>` invites `</s>`:
without the bias some CPUs draw an empty answer."""


@dataclass
class LlamaServer:
    """One running llama_cpp.server process."""

    process: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def api_base(self) -> str:
        """The OpenAI-compatible base URL."""
        return f"http://127.0.0.1:{self.port}/v1"

    def kill(self) -> None:
        """SIGKILL, the way a crash or an OOM kill ends a server: no goodbye on the socket."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=10)

    stop = kill


def free_port() -> int:
    """A port nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_server(gguf: Path, log_dir: Path, *, n_ctx: int = 2048) -> LlamaServer:
    """Start the server with a context of `n_ctx` tokens and wait until it answers; raise
    with its log if it does not."""
    port = free_port()
    log = log_dir / f"llama-server-{port}.log"
    threads = str(max(1, (os.cpu_count() or 2) - 1))
    command = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(gguf),
        "--model_alias",
        SERVED_NAME,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        str(n_ctx),
        "--n_threads",
        threads,
    ]
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    server = LlamaServer(process, port, log)
    deadline = time.monotonic() + READY_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"llama_cpp.server exited ({process.returncode}):\n{_tail(log)}")
        try:
            with urllib.request.urlopen(f"{server.api_base}/models", timeout=2) as answer:
                if answer.status == 200:
                    return server
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.25)
    server.kill()
    raise RuntimeError(f"llama_cpp.server not ready after {READY_SECONDS:g} s:\n{_tail(log)}")


def _tail(log: Path) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-20:])
    except OSError:
        return "(no log)"

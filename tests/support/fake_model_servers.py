"""Fake local model servers on 127.0.0.1 for `modes-tui init`: an Ollama-style server and an
OpenAI-style one (LM Studio, llama.cpp's server), each on an ephemeral port.

    with model_list_server("ollama", [{"name": "llama3.2:latest", "size": 2_000_000_000}]) as port:
        ...

What each serves:

- `ollama`: `/api/tags` (the model list), `/api/show` (a model's details: `model_info`
  with `<arch>.context_length`, and `parameters` with `num_ctx` when `num_ctx` is given),
  `/api/chat` (what litellm's `ollama_chat/` calls: NDJSON lines) and
  `/v1/chat/completions` (Ollama's OpenAI-compatible endpoint, streamed as SSE).
- `openai`: `/v1/models`, `/props` and `/api/v0/models` when `n_ctx` is given (llama.cpp's
  server and LM Studio say their context there), and `/v1/chat/completions` (SSE).
- `raw`: those bytes on every path (a server that answers something else); `trickle`: the
  answer a byte every `trickle` seconds (a server that accepts and then crawls).

Every chat answers `ANSWER` and records the Authorization header it got (`auth`).
Bounded like tests/fake_openai_server.py: a daemon thread, stopped by the context manager.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ANSWER = "Hello from the local server."
ARCH = "llama"
CONTEXT_LENGTH = 131072
"""What the fake Ollama's model_info says of every model's context."""


@dataclass
class Seen:
    """What a fake server was asked."""

    paths: list[str] = field(default_factory=list)
    auth: list[str | None] = field(default_factory=list)
    """The Authorization header of each chat request (None: none sent)."""


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep the test output clean

    def do_GET(self) -> None:
        self.server.seen.paths.append(self.path)
        if self._raw():
            return
        kind = self.server.kind
        if kind == "ollama" and self.path == "/api/tags":
            self._send(200, {"models": list(self.server.models)})
        elif kind == "openai" and self.path == "/v1/models":
            self._send(200, {"object": "list", "data": list(self.server.models)})
        elif kind == "openai" and self.path == "/props" and self.server.n_ctx is not None:
            self._send(200, {"default_generation_settings": {"n_ctx": self.server.n_ctx}})
        elif kind == "openai" and self.path == "/api/v0/models" and self.server.n_ctx is not None:
            listed = [
                {**model, "max_context_length": self.server.n_ctx} for model in self.server.models
            ]
            self._send(200, {"object": "list", "data": listed})
        else:
            self._send(404, {"error": "not found"})

    def do_POST(self) -> None:
        self.server.seen.paths.append(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        request = json.loads(self.rfile.read(length) or b"{}")
        if self._raw():
            return
        if self.path == "/api/show" and self.server.kind == "ollama":
            self._send(200, self._show())
        elif self.path == "/api/chat" and self.server.kind == "ollama":
            self.server.seen.auth.append(self.headers.get("Authorization"))
            self._ollama_chat(request)
        elif self.path == "/v1/chat/completions":
            self.server.seen.auth.append(self.headers.get("Authorization"))
            self._openai_chat(request)
        else:
            self._send(404, {"error": "not found"})

    def _raw(self) -> bool:
        if self.server.raw is None:
            return False
        self._send_bytes(200, self.server.raw)
        return True

    def _show(self) -> dict[str, Any]:
        shown: dict[str, Any] = {
            "model_info": {
                "general.architecture": ARCH,
                f"{ARCH}.context_length": CONTEXT_LENGTH,
            },
            "details": {"family": ARCH},
        }
        if self.server.num_ctx is not None:
            shown["parameters"] = f'stop "<|eot|>"\nnum_ctx {self.server.num_ctx}'
        return shown

    def _ollama_chat(self, request: dict[str, Any]) -> None:
        model = request.get("model", "")
        done = {"model": model, "done": True, "prompt_eval_count": 5, "eval_count": 6}
        if not request.get("stream"):
            message = {"role": "assistant", "content": ANSWER}
            self._send(200, {**done, "message": message})
            return
        lines = [
            {"model": model, "message": {"role": "assistant", "content": word}, "done": False}
            for word in _words(ANSWER)
        ]
        lines.append({**done, "message": {"role": "assistant", "content": ""}})
        body = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
        self._send_bytes(200, body, "application/x-ndjson")

    def _openai_chat(self, request: dict[str, Any]) -> None:
        model = request.get("model", "")
        if not request.get("stream"):
            self._send(
                200,
                {
                    "id": "chatcmpl-local",
                    "object": "chat.completion",
                    "created": 1,
                    "model": model,
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": ANSWER},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": 5, "completion_tokens": 6, "total_tokens": 11},
                },
            )
            return
        events = [_sse(model, {"role": "assistant", "content": word}) for word in _words(ANSWER)]
        events.append(_sse(model, {}, finish="stop"))
        usage = {"prompt_tokens": 5, "completion_tokens": 6, "total_tokens": 11}
        events.append(
            "data: "
            + json.dumps(
                {
                    "id": "c",
                    "object": "chat.completion.chunk",
                    "model": model,
                    "choices": [],
                    "usage": usage,
                }
            )
            + "\n\n"
        )
        events.append("data: [DONE]\n\n")
        self._send_bytes(200, "".join(events).encode(), "text/event-stream")

    def _send(self, status: int, data: Any) -> None:
        self._send_bytes(status, json.dumps(data).encode())

    def _send_bytes(self, status: int, body: bytes, kind: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        trickle = self.server.trickle
        if trickle is None:
            self.wfile.write(body)
            return
        for index in range(len(body)):  # a byte at a time, for as long as anyone listens
            try:
                self.wfile.write(body[index : index + 1])
                self.wfile.flush()
            except OSError:
                return
            if self.server.stopping.wait(trickle):
                return


def _words(text: str) -> list[str]:
    words = text.split(" ")
    return [word + " " for word in words[:-1]] + words[-1:]


def _sse(model: str, delta: dict[str, Any], finish: str | None = None) -> str:
    chunk = {
        "id": "chatcmpl-local",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(chunk)}\n\n"


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    kind: str
    models: Sequence[dict[str, Any]]
    raw: bytes | None
    trickle: float | None
    n_ctx: int | None
    num_ctx: int | None
    seen: Seen
    stopping: threading.Event


@contextmanager
def model_server(
    kind: str,
    models: Sequence[dict[str, Any]],
    *,
    raw: bytes | None = None,
    trickle: float | None = None,
    n_ctx: int | None = None,
    num_ctx: int | None = None,
) -> Iterator[tuple[int, Seen]]:
    """Serve `models` the way `kind` (ollama, or openai) does (see the module's docstring);
    yields the port and what the server was asked."""
    server = _Server(("127.0.0.1", 0), _Handler)
    server.kind = kind
    server.models = models
    server.raw = raw
    server.trickle = trickle
    server.n_ctx = n_ctx
    server.num_ctx = num_ctx
    server.seen = Seen()
    server.stopping = threading.Event()
    thread = threading.Thread(target=server.serve_forever, name=f"fake-{kind}", daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1]), server.seen
    finally:
        server.stopping.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@contextmanager
def model_list_server(
    kind: str, models: Sequence[dict[str, Any]], raw: bytes | None = None
) -> Iterator[int]:
    """`model_server`, yielding the port only."""
    with model_server(kind, models, raw=raw) as (port, _seen):
        yield port

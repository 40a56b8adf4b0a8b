"""A small OpenAI-compatible HTTP server on 127.0.0.1 that fails on purpose.

The model name in the request picks the behaviour, so one server serves every case:

| model          | what the server does                                                     |
|----------------|--------------------------------------------------------------------------|
| `ok`           | streams "Hello from the fake server." in SSE chunks, then `[DONE]`       |
| `http-500`     | answers 500 with an OpenAI error body                                     |
| `http-401`     | answers 401 (a wrong API key)                                             |
| `hang`         | accepts the request and never answers (until the server stops)            |
| `bad-sse`      | answers 200 with an event stream whose data is not JSON                   |
| `cut`          | streams two chunks, then closes the connection mid-body                   |
| `slow`         | streams a long answer, one chunk every `SLOW_SECONDS`                     |
| `http-401-echo`| answers 401 quoting the Authorization header it got, as some providers do |
| `echo-headers` | streams back, as JSON, the `X-Team...` headers it got                     |
| `scripted`     | streams the next reply of `scripted_openai_server(replies)`: text and/or  |
|                | tool calls (arguments streamed in pieces, as real servers do)             |
| `context-limit`| refuses (400, `context_length_exceeded`) a request whose messages hold  |
|                | more than `CONTEXT_LIMIT_CHARS` characters; else answers: streamed, or   |
|                | whole (`SUMMARY_TEXT`) when not asked to stream                          |

Bounded: it runs in a daemon thread, every handler gives up when the server stops, and
`stop()` is called by the test (a context manager) so nothing outlives the test.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

OK_TEXT = "Hello from the fake server."
SERVER_ERROR = "the fake server broke on purpose"
AUTH_ERROR = "Incorrect API key provided: sk-test***"
SLOW_SECONDS = 0.05
CONTEXT_LIMIT_CHARS = 3000
CONTEXT_ERROR = "This model's maximum context length is 1000 tokens; your messages are longer"
SUMMARY_TEXT = (
    "The user and the assistant talked about the sea: the user sent long messages asking for "
    "more about the sea and its tides, and the assistant answered each of them briefly. The "
    "user wants to know more; nothing was decided and the topic is still open."
)
HANG_LIMIT_SECONDS = 60.0
"""The longest a hanging request is held, should a test forget to stop the server."""


def _chunk(text: str | None, finish: str | None = None, model: str = "fake") -> bytes:
    delta: dict[str, Any] = {} if text is None else {"role": "assistant", "content": text}
    body = {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(body)}\n\n".encode()


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    body: dict[str, Any]
    """The request's JSON body."""

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep the test output clean

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        try:
            request = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            request = {}
        model = str(request.get("model", ""))
        self.server.requests.append(model)
        self.server.bodies.append(request)
        self.body = request
        behaviour = getattr(self, "_" + model.replace("-", "_"), None)
        if behaviour is None:
            self._error(404, f"The model `{model}` does not exist", "model_not_found")
            return
        behaviour()

    # ------------------------------------------------------------------ behaviours

    def _ok(self) -> None:
        self._stream_headers()
        for word in OK_TEXT.split(" "):
            self._write_chunk(_chunk(word + " "))
        self._write_chunk(_chunk(None, "stop"))
        self._write_chunk(b"data: [DONE]\n\n")
        self._write_chunk(b"")

    def _http_500(self) -> None:
        self._error(500, SERVER_ERROR, "server_error")

    def _http_401(self) -> None:
        self._error(401, AUTH_ERROR, "invalid_api_key")

    def _http_401_echo(self) -> None:
        shown = self.headers.get("Authorization", "")
        self._error(401, f"Incorrect API key provided: {shown}", "invalid_api_key")

    def _echo_headers(self) -> None:
        seen = {k: v for k, v in self.headers.items() if k.lower().startswith("x-team")}
        self._stream_headers()
        self._write_chunk(_chunk(json.dumps(seen, sort_keys=True)))
        self._write_chunk(_chunk(None, "stop"))
        self._write_chunk(b"data: [DONE]\n\n")
        self._write_chunk(b"")

    def _scripted(self) -> None:
        if not self.server.script:
            self._error(500, "the fake server's script is used up", "server_error")
            return
        reply = self.server.script.pop(0)
        self._stream_headers()
        if reply.text:
            self._write_chunk(_chunk(reply.text))
        for index, (name, arguments) in enumerate(reply.tool_calls):
            text = json.dumps(arguments)
            half = len(text) // 2
            self._write_chunk(
                _tool_chunk(index, f"call_{index}_{len(self.server.bodies)}", name, text[:half])
            )
            self._write_chunk(_tool_chunk(index, None, None, text[half:]))
        self._write_chunk(_chunk(None, "tool_calls" if reply.tool_calls else "stop"))
        self._write_chunk(b"data: [DONE]\n\n")
        self._write_chunk(b"")

    def _context_limit(self) -> None:
        size = sum(len(str(m.get("content") or "")) for m in self.body.get("messages", []))
        if size > CONTEXT_LIMIT_CHARS:
            self._error(400, CONTEXT_ERROR, "context_length_exceeded")
        elif self.body.get("stream"):
            self._ok()
        else:
            self._whole(SUMMARY_TEXT)

    def _whole(self, text: str) -> None:
        body = json.dumps(
            {
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "created": 1,
                "model": "fake",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _hang(self) -> None:
        self.server.stopped.wait(HANG_LIMIT_SECONDS)

    def _bad_sse(self) -> None:
        self._stream_headers()
        self._write_chunk(b"data: {this is not json\n\n")
        self._write_chunk(b"data: [DONE]\n\n")
        self._write_chunk(b"")

    def _cut(self) -> None:
        self._stream_headers()
        self._write_chunk(_chunk("The first half "))
        self._write_chunk(_chunk("of an answer"))
        # no final chunk: the chunked body is never finished
        self.wfile.flush()
        self.connection.shutdown(socket.SHUT_RDWR)
        self.close_connection = True

    def _slow(self) -> None:
        self._stream_headers()
        for number in range(2000):
            if self.server.stopped.is_set():
                return
            try:
                self._write_chunk(_chunk(f"word{number} "))
            except OSError:
                return  # the client went away
            time.sleep(SLOW_SECONDS)
        self._write_chunk(_chunk(None, "stop"))
        self._write_chunk(b"data: [DONE]\n\n")
        self._write_chunk(b"")

    # ------------------------------------------------------------------ helpers

    def _error(self, status: int, message: str, code: str) -> None:
        body = json.dumps(
            {"error": {"message": message, "type": "fake_error", "param": None, "code": code}}
        ).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _stream_headers(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()


def _tool_chunk(index: int, call_id: str | None, name: str | None, arguments: str) -> bytes:
    function: dict[str, Any] = {"arguments": arguments}
    call: dict[str, Any] = {"index": index, "function": function}
    if call_id is not None:
        call.update(id=call_id, type="function")
        function["name"] = name
    body = {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "scripted",
        "choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}],
    }
    return f"data: {json.dumps(body)}\n\n".encode()


@dataclass(frozen=True)
class ServerReply:
    """One answer of the `scripted` model: text, tool calls (name, arguments), or both."""

    text: str = ""
    tool_calls: tuple[tuple[str, dict[str, Any]], ...] = ()


@dataclass
class ScriptedServer:
    """A running server with a script: its base URL and every request body it got."""

    url: str
    bodies: list[dict[str, Any]] = field(default_factory=list)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    requests: list[str]
    bodies: list[dict[str, Any]]
    script: list[ServerReply]
    stopped: threading.Event


@contextmanager
def scripted_openai_server(replies: list[ServerReply]) -> Iterator[ScriptedServer]:
    """The server with the model `scripted` answering `replies` in order."""
    with _running(list(replies)) as server:
        yield ScriptedServer(_url(server), server.bodies)


@contextmanager
def fake_openai_server() -> Iterator[str]:
    """Run the server; yields its base URL (`http://127.0.0.1:PORT/v1`)."""
    with _running([]) as server:
        yield _url(server)


def _url(server: _Server) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}/v1"


@contextmanager
def _running(script: list[ServerReply]) -> Iterator[_Server]:
    server = _Server(("127.0.0.1", 0), _Handler)
    server.requests = []
    server.bodies = []
    server.script = script
    server.stopped = threading.Event()
    thread = threading.Thread(target=server.serve_forever, name="fake-openai", daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.stopped.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])

"""Fake local model servers on 127.0.0.1 for `modes-tui init`: an Ollama-style `/api/tags`
and an OpenAI-style `/v1/models` (LM Studio, llama.cpp's server), each on an ephemeral port.

    with model_list_server("ollama", [{"name": "llama3.2:latest", "size": 2_000_000_000}]) as port:
        ...

Bounded like tests/support/fake_openai_server.py: a daemon thread, stopped by the context manager.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep the test output clean

    def do_GET(self) -> None:
        self.server.paths.append(self.path)
        if self.server.raw is not None:
            self._send(200, self.server.raw)
            return
        if self.path != self.server.route:
            self._send(404, b'{"error": "not found"}')
            return
        key = "models" if self.server.kind == "ollama" else "data"
        self._send(200, json.dumps({key: list(self.server.models)}).encode())

    def _send(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    kind: str
    route: str
    models: Sequence[dict[str, Any]]
    raw: bytes | None
    paths: list[str]


@contextmanager
def model_list_server(
    kind: str, models: Sequence[dict[str, Any]], raw: bytes | None = None
) -> Iterator[int]:
    """Serve `models` the way `kind` (ollama, or openai for /v1/models) lists them, or `raw`
    on every path (a server that answers something else); yields the port."""
    server = _Server(("127.0.0.1", 0), _Handler)
    server.kind = kind
    server.route = "/api/tags" if kind == "ollama" else "/v1/models"
    server.models = models
    server.raw = raw
    server.paths = []
    thread = threading.Thread(target=server.serve_forever, name=f"fake-{kind}", daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)

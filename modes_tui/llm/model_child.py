"""The local model process: one `LlamaRunner` serving the app over a socket pair.

`model_process.py` starts this module's `main` in a child process (never imported by the
app itself) and talks to it with one JSON object per message over a
`multiprocessing.connection.Connection`:

    app -> child   {"op": "load", "path", "n_ctx", "n_threads"}    -> {"loaded": seconds}
                   {"op": "chat", "id", "messages", "params"}      -> {"piece": text} ...,
                                                                      then {"finish": reason,
                                                                      "prompt_tokens",
                                                                      "completion_tokens"}
                   {"op": "tokenize", "texts"}                     -> {"tokens": [count, ...]}
                   {"op": "stop", "id"}   ends chat `id` within one token (no reply of its own)
    child -> app   {"error": {"kind", "message", "hint"}} instead of a reply when a request fails

Requests run one at a time on the main thread; a reader thread takes them off the socket so
a `stop` reaches the running generation at once. When the app goes away (end of file on the
socket) the child stops what it does and exits. llama.cpp is loaded only here.
"""

from __future__ import annotations

import contextlib
import faulthandler
import json
import queue
import signal
import sys
import threading
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from modes_tui.core.errors import ProviderError
from modes_tui.llm.llama_runner import GenerationParams, LlamaRunner


class _Server:
    """The child's side of the protocol: requests in order, stops at once."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        self._requests: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._active: tuple[int, threading.Event] | None = None
        self._runner: LlamaRunner | None = None

    def run(self) -> None:
        threading.Thread(target=self._read, name="modes-tui-model-reader", daemon=True).start()
        while (request := self._requests.get()) is not None:
            try:
                self._handle(request)
            except (BrokenPipeError, ConnectionError, EOFError):
                return  # the app is gone: nobody to answer
            except ProviderError as error:
                self._send({"error": _error_fields(error)})
            except Exception as error:  # noqa: BLE001  # every failure goes back to the app
                message = f"{type(error).__name__}: {error}"
                self._send({"error": {"kind": "unknown", "message": message, "hint": ""}})

    def _read(self) -> None:
        while True:
            try:
                request = json.loads(self._connection.recv_bytes())
            except (EOFError, OSError):
                self._stop(None)
                self._requests.put(None)
                return
            if request.get("op") == "stop":
                self._stop(request.get("id"))
            else:
                self._requests.put(request)

    def _stop(self, request_id: int | None) -> None:
        active = self._active
        if active is not None and (request_id is None or active[0] == request_id):
            active[1].set()

    def _send(self, message: dict[str, Any]) -> None:
        self._connection.send_bytes(json.dumps(message).encode("utf-8"))

    def _handle(self, request: dict[str, Any]) -> None:
        if request["op"] == "load":
            path = Path(request["path"])
            self._runner = LlamaRunner(
                lambda: path, n_ctx=int(request["n_ctx"]), n_threads=int(request["n_threads"])
            )
            self._runner.load()
            self._send({"loaded": self._runner.load_seconds})
        elif request["op"] == "tokenize":
            if self._runner is None:
                raise RuntimeError("the model is not loaded")
            self._send({"tokens": self._runner.count_texts(list(request["texts"]))})
        elif request["op"] == "chat":
            self._chat(int(request["id"]), request["messages"], request["params"])
        else:
            raise ValueError(f"unknown request {request['op']!r}")

    def _chat(
        self, request_id: int, messages: list[dict[str, Any]], params: dict[str, Any]
    ) -> None:
        if self._runner is None:
            raise RuntimeError("the model is not loaded")
        stop = threading.Event()
        self._active = (request_id, stop)
        settings = GenerationParams(**{**params, "stop": tuple(params["stop"])})
        try:
            for piece in self._runner.chat(messages, settings, stop):
                if piece.finish_reason is None:
                    self._send({"piece": piece.text})
                else:
                    self._send(
                        {
                            "finish": piece.finish_reason,
                            "prompt_tokens": piece.prompt_tokens,
                            "completion_tokens": piece.completion_tokens,
                        }
                    )
                    return
            # A generation stopped while it waited for the lock yields nothing: say so.
            self._send({"finish": "cancelled", "prompt_tokens": 0, "completion_tokens": 0})
        finally:
            self._active = None


def _error_fields(error: ProviderError) -> dict[str, str]:
    return {"kind": error.kind, "message": error.provider_message, "hint": error.hint}


def main(fd: int) -> None:
    """Serve the app on the socket `fd` until it closes it."""
    # A native crash prints the Python stack to stderr (the app logs it), then dies by the
    # same signal, so the app can name it.
    faulthandler.enable()
    # Ctrl+C in the terminal is the app's to handle (it cancels by asking, not by signal).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    connection = Connection(fd)
    try:
        _Server(connection).run()
    finally:
        with contextlib.suppress(OSError):
            connection.close()


if __name__ == "__main__":
    main(int(sys.argv[1]))

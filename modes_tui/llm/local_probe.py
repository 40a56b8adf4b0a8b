"""One HTTP request to a server on 127.0.0.1, finished or given up within a deadline.

`modes-tui init` asks local model servers what they serve. A server that accepts the
connection and then answers a byte every quarter second would hold a plain `urlopen` for
ever (its timeout is per read), so `get_json` has a deadline for the whole request: a timer
shuts the socket down when it passes, and the blocked read returns at once.

Requests go straight to the loopback address with `http.client`, which never reads
`http_proxy`, `https_proxy` or `all_proxy`: a proxy cannot reach this machine's loopback,
so routing a probe through one would miss a running server.

Every way of giving up is a `ProbeFailed` whose `why` is what `init` says: `refused`
(nothing listens), `slow` (no whole answer before the deadline), `needs a key`
(HTTP 401/403), or `not OpenAI-compatible` / `not an Ollama server` (something else
answered), with the detail after it.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import threading
import time
from typing import Any

HOST = "127.0.0.1"
MAX_BODY = 1_000_000
"""Bytes of an answer read at most (a model list, a model's details)."""
_CHUNK = 65536


class ProbeFailed(Exception):
    """The server was given up on: `why` in a word or two, `detail` after it."""

    def __init__(self, why: str, detail: str) -> None:
        super().__init__(f"{why} ({detail})")
        self.why = why
        self.detail = detail


def get_json(
    port: int,
    path: str,
    *,
    deadline: float,
    body: Any = None,
    foreign: str = "not OpenAI-compatible",
) -> dict[str, Any]:
    """The JSON object at `http://127.0.0.1:<port><path>` (a POST of `body` when given),
    read whole before `deadline` (a `time.monotonic()` value).

    ProbeFailed otherwise; `foreign` is the `why` of an answer that is not a JSON object
    (or an HTTP error other than 401/403), i.e. another kind of server.
    """
    raw = _fetch(port, path, deadline=deadline, body=body, foreign=foreign)
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise ProbeFailed(foreign, f"{path} answered, but not with JSON") from None
    if not isinstance(data, dict):
        raise ProbeFailed(foreign, f"{path} answered, but not with a JSON object")
    return data


def _fetch(port: int, path: str, *, deadline: float, body: Any, foreign: str) -> bytes:
    left = deadline - time.monotonic()
    if left <= 0:
        raise ProbeFailed("slow", "no time left for it")
    connection = http.client.HTTPConnection(HOST, port, timeout=left)
    fired = threading.Event()
    timer = threading.Timer(left, _shut, (connection, fired))
    timer.daemon = True
    timer.start()
    slow = ProbeFailed("slow", f"no whole answer to {path} within {left:.1f} s")
    try:
        raw = _exchange(connection, path, body, foreign=foreign)
    except ConnectionRefusedError:
        raise ProbeFailed("refused", "nothing listens there") from None
    except ProbeFailed:
        raise
    except (OSError, http.client.HTTPException) as error:
        if fired.is_set() or isinstance(error, TimeoutError):
            raise slow from None
        raise ProbeFailed(foreign, f"{path}: {type(error).__name__}") from None  # no raw bytes
    else:
        if fired.is_set():  # the shut-down socket ended the body early
            raise slow
        return raw
    finally:
        timer.cancel()
        connection.close()


def _exchange(
    connection: http.client.HTTPConnection,
    path: str,
    body: Any,
    *,
    foreign: str,
) -> bytes:
    headers = {"Accept": "application/json"}
    if body is None:
        connection.request("GET", path, headers=headers)
    else:
        headers["Content-Type"] = "application/json"
        connection.request("POST", path, body=json.dumps(body).encode(), headers=headers)
    response = connection.getresponse()
    if response.status in (401, 403):
        raise ProbeFailed("needs a key", f"{path} answered HTTP {response.status}")
    if response.status != 200:
        raise ProbeFailed(foreign, f"{path} answered HTTP {response.status}")
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = response.read1(_CHUNK)
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        if total > MAX_BODY:
            raise ProbeFailed(foreign, f"{path} answered more than {MAX_BODY:,} bytes")
    return b"".join(chunks)


def _shut(connection: http.client.HTTPConnection, fired: threading.Event) -> None:
    """Wake a read blocked on a server that trickles: the deadline has passed."""
    fired.set()
    sock = connection.sock
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)

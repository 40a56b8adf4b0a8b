"""The agent's stdin/stdout: a guarded stdout, and newline-delimited JSON-RPC messages on it.

An editor reads every byte the agent writes to stdout as protocol; a library that prints a
warning there (or a C extension writing to file descriptor 1) would corrupt the stream. So
`guard_stdout` moves the protocol to a private duplicate of descriptor 1 and points both
descriptor 1 and `sys.stdout` at stderr: whatever else is printed lands in the editor's log.

`LineTransport` is the SDK's message-level `Transport` over those streams. It differs from the
SDK's own NDJSON transport in what a bad line gets: a line that is not JSON, not a JSON-RPC
object, or longer than `MAX_LINE_BYTES` is answered with a JSON-RPC error (id null, or the
request's id when it can be read) and the agent reads on, where the SDK only logs it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import stat
import sys
import threading
from dataclasses import dataclass
from typing import Any

from acp import RequestError

from modes_tui.core.errors import ModesError

__all__ = ["MAX_LINE_BYTES", "LineTransport", "ProtocolStreams", "guard_stdout", "open_streams"]

log = logging.getLogger("modes_tui.acp")

MAX_LINE_BYTES = 8 * 1024 * 1024
"""The longest message line read (8 MiB); a longer one is skipped and answered with an error.
It is above the prompt limit (`agent.MAX_PROMPT_CHARS`), so a prompt just over that limit is
still read and refused by name."""
READ_CHUNK = 64 * 1024


@dataclass(frozen=True, slots=True)
class ProtocolStreams:
    """Where the protocol goes once stdout is guarded."""

    input_fd: int
    """The descriptor messages are read from (stdin)."""
    output_fd: int
    """A private duplicate of the original stdout: only protocol messages are written here."""


def guard_stdout() -> ProtocolStreams:
    """Keep descriptor 1 for nothing but the protocol: duplicate it for the transport, then
    send descriptor 1 and `sys.stdout` to stderr (prints, warnings, C libraries)."""
    sys.stdout.flush()
    output_fd = os.dup(1)
    os.set_inheritable(output_fd, False)  # children (tools, MCP servers) never get the stream
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return ProtocolStreams(input_fd=0, output_fd=output_fd)


async def open_streams(
    streams: ProtocolStreams,
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Asyncio streams over the protocol's descriptors."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=READ_CHUNK)
    if _pipe_like(streams.input_fd):
        await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(streams.input_fd, "rb", 0)
        )
    else:  # a file of requests (`modes-tui acp < requests.jsonl`): read it in a thread
        threading.Thread(
            target=_feed,
            args=(streams.input_fd, reader, loop),
            name="modes-tui-acp-stdin",
            daemon=True,
        ).start()
    if not _pipe_like(streams.output_fd):
        raise ModesError(
            "modes-tui acp writes its protocol to a pipe (an editor's), but stdout is a "
            "regular file here: pipe it, e.g. `modes-tui acp | tee FILE`"
        )
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(streams.output_fd, "wb", 0)
    )
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return reader, writer


def _pipe_like(fd: int) -> bool:
    """Whether asyncio's pipe transports take `fd`: a pipe, a socket or a character device."""
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


def _feed(fd: int, reader: asyncio.StreamReader, loop: asyncio.AbstractEventLoop) -> None:
    """Feed a regular file's bytes to `reader` from a thread, then its end."""
    with os.fdopen(fd, "rb", 0) as source:
        while chunk := source.read(READ_CHUNK):
            loop.call_soon_threadsafe(reader.feed_data, chunk)
    loop.call_soon_threadsafe(reader.feed_eof)


class LineTransport:
    """JSON-RPC messages, one per line, that answers a bad line instead of dropping it."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        max_line: int = MAX_LINE_BYTES,
    ) -> None:
        self.reader = reader
        self.writer = writer
        self.max_line = max_line
        self._lock = asyncio.Lock()
        self._closed = False

    async def send(self, message: dict[str, Any]) -> None:
        """Write one message as one line (one writer at a time, so lines never interleave)."""
        data = (json.dumps(message, separators=(",", ":"), ensure_ascii=False) + "\n").encode()
        async with self._lock:
            if self._closed:
                raise ConnectionError("the protocol stream is closed")
            self.writer.write(data)
            await self.writer.drain()

    async def receive(self) -> dict[str, Any] | None:
        """The next well-formed message; None at the end of input. Bad lines are answered."""
        while True:
            line = await self._line()
            if line is None:
                return None
            if not line.strip():
                continue
            message, error = self._parse(line)
            if message is not None:
                return message
            assert error is not None
            await self._reply_error(error, self._request_id(line))

    async def close(self) -> None:
        """Stop writing; the editor sees the end of the stream."""
        async with self._lock:
            if self._closed:
                return
            self._closed = True
            self.writer.close()

    # ------------------------------------------------------------------ reading

    async def _line(self) -> bytes | None:
        """One line (None at the end of input); a line over the limit is skipped and returned
        as an empty marker `b"\\x00"` so it gets its error."""
        parts: list[bytes] = []
        size = 0
        too_long = False
        while True:
            try:
                chunk = await self.reader.readuntil(b"\n")
                done = True
            except asyncio.LimitOverrunError as overrun:
                chunk = await self.reader.readexactly(overrun.consumed)
                done = False
            except asyncio.IncompleteReadError as partial:
                chunk, done = partial.partial, True
                if not chunk and not parts and not too_long:
                    return None
            size += len(chunk)
            if size > self.max_line:
                too_long, parts = True, []
            else:
                parts.append(chunk)
            if done:
                return b"\x00" if too_long else b"".join(parts)

    def _parse(self, line: bytes) -> tuple[dict[str, Any] | None, RequestError | None]:
        if line == b"\x00":
            return None, RequestError.invalid_request(
                {"details": f"message longer than {self.max_line} bytes; it was skipped"}
            )
        try:
            message = json.loads(line)
        except ValueError as error:
            return None, RequestError.parse_error({"details": f"not JSON: {error}"})
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return None, RequestError.invalid_request(
                {"details": 'a message is a JSON object with "jsonrpc": "2.0"'}
            )
        method = message.get("method")
        if method is not None and not isinstance(method, str):
            return None, RequestError.invalid_request({"details": '"method" must be a string'})
        if method is None and "id" not in message:
            return None, RequestError.invalid_request(
                {"details": 'a message needs "method" (a request) or "id" (a response)'}
            )
        return message, None

    @staticmethod
    def _request_id(line: bytes) -> Any:
        """The id of a request that could not be taken, when it can be read (else None)."""
        try:
            message = json.loads(line)
        except ValueError:
            return None
        if isinstance(message, dict) and isinstance(message.get("id"), int | str):
            return message["id"]
        return None

    async def _reply_error(self, error: RequestError, request_id: Any) -> None:
        log.warning("refused a message: %s %s", error, error.data)
        try:
            await self.send({"jsonrpc": "2.0", "id": request_id, "error": error.to_error_obj()})
        except (ConnectionError, OSError):
            log.warning("could not answer the bad message: the stream is closed")

"""MCP over streamable HTTP: a tiny server built with the SDK's own `MCPServer`
(tests/support/mcp_http_server.py) on 127.0.0.1, which refuses requests without the right header."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from modes_tui.mcp.config import McpServer
from modes_tui.mcp.servers import McpServers
from tests.support.mcp_support import REPO


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def http_server() -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(REPO / "tests/support/mcp_http_server.py"), str(port), "s3cret"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the test server did not start: {process.stderr}") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=10)


async def test_a_streamable_http_server_gets_the_configured_headers(
    http_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARITH_TOKEN", "s3cret")
    good = McpServer(
        "arith", "http", url=http_server, headers={"X-Token": "${ARITH_TOKEN}"}, trust=True
    )
    bad = McpServer("wrong", "http", url=http_server, headers={"X-Token": "guess"})
    hub = McpServers({"arith": good, "wrong": bad})
    try:
        found = await hub.tools(["arith", "wrong"])
        (add,) = found.tools
        assert (add.name, add.source, add.needs_confirmation) == ("arith__add", "mcp:arith", False)
        assert await add.invoke({"a": 2, "b": 40}) == "42"
        (problem,) = found.problems
        assert problem.startswith("MCP server 'wrong' could not start: ")
        assert "(HTTP 401 Unauthorized from http://127.0.0.1:" in problem
    finally:
        await hub.close()


async def test_a_header_naming_an_unset_variable_is_a_clear_start_failure(
    http_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ARITH_TOKEN", raising=False)
    hub = McpServers(
        {
            "arith": McpServer(
                "arith", "http", url=http_server, headers={"X-Token": "${ARITH_TOKEN}"}
            )
        }
    )
    try:
        found = await hub.tools(["arith"])
    finally:
        await hub.close()
    assert found.problems == (
        "MCP server 'arith' could not start: mcp_servers.arith.headers.X-Token uses "
        "${ARITH_TOKEN}, which is not set; set ARITH_TOKEN or edit it; this turn runs without "
        "its tools",
    )

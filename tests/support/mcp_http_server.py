"""A tiny streamable-HTTP MCP server for tests, built with the `mcp` SDK's own server API.

    python tests/support/mcp_http_server.py PORT TOKEN

Serves `http://127.0.0.1:PORT/mcp`, and answers 401 to any request whose `X-Token`
header is not TOKEN, so a test can tell that the configured headers were sent.
"""

from __future__ import annotations

import sys
from typing import Any

import uvicorn
from mcp.server.mcpserver import MCPServer

server = MCPServer("arith")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


def main() -> None:
    port, token = int(sys.argv[1]), sys.argv[2].encode()
    app = server.streamable_http_app()

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and dict(scope["headers"]).get(b"x-token") != token:
            await send({"type": "http.response.start", "status": 401, "headers": []})
            await send({"type": "http.response.body", "body": b"bad token"})
            return
        await app(scope, receive, send)

    uvicorn.run(guarded, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()

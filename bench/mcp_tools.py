"""MCP benchmark: what modes-tui adds on top of the `mcp` SDK, against mcp-server-time.

    python bench/mcp_tools.py [--calls 200] [--starts 5]

Baselines are the bare SDK in the same run on the same server: `stdio_client` +
`ClientSession.initialize()` + `list_tools()` for a start, `session.call_tool()` for a call.
Measured on our side: `McpServers.tools()` for a start (task, stderr log, tool wrapping),
`Tool.invoke()` for a call (argument passing, result to text), and `McpServers.tools()` on a
running server, which every turn of a mode pays (one ping). Importing the SDK is measured
apart in a fresh interpreter: modes-tui pays it once, off the event loop, on the first turn
that needs a server. It prints a table; it never asserts.
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from modes_tui.mcp.config import McpServer
from modes_tui.mcp.servers import McpServers

ARGS = ["-m", "mcp_server_time", "--local-timezone", "UTC"]
CALL = {"timezone": "Asia/Tokyo"}


def import_seconds(runs: int = 3) -> float:
    code = "import time; t = time.perf_counter(); import mcp.client.stdio, mcp.client.streamable_http; print(time.perf_counter() - t)"
    times = [
        float(
            subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True
            ).stdout
        )
        for _ in range(runs)
    ]
    return statistics.median(times)


async def bare_start() -> float:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    started = time.perf_counter()
    parameters = StdioServerParameters(command=sys.executable, args=ARGS)
    with open("/dev/null", "w") as errlog:
        async with (
            stdio_client(parameters, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            await session.list_tools()
            took = time.perf_counter() - started
    return took


async def our_start(log_dir: Path) -> float:
    hub = McpServers({"time": server()}, log_dir=log_dir)
    started = time.perf_counter()
    found = await hub.tools(["time"])
    took = time.perf_counter() - started
    assert found.tools and not found.problems, found.problems
    await hub.close()
    return took


def server() -> McpServer:
    return McpServer("time", "stdio", command=sys.executable, args=tuple(ARGS), trust=True)


async def calls(count: int, log_dir: Path) -> tuple[list[float], list[float], list[float]]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    bare: list[float] = []
    ours: list[float] = []
    turns: list[float] = []
    parameters = StdioServerParameters(command=sys.executable, args=ARGS)
    with open("/dev/null", "w") as errlog:
        async with (
            stdio_client(parameters, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            await session.list_tools()
            hub = McpServers({"time": server()}, log_dir=log_dir)
            tool = {t.name: t for t in (await hub.tools(["time"])).tools}["time__get_current_time"]
            for _ in range(count):  # interleaved, so load on the machine hits both alike
                started = time.perf_counter()
                await session.call_tool("get_current_time", CALL)
                bare.append(time.perf_counter() - started)
                started = time.perf_counter()
                await tool.invoke(CALL)
                ours.append(time.perf_counter() - started)
                started = time.perf_counter()
                await hub.tools(["time"])
                turns.append(time.perf_counter() - started)
            await hub.close()
    return bare, ours, turns


def ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:.2f} ms"


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


async def main_async(args: argparse.Namespace) -> None:
    log_dir = Path(tempfile.mkdtemp(prefix="mcp-bench-"))
    await bare_start()  # warm the SDK import and the OS caches for both sides
    bare_starts, our_starts = [], []
    for _ in range(args.starts):
        bare_starts.append(await bare_start())
        our_starts.append(await our_start(log_dir))
    bare, ours, turns = await calls(args.calls, log_dir)
    imported = import_seconds()

    print(
        f"mcp-server-time over stdio; Python {platform.python_version()}, {args.calls} calls, {args.starts} starts"
    )
    print()
    print("| | modes-tui | bare SDK, same run | ratio |")
    print("|---|---|---|---|")
    ratio = statistics.median(our_starts) / statistics.median(bare_starts)
    print(f"| start + list tools (median) | {ms(our_starts)} | {ms(bare_starts)} | {ratio:.2f}× |")
    ratio = statistics.median(ours) / statistics.median(bare)
    print(f"| one tool call (median) | {ms(ours)} | {ms(bare)} | {ratio:.2f}× |")
    print(f"| one tool call (p95) | {p95(ours) * 1000:.2f} ms | {p95(bare) * 1000:.2f} ms | |")
    print(f"| per turn on a running server (ping), median | {ms(turns)} | | |")
    print(f"| importing the SDK, fresh interpreter (median of 3) | {imported * 1000:.0f} ms | | |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--starts", type=int, default=5)
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()

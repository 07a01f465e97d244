#!/usr/bin/env python3
"""Per-call overhead of `toolpick mcp serve` (issue 16): an MCP client on the official Python SDK
(PyPI `mcp`, installed by scripts/install-mcp-servers.sh --python into target/mcp-servers/venv) makes N
sequential tools/call requests against the served flat layout of the bundled catalog, over stdio and
over streamable HTTP, and prints the median and p95 milliseconds per call (client to server and back,
the simulated tool included).

    target/mcp-servers/venv/bin/python scripts/bench-mcp-serve.py [--binary target/release/toolpick] [--calls 200]
"""
import argparse
import asyncio
import json
import socket
import statistics
import subprocess
import time

from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

CALL = ("get_repository", {"repository": "payments-service"})


async def timed(read, write, n):
    async with ClientSession(read, write) as session:
        await session.initialize()
        await session.list_tools()
        await session.call_tool(*CALL)  # warm-up
        out = []
        for _ in range(n):
            t = time.perf_counter()
            r = await session.call_tool(*CALL)
            out.append((time.perf_counter() - t) * 1000)
            assert not r.is_error, r
        return out


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default="target/debug/toolpick")
    ap.add_argument("--calls", type=int, default=200)
    a = ap.parse_args()
    serve = [a.binary, "mcp", "serve", "--layout", "flat", "--variant", "good"]
    params = StdioServerParameters(command=serve[0], args=serve[1:])
    async with stdio_client(params) as (r, w):
        stdio = await timed(r, w, a.calls)
    port = free_port()
    proc = subprocess.Popen(serve + ["--http", f"127.0.0.1:{port}"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                break
            except OSError:
                time.sleep(0.05)
        async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as streams:
            http = await timed(streams[0], streams[1], a.calls)
    finally:
        proc.terminate()
        proc.wait()
    for name, xs in (("stdio", stdio), ("http", http)):
        xs = sorted(xs)
        print(json.dumps({"transport": name, "calls": len(xs), "median_ms": round(statistics.median(xs), 3), "p95_ms": round(xs[int(0.95 * len(xs)) - 1], 3), "mean_ms": round(statistics.fmean(xs), 3)}))


asyncio.run(main())

"""What the MCP door costs on top of REST, for the same verb on the same server.

Starts `uvicorn config.asgi:application` as a child process (its own GIL) on a fresh DATA_DIR (or the
DATABASE_URL you export), creates a workspace, then measures from this process:

- baseline: REST calls (`GET /v1/usage`, and a charged `POST /v1/verify_email` with a malformed address, which
  is answered from the syntax check: request record, hold, charge, no network);
- the same calls as MCP `tools/call` requests (one JSON-RPC POST each, stateless, as any client sends them);
- both again with --concurrency clients at once (throughput).

Ratios are MCP / REST latency and MCP / REST throughput, measured in the same run.

    .venv/bin/python bench/mcp_overhead.py [--calls 300] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx2

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(env: dict, port: int) -> subprocess.Popen:
    proc = subprocess.Popen(
        [PY, "-m", "uvicorn", "config.asgi:application", "--host", "127.0.0.1", "--port", str(port),
         "--lifespan", "on", "--log-level", "warning", "--no-access-log"],
        cwd=ROOT, env=env,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx2.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return proc
        except httpx2.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("server did not start")


def rest_call(name: str):
    if name == "get_usage":
        return "GET", "/v1/usage", None
    return "POST", "/v1/verify_email", {"email": "not-an-address"}


def mcp_body(name: str, i: int) -> dict:
    args = {} if name == "get_usage" else {"email": "not-an-address"}
    return {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": name, "arguments": args}}


async def one(client: httpx2.AsyncClient, door: str, name: str, i: int) -> float:
    t0 = time.perf_counter()
    if door == "rest":
        method, path, body = rest_call(name)
        resp = await client.request(method, path, json=body)
        ok = resp.status_code == 200
    else:
        resp = await client.post("/mcp", json=mcp_body(name, i), headers={"MCP-Protocol-Version": "2025-06-18"})
        ok = resp.status_code == 200 and not resp.json()["result"]["isError"]
    if not ok:
        raise SystemExit(f"{door} {name} failed: {resp.status_code} {resp.text[:300]}")
    return time.perf_counter() - t0


async def run(base: str, key: str, door: str, name: str, calls: int, concurrency: int) -> tuple[float, float]:
    headers = {"Authorization": f"Bearer {key}", "Accept": "application/json, text/event-stream"}
    limits = httpx2.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx2.AsyncClient(base_url=base, headers=headers, timeout=60, limits=limits) as client:
        for i in range(5):  # warm-up
            await one(client, door, name, i)
        latencies: list[float] = []
        counter = iter(range(calls))

        async def worker():
            for i in counter:
                latencies.append(await one(client, door, name, i))

        t0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        elapsed = time.perf_counter() - t0
    return statistics.median(latencies) * 1000, calls / elapsed


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--calls", type=int, default=300)
    p.add_argument("--concurrency", type=int, default=16)
    args = p.parse_args()

    data_dir = tempfile.mkdtemp(prefix="bench-mcp-")
    env = {**os.environ, "DATA_DIR": data_dir, "RATE_LIMIT_PER_MINUTE": "100000000", "SANDBOX": "1",
           "SANDBOX_SMTP_PORT": "0", "DJANGO_SETTINGS_MODULE": "config.settings"}
    subprocess.run([PY, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    out = subprocess.run([PY, "manage.py", "create_workspace", "--email", "bench@example.com", "--credits", "100000",
                          "--scopes", "all", "--json"], cwd=ROOT, env=env, check=True, capture_output=True, text=True)
    key = json.loads(out.stdout)["api_key"]
    port = free_port()
    env["BASE_URL"] = f"http://127.0.0.1:{port}"
    server = start_server(env, port)
    base = f"http://127.0.0.1:{port}"
    db = "PostgreSQL" if os.environ.get("DATABASE_URL", "").startswith("postgres") else "SQLite"
    print(f"server: uvicorn (1 process) on {db}; {args.calls} calls per row")
    print(f"{'verb':<14}{'clients':>8}{'REST p50 ms':>13}{'MCP p50 ms':>12}{'ratio':>7}"
          f"{'REST /s':>9}{'MCP /s':>8}{'ratio':>7}")
    try:
        for name in ("get_usage", "verify_email"):
            for conc in (1, args.concurrency):
                rest_ms, rest_rps = asyncio.run(run(base, key, "rest", name, args.calls, conc))
                mcp_ms, mcp_rps = asyncio.run(run(base, key, "mcp", name, args.calls, conc))
                print(f"{name:<14}{conc:>8}{rest_ms:>13.1f}{mcp_ms:>12.1f}{mcp_ms / rest_ms:>7.2f}"
                      f"{rest_rps:>9.0f}{mcp_rps:>8.0f}{mcp_rps / rest_rps:>7.2f}")
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    main()

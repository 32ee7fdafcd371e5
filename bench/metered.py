#!/usr/bin/env python
"""The metered path against a bare endpoint and the LLM door, on one server.

    .venv/bin/python bench/metered.py [--seconds 3] [--rounds 3] [--clients 50]
    .venv/bin/python bench/metered.py --database-url postgres://postgres@127.0.0.1:5432/postgres --redis-url redis://127.0.0.1:6379/12
    .venv/bin/python bench/metered.py --root /path/to/another/checkout   # the same measurement of other code

One uvicorn process serving config.asgi (pinned to CPU 0 when the machine has two or more; this load generator
runs on CPU 1), a fresh database (SQLite in a temporary DATA_DIR, or a database `bench_metered` on the given
PostgreSQL server), the rate limit lifted, and a fake OpenAI-style upstream (bench/llm_overhead.py's) for the LLM
door. Targets, all measured in the same run:

- healthz: `GET /healthz`, a plain Django view under Django's own ASGI handler (which starts a thread for every
  request, so the API's own door can outrun it);
- verify_email: `POST /v1/verify_email` with a malformed address: the whole metered path (key, rate limit,
  request record, hold, charge, settle, envelope) with no network;
- mcp verify_email: the same verb as an MCP `tools/call`;
- llm: `POST /v1/llm/chat/completions`, non-streamed, against the fake upstream (its own ASGI entry; same
  hold/settle); its *added* latency is its time minus the upstream's own, called directly in the same run.

Phase 1: sequential calls, interleaved (p50/p99 latency). Phase 2: --clients concurrent clients for --seconds per
target, interleaved rounds (requests per second, each round's figure, the latency percentiles, and the server's CPU
per call and share of its CPU: near 100% the server is what is measured; `--only TARGET` limits phase 2). The
client is a few lines of asyncio over keep-alive HTTP/1.1 connections (`Conn`), cheap enough that one CPU drives
the server's CPU to saturation; an httpx client could not (bench/RESULTS.md, "the write gate's order").
Targets: verify_email throughput >= 0.5 of healthz; verify_email p50 <= 2x the LLM door's added p50 (non-streamed).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
sys.path.insert(0, str(ROOT))

from bench.llm_overhead import cpu_seconds, free_port, pct, wait_port  # noqa: E402


def targets(port: int, up_port: int, key: str) -> dict:
    svc = f"http://127.0.0.1:{port}"
    auth = {"Authorization": f"Bearer {key}"}
    chat = {"model": "bench/model", "messages": [{"role": "user", "content": "benchmark"}]}
    mcp = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
           "params": {"name": "verify_email", "arguments": {"email": "not-an-address"}}}
    return {
        "healthz": ("GET", f"{svc}/healthz", {}, None),
        "verify_email": ("POST", f"{svc}/v1/verify_email", auth, {"email": "not-an-address"}),
        "mcp verify_email": ("POST", f"{svc}/mcp", {**auth, "Accept": "application/json, text/event-stream",
                                                     "MCP-Protocol-Version": "2025-06-18"}, mcp),
        "llm": ("POST", f"{svc}/v1/llm/chat/completions", auth, chat),
        "upstream direct": ("POST", f"http://127.0.0.1:{up_port}/v1/chat/completions", {}, {**chat, "model": "bench"}),
    }


class Conn:
    """One keep-alive HTTP/1.1 connection that sends prepared bytes and reads the response (Content-Length or
    chunked): the load generator (see the module's docstring for why not httpx)."""

    def __init__(self, target):
        method, url, headers, body = target
        parts = urlsplit(url)
        self.host, self.port = parts.hostname, parts.port
        payload = json.dumps(body).encode() if body is not None else b""
        lines = [f"{method} {parts.path} HTTP/1.1", f"Host: {parts.netloc}", *(f"{k}: {v}" for k, v in headers.items())]
        if body is not None:
            lines += ["Content-Type: application/json", f"Content-Length: {len(payload)}"]
        self.request = ("\r\n".join(lines) + "\r\n\r\n").encode() + payload
        self.url = url
        self.reader = self.writer = None

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()

    async def call(self) -> float:
        """One request and its whole response: the time in ms (raises on anything but 200)."""
        t = time.perf_counter()
        self.writer.write(self.request)
        head = await self.reader.readuntil(b"\r\n\r\n")
        length, chunked = None, False
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"transfer-encoding" and b"chunked" in value.lower():
                chunked = True
        if chunked:
            body = b""
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
                body += await self.reader.readexactly(size + 2)
                if size == 0:
                    break
        else:
            body = await self.reader.readexactly(length or 0)
        elapsed = time.perf_counter() - t
        if not head.startswith(b"HTTP/1.1 200"):
            status = head.split(b"\r\n", 1)[0].decode()
            raise RuntimeError(f"{self.url}: {status} {body[:300]!r}")
        return elapsed * 1000


async def sequential(tmap: dict, n: int) -> dict:
    out = {name: [] for name in tmap}
    conns = {name: Conn(t) for name, t in tmap.items()}
    for conn in conns.values():
        await conn.open()
        for _ in range(20):  # warm up
            await conn.call()
    for _ in range(n):
        for name, conn in conns.items():
            out[name].append(await conn.call())
    for conn in conns.values():
        conn.close()
    return out


async def burst(target, clients: int, seconds: float) -> tuple[float, list[float]]:
    """`clients` connections, each calling in a loop for `seconds` (connections opened before the clock starts)."""
    conns = [Conn(target) for _ in range(clients)]
    await asyncio.gather(*(c.open() for c in conns))
    done: list[float] = []
    stop = time.perf_counter() + seconds

    async def worker(conn: Conn):
        while time.perf_counter() < stop:
            done.append(await conn.call())

    t = time.perf_counter()
    await asyncio.gather(*(worker(c) for c in conns))
    elapsed = time.perf_counter() - t
    for c in conns:
        c.close()
    return len(done) / elapsed, done


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=300, help="sequential calls per target")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--database-url", default="")
    ap.add_argument("--redis-url", default="")
    ap.add_argument("--root", default=str(ROOT), help="the checkout whose code the server runs")
    ap.add_argument("--only", action="append", default=[], metavar="TARGET",
                    help="measure only this target under load (repeatable; e.g. 'mcp verify_email')")
    args = ap.parse_args()
    root = Path(args.root)
    procs: list[subprocess.Popen] = []
    pin = (os.cpu_count() or 1) >= 2
    with tempfile.TemporaryDirectory(prefix="bench-metered-") as tmp:
        try:
            up_port = free_port()
            procs.append(subprocess.Popen([PY, str(ROOT / "bench" / "llm_overhead.py"), "--serve-upstream", str(up_port),
                                           "--chunks", "5", "--chunk-ms", "0"]))
            wait_port(up_port, procs[-1])
            models = Path(tmp) / "models.json"
            models.write_text(json.dumps([{"id": "bench/model", "upstream_base_url": f"http://127.0.0.1:{up_port}/v1",
                                           "upstream_model": "bench", "api_key_env": "", "credits_per_1k_tokens": "0.5"}]))
            port = free_port()
            env = {**os.environ, "DATA_DIR": tmp, "LLM_MODELS_FILE": str(models), "SANDBOX": "1",
                   "RATE_LIMIT_PER_MINUTE": "100000000", "LOG_LEVEL": "WARNING", "BASE_URL": f"http://127.0.0.1:{port}",
                   "MCP_MAX_CONCURRENT_PER_KEY": "1000"}
            env.pop("DATABASE_URL", None)
            env.pop("REDIS_URL", None)
            db = "SQLite"
            if args.database_url:
                import psycopg

                with psycopg.connect(args.database_url, autocommit=True) as conn:
                    conn.execute("DROP DATABASE IF EXISTS bench_metered")
                    conn.execute("CREATE DATABASE bench_metered")
                env["DATABASE_URL"] = args.database_url.rsplit("/", 1)[0] + "/bench_metered"
                db = "PostgreSQL"
            if args.redis_url:
                env["REDIS_URL"] = args.redis_url
                db += " + Redis"
            subprocess.run([PY, "manage.py", "migrate", "-v0"], cwd=root, env=env, check=True)
            out = subprocess.run([PY, "manage.py", "create_workspace", "--email", "bench@example.com", "--credits",
                                  "100000000", "--json"], cwd=root, env=env, check=True, capture_output=True,
                                 text=True).stdout
            key = json.loads(out.strip().splitlines()[-1])["api_key"]
            server = [PY, "-m", "uvicorn", "config.asgi:application", "--host", "127.0.0.1", "--port", str(port),
                      "--log-level", "warning", "--no-access-log", "--backlog", "4096"]
            procs.append(subprocess.Popen((["taskset", "-c", "0"] if pin else []) + server, cwd=root, env=env))
            wait_port(port, procs[-1])
            if pin:
                os.sched_setaffinity(0, {1})
            tmap = targets(port, up_port, key)
            commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True,
                                    text=True).stdout.strip()
            print(f"# metered path, {db}; code {root} at {commit}; {os.cpu_count()} CPUs (server on CPU 0, client on CPU 1: {pin}); "
                  f"load average {os.getloadavg()[0]:.2f}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
                  flush=True)
            seq = asyncio.run(sequential(tmap, args.calls))
            direct50 = pct(seq["upstream direct"], 50)
            print(f"\nsequential, n={args.calls} each, interleaved")
            for name, xs in seq.items():
                extra = f"  (added over the upstream: p50 {pct(xs, 50) - direct50:.2f} ms)" if name == "llm" else ""
                print(f"  {name:18} p50 {pct(xs, 50):7.2f} ms  p99 {pct(xs, 99):7.2f} ms{extra}")
            rps: dict[str, list[float]] = {name: [] for name in tmap if name != "upstream direct"
                                           and (not args.only or name in args.only)}
            lat: dict[str, list[float]] = {name: [] for name in rps}
            cpu: dict[str, float] = {name: 0.0 for name in rps}  # the server's CPU seconds under load
            for _ in range(args.rounds):
                for name in rps:
                    before = cpu_seconds(procs[-1].pid)
                    r, xs = asyncio.run(burst(tmap[name], args.clients, args.seconds))
                    cpu[name] += cpu_seconds(procs[-1].pid) - before
                    rps[name].append(r)
                    lat[name].extend(xs)
            print(f"\n{args.clients} clients, {args.rounds} rounds of {args.seconds:g} s, interleaved")
            for name in rps:
                best = max(rps[name])
                print(f"  {name:18} {sum(rps[name]) / len(rps[name]):8.1f} req/s (best {best:.1f})  "
                      f"p50 {pct(lat[name], 50):8.2f} ms  p99 {pct(lat[name], 99):8.2f} ms  "
                      f"server CPU {1000 * cpu[name] / max(1, len(lat[name])):.2f} ms/call, "
                      f"{100 * cpu[name] / (args.rounds * args.seconds):.0f}%  rounds "
                      + " ".join(f"{r:.0f}" for r in rps[name]))
            if args.only:
                return
            mean = {name: sum(v) / len(v) for name, v in rps.items()}
            llm_added = pct(seq["llm"], 50) - direct50
            print(f"\nratio verify_email / healthz throughput: {mean['verify_email'] / mean['healthz']:.2f} (target >= 0.5)")
            print(f"ratio mcp verify_email / healthz throughput: {mean['mcp verify_email'] / mean['healthz']:.2f}")
            print(f"ratio verify_email p50 / LLM door added p50 (non-streamed): "
                  f"{pct(seq['verify_email'], 50) / llm_added:.2f} (target <= 2)")
            print(f"load average at the end {os.getloadavg()[0]:.2f}")
        finally:
            for p in procs:
                p.terminate()
            for p in procs:
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
            if args.database_url:
                import psycopg

                with psycopg.connect(args.database_url, autocommit=True) as conn:
                    conn.execute("DROP DATABASE IF EXISTS bench_metered")


if __name__ == "__main__":
    main()

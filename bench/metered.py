#!/usr/bin/env python
"""The metered path against a bare endpoint and the LLM door, on one server.

    .venv/bin/python bench/metered.py [--seconds 3] [--rounds 3] [--clients 50]
    .venv/bin/python bench/metered.py --database-url postgres://postgres@127.0.0.1:5432/postgres --redis-url redis://127.0.0.1:6379/12
    .venv/bin/python bench/metered.py --root /path/to/another/checkout   # the same measurement of other code

One uvicorn process serving config.asgi (pinned to CPU 0 when the machine has two or more; this load generator
runs on CPU 1), a fresh database (SQLite in a temporary DATA_DIR, or a database `bench_metered` on the given
PostgreSQL server), the rate limit lifted, and a fake OpenAI-style upstream (bench/llm_overhead.py's) for the LLM
door. Targets, all measured in the same run:

- healthz: `GET /healthz`, a plain Django view (the ceiling of this server);
- verify_email: `POST /v1/verify_email` with a malformed address: the whole metered path (key, rate limit,
  request record, hold, charge, settle, envelope) with no network;
- mcp verify_email: the same verb as an MCP `tools/call`;
- llm: `POST /v1/llm/chat/completions`, non-streamed, against the fake upstream (its own ASGI entry; same
  hold/settle); its *added* latency is its time minus the upstream's own, called directly in the same run.

Phase 1: sequential calls, interleaved (p50/p99 latency). Phase 2: --clients concurrent clients for --seconds per
target, interleaved rounds (requests per second). Targets: verify_email throughput >= 0.5 of healthz;
verify_email p50 <= 2x the LLM door's added p50 (non-streamed).
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

import httpx

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
sys.path.insert(0, str(ROOT))

from bench.llm_overhead import free_port, pct, wait_port  # noqa: E402


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


async def call(http: httpx.AsyncClient, target) -> float:
    method, url, headers, body = target
    t = time.perf_counter()
    r = await http.request(method, url, headers=headers, json=body)
    elapsed = time.perf_counter() - t
    if r.status_code != 200:
        raise RuntimeError(f"{url}: HTTP {r.status_code} {r.text[:300]}")
    return elapsed * 1000


async def sequential(tmap: dict, n: int) -> dict:
    out = {name: [] for name in tmap}
    async with httpx.AsyncClient(timeout=30) as http:
        for t in tmap.values():  # warm up
            for _ in range(20):
                await call(http, t)
        for _ in range(n):
            for name, t in tmap.items():
                out[name].append(await call(http, t))
    return out


async def burst(target, clients: int, seconds: float) -> tuple[float, list[float]]:
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(timeout=60, limits=limits) as http:
        done: list[float] = []
        stop = time.perf_counter() + seconds

        async def worker():
            while time.perf_counter() < stop:
                done.append(await call(http, target))

        t = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(clients)))
        return len(done) / (time.perf_counter() - t), done


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=300, help="sequential calls per target")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--database-url", default="")
    ap.add_argument("--redis-url", default="")
    ap.add_argument("--root", default=str(ROOT), help="the checkout whose code the server runs")
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
            rps: dict[str, list[float]] = {name: [] for name in tmap if name != "upstream direct"}
            lat: dict[str, list[float]] = {name: [] for name in rps}
            for _ in range(args.rounds):
                for name in rps:
                    r, xs = asyncio.run(burst(tmap[name], args.clients, args.seconds))
                    rps[name].append(r)
                    lat[name].extend(xs)
            print(f"\n{args.clients} clients, {args.rounds} rounds of {args.seconds:g} s, interleaved")
            for name in rps:
                best = max(rps[name])
                print(f"  {name:18} {sum(rps[name]) / len(rps[name]):8.1f} req/s (best {best:.1f})  "
                      f"p50 {pct(lat[name], 50):8.2f} ms  p99 {pct(lat[name], 99):8.2f} ms")
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

#!/usr/bin/env python
"""The metered path against a bare endpoint and the LLM door, on one server.

    .venv/bin/python bench/metered.py [--seconds 3] [--rounds 3] [--clients 50]
    .venv/bin/python bench/metered.py --database-url postgres://postgres@127.0.0.1:5432/postgres --redis-url redis://127.0.0.1:6379/12
    .venv/bin/python bench/metered.py --root /path/to/another/checkout   # the same measurement of other code
    .venv/bin/python bench/metered.py --versus /path/to/before   # both codes, alternating rounds, and their ratios

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
With --versus, a second server runs another checkout's code (its own database, also on CPU 0) and each load
round is run on both back to back, alternating which goes first: the two codes are compared in the same run, round
by round (the median of the paired ratios), which a machine whose speed drifts within minutes still allows.
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


async def sequential(tmap: dict, n: int, block: int = 1) -> dict:
    """n calls to each target, one at a time, interleaved. Keys of `tmap` that are (label, name) pairs (--versus)
    are taken a label at a time for `block` rounds, the labels alternating in turn: the work a server runs after an
    answer (a settlement) then falls on its own next call, not on the other server's (both are on one CPU). A plain
    key (the upstream) is called in every label's turn, so each server's calls come in the same order."""
    out = {key: [] for key in tmap}
    conns = {key: Conn(t) for key, t in tmap.items()}
    for conn in conns.values():
        await conn.open()
        for _ in range(20):  # warm up
            await conn.call()
    labels = list(dict.fromkeys(key[0] for key in tmap if isinstance(key, tuple))) or [None]
    for start in range(0, n, block):
        for label in labels if (start // block) % 2 == 0 else labels[::-1]:
            turn = [(key, conn) for key, conn in conns.items() if not isinstance(key, tuple) or key[0] == label]
            for _ in range(min(block, n - start)):
                for key, conn in turn:
                    out[key].append(await conn.call())
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


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


class Server:
    """One uvicorn process serving `root`'s config.asgi on a fresh database of its own, and its API key."""

    def __init__(self, label: str, root: Path, tmp: Path, models: Path, args, pin: bool):
        self.label, self.root = label, root
        self.port = free_port()
        data = tmp / label
        data.mkdir()
        env = {**os.environ, "DATA_DIR": str(data), "LLM_MODELS_FILE": str(models), "SANDBOX": "1",
               "RATE_LIMIT_PER_MINUTE": "100000000", "LOG_LEVEL": "WARNING", "BASE_URL": f"http://127.0.0.1:{self.port}",
               "MCP_MAX_CONCURRENT_PER_KEY": "1000"}
        env.pop("DATABASE_URL", None)
        env.pop("REDIS_URL", None)
        self.database = ""
        self.wal = data / "db.sqlite3-wal"  # on SQLite: the write-ahead log, whose size the bench reports
        if args.database_url:
            import psycopg

            self.database = "bench_metered" + ("" if label == "main" else "_" + label)
            with psycopg.connect(args.database_url, autocommit=True) as conn:
                conn.execute(f"DROP DATABASE IF EXISTS {self.database}")
                conn.execute(f"CREATE DATABASE {self.database}")
            env["DATABASE_URL"] = args.database_url.rsplit("/", 1)[0] + "/" + self.database
        if args.redis_url:
            env["REDIS_URL"] = args.redis_url
        subprocess.run([PY, "manage.py", "migrate", "-v0"], cwd=root, env=env, check=True)
        out = subprocess.run([PY, "manage.py", "create_workspace", "--email", "bench@example.com", "--credits",
                              "100000000", "--json"], cwd=root, env=env, check=True, capture_output=True,
                             text=True).stdout
        self.key = json.loads(out.strip().splitlines()[-1])["api_key"]
        server = [PY, "-m", "uvicorn", "config.asgi:application", "--host", "127.0.0.1", "--port", str(self.port),
                  "--log-level", "warning", "--no-access-log", "--backlog", "4096"]
        self.proc = subprocess.Popen((["taskset", "-c", "0"] if pin else []) + server, cwd=root, env=env)
        wait_port(self.port, self.proc)
        self.commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True,
                                     text=True).stdout.strip()

    def stop(self, database_url: str) -> None:
        stop(self.proc)
        if self.database:
            import psycopg

            with psycopg.connect(database_url, autocommit=True) as conn:
                conn.execute(f"DROP DATABASE IF EXISTS {self.database}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=300, help="sequential calls per target")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--database-url", default="")
    ap.add_argument("--redis-url", default="")
    ap.add_argument("--root", default=str(ROOT), help="the checkout whose code the server runs")
    ap.add_argument("--versus", default="", metavar="ROOT",
                    help="another checkout, served beside --root (its own database) and measured in alternating "
                         "rounds: the ratios of --root to it")
    ap.add_argument("--only", action="append", default=[], metavar="TARGET",
                    help="measure only this target under load (repeatable; e.g. 'mcp verify_email')")
    args = ap.parse_args()
    pin = (os.cpu_count() or 1) >= 2
    servers: list[Server] = []
    upstream = None
    with tempfile.TemporaryDirectory(prefix="bench-metered-") as tmp:
        try:
            up_port = free_port()
            upstream = subprocess.Popen([PY, str(ROOT / "bench" / "llm_overhead.py"), "--serve-upstream", str(up_port),
                                         "--chunks", "5", "--chunk-ms", "0"])
            wait_port(up_port, upstream)
            models = Path(tmp) / "models.json"
            models.write_text(json.dumps([{"id": "bench/model", "upstream_base_url": f"http://127.0.0.1:{up_port}/v1",
                                           "upstream_model": "bench", "api_key_env": "", "credits_per_1k_tokens": "0.5"}]))
            roots = [("main", Path(args.root))] + ([("versus", Path(args.versus))] if args.versus else [])
            for label, root in roots:
                servers.append(Server(label, root, Path(tmp), models, args, pin))
            if pin:
                os.sched_setaffinity(0, {1})
            db = ("PostgreSQL" if args.database_url else "SQLite") + (" + Redis" if args.redis_url else "")
            code = "; ".join(f"{'versus ' if s.label == 'versus' else ''}code {s.root} at {s.commit}" for s in servers)
            print(f"# metered path, {db}; {code}; {os.cpu_count()} CPUs (server on CPU 0, client on CPU 1: {pin}); "
                  f"load average {os.getloadavg()[0]:.2f}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
                  flush=True)
            tmaps = {s.label: targets(s.port, up_port, s.key) for s in servers}
            names = [name for name in tmaps["main"] if name != "upstream direct"]
            combined = {(s.label, name): tmaps[s.label][name] for name in names for s in servers}
            combined["upstream direct"] = tmaps["main"]["upstream direct"]
            seq = asyncio.run(sequential(combined, args.calls, block=25 if args.versus else 1))
            direct50 = pct(seq["upstream direct"], 50)
            print(f"\nsequential, n={args.calls} each, interleaved")
            for key, xs in seq.items():
                if key == "upstream direct":
                    print(f"  {key:27} p50 {pct(xs, 50):7.2f} ms  p99 {pct(xs, 99):7.2f} ms")
                    continue
                label, name = key
                extra = f"  (added over the upstream: p50 {pct(xs, 50) - direct50:.2f} ms)" if name == "llm" else ""
                print(f"  {name:18} {label:8} p50 {pct(xs, 50):7.2f} ms  p99 {pct(xs, 99):7.2f} ms{extra}")
            loaded = [name for name in names if (not args.only or name in args.only) and args.rounds > 0]
            rps = {(s.label, name): [] for name in loaded for s in servers}
            lat: dict = {key: [] for key in rps}
            cpu: dict = {key: 0.0 for key in rps}  # the server's CPU seconds under load
            for round_ in range(args.rounds):
                for name in loaded:
                    # alternate which server goes first, so a drift of the machine's speed falls on both
                    for s in (servers if round_ % 2 == 0 else servers[::-1]):
                        before = cpu_seconds(s.proc.pid)
                        r, xs = asyncio.run(burst(tmaps[s.label][name], args.clients, args.seconds))
                        cpu[(s.label, name)] += cpu_seconds(s.proc.pid) - before
                        rps[(s.label, name)].append(r)
                        lat[(s.label, name)].extend(xs)
            print(f"\n{args.clients} clients, {args.rounds} rounds of {args.seconds:g} s, interleaved")
            def cpu_per_call(key) -> float:  # ms
                return 1000 * cpu[key] / max(1, len(lat[key]))

            for key, rounds in rps.items():
                label, name = key
                print(f"  {name:18} {label:8} {sum(rounds) / len(rounds):8.1f} req/s (best {max(rounds):.1f})  "
                      f"p50 {pct(lat[key], 50):8.2f} ms  p99 {pct(lat[key], 99):8.2f} ms  "
                      f"server CPU {cpu_per_call(key):.2f} ms/call, "
                      f"{100 * cpu[key] / (args.rounds * args.seconds):.0f}%  rounds "
                      + " ".join(f"{r:.0f}" for r in rounds))
            if not args.database_url:
                print("  SQLite write-ahead log at the end: " + ", ".join(
                    f"{s.label} {s.wal.stat().st_size / 1e6:.1f} MB" for s in servers if s.wal.exists()))
            if args.versus:
                print(f"\n{args.root} / {args.versus}, round by round (each pair measured back to back)")
                for name in loaded:
                    ratios = sorted(a / b for a, b in zip(rps[("main", name)], rps[("versus", name)], strict=True))
                    print(f"  {name:18} throughput x{pct(ratios, 50):.3f} (median; rounds {ratios[0]:.3f}-{ratios[-1]:.3f})"
                          f"  server CPU per call x{cpu_per_call(('main', name)) / cpu_per_call(('versus', name)):.3f}")
                for name in names:
                    a, b = seq[("main", name)], seq[("versus", name)]
                    print(f"  {name:18} sequential p50 x{pct(a, 50) / pct(b, 50):.3f}")
            if args.only or args.versus or not loaded:
                return
            mean = {name: sum(v) / len(v) for (_, name), v in rps.items()}
            llm_added = pct(seq[("main", "llm")], 50) - direct50
            print(f"\nratio verify_email / healthz throughput: {mean['verify_email'] / mean['healthz']:.2f} (target >= 0.5)")
            print(f"ratio mcp verify_email / healthz throughput: {mean['mcp verify_email'] / mean['healthz']:.2f}")
            print(f"ratio verify_email p50 / LLM door added p50 (non-streamed): "
                  f"{pct(seq[('main', 'verify_email')], 50) / llm_added:.2f} (target <= 2)")
            print(f"load average at the end {os.getloadavg()[0]:.2f}")
        finally:
            for s in servers:
                s.stop(args.database_url)
            if upstream is not None:
                stop(upstream)


if __name__ == "__main__":
    main()

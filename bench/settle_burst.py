#!/usr/bin/env python
"""Settlements after the answer under a burst, and what a kill mid-burst loses.

    .venv/bin/python bench/settle_burst.py [--calls 300] [--clients 100]
    .venv/bin/python bench/settle_burst.py --database-url postgres://postgres@127.0.0.1:5432/postgres --redis-url redis://127.0.0.1:6379/12
    .venv/bin/python bench/settle_burst.py --root /path/to/another/checkout   # the same measurement of other code
    .venv/bin/python bench/settle_burst.py --pin   # the server on the last CPU, this client on the others

One uvicorn process serving config.asgi on a fresh database (SQLite in a temporary DATA_DIR, or a database
`bench_settle` on the given PostgreSQL server), the rate limit lifted. The metered verb is `POST /v1/verify_email`
with a malformed address (key, rate limit, request record, hold, charge, settle, envelope; no network), answered
before its settlement (SETTLE_AFTER_RESPONSE, the default).

Phase 1, burst: --calls calls sent at once from --clients connections. Per call: hold-to-settle (the request
record's completed_at minus its created_at: admission, hold, run, answer, settlement), and the most calls held but
not yet settled at any one instant (a sweep over those intervals, server clock only: calls running on an API thread,
at most API_THREADS, plus calls answered and waiting for their settlement). Also from the client's side:
answer-to-settle (completed_at minus the moment the client read its answer; negative when the loaded client reads
its answers after they were settled) and the most calls the client had read but not yet settled at once.

Phase 2, kill: another burst; the server is killed (SIGKILL) once the client has read --kill-after answers (a
loaded client reads its answers late, so the server is further on than that by then). Counted: calls
answered 200 whose request record is still `in_progress` (their settlement was lost with the process; the expiry
sweep later closes them `failed`, charged 0).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
sys.path.insert(0, str(ROOT))

from bench.llm_overhead import free_port, pct, wait_port  # noqa: E402

DUMP = """
import json
from billing.models import RequestRecord
rows = RequestRecord.objects.filter(verb="verify_email").values_list("id", "status", "created_at", "completed_at")
print(json.dumps([[i, s, c.timestamp(), d.timestamp() if d else None] for i, s, c, d in rows]))
"""


def records(root: Path, env: dict) -> dict[str, tuple[str, float, float | None]]:
    out = subprocess.run([PY, "manage.py", "shell", "-c", DUMP], cwd=root, env=env, check=True, capture_output=True,
                         text=True).stdout
    return {i: (s, c, d) for i, s, c, d in json.loads(out.strip().splitlines()[-1])}


async def fire(port: int, key: str, calls: int, clients: int, answered: list, on_answer=None,
               others: list | None = None) -> None:
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    url = f"http://127.0.0.1:{port}/v1/verify_email"
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(timeout=120, limits=limits) as http:
        async def one():
            try:
                r = await http.post(url, json={"email": "not-an-address"}, headers=headers)
            except httpx.HTTPError as exc:
                if others is not None:  # (in the kill phase: the server was killed)
                    others.append(repr(exc))
                return
            if r.status_code == 200:
                answered.append((r.json()["service"]["request_id"], time.time()))
                if on_answer:
                    on_answer()
            elif others is not None:
                others.append(f"{r.status_code} {r.text[:300]}")

        await asyncio.gather(*(one() for _ in range(calls)))


def most_unsettled_at_once(intervals: list[tuple[float, float]]) -> int:
    events = sorted([(a, 1) for a, b in intervals if b > a] + [(b, -1) for a, b in intervals if b > a])
    most = now = 0
    for _, step in events:
        now += step
        most = max(most, now)
    return most


def start_server(root: Path, env: dict, port: int, cpu: int | None = None) -> subprocess.Popen:
    server = ([] if cpu is None else ["taskset", "-c", str(cpu)]) + [PY, "-m", "uvicorn", "config.asgi:application", "--host", "127.0.0.1", "--port", str(port),
              "--log-level", "warning", "--no-access-log", "--backlog", "4096"]
    proc = subprocess.Popen(server, cwd=root, env=env)
    wait_port(port, proc)
    return proc


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--clients", type=int, default=100)
    ap.add_argument("--database-url", default="")
    ap.add_argument("--redis-url", default="")
    ap.add_argument("--kill-after", type=int, default=10, help="answers the client has read when the server is killed")
    ap.add_argument("--root", default=str(ROOT), help="the checkout whose code the server runs")
    ap.add_argument("--pin", action="store_true",
                    help="the server on the last CPU and this client on the others, as a client elsewhere would be "
                         "(the database server is not pinned)")
    args = ap.parse_args()
    cpus = sorted(os.sched_getaffinity(0))
    server_cpu = cpus[-1] if args.pin and len(cpus) > 1 else None
    root = Path(args.root)
    with tempfile.TemporaryDirectory(prefix="bench-settle-") as tmp:
        env = {**os.environ, "DATA_DIR": tmp, "SANDBOX": "1", "RATE_LIMIT_PER_MINUTE": "100000000",
               "LOG_LEVEL": "ERROR", "SETTLE_AFTER_RESPONSE": "1"}
        env.pop("DATABASE_URL", None)
        env.pop("REDIS_URL", None)
        db = "SQLite"
        if args.database_url:
            import psycopg

            with psycopg.connect(args.database_url, autocommit=True) as conn:
                conn.execute("DROP DATABASE IF EXISTS bench_settle")
                conn.execute("CREATE DATABASE bench_settle")
            env["DATABASE_URL"] = args.database_url.rsplit("/", 1)[0] + "/bench_settle"
            db = "PostgreSQL"
        if args.redis_url:
            env["REDIS_URL"] = args.redis_url
            db += " + Redis"
        proc = None
        try:
            subprocess.run([PY, "manage.py", "migrate", "-v0"], cwd=root, env=env, check=True)
            out = subprocess.run([PY, "manage.py", "create_workspace", "--email", "bench@example.com", "--credits",
                                  "100000000", "--json"], cwd=root, env=env, check=True, capture_output=True,
                                 text=True).stdout
            key = json.loads(out.strip().splitlines()[-1])["api_key"]
            commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True,
                                    text=True).stdout.strip()
            pinned = f" (server pinned to CPU {server_cpu})" if server_cpu is not None else ""
            print(f"# settlements under a burst, {db}; code {root} at {commit}; {os.cpu_count()} CPUs{pinned}; load average "
                  f"{os.getloadavg()[0]:.2f}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}", flush=True)

            # phase 1: the burst
            port = free_port()
            env["BASE_URL"] = f"http://127.0.0.1:{port}"
            proc = start_server(root, env, port, server_cpu)
            if server_cpu is not None:
                os.sched_setaffinity(0, set(cpus[:-1]))
            asyncio.run(fire(port, key, 20, 10, []))  # warm up
            warm = set(records(root, env))
            answered: list = []
            others: list = []
            asyncio.run(fire(port, key, args.calls, args.clients, answered, others=others))
            deadline = time.monotonic() + 60
            while True:
                rows = records(root, env)
                if all(rows[rid][2] is not None for rid, _ in answered) or time.monotonic() > deadline:
                    break
                time.sleep(0.5)
            unread = [rows[rid][0] for rid in set(rows) - {rid for rid, _ in answered} - warm]
            if unread:  # calls the server recorded whose answer the client never read (a dropped connection)
                print(f"  recorded calls the client read no answer for: {len(unread)} ({', '.join(sorted(unread))})")
            hold_to_settle = [(rows[rid][2] - rows[rid][1]) * 1000 for rid, _ in answered if rows[rid][2]]
            answer_to_settle = [(rows[rid][2] - at) * 1000 for rid, at in answered if rows[rid][2]]
            most = most_unsettled_at_once([(at, rows[rid][2] or at) for rid, at in answered])
            held = most_unsettled_at_once([(rows[rid][1], rows[rid][2] or rows[rid][1]) for rid, _ in answered])
            print(f"\nburst: {args.calls} calls from {args.clients} connections, {len(answered)} answered 200")
            for other in others:
                print(f"  not 200: {other}")
            print(f"  hold-to-settle    p50 {pct(hold_to_settle, 50):8.2f} ms  p99 {pct(hold_to_settle, 99):8.2f} ms  "
                  f"max {max(hold_to_settle):8.2f} ms")
            print(f"  answer-to-settle  p50 {pct(answer_to_settle, 50):8.2f} ms  p99 {pct(answer_to_settle, 99):8.2f} ms"
                  f"  max {max(answer_to_settle):8.2f} ms")
            print(f"  most calls held but not yet settled at one instant (server clock): {held}")
            print(f"  most calls read by the client but not yet settled at one instant: {most}")

            # phase 2: the kill
            answered2: list = []
            half = args.kill_after

            def kill_at_half():
                if len(answered2) == half and proc.poll() is None:
                    os.kill(proc.pid, signal.SIGKILL)

            asyncio.run(fire(port, key, args.calls, args.clients, answered2, kill_at_half))
            proc.wait(30)
            rows = records(root, env)
            lost = [rid for rid, _ in answered2 if rows.get(rid, ("missing",))[0] == "in_progress"]
            print(f"\nkill: SIGKILL once the client had read {half} of {args.calls} answers; {len(answered2)} answered "
                  f"200 in all; answered but unsettled at the kill: {len(lost)}")
            print(f"load average at the end {os.getloadavg()[0]:.2f}; {datetime.now().astimezone():%Y-%m-%d %H:%M %Z}")
        finally:
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait(10)
            if args.database_url:
                import psycopg

                with psycopg.connect(args.database_url, autocommit=True) as conn:
                    conn.execute("DROP DATABASE IF EXISTS bench_settle")


if __name__ == "__main__":
    main()

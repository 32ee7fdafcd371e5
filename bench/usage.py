#!/usr/bin/env python
"""GET /v1/usage at 100 and at 1,000,000 request records: the same latency, because it reads the per-day
rollups (billing.UsageDaily), never the request log.

    .venv/bin/python bench/usage.py                       # SQLite (a fresh DATA_DIR), 1,000,000 records
    .venv/bin/python bench/usage.py --database-url postgres://postgres@127.0.0.1:5432/postgres --redis-url redis://127.0.0.1:6379/12
    .venv/bin/python bench/usage.py --records 200000 --calls 200

One server process (uvicorn config.asgi, rate limit lifted) on a fresh database (PostgreSQL: a database
`bench_usage`, dropped and re-created). Two workspaces: `small` with 100 request records, `big` with --records,
spread over the last 60 days and eight verbs, written by one INSERT ... SELECT (on SQLite the rollup trigger fires
for every record, as in production; on PostgreSQL the fill turns the insert trigger off and adds the records'
aggregate to the rollups in the same transaction, as the migration's backfill does). The rollups are checked against a full aggregate of the records, then this
process calls GET /v1/usage for the two workspaces alternately (sequential, --calls each), and then with 16
clients at once. Ratio = big / small, same run.
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

from bench.mcp_overhead import free_port, start_server  # noqa: E402

VERBS = ["find_leads", "enrich", "verify_email", "find_intent", "llm_chat", "get_replies", "create_campaign", "usage"]


def fill(workspace_id: str, records: int) -> None:
    """Runs in a child process with the server's environment: `records` request records for one workspace."""
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    from django.db import connection, transaction

    from billing.models import RequestRecord

    table = RequestRecord._meta.db_table
    verbs = "ARRAY[" + ",".join(f"'{v}'" for v in VERBS) + "]"
    with transaction.atomic(), connection.cursor() as cur:
        if connection.vendor == "postgresql":
            # The per-row trigger would update the same ~480 rollup rows a million times (over 10 minutes of
            # dead row versions): the fill writes the records with it off and adds their aggregate to the rollups
            # in the same transaction, as the migration's backfill does; the check below proves them equal.
            cur.execute(f"ALTER TABLE {table} DISABLE TRIGGER billing_usage_daily_ins")
            cur.execute(
                f"INSERT INTO {table} (id, workspace_id, verb, channel, status, http_status, credits_charged_micros, "
                f"created_at, completed_at) "
                f"SELECT 'req_bench_' || %s || '_' || g, %s, ({verbs})[1 + g %% {len(VERBS)}], 'rest', 'succeeded', 200, "
                f"(g %% 7) * 1000, now() - (g %% 60) * interval '1 day' - (g %% 977) * interval '1 second', now() "
                f"FROM generate_series(1, %s) g", [workspace_id[:8], workspace_id, records])
            cur.execute(
                f"INSERT INTO billing_usagedaily (workspace_id, verb, day, calls, charged_micros) "
                f"SELECT workspace_id, verb, (created_at AT TIME ZONE 'UTC')::date, count(*), sum(credits_charged_micros) "
                f"FROM {table} WHERE workspace_id = %s AND id LIKE 'req_bench_%%' GROUP BY 1, 2, 3 "
                f"ON CONFLICT (workspace_id, verb, day) DO UPDATE SET calls = billing_usagedaily.calls + EXCLUDED.calls, "
                f"charged_micros = billing_usagedaily.charged_micros + EXCLUDED.charged_micros", [workspace_id])
            cur.execute("SET CONSTRAINTS ALL IMMEDIATE")  # the deferred foreign-key checks run now, not at COMMIT
            cur.execute(f"ALTER TABLE {table} ENABLE TRIGGER billing_usage_daily_ins")
        else:
            case = " ".join(f"WHEN {i} THEN '{v}'" for i, v in enumerate(VERBS))
            cur.execute(
                f"WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < %s) "
                f"INSERT INTO {table} (id, workspace_id, verb, channel, status, http_status, credits_charged_micros, "
                f"created_at, completed_at) "
                f"SELECT 'req_bench_' || %s || '_' || n, %s, CASE n % {len(VERBS)} {case} END, 'rest', 'succeeded', 200, "
                f"(n % 7) * 1000, strftime('%%Y-%%m-%%d %%H:%%M:%%f', 'now', '-' || (n % 60) || ' days', "
                f"'-' || (n % 977) || ' seconds'), strftime('%%Y-%%m-%%d %%H:%%M:%%f', 'now') FROM g",
                [records, workspace_id.replace("-", "")[:8], workspace_id.replace("-", "")])
    # the rollup must equal the records' own aggregate
    from django.db.models import Count, Sum
    from django.db.models.functions import TruncDate

    from billing.models import UsageDaily

    direct = {(r["verb"], r["d"]): (r["c"], r["s"]) for r in RequestRecord.objects.filter(workspace_id=workspace_id)
              .annotate(d=TruncDate("created_at")).values("verb", "d").annotate(c=Count("id"), s=Sum("credits_charged_micros"))}
    rolled = {(r.verb, r.day): (r.calls, r.charged_micros) for r in UsageDaily.objects.filter(workspace_id=workspace_id)
              if r.calls}
    assert direct == rolled, "the rollups differ from the records"
    print(f"  {records:,} records, {len(rolled)} rollup rows, rollups equal the records' aggregate", flush=True)


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(p / 100 * len(xs) + 0.5) - 1))]


async def burst(url: str, key: str, n: int, clients: int) -> float:
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=60) as http:
        sem = asyncio.Semaphore(clients)

        async def one():
            async with sem:
                r = await http.get(url)
                assert r.status_code == 200, r.text

        t = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(n)))
        return n / (time.perf_counter() - t)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--database-url", default="", help="a PostgreSQL server (any database; bench_usage is created)")
    ap.add_argument("--redis-url", default="")
    ap.add_argument("--fill", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.fill:
        fill(args.fill[0], int(args.fill[1]))
        return
    with tempfile.TemporaryDirectory(prefix="bench-usage-") as tmp:
        env = {**os.environ, "DATA_DIR": tmp, "SANDBOX": "1", "RATE_LIMIT_PER_MINUTE": "100000000",
               "LOG_LEVEL": "WARNING"}
        env.pop("DATABASE_URL", None)
        env.pop("REDIS_URL", None)
        db = "SQLite"
        if args.database_url:
            import psycopg

            with psycopg.connect(args.database_url, autocommit=True) as conn:
                conn.execute("DROP DATABASE IF EXISTS bench_usage")
                conn.execute("CREATE DATABASE bench_usage")
            env["DATABASE_URL"] = args.database_url.rsplit("/", 1)[0] + "/bench_usage"
            db = "PostgreSQL"
        if args.redis_url:
            env["REDIS_URL"] = args.redis_url
            db += " + Redis"
        try:
            subprocess.run([PY, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
            keys, ids = {}, {}
            for name in ("small", "big"):
                out = subprocess.run([PY, "manage.py", "create_workspace", "--email", f"{name}@example.com", "--json"],
                                     cwd=ROOT, env=env, check=True, capture_output=True, text=True).stdout
                info = json.loads(out.strip().splitlines()[-1])
                keys[name], ids[name] = info["api_key"], info["workspace_id"]
            print(f"# GET /v1/usage, {db}; {os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.2f}; "
                  f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}", flush=True)
            for name, n in (("small", 100), ("big", args.records)):
                t = time.perf_counter()
                subprocess.run([PY, __file__, "--fill", ids[name], str(n)], cwd=ROOT, env=env, check=True)
                print(f"  {name}: filled in {time.perf_counter() - t:.1f} s", flush=True)
            port = free_port()
            server = start_server(env, port)
            try:
                url = f"http://127.0.0.1:{port}/v1/usage"
                times = {"small": [], "big": []}
                with httpx.Client(timeout=60) as http:
                    heads = {name: {"Authorization": f"Bearer {key}"} for name, key in keys.items()}
                    for name in keys:  # warm up
                        for _ in range(10):
                            assert http.get(url, headers=heads[name]).status_code == 200
                    for _ in range(args.calls):
                        for name in ("small", "big"):
                            t = time.perf_counter()
                            r = http.get(url, headers=heads[name])
                            times[name].append((time.perf_counter() - t) * 1000)
                            assert r.status_code == 200, r.text
                rps = {name: asyncio.run(burst(url, keys[name], args.calls * 2, 16)) for name in ("small", "big")}
                for name, n in (("small", 100), ("big", args.records)):
                    xs = times[name]
                    print(f"  {name:5} {n:>9,} records: p50 {pct(xs, 50):6.2f} ms  p99 {pct(xs, 99):6.2f} ms  "
                          f"16 clients {rps[name]:7.1f} req/s", flush=True)
                print(f"  ratio big/small: p50 {pct(times['big'], 50) / pct(times['small'], 50):.2f}  "
                      f"p99 {pct(times['big'], 99) / pct(times['small'], 99):.2f}  "
                      f"throughput {rps['big'] / rps['small']:.2f}", flush=True)
            finally:
                server.terminate()
                server.wait(10)
        finally:
            if args.database_url:
                import psycopg

                with psycopg.connect(args.database_url, autocommit=True) as conn:
                    conn.execute("DROP DATABASE IF EXISTS bench_usage")


if __name__ == "__main__":
    main()

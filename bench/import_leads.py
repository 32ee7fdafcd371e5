#!/usr/bin/env python
"""import_leads at scale: a million-row CSV into a fresh database, then the same file again (every row
an update), then find_leads p95 on what was imported.

    .venv/bin/python bench/import_leads.py                         # 1,000,000 rows, PostgreSQL
    .venv/bin/python bench/import_leads.py --rows 200000 --db sqlite
    .venv/bin/python bench/import_leads.py --db both --skip-baseline

The CSV is generated into a temporary directory (never committed) from the same synthetic population as
bench/find_leads.py, so that benchmark's five query shapes apply. Each database is built from scratch (PostgreSQL:
a database `bench_import_leads`, dropped and re-created; SQLite: a temporary file) with the project's migrations.
Baseline, same run, fresh database: the same rows written by one COPY (PostgreSQL) or one executemany (SQLite)
straight into the indexed people table: no validation, no staging, no upsert, no companies; the least database
work a loader can do without the index rebuild. Targets: 1,000,000 rows in at most 60 s on PostgreSQL; find_leads
p95 at most 20 ms on PostgreSQL.
"""

import argparse
import csv
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.find_leads import COLUMNS, SHAPES, generate  # noqa: E402


def write_csv(path: Path, n: int) -> None:
    from leads.importer import LEAD_COLUMNS

    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(LEAD_COLUMNS)
        for r in generate(n):
            row = dict(zip(COLUMNS, r, strict=True))
            w.writerow([row["first_name"], row["last_name"], row["full_name"], row["title"], row["company_name"],
                        row["company_domain"], row["industry_key"].title(), row["headcount"], row["city"],
                        row["region"], row["country"], row["social_url"], "", "", "", ""])


def child(db: str, csv_path: str, repeat: int, baseline: bool) -> None:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    from django.core.management import call_command
    from django.db import connection, transaction
    from django.utils import timezone

    from leads.models import Person
    from leads.providers.base import SearchQuery
    from leads.providers.local import LocalSearch

    rows = sum(1 for _ in open(csv_path)) - 1
    results = {}
    if baseline:
        call_command("migrate", "leads", verbosity=0, skip_checks=True)
        now = timezone.now()
        cols = COLUMNS + ["updated_at"]
        t = time.perf_counter()
        with transaction.atomic(), connection.cursor() as cur:
            if db == "postgres":
                with cur.cursor.copy(f"COPY leads_person ({','.join(cols)}) FROM STDIN") as copy:
                    for r in generate(rows):
                        copy.write_row((*r, now))
            else:
                sql = f"INSERT INTO leads_person ({','.join(cols)}) VALUES ({','.join(['%s'] * len(cols))})"
                batch = []
                for r in generate(rows):
                    batch.append((*r, now))
                    if len(batch) == 20000:
                        cur.executemany(sql, batch)
                        batch = []
                cur.executemany(sql, batch)
        results["baseline"] = time.perf_counter() - t
        print(f"[{db}] baseline: {rows:,} rows by one bulk write into the indexed table: {results['baseline']:.1f} s",
              flush=True)
        with connection.cursor() as cur:
            cur.execute("DELETE FROM leads_person")
        call_command("migrate", "leads", "zero", verbosity=0, skip_checks=True)
    call_command("migrate", verbosity=0, skip_checks=True)
    env = dict(os.environ)
    for label in ("import (fresh)", "re-import (all updates)"):
        t = time.perf_counter()
        out = subprocess.run([sys.executable, "manage.py", "import_leads", csv_path, "--no-progress"], cwd=ROOT,
                             env=env, check=True, capture_output=True, text=True).stdout.strip()
        results[label] = time.perf_counter() - t
        print(f"[{db}] {label}: {results[label]:.1f} s wall ({rows / results[label]:,.0f} rows/s), "
              f"the command says: {out}", flush=True)
    assert Person.objects.count() == rows
    if "baseline" in results:
        print(f"[{db}] ratio import / baseline: {results['import (fresh)'] / results['baseline']:.2f}", flush=True)

    provider = LocalSearch()
    print(f"\n[{db}] find_leads on the imported {rows:,} leads, limit 25, page + total_found, n={repeat}")
    worst = 0.0
    for name, spec in SHAPES.items():
        query = SearchQuery(limit=25, **spec)
        provider.search(query)
        times = []
        for _ in range(repeat):
            t = time.perf_counter()
            page = provider.search(query)
            times.append((time.perf_counter() - t) * 1000)
        times.sort()
        p50, p95 = times[len(times) // 2], times[min(len(times) - 1, round(0.95 * len(times) + 0.5) - 1)]
        worst = max(worst, p95)
        print(f"  {name:34} {page.total_found:>9,} matches  p50 {p50:6.2f} ms  p95 {p95:6.2f} ms")
    target = 20 if db == "postgres" else 50
    print(f"[{db}] worst p95 {worst:.2f} ms, target {target} ms: {'OK' if worst <= target else 'MISSED'}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--db", choices=["sqlite", "postgres", "both"], default="postgres")
    ap.add_argument("--pg-url", default=os.environ.get("BENCH_PG_URL", "postgres://postgres@127.0.0.1:5432/postgres"),
                    help="a PostgreSQL server (any database); the bench creates and drops bench_import_leads")
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("--skip-baseline", action="store_true")
    ap.add_argument("--child", choices=["sqlite", "postgres"], help=argparse.SUPPRESS)
    ap.add_argument("--csv", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.csv, args.repeat, not args.skip_baseline)
        return
    with tempfile.TemporaryDirectory(prefix="bench-import-leads-") as tmp:
        csv_path = Path(tmp) / "leads.csv"
        t = time.perf_counter()
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
        import django

        django.setup()
        write_csv(csv_path, args.rows)
        print(f"generated {args.rows:,} rows ({csv_path.stat().st_size / 1e6:.0f} MB) in {time.perf_counter() - t:.1f} s; "
              f"{os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.2f}; "
              f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}", flush=True)
        for db in (["sqlite", "postgres"] if args.db == "both" else [args.db]):
            env = dict(os.environ)
            env.pop("REDIS_URL", None)
            env["DATA_DIR"] = tmp
            if db == "sqlite":
                env["DATABASE_URL"] = f"sqlite:///{tmp}/bench.sqlite3"
            else:
                import psycopg

                with psycopg.connect(args.pg_url, autocommit=True) as conn:
                    conn.execute("DROP DATABASE IF EXISTS bench_import_leads")
                    conn.execute("CREATE DATABASE bench_import_leads")
                env["DATABASE_URL"] = args.pg_url.rsplit("/", 1)[0] + "/bench_import_leads"
            cmd = [sys.executable, __file__, "--child", db, "--csv", str(csv_path), "--repeat", str(args.repeat)]
            if args.skip_baseline:
                cmd.append("--skip-baseline")
            try:
                subprocess.run(cmd, env=env, check=True, cwd=ROOT)
            finally:
                if db == "postgres":
                    import psycopg

                    with psycopg.connect(args.pg_url, autocommit=True) as conn:
                        conn.execute("DROP DATABASE IF EXISTS bench_import_leads")
            if db == "sqlite":
                Path(f"{tmp}/bench.sqlite3").unlink(missing_ok=True)
        print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python
"""find_leads latency on a large local dataset: p50/p95 of five query shapes, indexed vs sequential scan.

    .venv/bin/python bench/find_leads.py                       # 1,000,000 leads, SQLite and PostgreSQL
    .venv/bin/python bench/find_leads.py --rows 100000 --db sqlite
    .venv/bin/python bench/find_leads.py --pg-url postgres://postgres@127.0.0.1:5432/postgres

Each database is built from scratch (SQLite: a temporary file; PostgreSQL: a database `bench_find_leads`, dropped
and re-created), migrated with the project's migrations, filled with synthetic leads, analysed, and then queried
through the `local` provider exactly as the verb does it (page + total_found). The baseline runs the same
queries with indexes disabled (PostgreSQL: enable_indexscan/bitmapscan/indexonlyscan off; SQLite: NOT INDEXED)
in the same run. Targets: p95 <= 20 ms on PostgreSQL, <= 50 ms on SQLite.
"""

import argparse
import itertools
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SENIORITY = ["", "Senior ", "Junior ", "Lead ", "Head of ", "VP ", "Director of ", "Chief ", "Principal ", "Associate "]
FUNCTION = ["Sales", "Marketing", "Engineering", "Finance", "Operations", "Product", "Design", "People", "Legal",
            "Customer Success", "Data", "Security", "Procurement", "IT", "Growth", "Partnerships", "Research",
            "Support", "Revenue Operations", "Business Development"]
SUFFIX = ["", " Manager", " Specialist", " Analyst", " Engineer", " Representative", " Consultant", " Coordinator"]
INDUSTRIES = [f"Industry {i:03d}" for i in range(140)] + ["Computer Software", "Financial Services", "Internet",
                                                          "Hospital & Health Care", "Logistics and Supply Chain"]
COUNTRIES = [f"Country {i:02d}" for i in range(45)] + ["United States", "United Kingdom", "Germany", "France", "Canada"]
HEADCOUNTS = [1, 5, 10, 25, 50, 80, 120, 200, 350, 500, 800, 1200, 2500, 5000, 10000, 50000]

SHAPES = {
    "title contains (1 term)": dict(titles=["head of sales"]),
    "industry + country": dict(industries=["computer software"], locations=["germany"]),
    "titles x2 + country + headcount": dict(titles=["vp sales", "director of sales"], locations=["united states"],
                                             headcount_min=50, headcount_max=500),
    "city": dict(locations=["city 0042"]),
    "industry + headcount + title": dict(industries=["internet"], headcount_min=1000, titles=["engineer"]),
}


def generate(n, seed=7):
    rnd = random.Random(seed)
    countries_w = [1.0] * 45 + [12, 5, 4, 3, 2]
    companies = []
    for _c in range(n // 20 + 1):  # about 20 people per company
        city = f"City {rnd.randrange(600):04d}"
        companies.append((rnd.choices(COUNTRIES, weights=countries_w)[0], city, f"Region {city[-2:]}",
                          INDUSTRIES[rnd.randrange(len(INDUSTRIES))], HEADCOUNTS[rnd.randrange(len(HEADCOUNTS))]))
    for i in range(n):
        c = rnd.randrange(len(companies))
        country, city, region, industry, headcount = companies[c]
        title = (SENIORITY[rnd.randrange(len(SENIORITY))] + FUNCTION[rnd.randrange(len(FUNCTION))]
                 + SUFFIX[rnd.randrange(len(SUFFIX))])
        yield (f"fp1:{i:024x}", "Person", f"N{i}", f"Person N{i}", title, f"Company {c}", f"c{c}.example",
               city, region, country, f"https://linkedin.example/in/p{i}", "", "", None, "",
               title.lower(), industry.lower(), city.lower(), region.lower(), country.lower(),
               headcount, f"person n{i}", f"linkedin.example/in/p{i}", "")


COLUMNS = ["fingerprint", "first_name", "last_name", "full_name", "title", "company_name", "company_domain", "city",
           "region", "country", "social_url", "work_email", "work_email_status", "work_email_verified_at",
           "mobile_phone", "title_key", "industry_key", "city_key", "region_key", "country_key", "headcount",
           "name_key", "social_key", "email_key"]


def measure_import(db, n):
    """import_leads on a CSV of n rows (bulk upserts) against a per-row update_or_create baseline, same run."""
    import csv
    import io

    from django.core.management import call_command

    from leads.importer import LEAD_COLUMNS, clean_lead
    from leads.models import Company, Person

    rnd = random.Random(11)
    path = Path(os.environ["DATA_DIR"]) / "import.csv"
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(LEAD_COLUMNS)
        for i in range(n):
            c = rnd.randrange(n // 20 + 1)
            w.writerow([f"First{i}", f"Last{i}", "", rnd.choice(FUNCTION) + " Manager", f"Company {c}",
                        f"imp{c}.example", rnd.choice(INDUSTRIES), rnd.choice(HEADCOUNTS), f"City {c % 600}",
                        "", rnd.choice(COUNTRIES), "", f"first{i}@imp{c}.example", "valid", "2026-01-01", ""])
    t = time.perf_counter()
    call_command("import_leads", str(path), "--no-progress", stdout=io.StringIO(), stderr=io.StringIO())
    bulk_s = time.perf_counter() - t
    t = time.perf_counter()
    call_command("import_leads", str(path), "--no-progress", stdout=io.StringIO(), stderr=io.StringIO())
    again_s = time.perf_counter() - t
    sample = min(n, 2000)
    with open(path, newline="") as fh:
        rows = [clean_lead(r) for r in itertools.islice(csv.DictReader(fh), sample)]
    t = time.perf_counter()
    for d in rows:  # the naive way: one upsert per row
        company, _ = Company.objects.update_or_create(domain=d["company_domain"], defaults={"name": d["company_name"]})
        Person.objects.update_or_create(fingerprint=d["fingerprint"], defaults={
            "full_name": d["full_name"], "title": d["title"], "company": company, "title_key": d["title"].lower()})
    naive_s = time.perf_counter() - t
    Person.objects.all().delete()
    Company.objects.all().delete()
    bulk_rate, naive_rate = n / bulk_s, sample / naive_s
    print(f"[{db}] import_leads {n:,} CSV rows: {bulk_s:.1f}s ({bulk_rate:,.0f} rows/s); re-import (all updates) "
          f"{again_s:.1f}s; per-row update_or_create baseline {naive_rate:,.0f} rows/s on {sample:,} rows: "
          f"{bulk_rate / naive_rate:.1f}x", flush=True)


def child(db, rows, repeat, base_repeat, import_rows=0):
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    sys.path.insert(0, str(ROOT))
    django.setup()
    from django.core.exceptions import EmptyResultSet
    from django.core.management import call_command
    from django.db import connection, transaction
    from django.utils import timezone

    from leads.providers.base import SearchQuery
    from leads.providers.local import LocalSearch, people_filter
    from leads.search_index import places_rebuild, titles_rebuild

    call_command("migrate", "leads", verbosity=0, skip_checks=True)
    if import_rows:
        measure_import(db, import_rows)
    t0 = time.perf_counter()
    now = timezone.now()
    cols = COLUMNS + ["updated_at"]
    with transaction.atomic(), connection.cursor() as cur:
        if db == "postgres":
            with cur.cursor.copy(f"COPY leads_person ({','.join(cols)}) FROM STDIN") as copy:
                for row in generate(rows):
                    copy.write_row((*row, now))
        else:
            sql = f"INSERT INTO leads_person ({','.join(cols)}) VALUES ({','.join(['%s'] * len(cols))})"
            batch = []
            for row in generate(rows):
                batch.append((*row, now))
                if len(batch) == 20000:
                    cur.executemany(sql, batch)
                    batch = []
            if batch:
                cur.executemany(sql, batch)
    titles_rebuild()
    places_rebuild()
    with connection.cursor() as cur:
        cur.execute("VACUUM ANALYZE" if db == "postgres" else "ANALYZE")
    load_s = time.perf_counter() - t0
    print(f"[{db}] loaded {rows:,} leads in {load_s:.1f}s", flush=True)

    provider = LocalSearch()

    def timed(fn, n):
        out = []
        for _ in range(n):
            t = time.perf_counter()
            fn()
            out.append((time.perf_counter() - t) * 1000)
        return out

    def pct(xs, p):
        xs = sorted(xs)
        return xs[min(len(xs) - 1, max(0, round(p / 100 * len(xs) + 0.5) - 1))]

    def baseline_fn(query):
        qs = people_filter(query)
        try:
            qs.query.sql_with_params()
        except EmptyResultSet:  # a value no lead has: nothing to scan
            return lambda: None
        page_sql, page_params = qs.order_by("id").values_list("id")[:query.limit + 1].query.sql_with_params()
        count_sql, count_params = qs.values("id").query.sql_with_params()
        count_sql = f"SELECT COUNT(*) FROM ({count_sql}) sub"

        def run():
            with connection.cursor() as cur:
                if db == "postgres":
                    cur.execute("SET enable_indexscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off")
                    cur.execute(page_sql, page_params)
                    cur.fetchall()
                    cur.execute(count_sql, count_params)
                    cur.fetchall()
                    cur.execute("RESET enable_indexscan; RESET enable_bitmapscan; RESET enable_indexonlyscan")
                else:
                    for sql, params in ((page_sql, page_params), (count_sql, count_params)):
                        cur.execute(sql.replace('FROM "leads_person"', 'FROM "leads_person" NOT INDEXED'), params)
                        cur.fetchall()
        return run

    results = []
    for name, spec in SHAPES.items():
        query = SearchQuery(limit=25, **spec)
        page = provider.search(query)
        fast = timed(lambda q=query: provider.search(q), repeat)
        slow = timed(baseline_fn(query), base_repeat)
        results.append((name, page.total_found, pct(fast, 50), pct(fast, 95), pct(slow, 50), pct(slow, 95)))
    print(f"\n[{db}] {rows:,} leads, limit 25, page + total_found; indexed n={repeat}, baseline n={base_repeat}")
    print(f"{'shape':34} {'matches':>9} {'p50 ms':>8} {'p95 ms':>8} {'seq p50':>9} {'seq p95':>9} {'speed-up p95':>13}")
    for name, total, p50, p95, s50, s95 in results:
        print(f"{name:34} {total:>9,} {p50:>8.2f} {p95:>8.2f} {s50:>9.1f} {s95:>9.1f} {s95 / p95:>12.1f}x")
    target = 20 if db == "postgres" else 50
    worst = max(r[3] for r in results)
    print(f"[{db}] worst p95 {worst:.2f} ms, target {target} ms: {'OK' if worst <= target else 'MISSED'}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--db", choices=["sqlite", "postgres", "both"], default="both")
    ap.add_argument("--pg-url", default=os.environ.get("BENCH_PG_URL", "postgres://postgres@127.0.0.1:5432/postgres"),
                    help="a PostgreSQL server (any database); the bench creates and drops bench_find_leads")
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("--baseline-repeat", type=int, default=5)
    ap.add_argument("--import-rows", type=int, default=100_000, help="rows for the import_leads measurement (0: skip)")
    ap.add_argument("--child", choices=["sqlite", "postgres"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.rows, args.repeat, args.baseline_repeat, args.import_rows)
        return
    dbs = ["sqlite", "postgres"] if args.db == "both" else [args.db]
    for db in dbs:
        env = dict(os.environ)
        env.pop("REDIS_URL", None)
        with tempfile.TemporaryDirectory(prefix="bench-find-leads-") as tmp:
            env["DATA_DIR"] = tmp
            if db == "sqlite":
                env["DATABASE_URL"] = f"sqlite:///{tmp}/bench.sqlite3"
            else:
                import psycopg

                with psycopg.connect(args.pg_url, autocommit=True) as conn:
                    conn.execute("DROP DATABASE IF EXISTS bench_find_leads")
                    conn.execute("CREATE DATABASE bench_find_leads")
                env["DATABASE_URL"] = args.pg_url.rsplit("/", 1)[0] + "/bench_find_leads"
            cmd = [sys.executable, __file__, "--child", db, "--rows", str(args.rows), "--repeat", str(args.repeat),
                   "--baseline-repeat", str(args.baseline_repeat), "--import-rows", str(args.import_rows)]
            subprocess.run(cmd, env=env, check=True, cwd=ROOT)
            if db == "postgres":
                import psycopg

                with psycopg.connect(args.pg_url, autocommit=True) as conn:
                    conn.execute("DROP DATABASE IF EXISTS bench_find_leads")


if __name__ == "__main__":
    main()

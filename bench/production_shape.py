#!/usr/bin/env python
"""The production shape under load and under a kill: the scenario of
tests/core/test_production_shape.py, printing its figures instead of asserting.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/test REDIS_URL=redis://127.0.0.1:6379/15 \\
        .venv/bin/python bench/production_shape.py [--leads 1000] [--kill-after 300] [--worker-concurrency 3]

Starts the Procfile's processes separately (release; two web processes on two OS-picked ports; two Celery
workers; one beat) on a fresh PostgreSQL database (dropped at the end) and Redis db 13, then:
1. 100 concurrent spenders split across both web processes on one workspace that can afford 37 calls;
2. the rate limit (RATE_LIMIT_PER_MINUTE=120) with 160 calls one after another alternating between the
   processes, then 160 at once on another key;
3. a campaign of --leads leads sent through 50 bring-your-own mailboxes to a local aiosmtpd peer, worker1
   SIGKILLed (its whole process group) once the peer has --kill-after messages, and started again.
"""

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests import production_shape as ps  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--leads", type=int, default=1000)
    ap.add_argument("--kill-after", type=int, default=300)
    ap.add_argument("--worker-concurrency", type=int, default=3)
    ap.add_argument("--deadline", type=float, default=900)
    args = ap.parse_args()
    db, redis = os.environ.get("DATABASE_URL", ""), os.environ.get("REDIS_URL", "")
    if not db.startswith("postgres") or not redis:
        sys.exit("set DATABASE_URL (postgres://...) and REDIS_URL")
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        with ps.Cluster(database_url=db, redis_url=redis, data_dir=Path(tmp),
                        worker_concurrency=args.worker_concurrency) as cluster:
            up = time.perf_counter() - t0
            print(f"cluster up (release/migrate + 5 processes ready) in {up:.1f} s; web ports {cluster.ports}")
            s = ps.spenders(cluster)
            print(f"spenders: {s['n']} at once, {s['affordable']} affordable -> outcomes {s['outcomes']}, "
                  f"per process {s['per_process']}, {s['seconds']} s for the burst; money {json.dumps(s['money'])}")
            r = ps.rate_limit(cluster)
            print(f"rate limit {r['limit']}/min: sequential {r['n']} alternating -> admitted "
                  f"{r['sequential_admitted']} ({r['sequential_admitted_per_process']}), refused "
                  f"{r['sequential_refused_429']}; concurrent {r['n']} -> admitted {r['concurrent_admitted']}, "
                  f"refused {r['concurrent_refused_429']}")
            c = ps.campaign_with_kill(cluster, leads=args.leads, kill_after=args.kill_after, deadline_s=args.deadline)
            counts = list(c["received"].values())
            never = set(c["emails"]) - set(c["received"])
            print(f"campaign: {c['leads']} leads, worker1 SIGKILLed at peer count {c['killed_at_peer_count']} and "
                  f"restarted; done in {c['seconds']} s ({c['leads'] / c['seconds']:.1f} leads/s end to end)")
            print(f"    received once: {sum(1 for n in counts if n == 1)}, more than once: "
                  f"{sum(1 for n in counts if n > 1)}, never: {len(never)}; reported stuck (send_unknown, via "
                  f"GET /v1/campaigns/:id/leads): {len(c['stuck'])}; finished in time: {c['finished_in_time']}")
            print(f"    database: {json.dumps(c['report'])}")


if __name__ == "__main__":
    sys.exit(main())

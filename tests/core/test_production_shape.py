"""Issue 20.4: the production shape proven. The Procfile's processes started separately (two web processes on
two ports, two Celery workers, one beat) on one fresh PostgreSQL database and Redis, then: concurrent spenders
across both web processes, the rate limit across both web processes, and a 1,000-lead campaign with a worker
SIGKILLed mid-run and restarted. Assertions are on counts only; every wait is a poll with a generous deadline.

Runs in CI's PostgreSQL + Redis pass; skipped on the embedded default (SQLite, no Redis), where there is one
web process by design. The same scenario with its figures: bench/production_shape.py.
"""

import os
import sys
from pathlib import Path

import pytest

from tests import production_shape as ps

pytestmark = [
    pytest.mark.skipif(not (os.environ.get("DATABASE_URL", "").startswith("postgres") and os.environ.get("REDIS_URL")),
                       reason="the production shape needs PostgreSQL + Redis (runs in the CI's PostgreSQL + Redis pass)"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process groups and /proc: Linux only"),
]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _group_members(pgids: set[int]) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) in pgids and fields[0] != "Z":
                out.append(int(entry.name))
    return out


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = ps.Cluster(database_url=os.environ["DATABASE_URL"], redis_url=os.environ["REDIS_URL"],
                   data_dir=tmp_path_factory.mktemp("prodshape"))
    groups: set[int] = set()
    try:
        c.start()
        yield c
    finally:
        groups = {p.pid for p in c.procs.values()}
        c.stop()
        # no orphans: every process of every group this cluster started (prefork pool children included) is gone
        assert not _group_members(groups), f"orphans left: {_group_members(groups)}"
        import psycopg

        with psycopg.connect(os.environ["DATABASE_URL"], autocommit=True) as conn:
            left = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [c.dbname]).fetchone()
        assert left is None, f"database {c.dbname} was not dropped"


def test_concurrent_spenders_across_both_web_processes(cluster):
    r = ps.spenders(cluster, n=100, affordable=37)
    assert {p for p, _ in r["per_process"]} == {0, 1}  # both web processes served spenders
    assert r["succeeded"] == 37, r
    assert r["outcomes"] == {"200": 37, "402 insufficient_credits": 63}, r
    money = r["money"]
    assert money["charges"] == 37
    assert money["balance_micros"] == 0 and money["reserved_micros"] == 0 and money["open_holds"] == 0, money
    assert money["lowest_balance_after_micros"] >= 0, money
    assert money["ledger_sum_micros"] == money["balance_micros"], money


def test_rate_limit_is_counted_once_across_both_web_processes(cluster):
    r = ps.rate_limit(cluster, n=160)
    assert r["other"] == {}, r
    # one after another, alternating processes: exactly the limit admitted (each process counting its own would
    # have admitted all 160: 80 per process, under 120 each), and both processes refused their share
    assert r["sequential_admitted"] == ps.RATE_LIMIT, r
    assert r["sequential_refused_429"] == 160 - ps.RATE_LIMIT, r
    assert r["sequential_admitted_per_process"] == {0: ps.RATE_LIMIT // 2, 1: ps.RATE_LIMIT // 2}, r
    # all at once, split across both: never more than the limit
    assert r["concurrent_admitted"] <= ps.RATE_LIMIT, r
    assert r["concurrent_admitted"] + r["concurrent_refused_429"] == 160, r


def test_campaign_of_1000_survives_a_worker_sigkill(cluster):
    r = ps.campaign_with_kill(cluster, leads=1000, kill_after=300, deadline_s=900)
    assert r["killed_at_peer_count"] is not None, "the campaign never reached the kill point"
    assert r["finished_in_time"], r["report"]
    received, emails = r["received"], r["emails"]
    assert set(received) <= set(emails), set(received) - set(emails)
    twice = {e: n for e, n in received.items() if n > 1}
    assert not twice, f"step 1 delivered more than once: {twice}"
    stuck = {lead["email"] for lead in r["stuck"]}
    # a lead found stuck in `sending` is reported (stopped as send_unknown, its message in doubt), never re-sent
    assert all(lead["send_in_doubt"] and lead["send_in_doubt"]["reported_at"] for lead in r["stuck"]), r["stuck"]
    never = set(emails) - set(received)
    assert never <= stuck, f"lost without a report: {sorted(never - stuck)[:10]}"
    report = r["report"]
    assert report["leads"].get("finished", 0) + len(stuck) == 1000, report
    assert report["stops"] == ({"send_unknown": len(stuck)} if stuck else {}), report
    assert report["messages"].get("sent", 0) == report["leads"].get("finished", 0), report
    assert report["messages"].get("sending", 0) == len(stuck), report

#!/usr/bin/env python
"""Campaign sending throughput and scheduler tick cost.

    .venv/bin/python bench/send.py                    # SQLite and PostgreSQL
    .venv/bin/python bench/send.py --db sqlite --messages 500 --leads 100000
    .venv/bin/python bench/send.py --pg-url postgres://postgres@127.0.0.1:5432/postgres

Each database is built from scratch (SQLite: a temporary file; PostgreSQL: a database `bench_send`, dropped and
re-created) and migrated with the project's migrations.

1. Throughput: one worker (this process) runs scheduler ticks with the inline dispatcher until every lead of a
   launched campaign has been sent its step, through the real path (claim + suppression re-check, hand-over,
   `sending.transport.send_message` over SMTP to a local aiosmtpd sink, mark sent, schedule). Baseline in the
   same run: the same number of messages through `send_message` alone (no bookkeeping). Target >= 50/s.
2. One scheduler tick over 100,000 active leads (1,000 of them due, 40 mailboxes): the tick's due-lead query
   uses the partial index. Baseline in the same run: a naive scan that loads every active lead and filters
   in Python. Target < 1 s.
"""

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def child(args):
    import builtins
    import faulthandler
    import functools
    faulthandler.dump_traceback_later(900, exit=True)  # a hang prints where
    print = functools.partial(builtins.print, flush=True)  # noqa: A001
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from datetime import timedelta

    from aiosmtpd.controller import Controller
    from django.core.management import call_command
    from django.db import connection, transaction
    from django.utils import timezone

    from accounts.services import user_get_or_create, workspace_create
    from campaigns import scheduler, sender
    from campaigns.messages import build_message, new_message_id, render_step
    from campaigns.models import Campaign, CampaignLead
    from sending import transport
    from sending.models import Mailbox
    from sending.testing import make_active_mailbox

    t_m = time.perf_counter()
    call_command("migrate", verbosity=0, skip_checks=True)
    print(f"migrated in {time.perf_counter() - t_m:.1f} s")
    db = connection.vendor

    class Sink:
        count = 0

        async def handle_DATA(self, server, session, envelope):
            Sink.count += 1
            return "250 OK"

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    controller = Controller(Sink(), hostname="127.0.0.1", port=port)
    controller.start()

    ws = workspace_create(owner=user_get_or_create(email="bench@example.com"))
    mb = make_active_mailbox(ws, email="bench@send-bench.test", provider="byo", smtp_host="127.0.0.1",
                             smtp_port=port, smtp_security="none", daily_limit=10**6,
                             activated_at=timezone.now() - timedelta(days=90))  # warmed up
    always = {"timezone": "UTC", "days": ["mon", "tue", "wed", "thu", "fri", "sat", "sun"], "start_hour": 0,
              "end_hour": 24}
    steps = [{"subject": "Hello {{first_name|there}}", "body": "Hi {{first_name|there}},\n\nA short note about "
              "{{company_name|your team}}.\n\nBest,\nSam", "wait_days": 0}]

    def campaign_with(n, *, mailbox_ids, due_every=1, prefix="p"):
        with transaction.atomic():  # a launched campaign and its leads at once, as launch_campaign writes them
            return _campaign_with(n, mailbox_ids=mailbox_ids, due_every=due_every, prefix=prefix)

    def _campaign_with(n, *, mailbox_ids, due_every, prefix):
        camp = Campaign.objects.create(workspace=ws, name="bench", state="launched", steps=steps,
                                       sending_window=always, launched_at=timezone.now())
        now = timezone.now()
        later = now + timedelta(days=3)
        CampaignLead.objects.bulk_create([
            CampaignLead(campaign=camp, workspace=ws, email=f"{prefix}{i}@lead-bench.test", first_name=f"P{i}",
                         company_name="Acme", position=i, state="active", mailbox_id=mailbox_ids[(i // due_every + i) % len(mailbox_ids)],
                         next_send_at=now - timedelta(seconds=1) if i % due_every == 0 else later)
            for i in range(n)], batch_size=2000)
        return camp

    # --- 1. throughput ----------------------------------------------------------------------------------

    real_cap = sender.daily_cap
    sender.daily_cap = lambda mailbox, now: 10**9  # measure sending, not the per-day cap

    def throughput(label):
        n = args.messages
        camp = campaign_with(n, mailbox_ids=[mb.pk], prefix=f"{label[:3]}")
        leads = list(camp.leads.all()[:n])
        # baseline: the transport alone, same messages, same sink
        t0 = time.perf_counter()
        for lead in leads:
            rendered = render_step(lead, camp, 0)
            transport.send_message(mailbox=mb, message=build_message(
                lead=lead, campaign=camp, mailbox=mb, rendered=rendered, message_id=new_message_id("b.test")))
        base_s = time.perf_counter() - t0
        before = Sink.count
        t0 = time.perf_counter()
        ticks = 0
        while CampaignLead.objects.filter(campaign=camp, state="active").exists() and ticks < 100:
            scheduler.tick(dispatch=scheduler.run_inline, limit=1000)
            ticks += 1
        full_s = time.perf_counter() - t0
        sent = Sink.count - before
        if sent != n:
            errs = list(CampaignLead.objects.filter(campaign=camp).exclude(state="finished")
                        .values_list("state", "last_error")[:5])
            print(f"    !! {n - sent} not sent: {errs}")
        print(f"[{db}] send throughput, one worker, {n} messages over SMTP to a local aiosmtpd sink, {label}:")
        print(f"    baseline send_message alone : {n / base_s:8.1f} msg/s")
        print(f"    full path (claim+send+mark) : {n / full_s:8.1f} msg/s  ({ticks} ticks)  "
              f"ratio {(n / full_s) / (n / base_s):.2f} of baseline  target >= 50/s: "
              f"{'MET' if n / full_s >= 50 else 'MISSED'}")

    throughput("sending.transport")
    controller.stop()
    sender.daily_cap = real_cap

    # --- 2. one tick over 100k active leads -------------------------------------------------------------
    total = args.leads
    mailboxes = [make_active_mailbox(ws, email=f"m{i}@tick-bench.test").pk for i in range(40)]
    Mailbox.objects.filter(pk__in=mailboxes).update(daily_limit=25)
    per = 5000
    t0 = time.perf_counter()
    for c in range(total // per):
        campaign_with(per, mailbox_ids=mailboxes, due_every=total // 1000, prefix=f"c{c}x")
    build_s = time.perf_counter() - t0
    if db == "postgresql":
        with connection.cursor() as cur:
            cur.execute("ANALYZE campaigns_campaignlead")
    else:
        with connection.cursor() as cur:
            cur.execute("ANALYZE")
    active = CampaignLead.objects.filter(state="active").count()
    due = CampaignLead.objects.filter(state="active", next_send_at__lte=timezone.now()).count()

    def naive():
        now = timezone.now()
        rows = list(CampaignLead.objects.filter(state="active").values_list("pk", "next_send_at", "mailbox_id"))
        return [r for r in rows if r[1] and r[1] <= now]

    t0 = time.perf_counter()
    naive_due = naive()
    naive_s = time.perf_counter() - t0
    collected = []
    t0 = time.perf_counter()
    stats = scheduler.tick(dispatch=collected.extend, limit=1000)
    tick_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    idle = scheduler.tick(dispatch=collected.extend, limit=1000)  # nothing due any more: the common case
    idle_s = time.perf_counter() - t0
    print(f"[{db}] scheduler tick over {active} active leads ({due} due, {len(mailboxes)} mailboxes; "
          f"built in {build_s:.1f} s):")
    print(f"    baseline naive scan of all active leads : {naive_s * 1000:8.1f} ms  ({len(naive_due)} due found)")
    print(f"    tick (index, window, caps, leases)      : {tick_s * 1000:8.1f} ms  dispatched {stats['dispatched']}, "
          f"capped {stats['capped']}  target < 1 s: {'MET' if tick_s < 1 else 'MISSED'}")
    print(f"    idle tick (nothing due)                 : {idle_s * 1000:8.1f} ms  (due {idle['due']})")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", choices=["sqlite", "postgres", "both"], default="both")
    ap.add_argument("--messages", type=int, default=500)
    ap.add_argument("--leads", type=int, default=100_000)
    ap.add_argument("--pg-url", default=os.environ.get("BENCH_PG_URL", "postgres://postgres@127.0.0.1:5432/postgres"))
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args)
    dbs = ["sqlite", "postgres"] if args.db == "both" else [args.db]
    for db in dbs:
        with tempfile.TemporaryDirectory() as tmp:
            env = dict(os.environ, DATA_DIR=tmp, SANDBOX="1", LOG_LEVEL="WARNING")
            env.pop("REDIS_URL", None)
            if db == "sqlite":
                env["DATABASE_URL"] = f"sqlite:///{tmp}/bench.sqlite3"
            else:
                import psycopg

                with psycopg.connect(args.pg_url, autocommit=True) as conn:
                    conn.execute("DROP DATABASE IF EXISTS bench_send")
                    conn.execute("CREATE DATABASE bench_send")
                env["DATABASE_URL"] = args.pg_url.rsplit("/", 1)[0] + "/bench_send"
            cmd = [sys.executable, __file__, "--child", "--messages", str(args.messages), "--leads", str(args.leads)]
            subprocess.run(cmd, env=env, check=True)
            if db == "postgres":
                import psycopg

                with psycopg.connect(args.pg_url, autocommit=True) as conn:
                    conn.execute("DROP DATABASE IF EXISTS bench_send")


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python
"""Does deliverability slow the scheduler tick? One tick over N active leads (1,000 due, 40 mailboxes).

    .venv/bin/python bench/deliverability_tick.py                  # SQLite, 100,000 leads
    .venv/bin/python bench/deliverability_tick.py --leads 20000 --runs 7

Each run builds a fresh SQLite database in a temporary directory (the project's migrations) and times the tick
(`scheduler.tick`, collecting dispatch, no sweep), median of `--runs`, the due leads reset between runs:

A. every mailbox healthy: the tick's only added work is one health-state compare per due lead;
B. one mailbox of the 40 paused: its due leads not contacted yet are moved in bulk to healthy mailboxes;
C. the deliverability sweep (its own beat task, not inside the tick) evaluating all 40 mailboxes.

Target: B within 10% of A, and A's added compares a negligible share of A.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--leads", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="bench-deliv-")
    os.environ["DATA_DIR"] = tmp
    os.environ.pop("DATABASE_URL", None)
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from datetime import timedelta

    from django.core.management import call_command
    from django.db import transaction
    from django.utils import timezone

    from accounts.services import user_get_or_create, workspace_create
    from campaigns import scheduler
    from campaigns.models import Campaign, CampaignLead
    from deliverability import services as health
    from sending.models import Mailbox
    from sending.testing import make_active_mailbox

    call_command("migrate", verbosity=0, skip_checks=True)
    ws = workspace_create(owner=user_get_or_create(email="bench@example.com"))
    mailboxes = [make_active_mailbox(ws, email=f"m{i}@deliv-bench{i // 5}.test", daily_limit=10**6)
                 for i in range(40)]
    always = {"timezone": "UTC", "days": ["mon", "tue", "wed", "thu", "fri", "sat", "sun"], "start_hour": 0,
              "end_hour": 24}
    now = timezone.now()
    with transaction.atomic():
        camp = Campaign.objects.create(workspace=ws, name="bench", state="launched", sending_window=always,
                                       steps=[{"subject": "Hi", "body": "Hello", "wait_days": 0}], launched_at=now)
        camp.mailboxes.set(mailboxes)
        due_every = max(1, args.leads // 1000)
        for start in range(0, args.leads, 10_000):  # in slices: 100,000 unsaved rows at once would be ~200 MB more
            CampaignLead.objects.bulk_create([
                CampaignLead(campaign=camp, workspace=ws, email=f"p{i}@lead-bench.test", position=i, state="active",
                             mailbox=mailboxes[(i // due_every) % 40],
                             next_send_at=now - timedelta(seconds=1) if i % due_every == 0 else now + timedelta(days=3))
                for i in range(start, min(start + 10_000, args.leads))], batch_size=2000)
    due_pks = list(CampaignLead.objects.filter(next_send_at__lte=now).values_list("pk", flat=True))
    homes = dict(CampaignLead.objects.filter(pk__in=due_pks).values_list("pk", "mailbox_id"))

    def reset():
        with transaction.atomic():
            by_mailbox = {}
            for pk, mid in homes.items():
                by_mailbox.setdefault(mid, []).append(pk)
            for mid, pks in by_mailbox.items():
                for i in range(0, len(pks), 500):
                    CampaignLead.objects.filter(pk__in=pks[i:i + 500]).update(
                        mailbox_id=mid, next_send_at=now - timedelta(seconds=1))

    def timed_tick():
        reset()
        t0 = time.perf_counter()
        stats = scheduler.tick(dispatch=lambda items: None, sweep=False, limit=1000)
        return (time.perf_counter() - t0) * 1000, stats

    def median(label):
        runs = [timed_tick() for _ in range(args.runs)]
        ms = statistics.median(r[0] for r in runs)
        print(f"{label}: {ms:7.1f} ms  (runs {', '.join(f'{r[0]:.1f}' for r in runs)})  last stats {runs[-1][1]}",
              flush=True)
        return ms

    print(f"{args.leads} active leads, {len(due_pks)} due, 40 mailboxes, SQLite", flush=True)
    timed_tick()  # warm
    a = median("A. all healthy        ")
    t0 = time.perf_counter()
    states = {m.pk: m.health_state for m in Mailbox.objects.all()}
    for _ in range(len(due_pks)):
        states[mailboxes[0].pk] == "paused"  # noqa: B015 - the compare the tick adds per due lead
    added = (time.perf_counter() - t0) * 1000
    Mailbox.objects.filter(pk=mailboxes[0].pk).update(health_state="paused")
    b = median("B. one mailbox paused ")
    t0 = time.perf_counter()
    Mailbox.objects.update(health_evaluated_at=None)
    swept = health.sweep()
    c = (time.perf_counter() - t0) * 1000
    print(f"C. deliverability sweep (separate beat task): {c:.1f} ms  {swept}")
    print(f"added per-lead compares in A: {added:.3f} ms = {100 * added / a:.2f}% of A; "
          f"B / A = {b / a:.3f}  target B within 10% of A: {'MET' if b <= 1.10 * a else 'MISSED'}")


if __name__ == "__main__":
    main()

"""The scheduler tick (Celery beat, every SCHEDULER_TICK_SECONDS): find due leads through the partial index
`campaignlead_due_idx` (active leads by next_send_at; never a full scan), and dispatch one send task per lead
that is inside its window and whose mailbox is active and under today's cap. Every dispatched lead gets a
lease (next_send_at moved LEASE ahead), so the next tick does not dispatch it again while its task waits; the
task only runs if the lease is still the lead's next_send_at."""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable
from datetime import datetime, timedelta

from celery import current_app
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from campaigns import sender, services
from campaigns.models import Campaign, CampaignLead
from campaigns.window import for_lead, in_window, next_open, per_lead
from sending.models import Mailbox

logger = logging.getLogger("campaigns.scheduler")

LEASE = timedelta(seconds=settings.CAMPAIGNS_LEASE_SECONDS)
SEND_TASK = "campaigns.tasks.send_lead_step"  # the Celery name of campaigns.tasks.send_lead_step


def _dispatch_celery(items: list[tuple[int, int, datetime]]) -> None:
    """One send task per lead, enqueued by its registered name (the tasks module runs the scheduler)."""
    send = current_app.signature(SEND_TASK)
    for lead_id, step, lease in items:
        send.delay(lead_id, step, lease.isoformat())


def tick(*, now: datetime | None = None, limit: int | None = None,
         dispatch: Callable[[list[tuple[int, int, datetime]]], None] | None = None, sweep: bool = True) -> dict:
    """One scheduler pass. Returns counts (due, dispatched, outside_window, capped, mailbox_inactive,
    mailbox_gone, mailbox_paused)."""
    now = now or timezone.now()
    limit = limit or sender.tick_batch()
    stats = {"due": 0, "dispatched": 0, "outside_window": 0, "capped": 0, "mailbox_inactive": 0,
             "mailbox_gone": 0, "mailbox_paused": 0}
    if sweep:
        stats.update(sender.sweep_stuck(now=now))
        stats["completed"] = services.campaigns_complete_finished()
    stats["winners"] = services.campaigns_pick_winners()  # before the due leads: a winner chosen now is sent this tick
    dispatched: list[tuple[int, int, datetime]] = []
    with transaction.atomic():
        due = list(CampaignLead.objects.filter(state=CampaignLead.State.ACTIVE, next_send_at__lte=now,
                                               campaign__state=Campaign.State.LAUNCHED)  # paused: skipped
                   .order_by("next_send_at")
                   .values_list("pk", "campaign_id", "mailbox_id", "current_step", "timezone")[:limit])
        stats["due"] = len(due)
        if not due:
            return stats
        windows, matching = {}, set()
        for cid, window, match in (Campaign.objects.filter(pk__in={row[1] for row in due})
                                   .values_list("pk", "sending_window", "match_mailbox_provider")):
            windows[cid] = window
            if match:  # a first step may go from another mailbox of the campaign: the sender checks its cap
                matching.add(cid)
        mailboxes = {m.pk: m for m in Mailbox.objects.filter(pk__in={row[2] for row in due if row[2]})}
        remaining = {}
        used = sender.sends_today(mailboxes.keys(), now)
        for pk, mb in mailboxes.items():
            remaining[pk] = sender.daily_cap(mb, now) - used.get(pk, 0) if mb.status == Mailbox.Status.ACTIVE else 0
        paused: list[tuple[int, int, int]] = []  # (lead, campaign, step) whose mailbox is paused (deliverability)
        moves: dict[datetime, list[int]] = defaultdict(list)
        gone: list[int] = []
        tomorrow = sender.day_start(now) + timedelta(days=1)
        lease = now + LEASE
        # window answers are the same for every lead of a campaign (of a lead zone, for a window in each lead's
        # zone) at this instant: compute once per (campaign, zone)
        open_now: dict = {}
        next_opening: dict = {}
        after_cap: dict = {}
        for pk, campaign_id, mailbox_id, step, zone in due:
            key = (campaign_id, zone if per_lead(windows[campaign_id]) else "")
            window = for_lead(windows[campaign_id], key[1])
            if key not in open_now:
                open_now[key] = in_window(window, now)
            if not open_now[key]:
                if key not in next_opening:
                    next_opening[key] = next_open(window, now)
                moves[next_opening[key]].append(pk)
                stats["outside_window"] += 1
            elif mailbox_id not in mailboxes or mailboxes[mailbox_id].status in sender.MAILBOX_GONE:
                gone.append(pk)
                stats["mailbox_gone"] += 1
            elif mailboxes[mailbox_id].status != Mailbox.Status.ACTIVE:
                moves[now + sender.MAILBOX_WAIT].append(pk)  # suspended: wait for it, never send from it
                stats["mailbox_inactive"] += 1
            elif mailboxes[mailbox_id].health_state == sender.MAILBOX_PAUSED:
                paused.append((pk, campaign_id, step))
                stats["mailbox_paused"] += 1
            elif remaining[mailbox_id] <= 0 and not (step == 0 and campaign_id in matching):
                if key not in after_cap:
                    after_cap[key] = next_open(window, tomorrow)
                moves[after_cap[key]].append(pk)
                stats["capped"] += 1
            else:
                remaining[mailbox_id] -= 1
                moves[lease].append(pk)
                dispatched.append((pk, step, lease))
        if paused:
            _route_around_paused(paused, moves, now)
        for when, pks in moves.items():
            for i in range(0, len(pks), 500):
                # still due: a late task may have sent a step and set the next one's due time since the read
                # above; that time must not be overwritten (its task then finds the lease gone and does nothing)
                CampaignLead.objects.filter(pk__in=pks[i:i + 500], state=CampaignLead.State.ACTIVE,
                                            next_send_at__lte=now).update(next_send_at=when)
    stats["dispatched"] = len(dispatched)
    if dispatched:  # the leases are committed: dispatch before anything else can fail
        (dispatch or _dispatch_celery)(dispatched)
    # after the commit: moving or stopping such a lead locks its campaign, and a lead lock must never be awaited
    # while a campaign row is held (campaign_maybe_complete's lock order). Each on its own: one that fails (a
    # deadlock victim) is logged and found again by the next tick
    for pk in gone:
        try:
            sender.lead_mailbox_gone(lead_id=pk, now=now)
        except Exception:  # noqa: BLE001
            logger.exception("lead %s: its mailbox is gone, and moving or stopping it failed; next tick retries", pk)
    return stats


def _route_around_paused(paused: list[tuple[int, int, int]], moves: dict, now: datetime) -> None:
    """Leads due on a paused mailbox, in bulk: those not contacted yet (step 0) move to a healthy mailbox of their
    campaign and stay due (the next tick dispatches them); the others, and all of a campaign with no healthy
    mailbox, wait like leads of an inactive mailbox. The send claim re-checks the pause anyway."""
    healthy = sender.healthy_mailboxes({c for _, c, _ in paused})
    reassign: dict[str, list[int]] = defaultdict(list)
    for pk, campaign_id, step in paused:
        options = healthy.get(campaign_id)
        if step == 0 and options:
            reassign[options[pk % len(options)]].append(pk)
        else:
            moves[now + sender.MAILBOX_WAIT].append(pk)
    # one UPDATE per 500 leads (a CASE picks each lead's new mailbox), not one per target mailbox: a paused
    # mailbox's due leads spread over every healthy one, and a statement for each was most of what a pause cost
    # the tick
    from django.db.models import Case, CharField, F, Value, When

    moved = [(pk, mailbox_id) for mailbox_id, pks in reassign.items() for pk in pks]
    for i in range(0, len(moved), 500):
        chunk: dict[str, list[int]] = defaultdict(list)
        for pk, mailbox_id in moved[i:i + 500]:
            chunk[mailbox_id].append(pk)
        CampaignLead.objects.filter(pk__in=[pk for pk, _ in moved[i:i + 500]], state=CampaignLead.State.ACTIVE,
                                    current_step=0, next_send_at__lte=now).update(
            mailbox_id=Case(*[When(pk__in=pks, then=Value(mailbox_id)) for mailbox_id, pks in chunk.items()],
                            default=F("mailbox_id"), output_field=CharField()))


def run_inline(items: list[tuple[int, int, datetime]]) -> None:
    """A dispatcher that sends in this process, one after another (tests, benchmark, `manage.py` use)."""
    for lead_id, step, lease in items:
        sender.send_lead_step(lead_id=lead_id, step=step, lease=lease)

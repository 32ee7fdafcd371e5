"""What a pause does to campaigns: sends go on from the healthy mailboxes, a campaign with none left waits
(`mailbox_paused`), and a paused mailbox sends nothing, even under concurrent workers."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from campaigns import scheduler, sender
from campaigns.models import CampaignLead, SentMessage
from campaigns.selectors import campaign_schedule
from deliverability import services as health
from sending.models import Mailbox
from sending.testing import make_active_mailbox
from tests.deliverability.conftest import add_sends, make_campaign


def pause(mailbox):
    Mailbox.objects.filter(pk=mailbox.pk).update(health_state="paused", health_reasons=["bounce_rate"])
    mailbox.refresh_from_db()


def run_tick():
    return scheduler.tick(dispatch=scheduler.run_inline)


def sent_by(mailbox):
    return SentMessage.objects.filter(mailbox=mailbox, state="sent").count()


@pytest.mark.django_db
def test_a_campaign_keeps_sending_from_healthy_mailboxes_and_waits_when_all_are_paused(workspace):
    a, b, c = (make_active_mailbox(workspace) for _ in range(3))
    campaign = make_campaign(workspace, [a, b, c], leads=12)
    pause(b)
    run_tick()  # b's leads (not contacted yet) move to a and c; a's and c's are sent
    run_tick()  # the moved ones are sent
    assert sent_by(b) == 0
    assert sent_by(a) + sent_by(c) == 12
    assert not CampaignLead.objects.filter(campaign=campaign, mailbox=b).exists()
    assert campaign_schedule(campaign)[1] is None

    # step 2 is due: a goes paused too (a lead mid-thread keeps its mailbox and waits; c goes on)
    CampaignLead.objects.filter(campaign=campaign).update(next_send_at=scheduler.timezone.now())
    pause(a)
    before_a = sent_by(a)
    stats = run_tick()
    assert stats["mailbox_paused"] == CampaignLead.objects.filter(campaign=campaign, mailbox=a).count() > 0
    assert sent_by(a) == before_a
    assert SentMessage.objects.filter(mailbox=c, step_index=1, state="sent").count() == \
        CampaignLead.objects.filter(campaign=campaign, mailbox=c).count()

    pause(c)
    assert campaign_schedule(campaign) == (None, "mailbox_paused")
    CampaignLead.objects.filter(campaign=campaign, state="active").update(next_send_at=scheduler.timezone.now())
    total = SentMessage.objects.filter(state="sent").count()
    run_tick()
    assert SentMessage.objects.filter(state="sent").count() == total  # nothing at all


@pytest.mark.django_db
def test_a_threshold_crossed_stops_the_mailbox_before_the_next_tick_sends(workspace):
    """A bounce that crosses the threshold pauses the mailbox when it is recorded; tasks the scheduler already
    dispatched (holding leases) are refused by the send claim."""
    a = make_active_mailbox(workspace)
    add_sends(a, sent=20)
    campaign = make_campaign(workspace, [a], leads=3)
    dispatched = []
    scheduler.tick(dispatch=dispatched.extend)
    assert len(dispatched) == 3
    first = SentMessage.objects.filter(mailbox=a, state="sent").order_by("claimed_at").first()
    SentMessage.objects.filter(pk=first.pk).update(bounced=True)  # 1 in 20: 5%
    health.mailbox_signal(mailbox_id=a.pk)  # what the DSN ingestion triggers on commit
    results = [sender.send_lead_step(lead_id=lead, step=step, lease=lease) for lead, step, lease in dispatched]
    assert results == ["mailbox_paused"] * 3
    assert SentMessage.objects.filter(campaign=campaign).count() == 0
    assert campaign_schedule(campaign)[1] == "mailbox_paused"


@pytest.mark.django_db(transaction=True)
def test_nothing_is_sent_from_a_paused_mailbox_under_concurrent_workers(workspace, settings):
    """Workers race the dispatched sends while the mailbox is paused in the middle: once the pause has committed,
    no claim succeeds (the claim reads the health state under the mailbox row lock)."""
    a = make_active_mailbox(workspace)
    make_campaign(workspace, [a], leads=24)
    dispatched = []
    scheduler.tick(dispatch=dispatched.extend)
    assert len(dispatched) == 24
    paused_at = threading.Event()
    results: list[tuple[bool, str]] = []
    lock = threading.Lock()

    def worker(items):
        try:
            for lead_id, step, lease in items:
                after_pause = paused_at.is_set()
                outcome = sender.send_lead_step(lead_id=lead_id, step=step, lease=lease)
                with lock:
                    results.append((after_pause, outcome))
        finally:
            connection.close()

    def pauser():
        try:
            pause(a)
            paused_at.set()
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(dispatched[i::3],)) for i in range(3)]
    for t in threads:
        t.start()
    p = threading.Thread(target=pauser)
    p.start()
    for t in threads + [p]:
        t.join()
    assert len(results) == 24
    assert all(outcome != "sent" for after, outcome in results if after), results
    sent = SentMessage.objects.filter(mailbox=a, state="sent").count()
    assert sent == sum(1 for _, outcome in results if outcome == "sent")
    assert SentMessage.objects.filter(mailbox=a, state__in=["claimed", "sending"]).count() == 0
    # and once paused, a redelivery of every task sends nothing more
    again = [sender.send_lead_step(lead_id=lead, step=step, lease=None) for lead, step, _ in dispatched]
    assert "sent" not in again
    assert SentMessage.objects.filter(mailbox=a, state="sent").count() == sent

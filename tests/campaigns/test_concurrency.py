"""Two workers racing the same dispatched send: exactly one message goes out (real threads, real locks)."""

import threading

import pytest
from django.db import connection, transaction

from campaigns import scheduler, sender
from campaigns.models import Campaign, CampaignLead, SentMessage
from campaigns.services import campaign_maybe_complete
from sending.testing import make_active_mailbox
from tests.campaigns.conftest import ALWAYS, sink_messages
from tests.campaigns.helpers import create, launch
from tests.rendezvous import in_threads


@pytest.mark.django_db(transaction=True)
def test_duplicate_tasks_race_send_once(api, owner, workspace, settings):
    make_active_mailbox(workspace)
    cid = create(api, leads=[{"email": f"p{i}@x.test"} for i in range(4)], steps=[{"subject": "s", "body": "b"}],
                 sending_window=ALWAYS).json()["result"]["campaign_id"]
    launch(api, cid, owner)
    dispatched = []
    scheduler.tick(dispatch=dispatched.extend)
    assert len(dispatched) == 4
    results, barrier = [], threading.Barrier(3)

    def worker():
        barrier.wait()
        try:
            for lead_id, step, lease in dispatched:  # every worker got every task (a redelivery storm)
                results.append(sender.send_lead_step(lead_id=lead_id, step=step, lease=lease))
        finally:
            connection.close()

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results.count("sent") == 4 and len(results) == 12
    assert set(results) <= {"sent", "stale", "not_due"}
    assert SentMessage.objects.filter(state="sent").count() == 4
    assert len(sink_messages(settings)) == 4
    assert set(CampaignLead.objects.values_list("state", flat=True)) == {"finished"}


@pytest.mark.django_db(transaction=True)
def test_last_two_leads_finishing_at_once_complete_the_campaign(api, owner, workspace):
    """Two workers finish a campaign's last two leads in overlapping transactions: each has marked its own
    lead finished but not committed when it asks whether the campaign is done. Without the campaign row lock
    each sees the other lead still active on PostgreSQL, and the campaign stays `launched` forever."""
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL row locks (SQLite serializes the two writers instead)")
    make_active_mailbox(workspace)
    cid = create(api, leads=[{"email": "a@x.test"}, {"email": "b@x.test"}], steps=[{"subject": "s", "body": "b"}],
                 sending_window=ALWAYS).json()["result"]["campaign_id"]
    launch(api, cid, owner)
    leads = list(CampaignLead.objects.filter(campaign_id=cid).values_list("pk", flat=True))
    barrier, answers = threading.Barrier(2), []

    def finish(pk):
        with transaction.atomic():
            CampaignLead.objects.filter(pk=pk).update(state=CampaignLead.State.FINISHED, next_send_at=None)
            barrier.wait(timeout=30)  # both leads finished, neither committed
            answers.append(campaign_maybe_complete(campaign_id=cid))

    assert in_threads(*(lambda pk=pk: finish(pk) for pk in leads)) == []
    assert sorted(answers) == [False, True]
    assert Campaign.objects.get(pk=cid).state == "completed"

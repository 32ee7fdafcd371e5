"""Two workers racing the same dispatched send: exactly one message goes out (real threads, real locks)."""

import threading

import pytest
from django.db import connection

from campaigns import scheduler, sender
from campaigns.models import CampaignLead, SentMessage
from sending.testing import make_active_mailbox
from tests.campaigns.conftest import ALWAYS, sink_messages
from tests.campaigns.helpers import create, launch


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

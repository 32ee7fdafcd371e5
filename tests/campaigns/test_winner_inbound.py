"""The automatic winner chosen from replies that arrive through the real inbound path (the sandbox SMTP listener,
classification, effects), then sent alone to the leads still to reach the step."""

from __future__ import annotations

import smtplib

import pytest
from django.utils import timezone

from tests.campaigns.helpers import create, launch
from tests.replies.conftest import eager  # noqa: F401 - fixture
from tests.replies.test_end_to_end import ALWAYS, listener, sink_messages  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db(transaction=True)


def test_winner_from_seeded_replies(api, owner, workspace, listener):  # noqa: F811
    from campaigns import scheduler, sender
    from campaigns.models import Campaign, CampaignLead, SentMessage
    from sending.testing import make_active_mailbox

    make_active_mailbox(workspace, email="alex@winner-sbx.test")  # two mailboxes: 25 sends a day each
    make_active_mailbox(workspace, email="sam@winner-sbx.test")
    leads = [{"email": f"p{i}@co{i}.test", "first_name": f"P{i}"} for i in range(50)]
    steps = [{"variants": [{"subject": "Variant A for {{first_name}}", "body": "A body"},
                           {"subject": "Variant B for {{first_name}}", "body": "B body"}]}]
    created = create(api, leads=leads, steps=steps, sending_window=ALWAYS,
                     auto_winner={"metric": "interested_rate", "min_sends_per_variant": 20})
    cid = created.json()["result"]["campaign_id"]
    assert launch(api, cid, owner).status_code == 200
    by_variant = {0: [], 1: []}
    for lead in CampaignLead.objects.filter(campaign_id=cid).order_by("position"):
        by_variant[lead.variants[0]].append(lead)
    assert len(by_variant[0]) == len(by_variant[1]) == 25
    # 20 sends of each variant; 5 of each are left for later
    for lead in by_variant[0][:20] + by_variant[1][:20]:
        assert sender.send_lead_step(lead_id=lead.pk, step=0) == "sent"
    assert scheduler.tick(dispatch=lambda items: None)["winners"] == 0  # no replies yet: no winner

    sent = {m["To"].addresses[0].addr_spec: m for m in sink_messages()}
    repliers = [(lead, "Interested - could you send me some times for a call next week?")
                for lead in by_variant[0][:9]]
    repliers += [(by_variant[1][0], "Not interested, thanks.")]
    with smtplib.SMTP(listener.hostname, listener.port, timeout=10) as client:
        for lead, text in repliers:
            original = sent[lead.email]
            to = original["From"].addresses[0].addr_spec
            raw = (f"From: {lead.email}\r\nTo: {to}\r\nSubject: Re: {original['Subject']}\r\n"
                   f"Message-ID: <reply-{lead.pk}@replies.test>\r\nIn-Reply-To: {original['Message-ID']}\r\n"
                   f"\r\n{text}\r\n").encode()
            client.sendmail(lead.email, [to], raw)

    detail = api.get(f"/v1/campaigns/{cid}").json()
    step = detail["stats"]["steps"][0]
    assert step["variants"] == [
        {"variant": 0, "sent": 20, "replies": 9, "interested": 9, "bounced": 0},
        {"variant": 1, "sent": 20, "replies": 1, "interested": 0, "bounced": 0},
    ]
    assert step["winner"] is None
    assert scheduler.tick(dispatch=lambda items: None)["winners"] == 1
    campaign = Campaign.objects.get(pk=cid)
    record = campaign.winners["0"]
    assert record["variant"] == 0 and record["metric"] == "interested_rate"
    assert record["sent"] == [20, 20] and record["successes"] == [9, 0]
    assert record["p_values"][0] is None and record["p_values"][1] < 0.05
    step = api.get(f"/v1/campaigns/{cid}").json()["stats"]["steps"][0]
    assert step["winner"] == 0 and step["winner_chosen_at"]

    # the leads still to reach the step all get the winner, whatever their own assignment (the ticks above
    # leased them to a dispatcher that dropped the tasks: give the leases back)
    CampaignLead.objects.filter(campaign_id=cid, state="active").update(next_send_at=timezone.now())
    for lead in by_variant[0][20:] + by_variant[1][20:]:
        assert sender.send_lead_step(lead_id=lead.pk, step=0) == "sent"
    late = SentMessage.objects.filter(campaign_id=cid, campaign_lead__in=[x.pk for x in by_variant[1][20:]])
    assert set(late.values_list("variant", flat=True)) == {0}
    subjects = {m["To"].addresses[0].addr_spec: m["Subject"] for m in sink_messages()}
    assert all(subjects[x.email].startswith("Variant A") for x in by_variant[1][20:])
    step = api.get(f"/v1/campaigns/{cid}").json()["stats"]["steps"][0]
    assert [v["sent"] for v in step["variants"]] == [30, 20]
    assert scheduler.tick(dispatch=lambda items: None)["winners"] == 0  # a choice is never revised

    # the console's campaign page: the variants side by side with their figures, the winner and why
    from django.test import Client

    client = Client()
    client.force_login(owner)
    html = client.get(f"/console/campaigns/{cid}/").content.decode()
    assert 'data-testid="variant-1-A"' in html and 'data-testid="variant-1-B"' in html
    assert "Variant A for P0" in html and "Variant B for P0" in html
    assert "<th scope=\"row\">Interested</th><td>9 (30.0%)</td>" in html
    assert "<th scope=\"row\">Interested</th><td>0 (0.0%)</td>" in html
    assert "Variant A won on" in html and "interested rate 30.0% over 30 sends" not in html
    assert "interested rate 45.0% over 20 sends, against B 0.0%" in html  # the figures at the time of the choice

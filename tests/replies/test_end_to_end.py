"""End to end in sandbox mode: create and launch a campaign through the API, send its first step into the mail
sink, answer it over SMTP to the inbound listener (a reply and a bounce), then read them with get_replies."""

from __future__ import annotations

import email
import email.policy
import smtplib

import pytest

from tests.campaigns.helpers import create, launch
from tests.replies.conftest import corpus
from tests.replies.test_smtp_inbound import free_port

pytestmark = pytest.mark.django_db(transaction=True)

ALWAYS = {"timezone": "UTC", "days": ["mon", "tue", "wed", "thu", "fri", "sat", "sun"], "start_hour": 0,
          "end_hour": 24}


@pytest.fixture
def listener(eager):
    from replies.smtp import make_controller

    controller = make_controller(host="127.0.0.1", port=free_port())
    controller.start()
    yield controller
    controller.stop()


def sink_messages():
    from core.mail import sink

    return [email.message_from_bytes(m.as_bytes(), policy=email.policy.default) for m in sink()]


def test_campaign_reply_and_bounce_round_trip(api, owner, workspace, listener):
    from campaigns import sender
    from campaigns.models import CampaignLead, Suppression
    from sending.testing import make_active_mailbox

    mailbox = make_active_mailbox(workspace, email="alex@e2e-sbx.test")
    created = create(api, sending_window=ALWAYS)
    assert created.status_code in (200, 201), created.json()
    campaign_id = created.json()["result"]["campaign_id"]
    assert launch(api, campaign_id, owner).status_code == 200
    for lead in CampaignLead.objects.filter(campaign_id=campaign_id):
        assert sender.send_lead_step(lead_id=lead.pk, step=0) == "sent"
    sent = {m["To"].addresses[0].addr_spec: m for m in sink_messages()}
    assert set(sent) == {"ann@acme.test", "bob@beta.test"}

    # Ann answers from her mail client; Bob's server bounces the message
    ann = sent["ann@acme.test"]
    reply = (f"From: Ann <ann@acme.test>\r\nTo: {ann['From']}\r\nSubject: Re: {ann['Subject']}\r\n"
             f"Message-ID: <ann-reply@acme.test>\r\nIn-Reply-To: {ann['Message-ID']}\r\n"
             f"References: {ann['Message-ID']}\r\n\r\nInterested - send me some times for next week.\r\n\r\n"
             f"On Mon, Alex wrote:\r\n> {ann.get_body(('plain',)).get_content()[:40]}\r\n").encode()
    bounce = (corpus("postfix-user-unknown").replace(b"jane@acme.com", b"bob@beta.test")
              .replace(b"<msg-postfix-user-unknown@outreach-sbx.test>", sent["bob@beta.test"]["Message-ID"].encode()))
    with smtplib.SMTP(listener.hostname, listener.port, timeout=10) as client:
        client.sendmail("ann@acme.test", [mailbox.email], reply)
        client.sendmail("", [mailbox.email], bounce)

    body = api.post("/v1/get_replies", {"campaign_id": campaign_id}).json()
    replies = body["result"]["replies"]
    assert body["service"]["credits_charged"] == "0"
    assert [(r["classification"], r["lead_email"]) for r in replies] == [("bounce", "bob@beta.test"),
                                                                        ("interested", "ann@acme.test")]
    assert replies[1]["snippet"] == "Interested - send me some times for next week."
    assert replies[1]["from_email"] == "ann@acme.test" and replies[0]["from_email"].startswith("mailer-daemon@")

    reasons = dict(Suppression.objects.filter(workspace=workspace).values_list("email", "reason"))
    assert reasons == {"ann@acme.test": "replied", "bob@beta.test": "bounced"}
    for lead in CampaignLead.objects.filter(campaign_id=campaign_id):
        assert lead.state == "stopped"
        assert sender.send_lead_step(lead_id=lead.pk, step=1) == "not_due"  # the follow-up never goes out
    assert len(sink_messages()) == 2

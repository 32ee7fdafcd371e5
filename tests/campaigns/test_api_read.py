"""GET /v1/campaigns/:id, GET /v1/campaigns, GET /v1/campaigns/:id/leads (CONTRACT 4.10b)."""

from datetime import UTC, datetime, timedelta

import pytest
import time_machine

from campaigns import sender
from campaigns.models import Campaign, CampaignLead, SentMessage
from replies.models import InboundMessage, Reply
from sending.models import Mailbox
from sending.testing import make_active_mailbox
from tests.campaigns.conftest import ALWAYS, run_tick, sink_messages
from tests.campaigns.helpers import create, launch

BERLIN = {"timezone": "Europe/Berlin", "days": ["mon", "tue", "wed", "thu", "fri"], "start_hour": 9, "end_hour": 17}
EVENING = datetime(2026, 11, 18, 19, 30, tzinfo=UTC)  # Wednesday 20:30 in Berlin


def test_tour_campaign_waits_outside_window_with_next_send(api, owner, workspace):
    make_active_mailbox(workspace, email="alex@out-mail.test")
    with time_machine.travel(EVENING, tick=False):
        cid = create(api, sending_window=BERLIN).json()["result"]["campaign_id"]
        draft = api.get(f"/v1/campaigns/{cid}").json()
        assert (draft["state"], draft["next_send_at"], draft["waiting_reason"]) == ("draft", None, None)
        assert draft["stats"]["leads"]["queued"] == 2 and draft["mailboxes"] == []
        assert launch(api, cid, owner).status_code == 200
        resp = api.get(f"/v1/campaigns/{cid}")
        assert resp.status_code == 200, resp.json()
        body = resp.json()
        assert "service" not in body and "result" not in body
        assert body["state"] == "launched" and body["waiting_reason"] == "outside_window"
        assert body["next_send_at"] == "2026-11-19T08:00:00Z"  # Thursday 09:00 Berlin
        assert body["sending_window"] == BERLIN
        assert body["mailboxes"] == [{"mailbox_id": Mailbox.objects.get().pk, "email": "alex@out-mail.test",
                                      "status": "active"}]
        assert body["stats"]["leads"]["queued"] == 2 and body["stats"]["leads"]["total"] == 2
        assert run_tick()["dispatched"] == 0
    with time_machine.travel(datetime(2026, 11, 19, 8, 0, 1, tzinfo=UTC), tick=False):
        body = api.get(f"/v1/campaigns/{cid}").json()
        assert body["waiting_reason"] is None and body["next_send_at"] == "2026-11-19T08:00:01Z"
        assert run_tick()["dispatched"] == 2
        body = api.get(f"/v1/campaigns/{cid}").json()
        stats = body["stats"]
        assert stats["messages"]["sent_per_step"] == [{"step": 1, "sent": 2}, {"step": 2, "sent": 0}]
        assert stats["leads"]["active"] == 2 and stats["leads_contacted"] == 2
        assert (stats["bounce_rate"], stats["reply_rate"]) == (0.0, 0.0)
        assert body["next_send_at"] == "2026-11-23T08:00:00Z"  # step 2 after 2 days: Saturday -> Monday 09:00
        assert body["waiting_reason"] is None


def test_waiting_reasons(api, owner, workspace, clock, settings):
    mb = make_active_mailbox(workspace, email="alex@out-mail.test")
    cid = create(api, sending_window=ALWAYS).json()["result"]["campaign_id"]
    launch(api, cid, owner)
    campaign = Campaign.objects.get(pk=cid)
    Mailbox.objects.filter(pk=mb.pk).update(status="suspended")
    assert api.get(f"/v1/campaigns/{cid}").json()["waiting_reason"] == "no_active_mailbox"
    Mailbox.objects.filter(pk=mb.pk).update(status=Mailbox.Status.NEEDS_RECONNECT)
    body = api.get(f"/v1/campaigns/{cid}").json()
    assert (body["waiting_reason"], body["next_send_at"]) == ("mailbox_needs_reconnect", None)
    assert body["mailboxes"][0]["status"] == "needs_reconnect"
    Mailbox.objects.filter(pk=mb.pk).update(status="active", daily_limit=1)
    run_tick()
    assert len(sink_messages(settings)) == 1
    CampaignLead.objects.filter(campaign=campaign, state="active").update(next_send_at=datetime.now(UTC))
    body = api.get(f"/v1/campaigns/{cid}").json()
    assert body["waiting_reason"] == "daily_cap_reached"
    assert body["next_send_at"] == "2026-11-19T00:00:00Z"


def test_list_newest_first_cursor_and_state_filter(api, owner, workspace, clock, make_api):
    make_active_mailbox(workspace, email="alex@out-mail.test")
    ids = []
    for _ in range(5):
        ids.append(create(api, sending_window=ALWAYS).json()["result"]["campaign_id"])
        clock.shift(timedelta(seconds=1))
    launch(api, ids[1], owner)
    seen, cursor = [], None
    while True:
        resp = api.get("/v1/campaigns?limit=2" + (f"&cursor={cursor}" if cursor else ""))
        assert resp.status_code == 200, resp.json()
        page = resp.json()
        assert len(page["campaigns"]) <= 2
        seen += [c["campaign_id"] for c in page["campaigns"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == ids[::-1]
    launched = api.get("/v1/campaigns?state=launched").json()["campaigns"]
    assert [c["campaign_id"] for c in launched] == [ids[1]]
    assert launched[0]["waiting_reason"] is None and launched[0]["messages_sent"] == 0
    assert api.get("/v1/campaigns?state=nope").json()["error"]["code"] == "invalid_request"
    bad = api.get("/v1/campaigns?cursor=zzz")
    assert bad.status_code == 400 and "cursor" in bad.json()["error"]["details"]["fields"]
    # the POST on the same path still creates
    assert create(api).status_code == 200
    # another workspace sees none of them, and gets 404 for an id
    other, _, _ = make_api()
    assert other.get("/v1/campaigns").json() == {"campaigns": [], "next_cursor": None}
    assert other.get(f"/v1/campaigns/{ids[0]}").status_code == 404
    assert other.get(f"/v1/campaigns/{ids[0]}/leads").status_code == 404
    assert api.get("/v1/campaigns/not-a-uuid").json()["error"]["code"] == "not_found"


def test_leads_status_steps_reply_and_cursor(launched, api, settings, clock, workspace):
    campaign, mb = launched
    run_tick()
    leads = api.get(f"/v1/campaigns/{campaign.pk}/leads").json()
    assert [lead["email"] for lead in leads["leads"]] == ["ann@acme.test", "bob@beta.test"]
    ann = leads["leads"][0]
    assert ann["status"] == "active" and ann["last_step_sent"] == 1 and ann["next_step"] == 2
    assert ann["last_sent_at"] == "2026-11-18T10:00:00Z" and ann["next_send_at"] == "2026-11-20T10:00:00Z"
    assert ann["reply_id"] is None and ann["send_in_doubt"] is None
    # Ann replies
    from replies import services as replies

    sent = SentMessage.objects.get(to_email="ann@acme.test")
    raw = (f"From: Ann <ann@acme.test>\r\nTo: {mb.email}\r\nSubject: Re: Hi Ann\r\n"
           f"Message-ID: <r1@acme.test>\r\nIn-Reply-To: <{sent.message_id}>\r\n\r\nSure, let's talk Tuesday.\r\n").encode()
    stored = replies.inbound_store(mailbox=mb, raw=raw, source="smtp")
    replies.inbound_classify(inbound_id=stored.inbound.pk)
    reply = Reply.objects.get()
    page = api.get(f"/v1/campaigns/{campaign.pk}/leads?limit=1").json()
    assert len(page["leads"]) == 1 and page["next_cursor"]
    ann = page["leads"][0]
    assert (ann["status"], ann["reply_id"], ann["next_step"], ann["next_send_at"]) == ("replied", reply.pk, None, None)
    rest = api.get(f"/v1/campaigns/{campaign.pk}/leads?cursor={page['next_cursor']}").json()
    assert [lead["email"] for lead in rest["leads"]] == ["bob@beta.test"] and rest["next_cursor"] is None
    replied = api.get(f"/v1/campaigns/{campaign.pk}/leads?status=replied").json()["leads"]
    assert [lead["email"] for lead in replied] == ["ann@acme.test"]
    stats = api.get(f"/v1/campaigns/{campaign.pk}").json()["stats"]
    assert stats["replies"]["interested"] == 1 and stats["leads"]["replied"] == 1 and stats["reply_rate"] == 0.5
    assert InboundMessage.objects.count() == 1


def test_lead_mid_send_at_a_crash_is_visible(launched, api, clock, monkeypatch):
    """Issue 15.9: a message left in `sending` (the process died while SMTP was spoken) shows on the lead."""
    campaign, _ = launched

    def crash(**kw):
        raise SystemExit("killed mid-send")

    monkeypatch.setattr("sending.transport.send_message", crash)
    with pytest.raises(SystemExit):
        run_tick()
    lead = api.get(f"/v1/campaigns/{campaign.pk}/leads").json()["leads"][0]
    doubt = lead["send_in_doubt"]
    assert doubt["step"] == 1 and doubt["sending_since"] == "2026-11-18T10:00:00Z" and doubt["reported_at"] is None
    assert lead["status"] == "queued" and lead["next_send_at"] is None
    clock.shift(sender.STUCK_AFTER + timedelta(minutes=1))
    monkeypatch.undo()
    run_tick()
    lead = api.get(f"/v1/campaigns/{campaign.pk}/leads").json()["leads"][0]
    assert lead["status"] == "send_unknown" and lead["stop_reason"] == "send_unknown"
    assert lead["send_in_doubt"]["reported_at"] is not None
    assert SentMessage.objects.filter(campaign_lead__email=lead["email"]).count() == 1  # never re-sent
    body = api.get(f"/v1/campaigns/{campaign.pk}").json()
    assert body["stats"]["leads"]["send_unknown"] == 1 and body["stats"]["messages"]["in_doubt"] == 1
    unknown = api.get(f"/v1/campaigns/{campaign.pk}/leads?status=send_unknown").json()["leads"]
    assert [x["email"] for x in unknown] == [lead["email"]]

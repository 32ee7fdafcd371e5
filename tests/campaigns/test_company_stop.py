"""`stop_on_company_reply`: a reply from one lead of a company domain stops the others of that domain in the
campaign (`stopped_company_replied`, not suppressed); free-mail domains, out-of-office notices and bounces do not."""

from __future__ import annotations

import pytest

from tests.campaigns.conftest import ALWAYS
from tests.campaigns.helpers import create, launch
from tests.replies.conftest import reply_bytes

pytestmark = pytest.mark.django_db

LEADS = [{"email": e} for e in ("ann@acme.test", "cid@acme.test", "dan@acme.test", "x@gmail.com", "y@gmail.com",
                                "eve@other.test", "fay@other.test", "gus@third.test")]


def _launched(api, owner, workspace, **over):
    from campaigns import sender
    from campaigns.models import CampaignLead, SentMessage
    from sending.testing import make_active_mailbox

    mailbox = make_active_mailbox(workspace)
    cid = create(api, leads=LEADS, sending_window=ALWAYS, **over).json()["result"]["campaign_id"]
    assert launch(api, cid, owner).status_code == 200
    for lead in CampaignLead.objects.filter(campaign_id=cid):
        assert sender.send_lead_step(lead_id=lead.pk, step=0) == "sent"
    sent = dict(SentMessage.objects.filter(campaign_id=cid).values_list("to_email", "message_id"))
    return cid, mailbox, sent


def _reply(mailbox, sent, frm, body, **kw):
    from replies import services

    raw = reply_bytes(frm=frm, to=mailbox.email, body=body, message_id=f"<r-{frm}>", in_reply_to=f"<{sent[frm]}>",
                      **kw)
    stored = services.inbound_store(mailbox=mailbox, raw=raw, source="smtp")
    return services.inbound_classify(inbound_id=stored.inbound.pk)


def _states(cid):
    from campaigns.models import CampaignLead

    return {e: (s, r) for e, s, r in CampaignLead.objects.filter(campaign_id=cid).values_list("email", "state",
                                                                                             "stop_reason")}


def test_a_colleagues_reply_stops_the_company(api, owner, workspace):
    from campaigns.models import Suppression

    cid, mailbox, sent = _launched(api, owner, workspace, stop_on_company_reply=True)
    assert api.get(f"/v1/campaigns/{cid}").json()["stop_on_company_reply"] is True

    inbound = _reply(mailbox, sent, "ann@acme.test", "Interested - can we talk on Tuesday?")
    assert inbound.classification == "interested"
    states = _states(cid)
    assert states["ann@acme.test"] == ("stopped", "replied")
    assert states["cid@acme.test"] == states["dan@acme.test"] == ("stopped", "stopped_company_replied")
    assert set(inbound.detail["stopped"]) == {x.pk for x in _leads(cid, "ann@acme.test", "cid@acme.test",
                                                                    "dan@acme.test")}
    assert set(Suppression.objects.values_list("email", flat=True)) == {"ann@acme.test"}  # colleagues not suppressed

    # a free-mail domain is not a company; an out-of-office notice says nothing about the company
    _reply(mailbox, sent, "x@gmail.com", "Not interested, thanks.")
    _reply(mailbox, sent, "eve@other.test", "I am out of the office until Monday with limited access to email.",
           extra="Auto-Submitted: auto-replied")
    states = _states(cid)
    assert states["x@gmail.com"] == ("stopped", "replied") and states["y@gmail.com"] == ("active", "")
    assert states["eve@other.test"][0] == "stopped" and states["fay@other.test"] == ("active", "")
    assert states["gus@third.test"] == ("active", "")

    leads = api.get(f"/v1/campaigns/{cid}/leads?status=stopped_company_replied").json()["leads"]
    assert sorted(lead["email"] for lead in leads) == ["cid@acme.test", "dan@acme.test"]
    assert {lead["status"] for lead in leads} == {"stopped_company_replied"}
    assert api.get(f"/v1/campaigns/{cid}").json()["stats"]["leads"]["stopped_company_replied"] == 2


def test_without_the_option_colleagues_go_on(api, owner, workspace):
    cid, mailbox, sent = _launched(api, owner, workspace)
    _reply(mailbox, sent, "ann@acme.test", "Interested - can we talk on Tuesday?")
    states = _states(cid)
    assert states["ann@acme.test"] == ("stopped", "replied") and states["cid@acme.test"] == ("active", "")


def _leads(cid, *emails):
    from campaigns.models import CampaignLead

    return list(CampaignLead.objects.filter(campaign_id=cid, email__in=emails))


def test_a_correction_to_a_real_answer_stops_the_company(api, owner, workspace):
    from replies.corrections import reply_correct
    from replies.models import Reply

    cid, mailbox, sent = _launched(api, owner, workspace, stop_on_company_reply=True)
    _reply(mailbox, sent, "eve@other.test", "I am out of the office until Monday with limited access to email.",
           extra="Auto-Submitted: auto-replied")
    assert _states(cid)["fay@other.test"] == ("active", "")
    reply = Reply.objects.get(from_email="eve@other.test")
    reply_correct(workspace=workspace, reply_id=reply.pk, label="interested", user=owner)
    assert _states(cid)["fay@other.test"] == ("stopped", "stopped_company_replied")
    reply_correct(workspace=workspace, reply_id=reply.pk, label="out_of_office", user=owner)
    assert _states(cid)["fay@other.test"] == ("stopped", "stopped_company_replied")  # never lifted

import pytest

from campaigns import selectors, services
from campaigns.models import Campaign, CampaignLead, SentMessage, Suppression


def _campaign(workspace, emails, state=Campaign.State.LAUNCHED, lead_state=CampaignLead.State.ACTIVE):
    c = Campaign.objects.create(workspace=workspace, name="c", state=state, steps=[{"subject": "s", "body": "b"}])
    for i, e in enumerate(emails):
        CampaignLead.objects.create(campaign=c, workspace=workspace, email=e, state=lead_state, position=i)
    return c


def test_suppression_add_is_idempotent_and_first_reason_wins(workspace):
    a = services.suppression_add(workspace=workspace, email=" Bob@Example.COM ", reason="unsubscribed", source="link")
    b = services.suppression_add(workspace=workspace, email="bob@example.com", reason="replied")
    assert a.pk == b.pk and b.reason == "unsubscribed" and b.email == "bob@example.com"
    assert Suppression.objects.filter(workspace=workspace).count() == 1
    assert selectors.suppression_get(workspace=workspace, email="BOB@example.com").reason == "unsubscribed"


def test_suppression_add_rejects_unknown_reason(workspace):
    with pytest.raises(ValueError):
        services.suppression_add(workspace=workspace, email="a@b.co", reason="whatever")


def test_suppression_is_per_workspace(workspace, make_api):
    _, other, _ = make_api()
    services.suppression_add(workspace=other, email="a@b.co", reason="bounced")
    assert selectors.suppression_get(workspace=workspace, email="a@b.co") is None


def test_suppression_stops_active_leads_and_completes_campaign(workspace):
    c = _campaign(workspace, ["a@b.co"])
    services.suppression_add(workspace=workspace, email="A@b.co", reason="replied")
    lead = CampaignLead.objects.get(campaign=c)
    assert (lead.state, lead.stop_reason, lead.next_send_at) == ("stopped", "replied", None)
    c.refresh_from_db()
    assert c.state == "completed"


def test_lead_stop_is_repeatable(workspace):
    c = _campaign(workspace, ["a@b.co", "c@d.co"])
    lead = c.leads.get(email="a@b.co")
    assert services.lead_stop(lead=lead, reason="replied") is True
    assert services.lead_stop(lead=lead, reason="replied") is False
    c.refresh_from_db()
    assert c.state == "launched"  # the other lead is still active


def test_selectors(workspace, make_api):
    c = _campaign(workspace, ["a@b.co"])
    lead = c.leads.get()
    SentMessage.objects.create(workspace=workspace, campaign=c, campaign_lead=lead, step_index=0,
                               message_id="abc.123@mail.test", to_email="a@b.co", state="sent")
    assert selectors.sent_message_by_message_id(message_id=" <abc.123@mail.test> ").campaign_lead == lead
    assert selectors.sent_message_by_message_id(message_id="<nope@x>") is None
    assert list(selectors.leads_for_address(workspace=workspace, email="A@B.co")) == [lead]
    _, other, _ = make_api()
    assert list(selectors.leads_for_address(workspace=other, email="a@b.co")) == []


def test_demo_seed_is_idempotent(workspace):
    from campaigns import demo

    demo.seed(workspace)
    demo.seed(workspace)
    c = Campaign.objects.get(workspace=workspace, name=demo.DEMO_NAME)
    assert c.state == "draft" and c.leads_accepted == 3 and c.steps[1]["subject"] is None

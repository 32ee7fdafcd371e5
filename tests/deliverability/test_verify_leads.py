"""`verify_leads: true`: the launch preview shows the verification cost, the launch holds it, verifies the leads
without a recent verification against real DNS and SMTP peers, charges 1 credit per result (`unknown` free) and
suppresses `invalid` leads as `invalid_email` so they are never sent to."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from billing.models import Hold
from campaigns.models import CampaignLead, Suppression
from leads.verification.models import Verification
from sending.testing import make_active_mailbox
from tests.campaigns.helpers import approve, create
from tests.verification.conftest import dns_peer, net, smtp_peers  # noqa: F401 - the verifier's real peers

pytestmark = pytest.mark.django_db

LEADS = [{"email": "ann@good.test"}, {"email": "nobody@good.test"}, {"email": "kim@unreachable.test"},
         {"email": "known@good.test"}, {"email": "gone@good.test"}, {"email": "role@good.test"}]


@pytest.mark.django_db(transaction=True)  # committed rows: on PostgreSQL the leads are verified by worker threads
def test_preview_shows_the_cost_and_launch_charges_exactly(api, owner, workspace, net):  # noqa: F811
    net.simple("good.test", users=["ann@good.test"])  # anyone else: 550 user unknown
    net.domain("unreachable.test", "127.0.0.250")  # an MX host nobody listens on: unknown, a free miss
    now = timezone.now()
    Verification.objects.create(email="known@good.test", domain="good.test", status="valid", reason="accepted",
                                checked_at=now - timedelta(days=3))
    Verification.objects.create(email="gone@good.test", domain="good.test", status="invalid", reason="user_unknown",
                                checked_at=now - timedelta(days=10))
    Verification.objects.create(email="role@good.test", domain="good.test", status="risky", reason="role_account",
                                checked_at=now - timedelta(days=29))
    Verification.objects.create(email="kim@unreachable.test", domain="unreachable.test", status="valid",
                                reason="accepted", checked_at=now - timedelta(days=31))  # too old: verified again
    make_active_mailbox(workspace)
    cid = create(api, leads=LEADS, steps=[{"subject": "Hi", "body": "Hello"}], verify_leads=True).json()["result"][
        "campaign_id"]

    preview = api.post("/v1/launch_campaign", {"campaign_id": cid}).json()["result"]
    assert (preview["leads_to_verify"], preview["verification_credits_max"], preview["leads_catch_all"],
            preview["leads_risky"]) == (3, "3", 0, 1)
    token = approve(preview["confirmation_token"], owner)
    assert "3 leads verified at launch, at most 3 credits" in token.summary["verification"]

    r = api.post("/v1/launch_campaign", {"campaign_id": cid, "confirmation_token": preview["confirmation_token"]},
                 headers={"Idempotency-Key": "launch-verify"})
    body = r.json()
    assert r.status_code == 200, body
    assert body["result"]["status"] == "launched"
    assert (body["result"]["leads_verified"], body["result"]["leads_invalid"], body["result"]["leads_unknown"]) == (
        3, 2, 1)
    assert body["service"]["credits_charged"] == "2"  # ann (valid) + nobody (invalid); kim's unknown is free
    hold = Hold.objects.get(request_id=r["X-Request-Id"])
    assert hold.amount_micros == 3_000_000 and hold.captured_micros == 2_000_000

    reasons = dict(Suppression.objects.filter(workspace=workspace).values_list("email", "reason"))
    assert reasons == {"nobody@good.test": "invalid_email", "gone@good.test": "invalid_email"}
    states = dict(CampaignLead.objects.filter(campaign_id=cid).values_list("email", "state"))
    assert states["nobody@good.test"] == states["gone@good.test"] == "removed"  # never contacted
    assert {e for e, s in states.items() if s == "active"} == {"ann@good.test", "kim@unreachable.test",
                                                               "known@good.test", "role@good.test"}
    assert CampaignLead.objects.get(campaign_id=cid, email="gone@good.test").stop_reason == "invalid_email"


def test_a_campaign_without_verify_leads_costs_nothing_and_shows_no_figures(api, owner, workspace):
    make_active_mailbox(workspace)
    cid = create(api, leads=LEADS[:2], steps=[{"subject": "Hi", "body": "Hello"}]).json()["result"]["campaign_id"]
    preview = api.post("/v1/launch_campaign", {"campaign_id": cid}).json()["result"]
    assert "leads_to_verify" not in preview
    approve(preview["confirmation_token"], owner)
    body = api.post("/v1/launch_campaign", {"campaign_id": cid, "confirmation_token": preview["confirmation_token"]},
                    headers={"Idempotency-Key": "launch-plain"}).json()
    assert body["service"]["credits_charged"] == "0" and body["result"]["leads_active"] == 2


def test_an_unapproved_token_verifies_nothing(api, workspace, net):  # noqa: F811
    net.simple("good.test", users=["ann@good.test"])
    make_active_mailbox(workspace)
    cid = create(api, leads=LEADS[:2], steps=[{"subject": "Hi", "body": "Hello"}], verify_leads=True).json()[
        "result"]["campaign_id"]
    preview = api.post("/v1/launch_campaign", {"campaign_id": cid}).json()["result"]
    r = api.post("/v1/launch_campaign", {"campaign_id": cid, "confirmation_token": preview["confirmation_token"]},
                 headers={"Idempotency-Key": "launch-pending"})
    assert r.status_code == 409 and r.json()["error"]["code"] == "confirmation_pending"
    assert Verification.objects.count() == 0 and Hold.objects.count() == 0


def test_the_campaign_record_echoes_verify_leads(api, client):
    """create_campaign's answer, GET /v1/campaigns/:id and the list rows carry `verify_leads` (false unless asked),
    and OpenAPI documents it on the campaign record."""
    on = create(api, leads=LEADS[:1], verify_leads=True).json()["result"]
    off = create(api, leads=LEADS[:1]).json()["result"]
    assert on["verify_leads"] is True and off["verify_leads"] is False
    assert api.get(f"/v1/campaigns/{on['campaign_id']}").json()["verify_leads"] is True
    assert api.get(f"/v1/campaigns/{off['campaign_id']}").json()["verify_leads"] is False
    rows = {c["campaign_id"]: c["verify_leads"] for c in api.get("/v1/campaigns").json()["campaigns"]}
    assert rows == {on["campaign_id"]: True, off["campaign_id"]: False}
    schemas = client.get("/openapi.json").json()["components"]["schemas"]
    for name in ("CampaignOut", "CampaignDetailOut", "CampaignListItemOut"):
        record = next(v for k, v in schemas.items() if k.startswith(name))
        assert record["properties"]["verify_leads"]["type"] == "boolean", name
        assert "verify_leads" in record["required"], name

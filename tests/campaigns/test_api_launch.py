import uuid
from urllib.parse import urlparse

import pytest

from accounts import services as accounts
from campaigns import services
from campaigns.models import Campaign, CampaignLead
from sending.models import Mailbox
from sending.testing import make_active_mailbox
from tests.campaigns.helpers import approve, create, launch


@pytest.fixture
def mailboxes(workspace):
    return [make_active_mailbox(workspace, email=f"sender{i}@out-mail.test") for i in range(2)]


def _campaign(api, n=5, **over):
    leads = [{"email": f"lead{i}@corp.test", "first_name": f"L{i}"} for i in range(n)]
    return create(api, leads=leads, **over).json()["result"]["campaign_id"]


def test_preview_then_launch(api, owner, workspace, mailboxes):
    cid = _campaign(api)
    services.suppression_add(workspace=workspace, email="lead1@corp.test", reason="unsubscribed")
    preview = api.post("/v1/launch_campaign", {"campaign_id": cid})
    assert preview.status_code == 200, preview.json()
    p = preview.json()
    r = p["result"]
    assert r["status"] == "preview" and r["campaign_id"] == cid
    assert (r["mailboxes_active"], r["leads_active"], r["leads_suppressed_since_draft"]) == (2, 4, 1)
    assert r["confirmation_token"].startswith("ct_") and r["approval_url"].startswith("http")
    assert p["service"]["credits_charged"] == "0"
    token = accounts.token_lookup(plaintext=r["confirmation_token"])
    hours = (token.expires_at - token.created_at).total_seconds() / 3600
    assert round(hours) == 24
    assert token.summary["leads_to_contact"] == 4 and "Hi L0" in token.summary["first_step_subject"]
    # sandbox mode (the default here): the approver's headline does not promise real email
    assert token.summary["action"].endswith("the email goes to the sandbox sink on this machine")
    assert Campaign.objects.get(pk=cid).state == "draft"

    # the approval page shows the preview
    from django.test import Client
    c = Client()
    c.force_login(owner)
    page = c.get(urlparse(r["approval_url"]).path)
    assert page.status_code == 200 and "lead0@corp.test" in page.content.decode()

    # pending: not approved yet
    resp = api.post("/v1/launch_campaign", {"campaign_id": cid, "confirmation_token": r["confirmation_token"]},
                    headers={"Idempotency-Key": "l-0"})
    assert resp.status_code == 409 and resp.json()["error"]["code"] == "confirmation_pending"

    approve(r["confirmation_token"], owner)
    services.suppression_add(workspace=workspace, email="lead2@corp.test", reason="bounced")  # after preview
    resp = api.post("/v1/launch_campaign", {"campaign_id": cid, "confirmation_token": r["confirmation_token"]},
                    headers={"Idempotency-Key": "l-1"})
    assert resp.status_code == 200, resp.json()
    assert resp.json()["result"] == {"status": "launched", "campaign_id": cid, "mailboxes_attached": 2,
                                     "leads_active": 3, "leads_suppressed_at_launch": 2}
    assert resp.json()["service"]["credits_charged"] == "0"
    camp = Campaign.objects.get(pk=cid)
    assert camp.state == "launched" and camp.mailboxes.count() == 2
    leads = {lead.email: lead for lead in camp.leads.all()}
    assert leads["lead1@corp.test"].state == "removed" and leads["lead1@corp.test"].stop_reason == "unsubscribed"
    assert leads["lead2@corp.test"].state == "removed" and leads["lead2@corp.test"].stop_reason == "bounced"
    active = [lead for lead in leads.values() if lead.state == "active"]
    assert len(active) == 3 and all(lead.mailbox_id and lead.next_send_at for lead in active)
    assert {lead.mailbox_id for lead in active} == {m.pk for m in mailboxes}  # round robin

    # idempotent replay: same key, same body -> same bytes; no second launch
    again = api.post("/v1/launch_campaign", {"campaign_id": cid, "confirmation_token": r["confirmation_token"]},
                     headers={"Idempotency-Key": "l-1"})
    assert again.content == resp.content and again.headers["Idempotent-Replayed"] == "true"
    # a new key: the campaign is no longer a draft
    other = api.post("/v1/launch_campaign", {"campaign_id": cid, "confirmation_token": r["confirmation_token"]},
                     headers={"Idempotency-Key": "l-2"})
    assert other.status_code == 409 and other.json()["error"]["code"] == "campaign_not_draft"
    prev = api.post("/v1/launch_campaign", {"campaign_id": cid})
    assert prev.status_code == 409 and prev.json()["error"]["code"] == "campaign_not_draft"


def test_launch_needs_idempotency_key_with_token(api, owner, mailboxes):
    cid = _campaign(api)
    r = api.post("/v1/launch_campaign", {"campaign_id": cid}).json()["result"]
    approve(r["confirmation_token"], owner)
    resp = api.post("/v1/launch_campaign", {"campaign_id": cid, "confirmation_token": r["confirmation_token"]})
    assert resp.status_code == 428 and resp.json()["error"]["code"] == "idempotency_key_required"
    assert Campaign.objects.get(pk=cid).state == "draft"


def test_no_active_mailbox(api, owner, workspace):
    cid = _campaign(api)
    resp = api.post("/v1/launch_campaign", {"campaign_id": cid})
    assert resp.status_code == 409 and resp.json()["error"]["code"] == "sending_capacity_required"
    mb = make_active_mailbox(workspace)
    r = api.post("/v1/launch_campaign", {"campaign_id": cid}).json()["result"]
    approve(r["confirmation_token"], owner)
    Mailbox.objects.filter(pk=mb.pk).update(status="suspended")
    resp = api.post("/v1/launch_campaign", {"campaign_id": cid, "confirmation_token": r["confirmation_token"]},
                    headers={"Idempotency-Key": "x"})
    assert resp.status_code == 409 and resp.json()["error"]["code"] == "sending_capacity_required"
    assert Campaign.objects.get(pk=cid).state == "draft"


def test_unknown_and_foreign_campaign_404(api, make_api, mailboxes):
    other_api, other_ws, _ = make_api()
    make_active_mailbox(other_ws)
    foreign = _campaign(other_api)
    for cid in (foreign, str(uuid.uuid4())):
        resp = api.post("/v1/launch_campaign", {"campaign_id": cid})
        assert resp.status_code == 404 and resp.json()["error"]["code"] == "not_found"
    bad = api.post("/v1/launch_campaign", {"campaign_id": "nope"})
    assert bad.status_code == 400 and "campaign_id" in bad.json()["error"]["details"]["fields"]


def test_token_bound_to_campaign(api, owner, mailboxes):
    a, b = _campaign(api), _campaign(api)
    r = api.post("/v1/launch_campaign", {"campaign_id": a}).json()["result"]
    approve(r["confirmation_token"], owner)
    resp = api.post("/v1/launch_campaign", {"campaign_id": b, "confirmation_token": r["confirmation_token"]},
                    headers={"Idempotency-Key": "x"})
    assert resp.status_code == 400 and resp.json()["error"]["code"] == "confirmation_invalid"


def test_denied_token(api, owner, mailboxes):
    cid = _campaign(api)
    r = api.post("/v1/launch_campaign", {"campaign_id": cid}).json()["result"]
    accounts.token_deny(token=accounts.token_lookup(plaintext=r["confirmation_token"]), user=owner)
    resp = api.post("/v1/launch_campaign", {"campaign_id": cid, "confirmation_token": r["confirmation_token"]},
                    headers={"Idempotency-Key": "x"})
    assert resp.status_code == 403 and resp.json()["error"]["code"] == "confirmation_denied"


def test_scope_required(make_api):
    api, ws, _ = make_api(scopes=["campaign:write"])
    resp = api.post("/v1/launch_campaign", {"campaign_id": str(uuid.uuid4())})
    assert resp.status_code == 403 and resp.json()["error"]["details"]["required_scope"] == "campaign:launch"


@pytest.mark.parametrize("failure", ["raise", "short_count"])
def test_launch_fails_closed(api, owner, workspace, mailboxes, monkeypatch, failure):
    cid = _campaign(api)
    r = api.post("/v1/launch_campaign", {"campaign_id": cid}).json()["result"]
    approve(r["confirmation_token"], owner)
    services.suppression_add(workspace=workspace, email="lead3@corp.test", reason="replied")

    def broken(*, pks, reason, now):
        if failure == "raise":
            from django.db import DatabaseError
            raise DatabaseError("connection lost mid-update")
        return 0  # the update "succeeded" but moved nothing: not confirmed

    monkeypatch.setattr(services, "_remove_leads", broken)
    resp = api.post("/v1/launch_campaign", {"campaign_id": cid, "confirmation_token": r["confirmation_token"]},
                    headers={"Idempotency-Key": "x"})
    assert resp.status_code == 409 and resp.json()["error"]["code"] == "launch_aborted"
    camp = Campaign.objects.get(pk=cid)
    assert camp.state == "draft" and camp.launched_at is None
    assert set(camp.leads.values_list("state", flat=True)) == {"pending"}
    assert not CampaignLead.objects.filter(campaign=camp, next_send_at__isnull=False).exists()
    # the token was not used up: once the re-check works, the same approval launches
    monkeypatch.undo()
    resp = api.post("/v1/launch_campaign", {"campaign_id": cid, "confirmation_token": r["confirmation_token"]},
                    headers={"Idempotency-Key": "y"})
    assert resp.status_code == 200, resp.json()
    assert resp.json()["result"]["leads_suppressed_at_launch"] == 1


def test_launch_with_every_lead_suppressed_completes(api, owner, workspace, mailboxes):
    cid = _campaign(api, n=1)
    services.suppression_add(workspace=workspace, email="lead0@corp.test", reason="manual")
    resp = launch(api, cid, owner)
    assert resp.json()["result"]["leads_active"] == 0
    assert Campaign.objects.get(pk=cid).state == "completed"

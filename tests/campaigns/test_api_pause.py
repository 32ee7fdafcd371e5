"""pause_campaign / resume_campaign (CONTRACT 4.10b): a paused campaign sends nothing more; resume continues."""

from datetime import timedelta

import pytest
from django.utils import timezone

from campaigns import scheduler, sender, services
from campaigns.models import Campaign, CampaignLead, SentMessage
from tests.campaigns.conftest import ALWAYS, run_tick, sink_messages
from tests.campaigns.helpers import create, launch
from tests.factories import make_workspace


def pause(api, cid, **kw):
    return api.post("/v1/pause_campaign", {"campaign_id": cid}, **kw)


def resume(api, cid, key="resume-1"):
    return api.post("/v1/resume_campaign", {"campaign_id": cid}, headers={"Idempotency-Key": key})


def test_pause_stops_sending_and_resume_continues(launched, api, settings, clock):
    campaign, _ = launched
    cid = str(campaign.pk)
    run_tick()
    assert len(sink_messages(settings)) == 2  # step 1 to both leads
    resp = pause(api, cid)
    assert resp.status_code == 200, resp.json()
    result = resp.json()["result"]
    assert (result["state"], result["waiting_reason"], result["next_send_at"]) == ("paused", "paused", None)
    assert resp.json()["service"]["credits_charged"] == "0"
    assert pause(api, cid).json()["result"]["state"] == "paused"  # safe to repeat
    clock.shift(timedelta(days=3))  # step 2 is due
    for _ in range(3):
        assert run_tick()["dispatched"] == 0
    # even a task dispatched before the pause (the lease still matches) claims nothing
    lead = CampaignLead.objects.filter(campaign=campaign).first()
    assert sender.send_lead_step(lead_id=lead.pk, step=1) == "paused"
    assert len(sink_messages(settings)) == 2
    body = api.get(f"/v1/campaigns/{cid}").json()
    assert (body["state"], body["waiting_reason"], body["next_send_at"]) == ("paused", "paused", None)
    assert body["paused_at"] is not None
    assert body["stats"]["leads"]["active"] == 2

    resp = resume(api, cid)
    assert resp.status_code == 200, resp.json()
    assert resp.json()["result"]["state"] == "launched" and resp.json()["result"]["waiting_reason"] is None
    assert resume(api, cid).content == resp.content  # idempotent replay
    assert run_tick()["dispatched"] == 2
    assert len(sink_messages(settings)) == 4
    campaign.refresh_from_db()
    assert campaign.state == "completed"
    again = resume(api, cid, key="resume-2")
    assert again.status_code == 409 and again.json()["error"]["code"] == "campaign_not_paused"
    done = pause(api, cid)
    assert done.status_code == 409 and done.json()["error"]["code"] == "campaign_not_launched"


def test_pause_between_claim_and_hand_over_sends_nothing(launched, api, settings, clock, monkeypatch):
    """A claim already made when the pause commits is dropped at the hand-over, and due again on resume."""
    campaign, _ = launched
    real = sender._hand_over

    def pause_first(lead, sent):
        services.campaign_pause(workspace=campaign.workspace, campaign_id=campaign.pk)
        return real(lead, sent)

    monkeypatch.setattr(sender, "_hand_over", pause_first)
    lead = CampaignLead.objects.get(campaign=campaign, email="ann@acme.test")
    assert sender.send_lead_step(lead_id=lead.pk, step=0) == "paused"
    monkeypatch.undo()
    assert sink_messages(settings) == []
    assert SentMessage.objects.get(campaign_lead=lead).state == "failed"
    lead.refresh_from_db()
    assert lead.state == "active" and lead.next_send_at is not None
    assert run_tick()["dispatched"] == 0
    assert resume(api, str(campaign.pk)).status_code == 200
    run_tick()
    assert sorted(m["To"] for m in sink_messages(settings)) == ["Ann <ann@acme.test>", "Stone <bob@beta.test>"]


def test_task_dispatched_before_the_pause_gives_its_lease_back(launched, api, settings, clock):
    """The scheduler leases a lead (next_send_at moved LEASE ahead) when it queues its task. If the campaign
    is paused before the task runs, the task claims nothing and hands the lease back: on resume the lead is
    due at the next tick, not when the lease would have run out."""
    campaign, _ = launched
    queued = []
    assert scheduler.tick(dispatch=queued.extend)["dispatched"] == 2
    assert CampaignLead.objects.filter(campaign=campaign, next_send_at__gt=timezone.now()).count() == 2  # leased
    assert pause(api, str(campaign.pk)).status_code == 200
    for lead_id, step, lease in queued:
        assert sender.send_lead_step(lead_id=lead_id, step=step, lease=lease) == "paused"
    assert sink_messages(settings) == []
    assert CampaignLead.objects.filter(campaign=campaign, next_send_at__lte=timezone.now()).count() == 2
    assert resume(api, str(campaign.pk)).status_code == 200
    assert run_tick()["dispatched"] == 2
    assert len(sink_messages(settings)) == 2


def test_resume_rechecks_suppression(launched, api, settings, workspace):
    campaign, _ = launched
    pause(api, str(campaign.pk))
    from campaigns.models import Suppression

    Suppression.objects.create(workspace=workspace, email="bob@beta.test", reason="unsubscribed")  # behind our back
    assert resume(api, str(campaign.pk)).status_code == 200
    bob = CampaignLead.objects.get(campaign=campaign, email="bob@beta.test")
    assert (bob.state, bob.stop_reason) == ("stopped", "unsubscribed")
    run_tick()
    assert [m["To"] for m in sink_messages(settings)] == ["Ann <ann@acme.test>"]


def test_pause_and_resume_rules(api, owner, workspace, clock, make_api):
    from sending.testing import make_active_mailbox

    make_active_mailbox(workspace)
    cid = create(api, sending_window=ALWAYS).json()["result"]["campaign_id"]
    draft = pause(api, cid)
    assert draft.status_code == 409 and draft.json()["error"]["code"] == "campaign_not_launched"
    not_paused = resume(api, cid)
    assert not_paused.status_code == 409 and not_paused.json()["error"]["code"] == "campaign_not_paused"
    launch(api, cid, owner)
    no_key = api.post("/v1/resume_campaign", {"campaign_id": cid})
    assert no_key.status_code == 428 and no_key.json()["error"]["code"] == "idempotency_key_required"
    assert api.post("/v1/pause_campaign", {}).json()["error"]["details"]["fields"] == {
        "campaign_id": ["This field is required."]}
    # scope campaign:launch
    from tests.conftest import Api

    _, _, weak_key = make_workspace(scopes=["campaign:write"])
    weak = Api(weak_key)
    denied = weak.post("/v1/pause_campaign", {"campaign_id": cid})
    assert denied.status_code == 403 and denied.json()["error"]["details"]["required_scope"] == "campaign:launch"
    # another workspace's campaign is 404, with a key that has the scope
    other, _, _ = make_api()
    assert pause(other, cid).status_code == 404
    assert Campaign.objects.get(pk=cid).state == "launched"


def test_paused_campaign_completes_when_its_last_lead_stops(launched, api, workspace):
    campaign, _ = launched
    pause(api, str(campaign.pk))
    for email in ("ann@acme.test", "bob@beta.test"):
        services.suppression_add(workspace=workspace, email=email, reason="replied")
    campaign.refresh_from_db()
    assert campaign.state == "completed"
    assert api.get(f"/v1/campaigns/{campaign.pk}").json()["waiting_reason"] == "completed"


@pytest.mark.django_db(transaction=True)
def test_scheduler_skips_paused_campaign_leads_without_starving_others(api, owner, workspace, clock, settings):
    from sending.testing import make_active_mailbox

    make_active_mailbox(workspace)
    a = create(api, sending_window=ALWAYS, steps=[{"subject": "a", "body": "a"}]).json()["result"]["campaign_id"]
    b = create(api, sending_window=ALWAYS, steps=[{"subject": "b", "body": "b"}],
               leads=[{"email": "c@gamma.test"}]).json()["result"]["campaign_id"]
    launch(api, a, owner, key="la")
    launch(api, b, owner, key="lb")
    pause(api, a)
    stats = scheduler.tick(dispatch=scheduler.run_inline, limit=1)
    assert stats["dispatched"] == 1
    assert [m["Subject"] for m in sink_messages(settings)] == ["b"]


def test_pause_says_how_many_messages_are_already_in_smtp(launched, api):
    """A message already handed to SMTP finishes after the pause answered: the answer counts them."""
    campaign, _ = launched
    cid = str(campaign.pk)
    lead = CampaignLead.objects.filter(campaign=campaign).first()
    SentMessage.objects.create(workspace=campaign.workspace, campaign=campaign, campaign_lead=lead, step_index=0,
                               message_id="in-flight@test", to_email=lead.email, state=SentMessage.State.SENDING)
    result = pause(api, cid).json()["result"]
    assert result["state"] == "paused" and result["sends_in_flight"] == 1
    SentMessage.objects.filter(message_id="in-flight@test").update(state=SentMessage.State.SENT)
    assert pause(api, cid).json()["result"]["sends_in_flight"] == 0

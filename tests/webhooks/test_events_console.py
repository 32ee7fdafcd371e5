"""Events from the domain flows (a classified reply, balance.low) and the console pages."""

from __future__ import annotations

import pytest
from django.db import transaction
from django.test import Client

from billing.services import hold_place
from core.money import credits
from tests.replies.conftest import make_world, reply_bytes
from webhooks import services
from webhooks.models import WebhookDelivery

pytestmark = pytest.mark.django_db(transaction=True)


def endpoint(workspace, receiver, events):
    return services.endpoint_create(workspace=workspace, url=receiver.url, events=events)


def test_a_classified_reply_reaches_the_receiver_with_its_classification(workspace, receiver, queued, monkeypatch):
    from replies import services as replies
    from replies import tasks as reply_tasks

    monkeypatch.setattr(reply_tasks.classify_inbound, "delay", lambda *a: None)  # the test classifies itself

    _, secret = endpoint(workspace, receiver, ["reply.received"])
    world = make_world(workspace)
    stored = replies.inbound_store(mailbox=world.mailbox, raw=reply_bytes(in_reply_to="<msg-0@outreach-sbx.test>"),
                                   source="smtp")
    assert queued == []  # not before it is classified
    replies.inbound_classify(inbound_id=stored.inbound.pk)
    (delivery_id,) = queued  # queued as the classification commits: sent at once by a worker
    assert services.delivery_attempt(delivery_id=delivery_id) == "succeeded"
    payload = receiver.verified(secret)
    assert payload["type"] == "reply.received"
    data = payload["data"]
    assert data["from_email"] == "jane@acme.com" and data["classification"]
    assert data["campaign_id"] == str(world.campaign.pk) and data["reply_id"].startswith("rpl_")
    replies.inbound_classify(inbound_id=stored.inbound.pk)  # classifying again emits nothing new
    assert len(queued) == 1


def test_balance_low_fires_once_below_the_threshold_and_rearms(workspace, receiver, queued):
    _, secret = endpoint(workspace, receiver, ["balance.low"])
    services.balance_threshold_set(workspace=workspace, threshold=credits("100"))
    assert services.balances_check() == 0  # 300 available
    with transaction.atomic():
        hold = hold_place(workspace=workspace, amount=credits("250"), request_id="req_x")
    assert services.balances_check() == 1
    assert services.balances_check() == 0  # once
    services.delivery_attempt(delivery_id=queued[0])
    data = receiver.verified(secret)["data"]
    assert data == {"credits_balance": "300", "credits_reserved": "250", "credits_available": "50",
                    "threshold": "100"}
    from billing.services import hold_release

    hold_release(hold=hold)
    assert services.balances_check() == 0  # back above: re-armed
    with transaction.atomic():
        hold_place(workspace=workspace, amount=credits("250"), request_id="req_y")
    assert services.balances_check() == 1


def test_console_add_log_replay(workspace, owner, receiver, queued, settings):
    browser = Client()
    browser.force_login(owner)
    page = browser.post("/console/webhooks/", {"url": receiver.url, "events": ["approval.requested"]})
    assert page.status_code == 302  # POST/redirect/GET: a reload of the secret's page creates nothing
    page = browser.get(page["Location"])
    assert page.status_code == 200
    html = page.content.decode()
    assert 'data-testid="new-secret"' in html and "whsec_" in html
    secret = html.split('data-testid="new-secret"')[0].rsplit('value="', 1)[1].split('"')[0]
    assert "whsec_" not in browser.get("/console/webhooks/").content.decode()  # shown once
    assert services.endpoints_list(workspace=workspace).count() == 1
    settings.WEBHOOKS_ALLOW_PRIVATE_NETWORKS = False
    bad = browser.post("/console/webhooks/", {"url": "http://10.0.0.1/x", "events": ["approval.requested"]})
    assert "private" in bad.content.decode() and services.endpoints_list(workspace=workspace).count() == 1
    settings.WEBHOOKS_ALLOW_PRIVATE_NETWORKS = True
    hook = services.endpoints_list(workspace=workspace).get()

    assert browser.post(f"/console/webhooks/{hook.pk}/test/").status_code == 302
    services.delivery_attempt(delivery_id=queued[-1])
    assert receiver.verified(secret)["type"] == "webhook.test"
    log = browser.get(f"/console/webhooks/{hook.pk}/").content.decode()
    assert 'data-testid="delivery"' in log and "succeeded" in log and "webhook.test" in log and " ms" in log

    delivery = WebhookDelivery.objects.get()
    assert browser.post(f"/console/webhooks/deliveries/{delivery.pk}/replay/").status_code == 302
    assert queued[-1] == delivery.pk
    assert services.delivery_attempt(delivery_id=delivery.pk) == "succeeded"
    assert len(receiver.requests) == 2 and receiver.requests[1]["headers"]["webhook-id"] == delivery.pk

    assert browser.post("/console/webhooks/balance-threshold/", {"threshold": "12.5"}).status_code == 302
    assert services.balance_threshold_get(workspace=workspace) == credits("12.5")

    stranger = Client()
    from tests.factories import make_workspace

    _, other, _ = make_workspace()
    stranger.force_login(other)
    assert stranger.get(f"/console/webhooks/{hook.pk}/").status_code == 404
    assert stranger.post(f"/console/webhooks/deliveries/{delivery.pk}/replay/").status_code == 404
    assert browser.post(f"/console/webhooks/{hook.pk}/delete/").status_code == 302
    assert services.endpoints_list(workspace=workspace).count() == 0


def test_mailbox_needs_reconnect_is_an_event(workspace, receiver, queued):
    from sending import oauth
    from sending.testing import make_active_mailbox

    _, secret = endpoint(workspace, receiver, ["mailbox.needs_reconnect"])
    mailbox = make_active_mailbox(workspace, email="ann@outreach-sbx.test")
    assert oauth.mailbox_mark_needs_reconnect(mailbox_id=mailbox.pk, reason="invalid_grant")
    assert not oauth.mailbox_mark_needs_reconnect(mailbox_id=mailbox.pk, reason="again")  # once per episode
    (delivery_id,) = queued
    services.delivery_attempt(delivery_id=delivery_id)
    data = receiver.verified(secret)["data"]
    assert (data["mailbox_id"], data["status"], data["reconnect_reason"]) == (mailbox.pk, "needs_reconnect",
                                                                                "invalid_grant")


def test_campaign_pause_resume_and_completion_are_events(workspace, receiver, queued):
    from campaigns import services as campaigns
    from campaigns.models import CampaignLead

    _, secret = endpoint(workspace, receiver, ["campaign.paused", "campaign.resumed", "campaign.completed"])
    from campaigns.models import DEFAULT_WINDOW, Campaign

    world = make_world(workspace)
    Campaign.objects.filter(pk=world.campaign.pk).update(sending_window=dict(DEFAULT_WINDOW))
    campaigns.campaign_pause(workspace=workspace, campaign_id=world.campaign.pk)
    campaigns.campaign_pause(workspace=workspace, campaign_id=world.campaign.pk)  # a no-op: no second event
    campaigns.campaign_resume(workspace=workspace, campaign_id=world.campaign.pk)
    CampaignLead.objects.filter(campaign=world.campaign).update(state=CampaignLead.State.FINISHED)
    assert campaigns.campaign_maybe_complete(campaign_id=world.campaign.pk)
    assert len(queued) == 3
    for delivery_id in queued:
        services.delivery_attempt(delivery_id=delivery_id)
    events = [receiver.verified(secret, i) for i in range(3)]
    assert [e["type"] for e in events] == ["campaign.paused", "campaign.resumed", "campaign.completed"]
    assert [e["data"]["state"] for e in events] == ["paused", "launched", "completed"]
    assert events[0]["data"]["campaign_id"] == str(world.campaign.pk) and "stats" in events[0]["data"]

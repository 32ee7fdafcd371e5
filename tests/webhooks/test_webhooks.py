"""Webhooks against a real local receiver verifying with `standardwebhooks`: API, signatures, retries,
a hanging receiver, the private-address guard, redirects, rotation, disabling, a worker killed mid-delivery."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from datetime import timedelta

import pytest
import time_machine
from django.conf import settings as dj_settings
from django.core import mail
from django.db import connection, transaction
from django.utils import timezone

from tests.factories import make_workspace
from webhooks import services
from webhooks.models import WebhookDelivery, WebhookEndpoint

pytestmark = pytest.mark.django_db(transaction=True)


def create(api, url, events=("approval.requested",)):
    resp = api.post("/v1/webhooks", {"url": url, "events": list(events)})
    assert resp.status_code == 200, resp.content
    return resp.json()["result"]


def emit(workspace, type="approval.requested", data=None):
    with transaction.atomic():
        return services.event_emit(workspace=workspace, type=type, data=data or {"hello": "world"})


def test_api_and_a_signed_delivery(api, workspace, receiver, queued):
    hook = create(api, receiver.url)
    assert hook["secret"].startswith("whsec_") and hook["events"] == ["approval.requested"]
    assert hook["status"] == "active" and hook["webhook_id"].startswith("whk_")
    listed = api.get("/v1/webhooks").json()
    assert [w["webhook_id"] for w in listed["webhooks"]] == [hook["webhook_id"]]
    assert "secret" not in listed["webhooks"][0]

    event = emit(workspace, data={"n": 1})
    assert len(queued) == 1
    assert services.delivery_attempt(delivery_id=queued[0]) == "succeeded"
    payload = receiver.verified(hook["secret"])
    assert payload["type"] == "approval.requested" and payload["data"] == {"n": 1}
    assert receiver.requests[0]["headers"]["webhook-id"] == queued[0]
    assert services.delivery_attempt(delivery_id=queued[0]) == "not_due"  # delivered: never sent again by itself

    detail = api.get(f"/v1/webhooks/{hook['webhook_id']}").json()
    (d,) = detail["recent_deliveries"]
    assert (d["event_id"], d["status"], d["attempts"], d["last_status_code"]) == (event.pk, "succeeded", 1, 204)
    assert d["latency_ms"] is not None

    # An event nobody subscribed to is not stored; "*" subscribes to everything.
    assert services.event_emit(workspace=workspace, type="campaign.launched", data={}) is None
    star = create(api, receiver.url, events=["*"])
    assert star["events"] == ["*"]

    # The test event, then deletion.
    test = api.post(f"/v1/webhooks/{hook['webhook_id']}/test").json()["result"]
    services.delivery_attempt(delivery_id=test["delivery_id"])
    assert receiver.verified(hook["secret"])["type"] == "webhook.test"
    assert api.delete(f"/v1/webhooks/{hook['webhook_id']}").status_code == 200
    assert api.get(f"/v1/webhooks/{hook['webhook_id']}").status_code == 404


def test_bad_input_is_400_and_other_workspaces_404(api, make_api, receiver):
    for body in [{"url": "ftp://x.example/", "events": ["reply.received"]},
                 {"url": receiver.url, "events": ["nope"]}, {"url": receiver.url, "events": []},
                 {"url": receiver.url}, {"url": 5, "events": ["reply.received"]}]:
        resp = api.post("/v1/webhooks", body)
        assert resp.status_code == 400 and resp.json()["error"]["code"] == "invalid_request", body
    hook = create(api, receiver.url)
    stranger, _, _ = make_api()
    assert stranger.get(f"/v1/webhooks/{hook['webhook_id']}").status_code == 404
    assert stranger.post(f"/v1/webhooks/{hook['webhook_id']}/rotate_secret").status_code == 404
    assert stranger.get("/v1/webhooks").json() == {"webhooks": []}


def test_retries_after_500s_with_exponential_backoff(api, workspace, receiver, queued):
    hook = create(api, receiver.url)
    receiver.script = ["500", "500"]
    emit(workspace)
    (delivery_id,) = queued
    start = timezone.now()
    assert services.delivery_attempt(delivery_id=delivery_id) == "retrying"
    d = WebhookDelivery.objects.get(pk=delivery_id)
    assert d.last_status_code == 500 and d.attempts == 1
    assert timedelta(seconds=29) < d.next_attempt_at - start < timedelta(seconds=40)
    assert services.deliveries_due() == []  # not before the backoff
    with time_machine.travel(d.next_attempt_at + timedelta(seconds=1)):
        assert services.deliveries_due() == [delivery_id]
        assert services.delivery_attempt(delivery_id=delivery_id) == "retrying"
        d.refresh_from_db()
        assert d.next_attempt_at - timezone.now() > timedelta(seconds=55)  # doubled
    with time_machine.travel(d.next_attempt_at + timedelta(seconds=1)):
        assert services.delivery_attempt(delivery_id=delivery_id) == "succeeded"
    assert [r["mode"] for r in receiver.requests] == ["500", "500", "ok"]
    assert len({r["headers"]["webhook-id"] for r in receiver.requests}) == 1  # the same message each time
    for i in range(3):
        receiver.verified(hook["secret"], i)
    d.refresh_from_db()
    assert (d.status, d.attempts) == ("succeeded", 3)
    assert WebhookEndpoint.objects.get().failing_since is None


def test_gives_up_after_24_hours_and_replay_sends_again(api, workspace, receiver, queued):
    hook = create(api, receiver.url)
    emit(workspace)
    (delivery_id,) = queued
    receiver.script = ["500"] * 100
    now = timezone.now()
    outcome = None
    for _ in range(40):
        d = WebhookDelivery.objects.get(pk=delivery_id)
        if d.status != "pending":
            break
        with time_machine.travel(max(d.next_attempt_at, now) + timedelta(seconds=1)):
            outcome = services.delivery_attempt(delivery_id=delivery_id)
    d.refresh_from_db()
    assert outcome == "failed" and d.status == "failed"
    assert d.attempts < 30 and d.next_attempt_at - d.created_at <= timedelta(hours=24)
    receiver.script = []
    services.delivery_replay(delivery=d)
    assert queued[-1] == delivery_id
    assert services.delivery_attempt(delivery_id=delivery_id) == "succeeded"
    receiver.verified(hook["secret"])


def test_a_hanging_receiver_times_out_and_is_retried(api, workspace, receiver, queued, settings):
    settings.WEBHOOK_TIMEOUT_SECONDS = 0.5
    create(api, receiver.url)
    receiver.script = ["hang"]
    emit(workspace)
    assert services.delivery_attempt(delivery_id=queued[0]) == "retrying"
    d = WebhookDelivery.objects.get()
    assert "timed out" in d.last_error and d.last_status_code is None and d.claimed_until is None


def test_redirects_are_not_followed(api, workspace, receiver, queued):
    create(api, receiver.url)
    receiver.script = ["302"]
    emit(workspace)
    assert services.delivery_attempt(delivery_id=queued[0]) == "retrying"
    assert len(receiver.requests) == 1 and WebhookDelivery.objects.get().last_status_code == 302


def test_private_addresses_are_refused(api, workspace, receiver, queued, settings):
    hook = create(api, receiver.url)  # allowed while WEBHOOKS_ALLOW_PRIVATE_NETWORKS=1 (tests)
    settings.WEBHOOKS_ALLOW_PRIVATE_NETWORKS = False
    settings.WEBHOOKS_ALLOW_LOOPBACK = False  # as in live mode (sandbox mode allows loopback receivers)
    for url in [receiver.url, "http://localhost:8080/x", "http://10.1.2.3/x", "http://169.254.169.254/latest",
                "http://[::1]:80/x"]:
        resp = api.post("/v1/webhooks", {"url": url, "events": ["reply.received"]})
        assert resp.status_code == 400 and "refused" in resp.json()["error"]["message"], url
    emit(workspace)  # the existing loopback endpoint: refused where the connection is made
    assert services.delivery_attempt(delivery_id=queued[0]) == "retrying"
    assert receiver.requests == []
    assert "not publicly routable" in WebhookDelivery.objects.get().last_error
    assert hook


def test_rotation_signs_with_both_secrets_for_24_hours(api, workspace, receiver, queued):
    hook = create(api, receiver.url)
    rotated = api.post(f"/v1/webhooks/{hook['webhook_id']}/rotate_secret").json()["result"]
    assert rotated["secret"] != hook["secret"]
    emit(workspace)
    services.delivery_attempt(delivery_id=queued[-1])
    receiver.verified(hook["secret"])
    receiver.verified(rotated["secret"])
    assert len(receiver.requests[-1]["headers"]["webhook-signature"].split(" ")) == 2
    from standardwebhooks.webhooks import WebhookVerificationError

    with time_machine.travel(timezone.now() + timedelta(hours=25)):  # verified at the receiver's clock
        emit(workspace)
        services.delivery_attempt(delivery_id=queued[-1])
        receiver.verified(rotated["secret"])
        with pytest.raises(WebhookVerificationError):
            receiver.verified(hook["secret"])


def test_endpoint_failing_for_3_days_is_disabled_and_the_owner_emailed(api, workspace, owner, receiver, queued):
    create(api, receiver.url)
    receiver.script = ["500"] * 10
    emit(workspace)
    services.delivery_attempt(delivery_id=queued[0])
    assert services.endpoints_disable_failing() == 0
    with time_machine.travel(timezone.now() + timedelta(days=3, minutes=1)):
        assert services.endpoints_disable_failing() == 1
    endpoint = WebhookEndpoint.objects.get()
    assert endpoint.status == "disabled"
    assert [m.to for m in mail.outbox] == [[owner.email]] and receiver.url in mail.outbox[0].body
    assert services.event_emit(workspace=workspace, type="approval.requested", data={}) is None
    services.endpoint_enable(endpoint=endpoint)
    assert emit(workspace) is not None


def _database_url() -> str:
    name = connection.settings_dict["NAME"]
    if connection.vendor == "sqlite":
        return f"sqlite:///{name}"
    from urllib.parse import urlsplit, urlunsplit

    return urlunsplit(urlsplit(os.environ["DATABASE_URL"])._replace(path="/" + name))


def test_a_worker_killed_mid_delivery_leaves_the_event_to_be_delivered_again(api, workspace, receiver, queued):
    hook = create(api, receiver.url)
    receiver.script = ["hang"]
    emit(workspace, data={"important": True})
    (delivery_id,) = queued
    script = textwrap.dedent("""
        import os, sys
        os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
        import django
        django.setup()
        from webhooks.services import delivery_attempt
        print(delivery_attempt(delivery_id=sys.argv[1]), flush=True)
    """)
    env = {**os.environ, "DATABASE_URL": _database_url(), "WEBHOOKS_ALLOW_PRIVATE_NETWORKS": "1",
           "WEBHOOK_TIMEOUT_SECONDS": "60"}
    worker = subprocess.Popen([sys.executable, "-c", script, delivery_id], env=env, cwd=str(dj_settings.BASE_DIR))
    try:
        assert receiver.arrived.wait(60), "the worker never reached the receiver"
        worker.send_signal(signal.SIGKILL)  # killed mid-delivery: the request is in flight, nothing recorded
        worker.wait(30)
    finally:
        if worker.poll() is None:
            worker.kill()
    d = WebhookDelivery.objects.get(pk=delivery_id)
    assert (d.status, d.attempts) == ("pending", 1) and d.claimed_until is not None
    assert services.deliveries_due() == []  # its lease still holds
    assert services.delivery_attempt(delivery_id=delivery_id) == "not_due"
    with time_machine.travel(d.claimed_until + timedelta(seconds=1)):
        assert services.deliveries_due() == [delivery_id]  # the sweep takes it over
        assert services.delivery_attempt(delivery_id=delivery_id) == "succeeded"
    assert len(receiver.requests) == 2
    assert receiver.requests[0]["headers"]["webhook-id"] == receiver.requests[1]["headers"]["webhook-id"]
    assert receiver.verified(hook["secret"])["data"] == {"important": True}


def test_domain_events_are_emitted(api, workspace, receiver, queued):
    """approval.requested / approval.decided from the accounts services (others: tests of their apps' flows)."""
    from accounts.services import token_approve, token_issue

    hook = create(api, receiver.url, events=["approval.requested", "approval.decided"])
    with transaction.atomic():
        token, _ = token_issue(workspace=workspace, verb="test_confirm", params={"amount": 1},
                               ttl=timedelta(minutes=5), summary={"x": 1})
    token_approve(token=token, user=None)
    assert len(queued) == 2
    for delivery_id in queued:
        services.delivery_attempt(delivery_id=delivery_id)
    types = [receiver.verified(hook["secret"], i)["type"] for i in range(2)]
    assert types == ["approval.requested", "approval.decided"]
    decided = receiver.verified(hook["secret"], 1)["data"]
    assert decided["status"] == "approved" and decided["approval_id"] == str(token.pk)


def test_mcp_tools_have_the_same_shapes(workspace, receiver, queued):
    from accounts.services import key_create
    from mcpserver.tools import call_verb_sync

    _, key = key_create(workspace=workspace, name="mcp")
    created = call_verb_sync("create_webhook", {"url": receiver.url, "events": ["reply.received"]}, bearer=key)
    body = created.body if hasattr(created, "body") else created
    import json

    result = json.loads(body)["result"]
    assert result["secret"].startswith("whsec_")
    listed = json.loads(call_verb_sync("list_webhooks", {}, bearer=key).body)
    assert listed["webhooks"][0]["webhook_id"] == result["webhook_id"]


def test_other_workspace_events_do_not_reach_an_endpoint(api, receiver, queued):
    create(api, receiver.url)
    other, _, _ = make_workspace()
    assert services.event_emit(workspace=other, type="approval.requested", data={}) is None


def test_events_are_purged_after_the_retention_period(api, workspace, receiver, queued):
    create(api, receiver.url)
    emit(workspace)
    services.delivery_attempt(delivery_id=queued[0])
    assert services.events_purge(days=30) == 0
    with time_machine.travel(timezone.now() + timedelta(days=31)):
        assert services.events_purge(days=30) == 2  # the event and its delivery
    assert WebhookDelivery.objects.count() == 0

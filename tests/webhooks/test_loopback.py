"""A local webhook receiver works as is in sandbox mode (loopback allowed by default: no real traffic leaves the
machine); outside it the 400 names the setting that allows the address. Private networks stay refused unless
WEBHOOKS_ALLOW_PRIVATE_NETWORKS=1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.webhooks.test_webhooks import create, emit
from webhooks import services
from webhooks.models import WebhookDelivery

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def sandbox_defaults(settings, receiver):
    settings.SANDBOX = True
    settings.WEBHOOKS_ALLOW_PRIVATE_NETWORKS = False  # (the receiver fixture turns it on for the other tests)
    settings.WEBHOOKS_ALLOW_LOOPBACK = True
    return receiver


def test_loopback_receiver_works_in_sandbox_by_default(api, workspace, sandbox_defaults, queued):
    receiver = sandbox_defaults
    hook = create(api, receiver.url)
    emit(workspace)
    assert services.delivery_attempt(delivery_id=queued[0]) == "succeeded"
    assert len(receiver.requests) == 1
    receiver.verified(hook["secret"])
    assert WebhookDelivery.objects.get().status == "succeeded"
    for url in ("http://localhost:9/x", "http://[::1]:9/x"):
        assert api.post("/v1/webhooks", {"url": url, "events": ["reply.received"]}).status_code == 200, url
    private = api.post("/v1/webhooks", {"url": "http://10.1.2.3/x", "events": ["reply.received"]})
    assert private.status_code == 400
    assert private.json()["error"]["details"]["setting"] == "WEBHOOKS_ALLOW_PRIVATE_NETWORKS"
    assert "WEBHOOKS_ALLOW_PRIVATE_NETWORKS" in private.json()["error"]["message"]


def test_live_mode_400_names_the_setting(api, settings, receiver):
    settings.SANDBOX = False
    settings.WEBHOOKS_ALLOW_PRIVATE_NETWORKS = False
    settings.WEBHOOKS_ALLOW_LOOPBACK = False
    for url in (receiver.url, "http://localhost:8080/x", "http://[::1]/x"):
        resp = api.post("/v1/webhooks", {"url": url, "events": ["reply.received"]})
        assert resp.status_code == 400, url
        err = resp.json()["error"]
        assert err["details"]["setting"] == "WEBHOOKS_ALLOW_LOOPBACK" and "WEBHOOKS_ALLOW_LOOPBACK=1" in err["message"]


def test_loopback_default_follows_sandbox():
    code = "import json, config.settings as s; print(json.dumps(s.WEBHOOKS_ALLOW_LOOPBACK))"
    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if k not in ("SANDBOX", "WEBHOOKS_ALLOW_LOOPBACK")}

    def run(extra):
        out = subprocess.run([sys.executable, "-c", code], env={**env, **extra}, cwd=root, capture_output=True,
                             text=True, check=True)
        return json.loads(out.stdout.strip().splitlines()[-1])

    assert run({}) is True
    assert run({"SANDBOX": "0", "SECRET_KEY": "k" * 50, "MAILBOX_SECRET_KEY": "x"}) is False


"""The whole stack as a user runs it (`manage.py serve`: web, Celery worker, beat): an approval asked for over
the API reaches a real receiver, delivered by the worker, verifiable with `standardwebhooks`."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import httpx
import pytest

from tests.core.test_serve import ROOT, instance, start, wait_healthy  # noqa: F401 - the fixture
from tests.webhooks.conftest import Receiver


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="serve is tested on Linux")
def test_worker_delivers_a_signed_event(instance):  # noqa: F811
    env, port = instance
    env = {**env, "WEBHOOKS_ALLOW_PRIVATE_NETWORKS": "1"}
    out = subprocess.run([sys.executable, "manage.py", "create_workspace", "--email", "hooks@example.com",
                          "--scopes", "all", "--json"], cwd=ROOT, env=env, check=True, timeout=120,
                         capture_output=True, text=True).stdout
    key = json.loads(out)["api_key"]
    receiver = Receiver()
    proc = start(env)
    try:
        wait_healthy(port, proc)
        api = httpx.Client(base_url=f"http://127.0.0.1:{port}", headers={"Authorization": f"Bearer {key}"}, timeout=30)
        hook = api.post("/v1/webhooks", json={"url": receiver.url, "events": ["approval.requested"]}).json()["result"]
        quote = api.post("/v1/setup_sending", json={"emails_per_week": 500, "brand_hint": "acme"})
        assert quote.status_code == 200, quote.text
        assert receiver.arrived.wait(120), "the worker did not deliver the event"
        payload = receiver.verified(hook["secret"], 0)
        assert payload["type"] == "approval.requested" and payload["data"]["verb"] == "setup_sending"
        assert payload["data"]["approval_url"] == quote.json()["result"]["approval_url"]
        detail = api.get(f"/v1/webhooks/{hook['webhook_id']}").json()
        for _ in range(100):  # the worker records the answer right after the receiver has it
            if detail["recent_deliveries"][0]["status"] == "succeeded":
                break
            time.sleep(0.1)
            detail = api.get(f"/v1/webhooks/{hook['webhook_id']}").json()
        assert detail["recent_deliveries"][0]["status"] == "succeeded"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
        receiver.close()

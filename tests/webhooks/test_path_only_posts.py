"""POST /v1/webhooks/:id/test and /rotate_secret take nothing but the path: OpenAPI declares no request body
for them (it used to declare a required {"webhook_id"} body the service never read), and a bare POST works."""

from __future__ import annotations

import json

import pytest

from tests.webhooks.test_webhooks import create

pytestmark = pytest.mark.django_db(transaction=True)


def test_openapi_declares_no_body_for_path_only_posts(client):
    spec = json.loads(client.get("/openapi.json").content)
    for path in ("/v1/webhooks/{webhook_id}/test", "/v1/webhooks/{webhook_id}/rotate_secret"):
        op = spec["paths"][path]["post"]
        assert "requestBody" not in op, path
        assert [p["name"] for p in op["parameters"] if p["in"] == "path"] == ["webhook_id"], path
    assert spec["paths"]["/v1/webhooks"]["post"]["requestBody"]["required"] is True  # bodies still documented


def test_path_only_posts_take_no_body(api, settings, receiver, queued):
    hook = create(api, receiver.url)
    for suffix in ("test", "rotate_secret"):
        resp = api.client.generic("POST", f"/v1/webhooks/{hook['webhook_id']}/{suffix}", b"", content_type="",
                                  headers={"Authorization": f"Bearer {api.key}"})  # as `curl -X POST` sends it
        assert resp.status_code == 200, resp.content

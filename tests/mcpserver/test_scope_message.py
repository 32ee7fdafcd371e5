"""insufficient_scope names what lacks the scope: "This API key" for a console key, the OAuth connection (by its
client's name) for a call that came through one (the MCP door and the pipeline are the same path)."""

from __future__ import annotations

import pytest

from accounts.models import ApiKey, OAuthClient, OAuthGrant
from api.pipeline import execute
from core.ids import new_id
from core.verbs import REGISTRY, Context
from tests.factories import make_workspace

pytestmark = pytest.mark.django_db


def _call(workspace, key):
    ctx = Context(workspace=workspace, api_key=key, request_id=new_id("req_"), channel="mcp")
    return execute(REGISTRY["setup_sending"], ctx=ctx, raw={"emails_per_week": 500})


def test_oauth_connection_without_the_scope_is_named():
    ws, owner, _ = make_workspace(scopes=["campaign:write"])
    client = OAuthClient.objects.create(client_id="c-1", kind="registered", client_name="Claude Desktop",
                                        redirect_uris=["http://127.0.0.1:9/cb"])
    key = ApiKey.objects.create(workspace=ws, name="MCP: Claude Desktop", prefix="oauth_test1", hashed_secret="-",
                                last4="", scopes=["campaign:write"], created_by=owner)
    OAuthGrant.objects.create(workspace=ws, user=owner, client=client, client_name="Claude Desktop",
                              redirect_uri="http://127.0.0.1:9/cb", api_key=key)
    resp = _call(ws, ApiKey.objects.get(pk=key.pk))
    assert resp.status == 403
    err = resp.data["error"]
    assert err["code"] == "insufficient_scope"
    assert err["details"] == {"required_scope": "assets:purchase", "connection": "Claude Desktop"}
    assert "OAuth connection \u201cClaude Desktop\u201d lacks the scope assets:purchase" in err["message"]
    assert "API key" not in err["message"].split(":")[0]


def test_console_key_without_the_scope_says_api_key():
    ws, _, _ = make_workspace(scopes=["campaign:write"])
    resp = _call(ws, ApiKey.objects.get(workspace=ws))
    assert resp.status == 403
    assert resp.data["error"]["message"] == "This API key lacks the scope assets:purchase."
    assert resp.data["error"]["details"] == {"required_scope": "assets:purchase"}

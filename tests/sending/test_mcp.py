"""setup_sending and get_operation as MCP tools (official SDK client, live uvicorn server): same flow as REST."""

import pytest

from billing.models import CreditAccount
from core.money import credits
from tests.mcpserver.conftest import live, mcp_session  # noqa: F401 - the live server fixture
from tests.sending.conftest import approve

pytestmark = pytest.mark.django_db(transaction=True)
BODY = {"emails_per_week": 250, "brand_hint": "Toolco"}


def test_quote_approve_purchase_and_poll_over_mcp(live, make_api, monkeypatch):  # noqa: F811
    enqueued = []
    monkeypatch.setattr("sending.services._enqueue_advance", lambda op_id, countdown=None: enqueued.append(op_id))
    from billing.services import credits_grant

    _, ws, owner = make_api()
    credits_grant(workspace=ws, amount=credits("5000"), memo="t")
    from accounts.services import key_create

    _, key = key_create(workspace=ws, name="mcp", scopes="all", created_by=owner)

    async def quote(client):
        return await client.call_tool("setup_sending", BODY)

    q = mcp_session(live.url, key, quote)
    assert not q.is_error
    token = q.structured_content["result"]["confirmation_token"]
    assert q.structured_content["result"]["quote"]["setup_credits"] == "1500"

    async def early(client):
        no_key = await client.call_tool("setup_sending", {**BODY, "confirmation_token": token})
        pending = await client.call_tool("setup_sending", {**BODY, "confirmation_token": token,
                                                           "idempotency_key": "mcp-1"})
        return no_key, pending

    no_key, pending = mcp_session(live.url, key, early)
    assert no_key.is_error and no_key.structured_content["error"]["code"] == "idempotency_key_required"
    assert pending.is_error and pending.structured_content["error"]["code"] == "confirmation_pending"

    approve(token, owner)

    async def buy(client):
        first = await client.call_tool("setup_sending", {**BODY, "confirmation_token": token, "idempotency_key": "mcp-2"})
        again = await client.call_tool("setup_sending", {**BODY, "confirmation_token": token, "idempotency_key": "mcp-2"})
        op = await client.call_tool("get_operation", {"operation_id": first.structured_content["result"]["operation_id"]})
        missing = await client.call_tool("get_operation", {"operation_id": "op_nope"})
        return first, again, op, missing

    first, again, op, missing = mcp_session(live.url, key, buy)
    assert not first.is_error, first
    assert first.structured_content["result"]["status"] == "purchased"
    assert first.structured_content["service"]["credits_charged"] == "3000"
    assert again.structured_content == first.structured_content
    assert op.structured_content["status"] in ("queued", "running", "waiting_external", "succeeded")
    assert op.structured_content["operation_id"] == first.structured_content["result"]["operation_id"]
    assert missing.is_error and missing.structured_content["error"]["code"] == "not_found"
    assert enqueued == [first.structured_content["result"]["operation_id"]]  # queued on commit, once
    assert CreditAccount.objects.get(pk=ws.pk).available_micros == credits("5300") - credits("3000")


def test_list_mailboxes_shows_needs_reconnect_over_rest_and_mcp(live, make_api):  # noqa: F811
    """The mailbox state (needs_reconnect with its reason) is readable over REST and as the MCP tool; another
    workspace's mailboxes are never listed."""
    from accounts.services import key_create
    from sending.models import Mailbox
    from sending.testing import make_active_mailbox

    api, ws, owner = make_api()
    _, other_ws, _ = make_api()
    make_active_mailbox(other_ws, email="theirs@other.test")
    ok = make_active_mailbox(ws, email="ok@mine.test")
    gone = make_active_mailbox(ws, email="gone@mine.test", provider="byo", auth="oauth2", oauth_provider="google")
    Mailbox.objects.filter(pk=gone.pk).update(status="needs_reconnect", reconnect_reason="Google refused the token "
                                              "refresh (invalid_grant): consent revoked or expired")
    rest = api.get("/v1/mailboxes")
    assert rest.status_code == 200
    body = rest.json()
    assert [m["email"] for m in body["mailboxes"]] == ["ok@mine.test", "gone@mine.test"]
    assert body["mailboxes"][0]["status"] == "active" and body["mailboxes"][0]["reconnect_reason"] is None
    row = body["mailboxes"][1]
    assert (row["status"], row["auth"], row["oauth_provider"], row["source"]) == (
        "needs_reconnect", "oauth2", "google", "byo")
    assert "invalid_grant" in row["reconnect_reason"] and row["mailbox_id"] == gone.pk
    assert ok.pk == body["mailboxes"][0]["mailbox_id"]
    _, key = key_create(workspace=ws, name="mcp", scopes="all", created_by=owner)

    async def listing(client):
        return await client.call_tool("list_mailboxes", {})

    tool = mcp_session(live.url, key, listing)
    assert not tool.is_error and tool.structured_content == body

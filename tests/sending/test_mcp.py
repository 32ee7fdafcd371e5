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

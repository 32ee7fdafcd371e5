"""get_replies as an MCP tool (official SDK client, live server): the same body as REST, errors as envelopes."""

import pytest

from tests.mcpserver import conftest as mcp_conftest
from tests.mcpserver.conftest import mcp_session
from tests.replies.conftest import make_world, reply_bytes

live = mcp_conftest.live  # the live-server fixture

pytestmark = pytest.mark.django_db(transaction=True)


def test_get_replies_tool_matches_rest(live, api, api_key, workspace):
    from replies import services

    world = make_world(workspace)
    for i, body in enumerate(["Interested, call me.", "No thanks."]):
        stored = services.inbound_store(mailbox=world.mailbox, source="smtp", raw=reply_bytes(
            message_id=f"<mcp-{i}@acme.com>", in_reply_to="<msg-0@outreach-sbx.test>", body=body))
        services.inbound_classify(inbound_id=stored.inbound.pk)

    async def fn(client):
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert {"campaign_id", "since", "limit"} <= set(tools["get_replies"].input_schema["properties"])
        ok = await client.call_tool("get_replies", {"campaign_id": str(world.campaign.pk), "limit": 10})
        missing = await client.call_tool("get_replies", {"campaign_id": "00000000-0000-0000-0000-000000000000"})
        bad = await client.call_tool("get_replies", {"limit": 201})
        return ok, missing, bad

    ok, missing, bad = mcp_session(live.url, api_key, fn)
    assert not ok.is_error
    rest = api.post("/v1/get_replies", {"campaign_id": str(world.campaign.pk), "limit": 10}).json()
    assert ok.structured_content["result"] == rest["result"]
    assert [r["classification"] for r in rest["result"]["replies"]] == ["not_interested", "interested"]
    assert [r["language"] for r in ok.structured_content["result"]["replies"]] == ["en", "en"]
    assert ok.structured_content["service"]["credits_charged"] == "0"
    assert missing.is_error and missing.structured_content["error"]["code"] == "not_found"
    assert bad.is_error and bad.structured_content["error"]["code"] == "invalid_request"

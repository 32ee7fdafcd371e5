"""create_campaign and launch_campaign through the official MCP SDK client against a live server."""

from campaigns.models import Campaign
from sending.testing import make_active_mailbox
from tests.campaigns.helpers import approve, campaign_body
from tests.mcpserver.conftest import live as live  # noqa: F401 - fixture
from tests.mcpserver.conftest import mcp_session


def call(live, key, name, args):  # noqa: F811
    async def fn(client):
        return await client.call_tool(name, args)
    return mcp_session(live.url, key, fn)


def test_create_preview_launch_over_mcp(live, api_key, owner, workspace):  # noqa: F811
    make_active_mailbox(workspace)
    missing = call(live, api_key, "create_campaign", campaign_body())
    assert missing.is_error and missing.structured_content["error"]["code"] == "idempotency_key_required"
    created = call(live, api_key, "create_campaign", {**campaign_body(), "idempotency_key": "mcp-c1"})
    assert not created.is_error, created
    result = created.structured_content["result"]
    assert result["state"] == "draft" and result["leads_accepted"] == 2
    assert created.structured_content["service"]["credits_charged"] == "0"
    cid = result["campaign_id"]

    preview = call(live, api_key, "launch_campaign", {"campaign_id": cid}).structured_content["result"]
    assert preview["status"] == "preview" and preview["mailboxes_active"] == 1
    approve(preview["confirmation_token"], owner)
    args = {"campaign_id": cid, "confirmation_token": preview["confirmation_token"], "idempotency_key": "mcp-l1"}
    launched = call(live, api_key, "launch_campaign", args)
    assert launched.structured_content["result"]["status"] == "launched"
    again = call(live, api_key, "launch_campaign", args)
    assert again.content[0].text == launched.content[0].text  # idempotent replay, byte for byte
    assert Campaign.objects.get(pk=cid).state == "launched"

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


def test_read_pause_resume_over_mcp(live, api_key, owner, workspace):  # noqa: F811
    """get_campaign, list_campaigns, list_campaign_leads, pause_campaign, resume_campaign: the REST bodies."""
    from tests.campaigns.conftest import ALWAYS
    from tests.conftest import Api

    make_active_mailbox(workspace)
    api = Api(api_key)
    cid = api.post("/v1/campaigns", campaign_body(sending_window=ALWAYS),
                   headers={"Idempotency-Key": "c-read"}).json()["result"]["campaign_id"]
    got = call(live, api_key, "get_campaign", {"campaign_id": cid})
    assert not got.is_error, got
    assert got.structured_content == api.get(f"/v1/campaigns/{cid}").json()
    assert got.structured_content["state"] == "draft"
    listed = call(live, api_key, "list_campaigns", {"state": "draft", "limit": 5}).structured_content
    assert [c["campaign_id"] for c in listed["campaigns"]] == [cid] and listed["next_cursor"] is None
    leads = call(live, api_key, "list_campaign_leads", {"campaign_id": cid}).structured_content
    assert [lead["email"] for lead in leads["leads"]] == ["ann@acme.test", "bob@beta.test"]
    assert call(live, api_key, "get_campaign", {"campaign_id": "nope"}).structured_content["error"]["code"] == (
        "not_found")

    preview = call(live, api_key, "launch_campaign", {"campaign_id": cid}).structured_content["result"]
    approve(preview["confirmation_token"], owner)
    call(live, api_key, "launch_campaign", {"campaign_id": cid, "confirmation_token": preview["confirmation_token"],
                                            "idempotency_key": "l-read"})
    paused = call(live, api_key, "pause_campaign", {"campaign_id": cid})
    assert paused.structured_content["result"]["state"] == "paused"
    no_key = call(live, api_key, "resume_campaign", {"campaign_id": cid})
    assert no_key.structured_content["error"]["code"] == "idempotency_key_required"
    resumed = call(live, api_key, "resume_campaign", {"campaign_id": cid, "idempotency_key": "r-1"})
    assert resumed.structured_content["result"]["state"] == "launched"
    again = call(live, api_key, "resume_campaign", {"campaign_id": cid, "idempotency_key": "r-2"})
    assert again.structured_content["error"]["code"] == "campaign_not_paused"
    assert Campaign.objects.get(pk=cid).state == "launched"

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


def test_variant_options_in_the_tool_schema_and_openapi(live, api_key, owner, workspace, client):  # noqa: F811
    """The MCP tool's input schema and OpenAPI carry variants, spintax-bearing texts and the new options; a
    variant campaign created over MCP reads back with per-variant stats and launch samples."""
    from tests.campaigns.conftest import ALWAYS
    from tests.mcpserver.conftest import mcp_session as session

    tools = {t.name: t for t in session(live.url, api_key, lambda c: c.list_tools()).tools}
    props = tools["create_campaign"].input_schema["properties"]
    assert {"auto_winner", "stop_on_company_reply", "match_mailbox_provider"} <= set(props)
    text = str(tools["create_campaign"].input_schema)
    assert "variants" in text and "fallback_timezone" in text and "min_sends_per_variant" in text

    spec = client.get("/openapi.json").json()
    schemas = spec["components"]["schemas"]
    step_stats = next(v for k, v in schemas.items() if k.startswith("StepStats"))
    assert set(step_stats["properties"]) == {"step", "sent", "variants", "winner", "winner_chosen_at"}
    variant_stats = next(v for k, v in schemas.items() if k.startswith("VariantStats"))
    assert set(variant_stats["properties"]) == {"variant", "sent", "replies", "interested", "bounced"}
    assert "samples" in str(spec)

    make_active_mailbox(workspace)
    body = campaign_body(sending_window=ALWAYS, steps=[
        {"variants": [{"subject": "{{RANDOM | Hi | Hello}} {{first_name|there}}", "body": "A"},
                      {"subject": "Quick one", "body": "B"}]}],
        auto_winner={"metric": "reply_rate", "min_sends_per_variant": 20}, idempotency_key="mcp-v1")
    created = call(live, api_key, "create_campaign", body)
    assert not created.is_error, created
    cid = created.structured_content["result"]["campaign_id"]
    got = call(live, api_key, "get_campaign", {"campaign_id": cid}).structured_content
    assert got["stats"]["steps"] == [{"step": 1, "sent": 0, "winner": None, "winner_chosen_at": None, "variants": [
        {"variant": 0, "sent": 0, "replies": 0, "interested": 0, "bounced": 0},
        {"variant": 1, "sent": 0, "replies": 0, "interested": 0, "bounced": 0}]}]
    preview = call(live, api_key, "launch_campaign", {"campaign_id": cid}).structured_content["result"]
    assert len(preview["samples"]) == 2 and {s["variant"] for s in preview["samples"]} <= {0, 1}
    broken = call(live, api_key, "create_campaign", {**body, "idempotency_key": "mcp-v2", "steps": [
        {"subject": "{{RANDOM | a | }}", "body": "x"}]})
    assert broken.is_error
    assert broken.structured_content["error"]["details"]["fields"] == {
        "steps.0.subject": ["Spintax at character 1: option 2 is empty."]}

"""The lead verbs as MCP tools (official SDK client, live server): same results, metering and cache as REST."""

import pytest

from tests.leads.conftest import load_leads, person
from tests.mcpserver import conftest as mcp_conftest
from tests.mcpserver.conftest import mcp_session

live = mcp_conftest.live  # the live-server fixture

pytestmark = pytest.mark.django_db(transaction=True)


def test_lead_tools_match_rest(live, api, api_key):
    load_leads(person(first_name="Ada", last_name="Lovelace", work_email="ada@acme.com", work_email_status="valid",
                      work_email_verified_at="2099-01-01"),
               person(first_name="Bob", last_name="Byte", title="CTO"))

    async def fn(client):
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert {"find_leads", "enrich", "find_intent"} <= set(tools)
        assert "audience" in tools["find_leads"].input_schema["properties"]
        assert "3 to 2000" in tools["find_leads"].input_schema["properties"]["audience"].get("description", "")
        leads = await client.call_tool("find_leads", {"audience": "sales people", "titles": ["sales"]})
        hit = await client.call_tool("enrich", {"person": {"email": "ada@acme.com"}})
        bad = await client.call_tool("find_intent", {"company_domains": []})
        return leads, hit, bad

    leads, hit, bad = mcp_session(live.url, api_key, fn)
    assert not leads.is_error
    rest = api.post("/v1/find_leads", {"audience": "sales people", "titles": ["sales"]}).json()
    assert leads.structured_content["result"] == rest["result"]
    assert leads.structured_content["service"]["credits_charged"] == "0.2"
    assert hit.structured_content["result"]["outcome"] == "hit"
    assert hit.structured_content["service"]["credits_charged"] == "5"
    assert bad.is_error and bad.structured_content["error"]["code"] == "invalid_request"
    again = api.post("/v1/enrich", {"person": {"email": "ada@acme.com"}}).json()  # cached by the MCP call
    assert again["result"]["from_cache"] is True and again["service"]["credits_charged"] == "0"

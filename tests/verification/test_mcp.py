"""verify_email as an MCP tool (official SDK client, live uvicorn server): same result, charge and balance as REST."""

import pytest

from billing.models import CreditAccount
from tests.mcpserver.conftest import live, mcp_session  # noqa: F401 - the live server fixture

pytestmark = pytest.mark.django_db(transaction=True)


def test_verify_email_tool_charges_like_rest(live, api_key, workspace, net):  # noqa: F811
    net.simple("acme.com", users=["jane@acme.com"])
    greylist = net.simple("grey.com", rcpt=lambda a, s: "451 4.7.1 Greylisted")

    async def calls(client):
        ok = await client.call_tool("verify_email", {"email": "jane@acme.com"})
        miss = await client.call_tool("verify_email", {"email": "jane@grey.com"})
        bad = await client.call_tool("verify_email", {"email": 7})
        return ok, miss, bad

    ok, miss, bad = mcp_session(live.url, api_key, calls)
    assert not ok.is_error
    assert ok.structured_content["result"]["status"] == "valid"
    assert ok.structured_content["service"]["credits_charged"] == "1"
    assert miss.structured_content["result"]["reason"] == "greylisted"
    assert miss.structured_content["service"]["credits_charged"] == "0"
    assert greylist.connections == 2
    assert bad.is_error and bad.structured_content["error"]["code"] == "invalid_request"
    assert CreditAccount.objects.get(pk=workspace.pk).available_micros == 299_000_000

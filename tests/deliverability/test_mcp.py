"""list_domains and list_mailboxes' health as MCP tools (official SDK client, live server): same bodies as REST,
another workspace's domains never listed."""

import pytest

from tests.mcpserver.conftest import live, mcp_session  # noqa: F401 - the live server fixture

pytestmark = pytest.mark.django_db(transaction=True)


def test_list_domains_over_rest_and_mcp(live, make_api):  # noqa: F811
    from accounts.services import key_create
    from deliverability import services as health
    from sending.models import SendingDomain
    from sending.testing import make_active_mailbox

    api, ws, owner = make_api()
    _, other_ws, _ = make_api()
    make_active_mailbox(other_ws, email="theirs@other-mail.test")
    mb = make_active_mailbox(ws, email="alex@mine-mail.test")
    SendingDomain.objects.filter(pk=mb.domain_id).update(
        checks={"spf": "pass", "dkim": "fail", "dmarc": "pass", "mx": "pass"},
        check_failing_since={"dkim": "2026-11-27T10:00:00+00:00"})
    health.domain_evaluate(domain_id=mb.domain_id)
    rest = api.get("/v1/domains")
    assert rest.status_code == 200
    body = rest.json()
    (row,) = body["domains"]
    assert (row["domain"], row["state"], row["reasons"], row["mailbox_ids"]) == (
        "mine-mail.test", "paused", ["dns_dkim"], [mb.pk])  # failing for more than 24 hours
    _, key = key_create(workspace=ws, name="mcp", scopes="all", created_by=owner)

    async def listing(client):
        return await client.call_tool("list_domains", {}), await client.call_tool("list_mailboxes", {})

    domains, mailboxes = mcp_session(live.url, key, listing)
    assert not domains.is_error and domains.structured_content == body
    assert mailboxes.structured_content["mailboxes"][0]["health"]["state"] == "paused"
    assert mailboxes.structured_content["mailboxes"][0]["health"]["reasons"] == ["dns_dkim"]


def test_create_and_get_campaign_over_mcp_echo_verify_leads(live, api_key, workspace):  # noqa: F811
    from tests.campaigns.helpers import campaign_body

    async def create_then_get(client):
        created = await client.call_tool("create_campaign", {**campaign_body(), "verify_leads": True,
                                                             "idempotency_key": "mcp-verify-1"})
        cid = created.structured_content["result"]["campaign_id"]
        return created, await client.call_tool("get_campaign", {"campaign_id": cid})

    created, got = mcp_session(live.url, api_key, create_then_get)
    assert not created.is_error and not got.is_error, (created, got)
    assert created.structured_content["result"]["verify_leads"] is True
    assert got.structured_content["verify_leads"] is True

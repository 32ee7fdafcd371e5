"""get_reply and send_reply as MCP tools (official SDK client, live server) and in /openapi.json: the same bodies as
REST, errors as envelopes, every new verb with its request, response and error shapes."""

import json

import pytest

from tests.mcpserver import conftest as mcp_conftest
from tests.mcpserver.conftest import mcp_session
from tests.replies.conftest import make_world, reply_bytes

live = mcp_conftest.live  # the live-server fixture

pytestmark = pytest.mark.django_db(transaction=True)


def test_get_reply_and_send_reply_tools_match_rest(live, api, api_key, workspace, owner):
    from accounts import services as accounts
    from replies import services
    from replies.models import Reply

    world = make_world(workspace)
    stored = services.inbound_store(mailbox=world.mailbox, source="smtp", raw=reply_bytes(
        message_id="<mcp-a@acme.com>", in_reply_to="<msg-0@outreach-sbx.test>", body="Interested, call me."))
    services.inbound_classify(inbound_id=stored.inbound.pk)
    reply = Reply.objects.get(inbound=stored.inbound)

    async def preview(client):
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert {"reply_id"} <= set(tools["get_reply"].input_schema["properties"])
        assert {"reply_id", "body", "confirmation_token"} <= set(tools["send_reply"].input_schema["properties"])
        got = await client.call_tool("get_reply", {"reply_id": reply.pk})
        missing = await client.call_tool("get_reply", {"reply_id": "rpl_nope"})
        draft = await client.call_tool("send_reply", {"reply_id": reply.pk, "body": "Happy to. Tuesday?"})
        empty = await client.call_tool("send_reply", {"reply_id": reply.pk, "body": ""})
        return got, missing, draft, empty

    got, missing, draft, empty = mcp_session(live.url, api_key, preview)
    rest = api.get(f"/v1/replies/{reply.pk}").json()
    assert rest["thread"][-1]["state"] == "pending_approval"  # the draft made after the read
    assert not got.is_error and got.structured_content == {**rest, "thread": rest["thread"][:-1]}
    assert missing.is_error and missing.structured_content["error"]["code"] == "not_found"
    assert empty.is_error and empty.structured_content["error"]["code"] == "invalid_request"
    result = draft.structured_content["result"]
    assert result["status"] == "preview" and result["to"] == "jane@acme.com" and result["confirmation_token"]
    accounts.token_approve(token=accounts.token_lookup(plaintext=result["confirmation_token"]), user=owner)

    async def send(client):
        call = {"reply_id": reply.pk, "body": "Happy to. Tuesday?", "confirmation_token": result["confirmation_token"]}
        no_key = await client.call_tool("send_reply", call)
        sent = await client.call_tool("send_reply", {**call, "idempotency_key": "mcp-send-1"})
        again = await client.call_tool("send_reply", {**call, "idempotency_key": "mcp-send-1"})
        return no_key, sent, again

    no_key, sent, again = mcp_session(live.url, api_key, send)
    assert no_key.is_error and no_key.structured_content["error"]["code"] == "idempotency_key_required"
    assert not sent.is_error and sent.structured_content["result"]["status"] == "sent"
    assert again.structured_content == sent.structured_content
    assert api.get(f"/v1/replies/{reply.pk}").json()["thread"][-1]["state"] == "sent"


def test_openapi_documents_get_reply_and_send_reply(client, settings):
    settings.ROOT_URLCONF = "config.urls"
    spec = json.loads(client.get("/openapi.json").content)
    get_op = spec["paths"]["/v1/replies/{reply_id}"]["get"]
    assert {"200", "401", "404", "500"} <= set(get_op["responses"])
    send_op = spec["paths"]["/v1/send_reply"]["post"]
    assert {"200", "400", "401", "403", "404", "409", "410", "428"} <= set(send_op["responses"])
    assert "requestBody" in send_op
    schemas = spec["components"]["schemas"]

    def resolve(node):
        ref = node["content"]["application/json"]["schema"]
        while "$ref" in ref:
            ref = schemas[ref["$ref"].rsplit("/", 1)[-1]]
        return ref

    body = resolve(send_op["requestBody"])
    assert set(body["properties"]) == {"reply_id", "body", "confirmation_token"}
    detail = json.dumps(resolve(get_op["responses"]["200"]))
    for name in ("full_text", "attachments", "thread", "text_truncated", "updated_at"):
        assert name in detail
    sent = json.dumps(schemas["SendReplyOut"])
    for name in ('"from"', "in_reply_to", "approval_url", "answer_id", "message_id"):
        assert name in sent
    errors_409 = json.dumps(send_op["responses"]["409"])
    assert "recipient_suppressed" in errors_409 and "mailbox_unavailable" in errors_409

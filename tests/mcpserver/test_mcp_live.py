"""The MCP server over streamable HTTP, driven by the official SDK client against a live uvicorn server.

Test-only verbs (tests/testverbs.py) stand in for the product verbs: `test_echo` charges what it is told,
`test_confirm` runs the confirmation-token flow with the scope `assets:purchase`.
"""

from __future__ import annotations

import json
import time

import anyio
import pytest
from asgiref.sync import sync_to_async
from jsonschema import Draft202012Validator

from accounts.models import ApiKey, ConfirmationToken
from accounts.services import key_revoke, token_approve, token_deny
from billing.models import CreditAccount, LedgerEntry, RequestRecord
from core import errors
from core.verbs import REGISTRY
from mcpserver.tools import exposed_verbs
from tests import testverbs
from tests.mcpserver.conftest import LiveServer, http_post, mcp_session

pytestmark = pytest.mark.django_db(transaction=True)

SPEC_TOOLS = {"find_leads", "enrich", "verify_email", "find_intent", "setup_sending", "create_campaign",
              "launch_campaign", "get_replies", "get_usage", "get_operation", "get_request", "llm_chat"}
CONTRACT_CODES = {cls.code for cls in errors.ALL_ERRORS}


def balance_micros(ws) -> int:
    return CreditAccount.objects.get(pk=ws.pk).available_micros


def call(live, key, name, args=None):
    async def fn(client):
        return await client.call_tool(name, args or {})
    return mcp_session(live.url, key, fn)


def error_of(result) -> dict:
    assert result.is_error, result
    body = result.structured_content
    assert json.loads(result.content[0].text) == body  # text and structured views say the same
    assert set(body) == {"error"}
    return body["error"]


# --- the tool list ---------------------------------------------------------------------------------
def test_tools_are_generated_from_the_registry(live, api_key):
    tools = mcp_session(live.url, api_key, lambda c: c.list_tools()).tools
    by_name = {t.name: t for t in tools}
    # Whatever verbs are registered right now (other apps add theirs), each is exactly one tool.
    assert set(by_name) == {v.tool_name for v in exposed_verbs()}
    assert len(by_name) == len(tools)
    registered_spec_names = {v.tool_name for v in REGISTRY.values()} & SPEC_TOOLS
    assert registered_spec_names <= set(by_name)
    assert {"get_usage", "get_request", "test_echo", "test_confirm"} <= set(by_name)
    for tool in tools:
        schema = tool.input_schema
        assert schema["type"] == "object"
        key_prop = schema["properties"]["idempotency_key"]  # optional: a string or null
        assert key_prop["anyOf"][0] == {"type": "string", "minLength": 1, "maxLength": 255}
        assert key_prop["anyOf"][1] == {"type": "null"}
        assert schema["required"] == list(schema["properties"])  # strict function calling: all listed
        assert tool.description and "error envelope" in tool.description
        assert "$ref" not in json.dumps(schema) and "nullable" not in json.dumps(schema), tool.name
        Draft202012Validator.check_schema(schema)  # a valid JSON Schema, not OpenAPI 3.0 dialect

    # Input schemas come from the REST serializers.
    tools = by_name
    echo = tools["test_echo"].input_schema
    assert echo["additionalProperties"] is False  # StrictSerializer: unknown fields are refused
    assert set(echo["properties"]) == {"charge", "hold", "fail", "gate", "payload", "idempotency_key"}
    assert echo["properties"]["charge"]["anyOf"] == [{"type": "string", "minLength": 1}, {"type": "null"}]

    confirm = tools["test_confirm"]
    schema = confirm.input_schema
    assert schema["required"] == ["amount", "confirmation_token", "idempotency_key"]
    assert schema["properties"]["amount"] == {"type": "integer", "minimum": 1}  # required: not nullable
    assert "Required when `confirmation_token` is sent." in schema["properties"]["idempotency_key"]["description"]
    assert "assets:purchase" in confirm.description
    assert "approval_url" in confirm.description and "confirmation_pending" in confirm.description

    request = tools["get_request"]
    assert request.input_schema["required"] == ["request_id", "idempotency_key"]
    assert request.input_schema["properties"]["request_id"]["description"] == "The request_id of a previous call."
    assert request.annotations.read_only_hint is True
    assert tools["test_echo"].annotations.read_only_hint is False
    assert tools["get_usage"].input_schema["properties"].keys() == {"idempotency_key"}


def test_a_verb_registered_after_startup_is_listed(live, api_key):
    from core.verbs import Outcome, Verb, register

    verb = register(Verb(name="test_late", path="/v1/test_late", run=lambda ctx: Outcome(result={"late": True}),
                         test_only=True, summary="Registered after the server started"))
    try:
        async def fn(client):
            names = {t.name for t in (await client.list_tools()).tools}
            return names, await client.call_tool("test_late", {})
        names, result = mcp_session(live.url, api_key, fn)
        assert "test_late" in names
        assert result.structured_content["result"] == {"late": True}
    finally:
        REGISTRY.pop(verb.name)


# --- every tool answers through the pipeline ---------------------------------------------------------
def test_every_tool_answers_with_a_body_or_the_error_envelope(live, api_key):
    async def fn(client):
        tools = (await client.list_tools()).tools
        return {t.name: await client.call_tool(t.name, {"idempotency_key": f"every-{t.name}"}) for t in tools}

    results = mcp_session(live.url, api_key, fn)
    assert set(results) == {v.tool_name for v in exposed_verbs()}
    for name, result in results.items():
        assert isinstance(result.structured_content, dict), name
        status = result.meta["service/http_status"]
        if result.is_error:
            err = error_of(result)
            assert err["code"] in CONTRACT_CODES, (name, err)
            assert err["code"] != "internal", (name, err)
            assert err["request_id"] == result.meta["service/request_id"]
            assert status >= 400
        else:
            assert 200 <= status < 300, name


# --- metering: parity with REST ------------------------------------------------------------------------
def test_charges_and_request_records_match_rest(live, api, api_key, workspace):
    before = balance_micros(workspace)
    result = call(live, api_key, "test_echo", {"charge": "0.2", "payload": {"a": 1}})
    assert not result.is_error
    rid = result.meta["service/request_id"]
    assert result.structured_content == {
        "result": {"echo": {"a": 1}, "hold": None},
        "service": {"request_id": rid, "credits_charged": "0.2", "credits_available": "299.8"},
    }
    assert result.meta["service/http_status"] == 200
    assert balance_micros(workspace) == before - 200_000

    rest = api.post("/v1/test_echo", {"charge": "0.2", "payload": {"a": 1}})
    assert rest.status_code == 200
    rest_body = rest.json()
    assert rest_body["result"] == result.structured_content["result"]
    assert rest_body["service"]["credits_charged"] == "0.2"
    assert rest_body["service"]["credits_available"] == "299.6"
    assert balance_micros(workspace) == before - 400_000

    mcp_rec = RequestRecord.objects.get(pk=rid)
    rest_rec = RequestRecord.objects.get(pk=rest["X-Request-Id"])
    for rec, channel in ((mcp_rec, "mcp"), (rest_rec, "rest")):
        assert (rec.verb, rec.channel, rec.status, rec.http_status, rec.credits_charged_micros) == (
            "test_echo", channel, "succeeded", 200, 200_000)
    charges = LedgerEntry.objects.filter(kind="charge").order_by("id")
    assert [(e.amount_micros, e.request_id) for e in charges] == [(-200_000, rid), (-200_000, rest["X-Request-Id"])]

    # The state reads answer the same over MCP as over REST.
    record = call(live, api_key, "get_request", {"request_id": rid}).structured_content
    assert record == api.get(f"/v1/requests/{rid}").json()
    assert (record["status"], record["credits_charged"], record["verb"]) == ("succeeded", "0.2", "test_echo")
    usage = call(live, api_key, "get_usage").structured_content
    assert usage == api.get("/v1/usage").json()
    assert usage["credits_available"] == "299.6"


def test_each_call_has_its_own_request_id_and_record_in_both_protocol_eras(live, api_key, workspace):
    async def fn(client):
        return [await client.call_tool("test_echo", {"charge": "0.000001"}) for _ in range(3)]
    results = mcp_session(live.url, api_key, fn) + mcp_session(live.url, api_key, fn, mode="legacy")
    server_info = "io.modelcontextprotocol/serverInfo"  # stamped on results only in the 2026 era
    assert [server_info in r.meta for r in results] == [True] * 3 + [False] * 3
    ids = [r.meta["service/request_id"] for r in results]
    assert len(set(ids)) == 6 and all(i.startswith("req_") for i in ids)
    assert [r.structured_content["service"]["credits_available"] for r in results] == [
        "299.999999", "299.999998", "299.999997", "299.999996", "299.999995", "299.999994"]
    assert RequestRecord.objects.filter(pk__in=ids, channel="mcp", status="succeeded").count() == 6
    assert balance_micros(workspace) == 300_000_000 - 6


def test_exact_balance_edge_and_insufficient_credits(live, api_key, workspace):
    short = call(live, api_key, "test_echo", {"charge": "300.000001"})
    err = error_of(short)
    assert (err["code"], short.meta["service/http_status"]) == ("insufficient_credits", 402)
    assert err["details"] == {"required": "300.000001", "credits_available": "300"}
    assert balance_micros(workspace) == 300_000_000
    exact = call(live, api_key, "test_echo", {"charge": "300"})
    assert exact.structured_content["service"] == {
        "request_id": exact.meta["service/request_id"], "credits_charged": "300", "credits_available": "0"}
    assert balance_micros(workspace) == 0


def test_errors_are_tool_errors_carrying_the_envelope(live, api, api_key, workspace):
    # Same error, same envelope and status as REST (only the request id differs).
    for code in ("confirmation_denied", "provider_unavailable", "campaign_not_draft"):
        rest = api.post("/v1/test_echo", {"fail": code})
        mcp = call(live, api_key, "test_echo", {"fail": code})
        rest_err, mcp_err = rest.json()["error"], error_of(mcp)
        assert mcp.meta["service/http_status"] == rest.status_code
        assert mcp_err.pop("request_id") == mcp.meta["service/request_id"]
        assert rest_err.pop("request_id") == rest["X-Request-Id"]
        assert mcp_err == rest_err and mcp_err["code"] == code

    result = call(live, api_key, "test_confirm", {"amount": 0, "bogus": 1})
    err = error_of(result)
    assert err["code"] == "invalid_request" and result.meta["service/http_status"] == 400
    assert err["details"]["fields"]["bogus"] == ["Unknown field."]
    zero = error_of(call(live, api_key, "test_confirm", {"amount": 0}))
    assert zero["code"] == "invalid_request" and list(zero["details"]["fields"]) == ["amount"]
    rec = RequestRecord.objects.get(pk=err["request_id"])
    assert (rec.status, rec.channel, rec.http_status, rec.error["code"]) == ("failed", "mcp", 400, "invalid_request")

    result = call(live, api_key, "test_echo", {"hold": "5", "charge": "5", "fail": "crash"})
    err = error_of(result)
    assert err["code"] == "internal" and result.meta["service/http_status"] == 500
    assert "boom" not in result.content[0].text
    assert balance_micros(workspace) == 300_000_000

    err = error_of(call(live, api_key, "no_such_tool"))
    assert err["code"] == "not_found" and err["details"] == {"tool": "no_such_tool"}


# --- idempotency ---------------------------------------------------------------------------------------
def test_idempotent_replay_charges_once(live, api_key, workspace):
    args = {"charge": "1.5", "payload": "x", "idempotency_key": "retry-1"}

    async def fn(client):
        return await client.call_tool("test_echo", args), await client.call_tool("test_echo", args)
    first, second = mcp_session(live.url, api_key, fn)
    assert second.content[0].text == first.content[0].text  # byte for byte
    assert second.structured_content["service"]["credits_charged"] == "1.5"
    assert second.meta["service/idempotent_replayed"] is True
    assert "service/idempotent_replayed" not in first.meta
    assert second.meta["service/request_id"] == first.meta["service/request_id"]
    assert balance_micros(workspace) == 300_000_000 - 1_500_000
    assert RequestRecord.objects.filter(verb="test_echo").count() == 1

    reused = call(live, api_key, "test_echo", {**args, "charge": "2"})
    err = error_of(reused)
    assert (err["code"], reused.meta["service/http_status"]) == ("idempotency_key_reused", 409)
    assert err["details"] == {"original_request_id": first.meta["service/request_id"]}
    assert balance_micros(workspace) == 300_000_000 - 1_500_000


def test_mcp_and_rest_share_idempotency_keys(live, api, api_key, workspace):
    rest = api.post("/v1/test_echo", {"charge": "1"}, headers={"Idempotency-Key": "shared-1"})
    mcp = call(live, api_key, "test_echo", {"charge": "1", "idempotency_key": "shared-1"})
    assert mcp.content[0].text.encode() == rest.content
    assert mcp.meta["service/idempotent_replayed"] is True
    assert balance_micros(workspace) == 299_000_000


def test_idempotency_key_edges(live, api_key):
    cases = [("k" * 255, True), ("k" * 256, False), ("", False), ("tab\there", False), (12345, False)]

    async def fn(client):
        return [await client.call_tool("test_echo", {"idempotency_key": key}) for key, _ in cases]
    for (key, ok), result in zip(cases, mcp_session(live.url, api_key, fn), strict=True):
        if ok:
            assert not result.is_error, key
        else:
            err = error_of(result)
            assert err["code"] == "invalid_request" and result.meta["service/http_status"] == 400, key


def test_in_progress_and_concurrent_calls(live, api_key):
    """A gated call holds its idempotency key; meanwhile other calls are served (calls are not serialized)."""
    gate = "mcp-gate"
    testverbs.GATES[gate] = __import__("threading").Event()

    def started() -> bool:
        return RequestRecord.objects.filter(verb="test_echo", status="in_progress").exists()

    async def fn(client):
        results = {}

        async def slow():
            results["slow"] = await client.call_tool("test_echo", {"gate": gate, "charge": "1",
                                                                   "idempotency_key": "slow-1"})

        async with anyio.create_task_group() as tg:
            tg.start_soon(slow)
            deadline = time.monotonic() + 10
            while not await sync_to_async(started, thread_sensitive=False)():
                assert time.monotonic() < deadline, "the gated call never started"
                await anyio.sleep(0.01)
            results["dup"] = await client.call_tool("test_echo", {"gate": gate, "charge": "1",
                                                                  "idempotency_key": "slow-1"})
            results["other"] = await client.call_tool("get_usage", {})
            results["slow_done_before_release"] = "slow" in results
            testverbs.GATES[gate].set()
        return results

    try:
        results = mcp_session(live.url, api_key, fn)
    finally:
        testverbs.GATES.pop(gate).set()
    assert error_of(results["dup"])["code"] == "idempotency_in_progress"
    assert not results["other"].is_error
    assert results["slow_done_before_release"] is False
    assert results["slow"].structured_content["service"]["credits_charged"] == "1"


# --- scopes and confirmations --------------------------------------------------------------------------
def test_scope_error_is_a_tool_error(live, make_api):
    limited, ws, _ = make_api(scopes=["campaign:write"])
    result = call(live, limited.key, "test_confirm", {"amount": 5})
    err = error_of(result)
    assert (err["code"], err["details"], result.meta["service/http_status"]) == (
        "insufficient_scope", {"required_scope": "assets:purchase"}, 403)
    assert balance_micros(ws) == 300_000_000
    assert not ConfirmationToken.objects.exists()


def test_confirmation_flow_over_mcp(live, api_key, workspace, owner):
    quote = call(live, api_key, "test_confirm", {"amount": 7})
    assert not quote.is_error
    result = quote.structured_content["result"]
    assert result["status"] == "quote"
    token = result["confirmation_token"]
    assert token.startswith("ct_") and result["approval_url"] and result["confirmation_expires_at"]
    assert quote.structured_content["service"]["credits_charged"] == "0"

    missing_key = call(live, api_key, "test_confirm", {"amount": 7, "confirmation_token": token})
    assert (error_of(missing_key)["code"], missing_key.meta["service/http_status"]) == ("idempotency_key_required", 428)

    buy = {"amount": 7, "confirmation_token": token, "idempotency_key": "buy-7"}
    pending = call(live, api_key, "test_confirm", buy)
    err = error_of(pending)
    assert (err["code"], pending.meta["service/http_status"]) == ("confirmation_pending", 409)
    assert err["details"]["approval_url"] == result["approval_url"]
    assert balance_micros(workspace) == 300_000_000

    token_approve(token=ConfirmationToken.objects.get(), user=owner)
    # The agent calls again with the same token and the same idempotency_key.
    done = call(live, api_key, "test_confirm", buy)
    assert not done.is_error, done
    assert done.structured_content["result"] == {"status": "purchased", "amount": 7}
    assert done.structured_content["service"]["credits_charged"] == "0.000007"
    assert balance_micros(workspace) == 300_000_000 - 7

    again = call(live, api_key, "test_confirm", buy)
    assert again.content[0].text == done.content[0].text and again.meta["service/idempotent_replayed"] is True
    used = call(live, api_key, "test_confirm", {**buy, "idempotency_key": "buy-7-other"})
    assert error_of(used)["code"] == "confirmation_used"
    assert balance_micros(workspace) == 300_000_000 - 7

    # A denied token is refused and charges nothing.
    token = call(live, api_key, "test_confirm", {"amount": 3}).structured_content["result"]["confirmation_token"]
    token_deny(token=ConfirmationToken.objects.get(status="pending"), user=owner)
    denied = call(live, api_key, "test_confirm", {"amount": 3, "confirmation_token": token, "idempotency_key": "d"})
    assert (error_of(denied)["code"], denied.meta["service/http_status"]) == ("confirmation_denied", 403)
    assert balance_micros(workspace) == 300_000_000 - 7


def test_rate_limit_counts_tool_calls(live, api_key, settings):
    """Every /mcp request counts (issue 15.3): the client's discovery and its tools/list too. A tool call over
    the limit is answered as a tool error carrying the 429 (other requests get an HTTP 429)."""
    settings.RATE_LIMIT_PER_MINUTE = 3

    async def fn(client):  # discovery (1), call (2), the client's own tools/list (3), then two calls over
        return [await client.call_tool("test_echo", {}) for _ in range(3)]
    results = mcp_session(live.url, api_key, fn)
    assert [r.is_error for r in results] == [False, True, True]
    assert (error_of(results[2])["code"], results[2].meta["service/http_status"]) == ("rate_limited", 429)
    assert [r.meta["service/headers"]["RateLimit-Remaining"] for r in results] == ["1", "0", "0"]
    assert results[0].meta["service/headers"]["RateLimit-Limit"] == "3"
    assert int(results[2].meta["service/headers"]["Retry-After"]) >= 1
    assert "Retry-After" not in results[0].meta["service/headers"]


# --- HTTP: authentication, metadata, host checks --------------------------------------------------------
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "curl", "version": "1"}}}


def test_authentication_failures_are_http_401(live, settings, api_key):
    resp = http_post(live.url, INIT)
    assert resp.status_code == 401
    assert resp.headers["www-authenticate"].startswith("Bearer ")
    assert f'resource_metadata="{settings.BASE_URL}/.well-known/oauth-protected-resource/mcp"' in resp.headers[
        "www-authenticate"]

    for header in ["Bearer service_sk_live_" + "x" * 43, "Bearer nope", "Basic abc", "Bearer", "Token abc"]:
        assert http_post(live.url, INIT, headers={"Authorization": header}).status_code == 401, header
    assert http_post(live.url, INIT, headers={"Authorization": f"Bearer {api_key}"}).status_code == 200
    key_revoke(key=ApiKey.objects.get())
    assert http_post(live.url, INIT, headers={"Authorization": f"Bearer {api_key}"}).status_code == 401
    with pytest.raises(Exception):  # noqa: B017 - the SDK surfaces the 401 as a transport error
        mcp_session(live.url, None, lambda c: c.list_tools())


def test_protected_resource_metadata(live, settings):
    import httpx2

    for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
        resp = httpx2.get(live.base + path, timeout=10)
        assert resp.status_code == 200, path
        doc = resp.json()
        assert doc["resource"] == settings.BASE_URL + "/mcp"
        assert doc["authorization_servers"] == [settings.BASE_URL]
        assert doc["bearer_methods_supported"] == ["header"]


def test_foreign_host_is_refused_and_base_url_host_allowed(settings, transactional_db, api_key):
    settings.BASE_URL = "https://api.example.com"
    settings.MCP_INCLUDE_TEST_VERBS = True
    # as behind the TLS-terminating proxy an https BASE_URL implies (plain http would be 403 https_required)
    auth = {"Authorization": f"Bearer {api_key}", "X-Forwarded-Proto": "https"}
    with LiveServer() as live:
        assert http_post(live.url, INIT, headers={**auth, "Host": "evil.example"}).status_code == 421
        assert http_post(live.url, INIT, headers={**auth, "Host": "api.example.com"}).status_code == 200
        assert http_post(live.url, INIT, headers={**auth, "Origin": "https://evil.example"}).status_code == 403
        assert http_post(live.url, INIT, headers={**auth, "Origin": "https://api.example.com"}).status_code == 200


def test_one_key_lookup_and_one_database_connection_per_call(live, api_key, monkeypatch):
    """The bearer verifier's key lookup is reused for the call; the lookup and the call run on the API's worker
    threads (api.door), which keep their database connection on SQLite: no connection is opened per call
    (PostgreSQL: one checked out of the pool per step, none created once the pool is warm)."""
    from django.db.backends.signals import connection_created

    from mcpserver import tools

    def second_lookup(**kwargs):
        raise AssertionError("key looked up twice")

    monkeypatch.setattr(tools, "key_authenticate", second_lookup)
    opened = []

    def count(sender, connection, **kwargs):
        opened.append(connection.alias)

    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "test_echo", "arguments": {"charge": "0.1"}}}
    headers = {"Authorization": f"Bearer {api_key}", "MCP-Protocol-Version": "2025-06-18"}
    http_post(live.url, call, headers=headers)  # the threads that serve it have their connections now
    connection_created.connect(count)
    try:
        resps = [http_post(live.url, call, headers=headers) for _ in range(5)]
    finally:
        connection_created.disconnect(count)
    for resp in resps:
        result = resp.json()["result"]
        assert resp.status_code == 200 and result["isError"] is False
        assert result["structuredContent"]["service"]["credits_charged"] == "0.1"
    from django.db import connection

    if connection.vendor == "sqlite":
        assert opened == []

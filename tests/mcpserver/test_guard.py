"""/mcp over real HTTP (uvicorn + httpx2): GET and DELETE are 405 with Allow (stateless: no stream to hold open),
every request counts against the key's rate limit, a cap on concurrent requests per key, the error envelope
for 413 and 429, and X-Request-Id plus the security headers on every response (issues 15.3, 15.6)."""

from __future__ import annotations

import threading
import time

import httpx2
import pytest

from billing.models import RequestRecord
from tests import testverbs
from tests.mcpserver.conftest import http_post

HEADERS = {"MCP-Protocol-Version": "2025-06-18"}
LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}


def _call(name, arguments, rid=2):
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": name, "arguments": arguments}}


def _auth(api_key):
    return {"Authorization": f"Bearer {api_key}", **HEADERS}


def _assert_common_headers(resp):
    assert resp.headers["x-request-id"].startswith("req_")
    assert resp.headers["x-content-type-options"] == "nosniff"
    assert resp.headers["x-frame-options"] == "DENY"
    assert "referrer-policy" in resp.headers


def _envelope(resp, status, code):
    assert resp.status_code == status, (resp.status_code, resp.text[:300])
    body = resp.json()
    assert body["error"]["code"] == code
    assert body["error"]["request_id"] == resp.headers["x-request-id"]
    return body


@pytest.mark.parametrize("method", ["GET", "DELETE", "PUT", "PATCH"])
def test_methods_other_than_post_are_405_with_allow_and_hold_nothing(live, api_key, method):
    for headers in ({"Accept": "text/event-stream"}, {**_auth(api_key), "Accept": "text/event-stream"}):
        resp = httpx2.request(method, live.url, headers=headers, timeout=10)
        _envelope(resp, 405, "method_not_allowed")
        assert resp.headers["allow"] == "POST, OPTIONS"
        _assert_common_headers(resp)


def test_every_mcp_request_counts_against_the_key_rate_limit(live, api_key, settings):
    settings.RATE_LIMIT_PER_MINUTE = 2
    assert http_post(live.url, LIST, headers=_auth(api_key)).status_code == 200
    assert http_post(live.url, LIST, headers=_auth(api_key)).status_code == 200
    limited = http_post(live.url, LIST, headers=_auth(api_key))
    _envelope(limited, 429, "rate_limited")
    assert int(limited.headers["retry-after"]) >= 1 and limited.headers["ratelimit-remaining"] == "0"
    _assert_common_headers(limited)
    # a tool call over the limit is still answered as a tool error (what an agent sees), not counted twice
    call = http_post(live.url, _call("test_echo", {}), headers=_auth(api_key))
    assert call.status_code == 200
    result = call.json()["result"]
    assert result["isError"] is True and result["structuredContent"]["error"]["code"] == "rate_limited"


def test_rest_and_mcp_share_one_bucket(live, api, api_key, settings):
    settings.RATE_LIMIT_PER_MINUTE = 2
    assert api.get("/v1/usage").status_code == 200
    assert http_post(live.url, LIST, headers=_auth(api_key)).status_code == 200
    _envelope(http_post(live.url, LIST, headers=_auth(api_key)), 429, "rate_limited")


def test_concurrent_requests_per_key_are_capped(live, api_key, settings):
    settings.MCP_MAX_CONCURRENT_PER_KEY = 1
    gate = "guard-gate"
    testverbs.GATES[gate] = threading.Event()
    out = {}

    def slow():
        out["slow"] = http_post(live.url, _call("test_echo", {"gate": gate}), headers=_auth(api_key))

    thread = threading.Thread(target=slow)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not RequestRecord.objects.filter(verb="test_echo", status="in_progress").exists():
            assert time.monotonic() < deadline, "the gated call never started"
            time.sleep(0.01)
        refused = http_post(live.url, LIST, headers=_auth(api_key))
        body = _envelope(refused, 429, "rate_limited")
        assert body["error"]["details"] == {"concurrent_limit": 1} and refused.headers["retry-after"] == "1"
    finally:
        testverbs.GATES.pop(gate).set()
        thread.join(20)
    assert out["slow"].status_code == 200
    assert http_post(live.url, LIST, headers=_auth(api_key)).status_code == 200  # the slot was given back


def test_oversized_body_is_413_with_the_envelope(live, api_key, settings):
    settings.MAX_BODY_BYTES = 2_000
    big = _call("test_echo", {"payload": "x" * 5_000})
    declared = http_post(live.url, big, headers=_auth(api_key))
    _envelope(declared, 413, "payload_too_large")
    _assert_common_headers(declared)

    def chunks():  # no Content-Length: the guard counts what arrives
        yield b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "test_echo", '
        yield b'"arguments": {"payload": "' + b"x" * 5_000 + b'"}}}'

    streamed = httpx2.post(live.url, content=chunks(), timeout=10,
                           headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                                    **_auth(api_key)})
    _envelope(streamed, 413, "payload_too_large")


def test_request_id_and_security_headers_on_every_mcp_response(live, api_key):
    resp = http_post(live.url, _call("test_echo", {}), headers=_auth(api_key))
    assert resp.status_code == 200
    _assert_common_headers(resp)
    # the X-Request-Id is the tool call's request record
    assert resp.json()["result"]["_meta"]["service/request_id"] == resp.headers["x-request-id"]
    assert RequestRecord.objects.filter(pk=resp.headers["x-request-id"]).exists()
    unauthenticated = http_post(live.url, LIST, headers=HEADERS)
    assert unauthenticated.status_code == 401
    _assert_common_headers(unauthenticated)
    meta = httpx2.get(live.base + "/.well-known/oauth-protected-resource/mcp", timeout=10)
    _assert_common_headers(meta)

"""POST /v1/llm/chat (non-streaming) and GET /v1/llm/models through Django's test client, against the real
fake upstream over HTTP and the built-in echo upstream: allowlist, exact charges, the 402 edge, upstream
errors, passthrough, idempotency, rate limit, request records, and the llm_chat verb (the MCP path)."""

import json

import pytest

from api.pipeline import execute
from billing.models import CreditAccount, Hold, LedgerEntry, RequestRecord
from core.ids import new_id
from core.outbound import USER_AGENT
from core.verbs import REGISTRY, Context
from llmproxy.views import OVERHEAD_HEADER

pytestmark = pytest.mark.usefixtures("models_file")

HELLO = [{"role": "user", "content": "hello there world"}]
HELLO_PROMPT_ESTIMATE = 15  # len('{"messages":[{"role":"user","content":"hello there world"}]}') = 60 bytes / 4
START = 300_000_000


def account(ws):
    return CreditAccount.objects.get(pk=ws.pk)


def chat(api, body, path="/v1/llm/chat", **kw):
    return api.post(path, body, **kw)


@pytest.mark.parametrize("model,charged,available", [
    ("vendor_a/model_large", "0.007", "299.993"),   # 14 tokens x 0.5 / 1k
    ("vendor_a/model_small", "0.0035", "299.9965"),  # 14 tokens x 0.25 / 1k
    ("vendor_b/model_mini", "0.0014", "299.9986"),  # 14 tokens x 0.1 / 1k
])
def test_echo_models_exact_charge(api, workspace, model, charged, available):
    r = chat(api, {"model": model, "messages": HELLO})
    assert r.status_code == 200, r.content
    body = r.json()
    assert body["object"] == "chat.completion"
    assert body["choices"][0]["message"]["content"] == "echo: hello there world"
    assert body["usage"] == {"prompt_tokens": 10, "completion_tokens": 4, "total_tokens": 14}
    assert body["service"] == {"request_id": r["X-Request-Id"], "credits_charged": charged,
                               "credits_available": available}
    acc = account(workspace)
    assert acc.reserved_micros == 0
    assert START - acc.balance_micros == {"0.007": 7000, "0.0035": 3500, "0.0014": 1400}[charged]
    assert LedgerEntry.objects.filter(kind="charge").get().amount_micros == acc.balance_micros - START
    assert Hold.objects.get().status == "captured"
    assert float(r[OVERHEAD_HEADER]) >= 0


def test_both_paths_serve_chat(api):
    a = chat(api, {"model": "vendor_b/model_mini", "messages": HELLO}, path="/v1/llm/chat/completions")
    assert a.status_code == 200 and a.json()["service"]["credits_charged"] == "0.0014"


def test_request_record_shows_usage_and_final_charge(api):
    r = chat(api, {"model": "vendor_a/model_large", "messages": HELLO})
    rec = api.get(f"/v1/requests/{r['X-Request-Id']}").json()
    assert rec["verb"] == "llm_chat" and rec["status"] == "succeeded" and rec["credits_charged"] == "0.007"
    assert rec["usage"] == {"model": "vendor_a/model_large", "prompt_tokens": 10, "completion_tokens": 4,
                            "total_tokens": 14, "estimated": False}


def test_unknown_model_is_400_model_not_allowed_and_nothing_happens(api, workspace, fake):
    r = chat(api, {"model": "vendor_z/nope", "messages": HELLO})
    assert r.status_code == 400
    err = r.json()["error"]
    assert err["code"] == "model_not_allowed" and err["request_id"] == r["X-Request-Id"]
    assert "vendor_a/model_large" in err["details"]["allowed"]
    assert fake.requests == [] and account(workspace).balance_micros == START
    assert RequestRecord.objects.get(pk=r["X-Request-Id"]).status == "failed"


@pytest.mark.parametrize("body,field", [
    ({"messages": HELLO}, "model"),
    ({"model": "vendor_a/model_large"}, "messages"),
    ({"model": "vendor_a/model_large", "messages": []}, "messages"),
    ({"model": "vendor_a/model_large", "messages": ["hi"]}, "messages[0]"),
    ({"model": "vendor_a/model_large", "messages": HELLO, "max_tokens": 0}, "max_tokens"),
    ({"model": "vendor_a/model_large", "messages": HELLO, "max_tokens": "5"}, "max_tokens"),
    ({"model": "vendor_a/model_large", "messages": HELLO, "max_completion_tokens": -1}, "max_completion_tokens"),
    ({"model": "vendor_a/model_large", "messages": HELLO, "n": 0}, "n"),
    ({"model": "vendor_a/model_large", "messages": HELLO, "stream": "yes"}, "stream"),
])
def test_invalid_bodies_are_400(api, body, field):
    r = chat(api, body)
    assert r.status_code == 400
    assert r.json()["error"]["code"] == "invalid_request"
    assert field in r.json()["error"]["details"]["fields"]


def test_not_json_is_415_and_malformed_is_400(api):
    assert chat(api, None, raw="model=x", content_type="text/plain").json()["error"]["code"] == "unsupported_media_type"
    r = chat(api, None, raw="{nope")
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_request"


def test_no_key_is_401_envelope_with_overhead_header(client):
    r = client.post("/v1/llm/chat", data=json.dumps({"model": "vendor_a/model_large", "messages": HELLO}),
                    content_type="application/json")
    assert r.status_code == 401 and r.json()["error"]["code"] == "unauthenticated"
    assert r["X-Request-Id"] == r.json()["error"]["request_id"]
    assert OVERHEAD_HEADER in r


def test_get_on_chat_is_405_envelope(api):
    r = api.get("/v1/llm/chat")
    assert r.status_code == 405 and r.json()["error"]["code"] == "method_not_allowed"


def test_unknown_fields_pass_through_untouched(api, fake):
    extra = {"temperature": 0.25, "seed": 7, "response_format": {"type": "json_object"},
             "vendor_thing": {"nested": [1, "two", None]}, "user": "u-1"}
    r = chat(api, {"model": "fake/ok", "messages": HELLO, **extra})
    assert r.status_code == 200, r.content
    sent = fake.requests[0]
    assert sent["model"] == "ok"  # the upstream's own name
    assert {k: sent[k] for k in extra} == extra
    assert sent["messages"] == HELLO
    assert "stream_options" not in sent  # only meaningful (and only accepted) when streaming
    assert fake.headers[0]["authorization"] == "Bearer sk-upstream-test"
    assert fake.headers[0]["user-agent"] == USER_AGENT  # the service's own, whichever HTTP client sends it


def test_unknown_fields_in_the_upstream_answer_pass_through(api):
    r = chat(api, {"model": "vendor_a/model_large", "messages": HELLO})
    assert r.json()["system_fingerprint"] == "sandbox-echo"


def _bound(**fields):
    from llmproxy.metering import prompt_bound

    return prompt_bound({"model": "fake/ok", "messages": HELLO, **fields})


def test_hold_edge_exactly_affordable_max_tokens(api, workspace, fake):
    # fake/ok costs 1 credit per 1k tokens = 1000 micro-credits a token. Hold = (prompt bound + max_tokens)
    # tokens; 300 credits cover 300,000 tokens (the bound is the same for any six-digit max_tokens).
    affordable = 300_000 - _bound(max_tokens=299_000)
    r = chat(api, {"model": "fake/ok", "messages": HELLO, "max_tokens": affordable + 1})
    assert r.status_code == 402
    err = r.json()["error"]
    assert err["code"] == "insufficient_credits"
    assert err["details"] == {"required": "300.001", "credits_available": "300"}
    assert fake.requests == []  # refused before any upstream call
    assert account(workspace).balance_micros == START

    r = chat(api, {"model": "fake/ok", "messages": HELLO, "max_tokens": affordable})
    assert r.status_code == 200, r.content
    assert r.json()["usage"]["total_tokens"] == 19  # 11 prompt + 8 words
    assert r.json()["service"]["credits_charged"] == "0.019"
    assert r.json()["service"]["credits_available"] == "299.981"
    acc = account(workspace)
    assert (acc.balance_micros, acc.reserved_micros) == (START - 19_000, 0)


def test_max_completion_tokens_wins_and_n_multiplies_the_hold(api, workspace, settings):
    # n=2 doubles the completion part: bound + 2 * cap <= 300,000 tokens: admitted
    cap = (300_000 - _bound(max_completion_tokens=100_000, max_tokens=1, n=2)) // 2
    r = chat(api, {"model": "fake/ok", "messages": HELLO, "max_completion_tokens": cap, "max_tokens": 1, "n": 2})
    assert r.status_code == 200, r.content
    r = chat(api, {"model": "fake/ok", "messages": HELLO, "max_completion_tokens": 150_000, "n": 2})
    assert r.status_code == 402


def test_default_cap_without_max_tokens(api, workspace):
    from billing.services import credits_debit

    # without max_tokens the hold is (prompt bound + 4096) tokens on fake/ok, a milli-credit a token
    hold = (_bound() + 4096) * 1000
    credits_debit(workspace=workspace, amount=START - hold + 1, kind="adjustment")
    assert chat(api, {"model": "fake/ok", "messages": HELLO}).status_code == 402
    from billing.services import credits_grant

    credits_grant(workspace=workspace, amount=1)
    r = chat(api, {"model": "fake/ok", "messages": HELLO})
    assert r.status_code == 200 and r.json()["service"]["credits_charged"] == "0.019"


def test_no_usage_from_upstream_charges_the_documented_estimate(api):
    r = chat(api, {"model": "fake/nousage", "messages": HELLO})
    assert r.status_code == 200
    # prompt estimate 15 + completion "w00 … w07" = 31 bytes -> 8 tokens = 23 tokens at 1 credit / 1k
    assert r.json()["service"]["credits_charged"] == "0.023"
    rec = RequestRecord.objects.get(pk=r["X-Request-Id"])
    assert rec.usage == {"model": "fake/nousage", "prompt_tokens": 15, "completion_tokens": 8, "total_tokens": 23,
                         "estimated": True}


@pytest.mark.parametrize("mode,status,code", [
    ("err500", 502, "provider_unavailable"),
    ("err429", 502, "provider_unavailable"),
    ("err401", 502, "provider_unavailable"),
    ("err400", 400, "invalid_request"),
])
def test_upstream_errors_charge_nothing(api, workspace, mode, status, code):
    r = chat(api, {"model": f"fake/{mode}", "messages": HELLO})
    assert r.status_code == status
    err = r.json()["error"]
    assert err["code"] == code and err["details"]["upstream_status"] == int(mode[3:])
    assert err["details"]["upstream_error"]["message"] == f"upstream says {mode[3:]}"
    acc = account(workspace)
    assert (acc.balance_micros, acc.reserved_micros) == (START, 0)
    assert not LedgerEntry.objects.filter(kind="charge").exists()
    assert Hold.objects.get().status == "released"
    rec = RequestRecord.objects.get(pk=r["X-Request-Id"])
    assert rec.status == "failed" and rec.credits_charged_micros == 0 and rec.error["code"] == code
    assert OVERHEAD_HEADER in r and "RateLimit-Remaining" in r


def test_unreachable_upstream_is_502(api, workspace, settings, tmp_path):
    import socket

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    path = tmp_path / "dead.json"
    path.write_text(json.dumps([{"id": "dead/model", "upstream_base_url": f"http://127.0.0.1:{port}/v1",
                                 "upstream_model": "m", "api_key_env": "", "credits_per_1k_tokens": "1"}]))
    settings.LLM_MODELS_FILE = str(path)
    r = chat(api, {"model": "dead/model", "messages": HELLO})
    assert r.status_code == 502 and r.json()["error"]["code"] == "provider_unavailable"
    assert account(workspace).balance_micros == START and account(workspace).reserved_micros == 0


def test_idempotent_replay_charges_once(api, workspace, fake):
    body = {"model": "fake/ok", "messages": HELLO}
    a = chat(api, body, headers={"Idempotency-Key": "k-1"})
    b = chat(api, body, headers={"Idempotency-Key": "k-1"})
    assert a.status_code == b.status_code == 200
    assert a.content == b.content and b["Idempotent-Replayed"] == "true"
    assert b["X-Request-Id"] == a["X-Request-Id"]
    assert len(fake.requests) == 1
    assert account(workspace).balance_micros == START - 19_000
    c = chat(api, {**body, "seed": 1}, headers={"Idempotency-Key": "k-1"})
    assert c.status_code == 409 and c.json()["error"]["code"] == "idempotency_key_reused"


def test_idempotency_does_not_store_provider_unavailable(api, fake):
    body = {"model": "fake/err500", "messages": HELLO}
    assert chat(api, body, headers={"Idempotency-Key": "k-2"}).status_code == 502
    assert chat(api, body, headers={"Idempotency-Key": "k-2"}).status_code == 502
    assert len(fake.requests) == 2  # a retry with the same key executes again


def test_idempotency_does_not_store_insufficient_credits(api, workspace, fake):
    """As on every verb: nothing happened on a 402, so the same call with the same key runs again after a top-up."""
    from billing.services import credits_debit, credits_grant

    credits_debit(workspace=workspace, amount=START, kind="adjustment", memo="empty the balance")
    body = {"model": "fake/ok", "messages": HELLO}
    first = chat(api, body, headers={"Idempotency-Key": "k-3"})
    assert first.status_code == 402 and first.json()["error"]["code"] == "insufficient_credits"
    credits_grant(workspace=workspace, amount=START, memo="top-up")
    second = chat(api, body, headers={"Idempotency-Key": "k-3"})
    assert second.status_code == 200 and "Idempotent-Replayed" not in second
    assert len(fake.requests) == 1


def test_rate_limit_headers_and_429(api, settings, fake):
    settings.RATE_LIMIT_PER_MINUTE = 2
    body = {"model": "fake/ok", "messages": HELLO}
    first = chat(api, body)
    assert first["RateLimit-Limit"] == "2" and first["RateLimit-Remaining"] == "1"
    assert chat(api, body).status_code == 200
    r = chat(api, body)
    assert r.status_code == 429 and r.json()["error"]["code"] == "rate_limited"
    assert int(r["Retry-After"]) >= 1 and r["RateLimit-Remaining"] == "0"
    assert len(fake.requests) == 2


def test_models_list_and_detail(api):
    r = api.get("/v1/llm/models")
    assert r.status_code == 200 and "RateLimit-Limit" in r
    data = {m["id"]: m for m in r.json()["data"]}
    assert r.json()["object"] == "list"
    assert data["vendor_a/model_large"]["credits_per_1k_tokens"] == "0.5"
    assert data["vendor_a/model_small"]["credits_per_1k_tokens"] == "0.25"
    assert data["vendor_b/model_mini"]["credits_per_1k_tokens"] == "0.1"
    assert data["vendor_b/model_mini"]["object"] == "model" and data["vendor_b/model_mini"]["owned_by"] == "vendor_b"
    one = api.get("/v1/llm/models/vendor_a/model_small")
    assert one.status_code == 200 and one.json()["id"] == "vendor_a/model_small"
    missing = api.get("/v1/llm/models/vendor_a/nope")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"


def test_models_need_a_key(client):
    r = client.get("/v1/llm/models")
    assert r.status_code == 401 and r.json()["error"]["code"] == "unauthenticated"


# --- the llm_chat verb: the path the MCP server takes -------------------------------------------------
def _ctx(workspace):
    from accounts.models import ApiKey

    key = ApiKey.objects.get(workspace=workspace)
    return Context(workspace=workspace, api_key=key, request_id=new_id("req_"), channel="mcp")


def test_verb_llm_chat_settles_exactly(workspace, api_key):
    ctx = _ctx(workspace)
    resp = execute(REGISTRY["llm_chat"], ctx=ctx, raw={"model": "vendor_a/model_large", "messages": HELLO,
                                                       "vendor_thing": 1})
    assert resp.status == 200, resp.body
    body = resp.data
    assert body["choices"][0]["message"]["content"] == "echo: hello there world"
    assert body["service"] == {"request_id": ctx.request_id, "credits_charged": "0.007",
                               "credits_available": "299.993"}
    acc = account(workspace)
    assert (acc.balance_micros, acc.reserved_micros) == (START - 7000, 0)
    assert LedgerEntry.objects.filter(kind="charge").count() == 1
    rec = RequestRecord.objects.get(pk=ctx.request_id)
    assert rec.status == "succeeded" and rec.credits_charged_micros == 7000 and rec.channel == "mcp"
    assert rec.usage["total_tokens"] == 14


def test_verb_llm_chat_errors(workspace, api_key, fake):
    bad = execute(REGISTRY["llm_chat"], ctx=_ctx(workspace), raw={"model": "x/y", "messages": HELLO})
    assert bad.status == 400 and bad.data["error"]["code"] == "model_not_allowed"
    stream = execute(REGISTRY["llm_chat"], ctx=_ctx(workspace),
                     raw={"model": "vendor_a/model_large", "messages": HELLO, "stream": True})
    assert stream.status == 400 and stream.data["error"]["code"] == "invalid_request"
    down = execute(REGISTRY["llm_chat"], ctx=_ctx(workspace), raw={"model": "fake/err500", "messages": HELLO})
    assert down.status == 502 and down.data["error"]["code"] == "provider_unavailable"
    broke = execute(REGISTRY["llm_chat"], ctx=_ctx(workspace),
                    raw={"model": "fake/ok", "messages": HELLO, "max_tokens": 299_986})
    assert broke.status == 402
    acc = account(workspace)
    assert (acc.balance_micros, acc.reserved_micros) == (START, 0)


def test_openapi_documents_the_llm_routes(client):
    schema = client.get("/openapi.json").json()
    chat_op = schema["paths"]["/v1/llm/chat"]["post"]
    assert chat_op["operationId"] == "llm_chat"
    assert {"200", "400", "401", "402", "502"} <= set(chat_op["responses"])
    assert "model" in schema["components"]["schemas"]["LlmChatInRequest"]["properties"]
    assert "post" in schema["paths"]["/v1/llm/chat/completions"]
    assert "get" in schema["paths"]["/v1/llm/models"] and "get" in schema["paths"]["/v1/llm/models/{model_id}"]


def test_refusals_are_recorded_but_rate_limited_calls_are_not(api, settings):
    r = chat(api, {"model": "fake/ok", "messages": HELLO, "max_tokens": 1_000_000})  # 1,000 credits > 300
    rec = api.get(f"/v1/requests/{r['X-Request-Id']}").json()
    assert rec["status"] == "failed" and rec["error"]["code"] == "insufficient_credits" and rec["credits_charged"] == "0"
    settings.RATE_LIMIT_PER_MINUTE = 1
    limited = chat(api, {"model": "fake/ok", "messages": HELLO})
    assert limited.status_code == 429
    assert not RequestRecord.objects.filter(pk=limited["X-Request-Id"]).exists()
    assert Hold.objects.filter(status="held").count() == 0

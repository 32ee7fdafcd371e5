"""The service served live by uvicorn (config.asgi) and driven by the official `openai` client and raw
httpx: create and stream for each model, the usage chunk carrying `service`, cuts from both sides,
upstream failures before output, and many parallel streams that cannot overspend."""

import asyncio
import json
import threading
import time

import httpx
import openai
import pytest
from django.db import connection
from openai import OpenAI

from billing.models import CreditAccount, Hold, LedgerEntry, RequestRecord
from billing.services import credits_grant
from core.outbound import USER_AGENT
from llmproxy.views import OVERHEAD_HEADER

pytestmark = pytest.mark.django_db(transaction=True)

HELLO = [{"role": "user", "content": "hello there world"}]  # prompt estimate: 15 tokens
START = 300_000_000


def client(live, key):
    return OpenAI(base_url=f"{live}/v1/llm", api_key=key, max_retries=0, timeout=30)


def account(ws):
    return CreditAccount.objects.get(pk=ws.pk)


def wait_for(predicate, what, timeout=15.0):
    """Wait for a condition another thread brings about (never a bare sleep-and-hope)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def settled(resp=None):
    """Wait until the live server's work after its responses is done: a non-streamed call's settlement follows
    its answer (SETTLE_AFTER_RESPONSE, the default), so a test reading balances or records waits for it.
    Returns `resp`."""
    from api import door
    from llmproxy import views

    wait_for(lambda: not list(views._background) and not list(door._background),
             "the work after the responses (settlements)")
    return resp


def sse(lines):
    out = []
    for line in lines:
        if line.startswith("data: "):
            out.append(line[6:])
    return out


MODELS = [("vendor_a/model_large", "0.007", 7000), ("vendor_a/model_small", "0.0035", 3500),
          ("vendor_b/model_mini", "0.0014", 1400)]


def test_openai_client_create_and_stream_each_model(live, api_key, workspace):
    spent = 0
    for model, charged, micros in MODELS:  # one live server for the three (a transactional test each is slow)
        _create_and_stream(live, api_key, workspace, model, charged, micros, spent)
        spent += 2 * micros


def _create_and_stream(live, api_key, workspace, model, charged, micros, spent):
    c = client(live, api_key)
    raw = settled(c.chat.completions.with_raw_response.create(model=model, messages=HELLO))
    done = raw.parse()
    assert done.choices[0].message.content == "echo: hello there world"
    assert done.model == model  # the id the client asked for, not the upstream's own name (issue 14.9)
    assert done.usage.total_tokens == 14
    assert done.model_extra["service"]["credits_charged"] == charged
    assert float(raw.headers[OVERHEAD_HEADER]) >= 0 and raw.headers["X-Request-Id"].startswith("req_")
    assert account(workspace).balance_micros == START - spent - micros

    chunks = list(c.chat.completions.create(model=model, messages=HELLO, stream=True))
    text = "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices)
    assert text == "echo: hello there world"
    assert {ch.model for ch in chunks} == {model}
    final = chunks[-1]
    assert final.choices == [] and final.usage.total_tokens == 14
    service = final.model_extra["service"]
    assert service["credits_charged"] == charged
    from core.money import format_credits

    assert service["credits_available"] == format_credits(START - spent - 2 * micros)
    acc = account(workspace)
    assert (acc.balance_micros, acc.reserved_micros) == (START - spent - 2 * micros, 0)
    rec = RequestRecord.objects.get(pk=service["request_id"])
    assert rec.status == "succeeded" and rec.credits_charged_micros == micros
    assert rec.usage == {"model": model, "prompt_tokens": 10, "completion_tokens": 4, "total_tokens": 14,
                         "estimated": False}


def test_stream_usage_is_always_requested_and_unknown_fields_pass(live, api_key, fake):
    c = client(live, api_key)
    chunks = list(c.chat.completions.create(model="fake/ok", messages=HELLO, stream=True, temperature=0.5,
                                            extra_body={"vendor_thing": {"k": [1, 2]}, "x_words": 5}))
    assert fake.headers[0]["user-agent"] == USER_AGENT
    sent = fake.requests[0]
    assert sent["stream_options"] == {"include_usage": True}  # the client did not ask; we always do
    assert sent["vendor_thing"] == {"k": [1, 2]} and sent["temperature"] == 0.5 and sent["model"] == "ok"
    assert sent["max_tokens"] == 4096  # no cap from the client: the one the hold assumed bounds the completion
    final = chunks[-1]
    assert final.usage.total_tokens == 16  # 11 + 5
    assert final.model_extra["service"]["credits_charged"] == "0.016"


def test_client_asked_for_usage_keeps_its_other_stream_options(live, api_key, fake):
    c = client(live, api_key)
    list(c.chat.completions.create(model="fake/ok", messages=HELLO, stream=True,
                                   stream_options={"include_usage": False, "other": 1}))
    assert fake.requests[0]["stream_options"] == {"include_usage": True, "other": 1}


def test_stream_without_upstream_usage_ends_with_an_estimated_usage_chunk(live, api_key, workspace):
    c = client(live, api_key)
    chunks = list(c.chat.completions.create(model="fake/nousage", messages=HELLO, stream=True))
    final = chunks[-1]
    # prompt estimate 15 + 8 delivered chunks (31 bytes -> 8 tokens) = 23 tokens at 1 credit / 1k
    assert final.choices == []
    assert final.usage.prompt_tokens == 15 and final.usage.completion_tokens == 8
    assert final.usage.model_extra["estimated"] is True
    assert final.model_extra["service"]["credits_charged"] == "0.023"
    assert account(workspace).balance_micros == START - 23_000


def test_raw_sse_shape(live, api_key):
    with httpx.stream("POST", f"{live}/v1/llm/chat", headers={"Authorization": f"Bearer {api_key}"},
                      json={"model": "fake/ok", "messages": HELLO, "stream": True, "x_words": 2}) as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        assert "RateLimit-Remaining" in r.headers and OVERHEAD_HEADER in r.headers
        events = sse(r.iter_lines())
    assert events[-1] == "[DONE]"
    final = json.loads(events[-2])
    assert final["choices"] == [] and final["usage"]["total_tokens"] == 13
    assert final["service"] == {"request_id": r.headers["X-Request-Id"], "credits_charged": "0.013",
                                "credits_available": "299.987"}
    assert all("service" not in json.loads(e) for e in events[:-2])


def test_upstream_cut_mid_stream_is_interrupted_and_charged_for_what_was_delivered(live, api_key, workspace):
    c = client(live, api_key)
    received = []
    with pytest.raises(openai.APIError) as exc_info:
        for ch in c.chat.completions.create(model="fake/cut_mid", messages=HELLO, stream=True):
            received.append(ch.choices[0].delta.content or "")
    assert "".join(received) == "w00 w01 w02 "
    err = exc_info.value.body
    assert err["code"] == "provider_unavailable"
    # prompt estimate 15 + 3 delivered chunks (12 bytes -> 3 tokens) = 18 tokens
    acc = account(workspace)
    assert (acc.balance_micros, acc.reserved_micros) == (START - 18_000, 0)
    rec = RequestRecord.objects.get(workspace=workspace)
    assert rec.status == "interrupted" and rec.credits_charged_micros == 18_000
    assert rec.usage == {"model": "fake/cut_mid", "prompt_tokens": 15, "completion_tokens": 3, "total_tokens": 18,
                         "estimated": True}
    view = httpx.get(f"{live}/v1/requests/{rec.pk}", headers={"Authorization": f"Bearer {api_key}"}).json()
    assert view["status"] == "interrupted" and view["credits_charged"] == "0.018"
    assert view["usage"]["completion_tokens"] == 3


def test_upstream_error_event_mid_stream_carries_service(live, api_key, workspace):
    with httpx.stream("POST", f"{live}/v1/llm/chat", headers={"Authorization": f"Bearer {api_key}"},
                      json={"model": "fake/error_event", "messages": HELLO, "stream": True}) as r:
        events = sse(r.iter_lines())
    last = json.loads(events[-1])
    assert last["error"]["code"] == "provider_unavailable"
    assert last["service"]["credits_charged"] == "0.018"
    assert "[DONE]" not in events
    assert RequestRecord.objects.get(workspace=workspace).status == "interrupted"


def test_stream_failing_before_any_output_is_an_error_with_nothing_charged(live, api_key, workspace):
    for mode, status, code in [("cut_before", 502, "provider_unavailable"), ("err500", 502, "provider_unavailable"),
                               ("err429", 502, "provider_unavailable"), ("err400", 400, "invalid_request")]:
        _fails_before_output(live, api_key, workspace, mode, status, code)


def _fails_before_output(live, api_key, workspace, mode, status, code):
    r = httpx.post(f"{live}/v1/llm/chat", headers={"Authorization": f"Bearer {api_key}"},
                   json={"model": f"fake/{mode}", "messages": HELLO, "stream": True})
    assert r.status_code == status
    assert r.json()["error"]["code"] == code and r.json()["error"]["request_id"] == r.headers["X-Request-Id"]
    acc = account(workspace)
    assert (acc.balance_micros, acc.reserved_micros) == (START, 0)
    assert not LedgerEntry.objects.filter(kind="charge").exists()
    rec = RequestRecord.objects.get(pk=r.headers["X-Request-Id"])
    assert rec.status == "failed" and rec.credits_charged_micros == 0


def test_a_provider_redirect_is_not_followed_502_nothing_charged(live, api_key, workspace, fake):
    for stream in (False, True):
        fake.requests.clear()
        r = httpx.post(f"{live}/v1/llm/chat", headers={"Authorization": f"Bearer {api_key}"},
                       json={"model": "fake/redirect", "messages": HELLO, "stream": stream})
        assert r.status_code == 502 and r.json()["error"]["code"] == "provider_unavailable"
        assert r.json()["error"]["details"]["upstream_status"] == 307
        assert len(fake.requests) == 1  # the redirect's target was never asked
    acc = account(workspace)
    assert (acc.balance_micros, acc.reserved_micros) == (START, 0)


def test_a_provider_silent_past_the_read_timeout_fails_before_output_or_cuts_the_stream(live, api_key, workspace,
                                                                                         fake, monkeypatch):
    """The provider connection's read timeout (300 s; shortened here): silent before any output is 502 with
    nothing charged; silent mid-stream ends the stream with the error event, charged for what was delivered."""
    import aiohttp

    from llmproxy import upstream

    monkeypatch.setattr(upstream, "AIO_TIMEOUT", aiohttp.ClientTimeout(total=None, sock_connect=5, sock_read=0.5))
    r = httpx.post(f"{live}/v1/llm/chat", headers={"Authorization": f"Bearer {api_key}"},
                   json={"model": "fake/gate", "messages": HELLO}, timeout=30)
    assert r.status_code == 502 and r.json()["error"]["code"] == "provider_unavailable"
    assert RequestRecord.objects.get(pk=r.headers["X-Request-Id"]).status == "failed"
    assert (account(workspace).balance_micros, account(workspace).reserved_micros) == (START, 0)
    with httpx.stream("POST", f"{live}/v1/llm/chat", headers={"Authorization": f"Bearer {api_key}"},
                      json={"model": "fake/hang_after_3", "messages": HELLO, "stream": True}, timeout=30) as r:
        events = [json.loads(line[6:]) for line in r.iter_lines() if line.startswith("data: ")]
    assert [e["choices"][0]["delta"].get("content") for e in events[1:4]] == ["w00 ", "w01 ", "w02 "]
    assert events[-1]["error"]["code"] == "provider_unavailable"
    assert events[-1]["service"]["credits_charged"] == "0.018"  # 15 prompt estimate + 3 delivered tokens
    rec = RequestRecord.objects.get(pk=r.headers["X-Request-Id"])
    assert rec.status == "interrupted" and rec.credits_charged_micros == 18_000
    assert account(workspace).reserved_micros == 0


def test_openai_client_sees_402_and_400_as_typed_errors(live, api_key, fake):
    c = client(live, api_key)
    with pytest.raises(openai.APIStatusError) as e402:
        c.chat.completions.create(model="fake/ok", messages=HELLO, max_tokens=1_000_000, stream=True)
    assert e402.value.status_code == 402 and e402.value.body["code"] == "insufficient_credits"
    with pytest.raises(openai.BadRequestError) as e400:
        c.chat.completions.create(model="vendor_q/unknown", messages=HELLO)
    assert e400.value.body["code"] == "model_not_allowed"
    assert fake.requests == []
    assert [m.id for m in c.models.list()][:3] == ["vendor_a/model_large", "vendor_a/model_small",
                                                  "vendor_b/model_mini"]


def test_client_cut_mid_stream_is_interrupted_charged_for_delivered_and_upstream_closed(live, api_key, workspace,
                                                                                        fake):
    events = []
    with httpx.Client(timeout=30) as http:
        with http.stream("POST", f"{live}/v1/llm/chat", headers={"Authorization": f"Bearer {api_key}"},
                         json={"model": "fake/hang_after_3", "messages": HELLO, "stream": True}) as r:
            for line in r.iter_lines():
                if line.startswith("data: "):
                    events.append(json.loads(line[6:]))
                    if sum(1 for e in events if e["choices"] and e["choices"][0]["delta"].get("content")) == 3:
                        break  # hang up: leaving the block closes the connection
    wait_for(lambda: RequestRecord.objects.get(workspace=workspace).status == "interrupted", "the interrupted record")
    assert fake.cut_seen.wait(10), "the upstream connection was not closed"
    rec = RequestRecord.objects.get(workspace=workspace)
    assert rec.credits_charged_micros == 18_000  # 15 prompt estimate + 3 delivered tokens
    assert rec.usage["completion_tokens"] == 3 and rec.usage["estimated"] is True
    acc = account(workspace)
    assert (acc.balance_micros, acc.reserved_micros) == (START - 18_000, 0)
    assert Hold.objects.get().status == "captured"


def test_parallel_streams_never_overspend(live, api_key, workspace, fake, settings):
    """fake/pricey costs 1 credit a token; each stream holds H = prompt bound + 45 credits, and the balance is
    5.5 H, so it admits exactly 5 of 20 simultaneous streams. The upstream holds the admitted ones open until
    all 20 have been decided; then they finish and settle at 19 tokens each."""
    from llmproxy.metering import prompt_bound

    request = {"model": "fake/pricey", "messages": HELLO, "stream": True, "max_tokens": 45}
    hold = prompt_bound(request) + 45
    granted = 5 * hold + hold // 2 - START // 1_000_000
    credits_grant(workspace=workspace, amount=granted * 1_000_000)
    settings.RATE_LIMIT_PER_MINUTE = 10_000
    settings.LLM_DB_THREADS = 2  # the database steps' threads (each keeps one connection): fewer than the streams
    n = 20
    results: list = []

    async def one(http):
        async with http.stream("POST", f"{live}/v1/llm/chat", headers={"Authorization": f"Bearer {api_key}"},
                               json=request) as r:
            body = [line async for line in r.aiter_lines()]
            results.append((r.status_code, body))

    async def run_all():
        async with httpx.AsyncClient(timeout=60, limits=httpx.Limits(max_connections=n)) as http:
            await asyncio.gather(*(one(http) for _ in range(n)))

    runner = threading.Thread(target=asyncio.run, args=(run_all(),))
    runner.start()
    wait_for(lambda: len(results) == n - 5, "15 refusals")
    for _ in range(5):
        assert fake.arrived.acquire(timeout=10)
    assert not fake.arrived.acquire(timeout=0.2)  # and no sixth stream reached the upstream
    assert account(workspace).reserved_micros == 5 * hold * 1_000_000
    if connection.vendor == "postgresql":  # open streams do not hold database connections
        if connection.settings_dict["OPTIONS"].get("pool"):
            stats = connection.pool.get_stats()
            assert stats["pool_size"] - stats["pool_available"] <= 3  # in use: 2 threads + this test's
        else:
            with connection.cursor() as cur:
                cur.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()")
                assert cur.fetchone()[0] <= 3
    fake.gate.set()
    runner.join(timeout=60)
    assert not runner.is_alive()

    statuses = sorted(s for s, _ in results)
    assert statuses == [200] * 5 + [402] * 15
    for status, lines in results:
        if status == 200:
            final = json.loads(sse(lines)[-2])
            assert final["service"]["credits_charged"] == "19"
    acc = account(workspace)
    assert (acc.balance_micros, acc.reserved_micros) == (START + granted * 1_000_000 - 5 * 19_000_000, 0)
    assert LedgerEntry.objects.filter(kind="charge").count() == 5
    assert Hold.objects.filter(status="held").count() == 0


def test_more_credits_admit_more_streams(live, api_key, workspace, fake):
    credits_grant(workspace=workspace, amount=60_000_000)
    c = client(live, api_key)
    fake.gate.set()
    for _ in range(6):
        chunks = list(c.chat.completions.create(model="fake/pricey", messages=HELLO, stream=True, max_tokens=45))
        assert chunks[-1].model_extra["service"]["credits_charged"] == "19"
    assert account(workspace).balance_micros == START + 60_000_000 - 6 * 19_000_000


def test_client_hanging_up_before_a_non_streaming_answer_is_free_and_frees_the_idempotency_key(live, api_key,
                                                                                               workspace, fake):
    import socket
    from urllib.parse import urlparse

    body = json.dumps({"model": "fake/gate", "messages": HELLO}).encode()
    url = urlparse(live)
    sock = socket.create_connection((url.hostname, url.port))
    sock.sendall(b"POST /v1/llm/chat HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 + f"Authorization: Bearer {api_key}\r\nIdempotency-Key: cut-1\r\n".encode()
                 + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
    assert fake.arrived.acquire(timeout=10)  # the upstream has the request; the answer is gated
    sock.close()
    wait_for(lambda: RequestRecord.objects.get(workspace=workspace).status == "interrupted", "the interrupted record")
    rec = RequestRecord.objects.get(workspace=workspace)
    assert rec.credits_charged_micros == 0
    acc = account(workspace)
    assert (acc.balance_micros, acc.reserved_micros) == (START, 0)
    fake.gate.set()
    retry = httpx.post(f"{live}/v1/llm/chat", headers={"Authorization": f"Bearer {api_key}", "Idempotency-Key": "cut-1"},
                       json={"model": "fake/gate", "messages": HELLO})
    assert retry.status_code == 200 and "Idempotent-Replayed" not in retry.headers
    assert retry.json()["service"]["credits_charged"] == "0.019"


def test_a_long_stream_keeps_its_hold_alive(live, api_key, workspace, settings, monkeypatch):
    """Every third of HOLD_TTL_SECONDS the relay extends the stream's hold, so the sweep for crashed requests
    cannot release it mid-stream (which would make the stream free). TTL 0: a heartbeat on every chunk."""
    from billing import services as billing_services

    settings.HOLD_TTL_SECONDS = 0
    beats = []
    real = billing_services.hold_extend
    monkeypatch.setattr(billing_services, "hold_extend", lambda **kw: beats.append(kw["hold"].pk) or real(**kw))
    chunks = list(client(live, api_key).chat.completions.create(model="vendor_a/model_small", messages=HELLO,
                                                                stream=True))
    assert beats and len(set(beats)) == 1
    assert chunks[-1].model_extra["service"]["credits_charged"] == "0.0035"
    assert Hold.objects.get(pk=beats[0]).status == Hold.Status.CAPTURED


def test_a_client_cap_passes_untouched_and_a_model_may_take_max_completion_tokens(live, api_key, fake):
    from llmproxy import upstream
    from llmproxy.catalog import Model

    c = client(live, api_key)
    c.chat.completions.create(model="fake/ok", messages=HELLO, max_completion_tokens=50)
    sent = fake.requests[-1]
    assert sent["max_completion_tokens"] == 50 and "max_tokens" not in sent
    reasoning = Model(id="v/r", upstream_base_url="http://x", upstream_model="r", api_key_env="",
                      price_per_1k_micros=1000, completion_cap_param="max_completion_tokens")
    body = json.loads(upstream.request_body(reasoning, {"model": "v/r", "messages": HELLO}, stream=False))
    assert body["max_completion_tokens"] == 4096 and "max_tokens" not in body


def test_the_usage_chunk_ends_the_stream_without_waiting_for_the_providers_done(live, api_key, workspace, fake):
    """OpenAI's usage chunk is the last before [DONE]: the settlement and the final part follow it at once."""
    with httpx.Client(timeout=30) as http:
        with http.stream("POST", f"{live}/v1/llm/chat", headers={"Authorization": f"Bearer {api_key}"},
                         json={"model": "fake/late_done", "messages": HELLO, "stream": True}) as r:
            lines = [line for line in r.iter_lines() if line.startswith("data: ")]  # the gate is never opened
    assert not fake.gate.is_set()
    assert lines[-1] == "data: [DONE]"
    final = json.loads(lines[-2][6:])
    assert final["usage"]["completion_tokens"] == 8 and final["service"]["credits_charged"] == "0.019"
    assert final["model"] == "fake/late_done"
    # the rest of the provider's body is read in the background for up to a second, then its response closed
    assert fake.cut_seen.wait(10), "the provider's response was left open"
    fake.gate.set()
    rec = RequestRecord.objects.get(pk=r.headers["X-Request-Id"])
    assert (rec.status, rec.credits_charged_micros) == ("succeeded", 19_000)
    assert account(workspace).reserved_micros == 0

"""The LLM routes' direct ASGI entry (llmproxy.asgi, reached through config.asgi without Django's handler):
the middleware's duties kept (X-Request-Id, the envelope for every non-2xx, 413, security headers), Django
still serving other paths; the key lookup cache; the combined billing steps of the hot path (exact amounts,
holds resolve once); upstream connections reused across streams."""

import asyncio
import json

import httpx
import pytest

import config.asgi
from accounts import services as accounts
from accounts.services import key_authenticate, key_revoke
from billing import services as billing
from billing.models import CreditAccount, Hold, LedgerEntry, RequestRecord
from core import errors
from llmproxy.views import OVERHEAD_HEADER
from tests.llmproxy.test_live import settled

HELLO = [{"role": "user", "content": "hello there world"}]


def _no_django(monkeypatch):
    async def boom(scope, receive, send):
        raise AssertionError(f"Django served {scope['path']}")
    monkeypatch.setattr(config.asgi, "django_app", boom)


def _envelope(resp, status, code):
    assert resp.status_code == status, resp.text
    body = resp.json()
    assert body["error"]["code"] == code
    assert resp.headers["X-Request-Id"] == body["error"]["request_id"]
    assert resp.headers["X-Request-Id"].startswith("req_") and len(resp.headers["X-Request-Id"]) == 28
    assert resp.headers["Content-Type"] == "application/json"
    return body


# --- the fast path keeps the middleware's duties --------------------------------------------------------
@pytest.mark.django_db(transaction=True)
def test_llm_routes_bypass_django_and_keep_request_id_rate_headers_and_security_headers(live, api_key, monkeypatch):
    _no_django(monkeypatch)
    auth = {"Authorization": f"Bearer {api_key}"}
    r = settled(httpx.post(f"{live}/v1/llm/chat/completions", json={"model": "fake/ok", "messages": HELLO},
                           headers=auth))
    assert r.status_code == 200, r.text
    body = r.json()
    assert r.headers["X-Request-Id"] == body["service"]["request_id"]
    assert r.headers["RateLimit-Limit"] and r.headers["RateLimit-Remaining"] and "RateLimit-Reset" in r.headers
    assert float(r.headers[OVERHEAD_HEADER]) >= 0
    assert r.headers["X-Content-Type-Options"] == "nosniff"
    assert r.headers["X-Frame-Options"] == "DENY"
    record = RequestRecord.objects.get(pk=body["service"]["request_id"])
    assert (record.status, record.http_status, record.verb) == ("succeeded", 200, "llm_chat")

    models = httpx.get(f"{live}/v1/llm/models", headers=auth)
    assert models.status_code == 200 and models.headers["X-Request-Id"].startswith("req_")
    one = httpx.get(f"{live}/v1/llm/models/fake/ok", headers=auth)
    assert one.status_code == 200 and one.json()["id"] == "fake/ok"
    _envelope(httpx.get(f"{live}/v1/llm/models/nobody/none", headers=auth), 404, "not_found")


@pytest.mark.django_db(transaction=True)
def test_every_refusal_on_the_fast_path_is_the_envelope(live, api_key, monkeypatch, settings):
    _no_django(monkeypatch)
    url = f"{live}/v1/llm/chat/completions"
    auth = {"Authorization": f"Bearer {api_key}"}
    _envelope(httpx.post(url, json={"model": "fake/ok", "messages": HELLO}), 401, "unauthenticated")
    _envelope(httpx.get(url, headers=auth), 405, "method_not_allowed")
    _envelope(httpx.post(f"{live}/v1/llm/models", headers=auth), 405, "method_not_allowed")
    _envelope(httpx.post(url, content=b"model=x", headers={**auth, "Content-Type": "text/plain"}), 415,
              "unsupported_media_type")
    _envelope(httpx.post(url, content=b"{nope", headers={**auth, "Content-Type": "application/json"}), 400,
              "invalid_request")
    settings.MAX_BODY_BYTES = 1000
    big = json.dumps({"model": "fake/ok", "messages": [{"role": "user", "content": "x" * 1000}]})
    _envelope(httpx.post(url, content=big, headers={**auth, "Content-Type": "application/json"}), 413,
              "payload_too_large")

    def chunks():  # no Content-Length: the limit is enforced while reading
        yield big[:600].encode()
        yield big[600:].encode()
    _envelope(httpx.post(url, content=chunks(), headers={**auth, "Content-Type": "application/json"}), 413,
              "payload_too_large")
    exact = json.dumps({"model": "fake/ok", "messages": HELLO}).encode()
    settings.MAX_BODY_BYTES = len(exact)  # at the limit: accepted
    assert httpx.post(url, content=exact, headers={**auth, "Content-Type": "application/json"}).status_code == 200


@pytest.mark.django_db(transaction=True)
def test_other_paths_under_v1_llm_still_go_to_django(live, api_key):
    r = httpx.get(f"{live}/v1/llm/nothing-here", headers={"Authorization": f"Bearer {api_key}"})
    _envelope(r, 404, "not_found")
    r = httpx.get(f"{live}/v1/llm/models/", headers={"Authorization": f"Bearer {api_key}"})
    _envelope(r, 404, "not_found")


@pytest.mark.django_db(transaction=True)
def test_upstream_connections_are_reused_across_streams(live, api_key, fake):
    auth = {"Authorization": f"Bearer {api_key}"}
    with httpx.Client(base_url=live, headers=auth, timeout=30) as http:
        for _ in range(40):
            with http.stream("POST", "/v1/llm/chat/completions",
                             json={"model": "fake/ok", "messages": HELLO, "stream": True}) as r:
                assert r.status_code == 200
                lines = [line for line in r.iter_lines() if line]
                assert lines[-1] == "data: [DONE]"
    assert len(fake.peers) == 40
    # 16 pools used in turn: at most one new connection per pool, the other streams reuse one
    assert len(set(fake.peers)) <= 16


# --- the key lookup cache -------------------------------------------------------------------------------
def test_key_cache_is_opt_in_honours_revocation_at_once_and_expires(api_key, django_assert_num_queries, monkeypatch):
    auth = f"Bearer {api_key}"
    key = key_authenticate(authorization=auth, cache_seconds=5)
    with django_assert_num_queries(0):
        assert key_authenticate(authorization=auth, cache_seconds=5).pk == key.pk
    with django_assert_num_queries(1):  # without cache_seconds: always looked up
        key_authenticate(authorization=auth)
    with pytest.raises(errors.Unauthenticated), django_assert_num_queries(0):  # only the exact secret hits
        key_authenticate(authorization=auth[:-1] + ("a" if auth[-1] != "a" else "b"), cache_seconds=5)

    now = accounts.time.monotonic()
    monkeypatch.setattr(accounts.time, "monotonic", lambda: now + 5.01)  # expired: looked up again
    with django_assert_num_queries(1):
        key_authenticate(authorization=auth, cache_seconds=5)

    key_revoke(key=key)
    with pytest.raises(errors.Unauthenticated):
        key_authenticate(authorization=auth, cache_seconds=5)


def test_key_revoked_elsewhere_is_refused_once_the_entry_expires(api_key, monkeypatch):
    from django.utils import timezone

    from accounts.models import ApiKey

    auth = f"Bearer {api_key}"
    key = key_authenticate(authorization=auth, cache_seconds=5)
    ApiKey.objects.filter(pk=key.pk).update(revoked_at=timezone.now())  # as another process would
    now = accounts.time.monotonic()
    monkeypatch.setattr(accounts.time, "monotonic", lambda: now + 5.01)
    with pytest.raises(errors.Unauthenticated):
        key_authenticate(authorization=auth, cache_seconds=5)


# --- the combined billing steps -------------------------------------------------------------------------
def _account(ws):
    return CreditAccount.objects.get(pk=ws.pk)


def test_open_with_hold_then_settle_close_moves_the_balance_by_exactly_the_charge(workspace):
    before = _account(workspace)
    hold = billing.request_open_with_hold(request_id="req_t1", workspace=workspace, verb="llm_chat", amount=70_000)
    assert hold is not None and hold.amount_micros == 70_000
    assert _account(workspace).reserved_micros == before.reserved_micros + 70_000
    assert RequestRecord.objects.get(pk="req_t1").status == "in_progress"

    charged, available = billing.hold_settle_close(hold=hold, charge=32_001, workspace=workspace, request_id="req_t1",
                                                   status="succeeded", http_status=200, verb="llm_chat",
                                                   usage={"total_tokens": 7})
    after = _account(workspace)
    assert charged == 32_001
    assert after.balance_micros == before.balance_micros - 32_001
    assert after.reserved_micros == before.reserved_micros
    assert available == after.available_micros
    entry = LedgerEntry.objects.get(request_id="req_t1")
    assert (entry.kind, entry.amount_micros, entry.balance_after_micros, entry.verb) == (
        "charge", -32_001, after.balance_micros, "llm_chat")
    record = RequestRecord.objects.get(pk="req_t1")
    assert (record.status, record.http_status, record.credits_charged_micros, record.usage) == (
        "succeeded", 200, 32_001, {"total_tokens": 7})
    assert Hold.objects.get(pk=hold.pk).status == "captured"

    # resolved once: a later release (the expiry sweep) or a second settle changes nothing
    billing.hold_release(hold=Hold.objects.get(pk=hold.pk))
    again, _ = billing.hold_settle_close(hold=hold, charge=50_000, workspace=workspace, request_id="req_t1",
                                         status="succeeded", http_status=200)
    assert again == 32_001
    assert _account(workspace).balance_micros == after.balance_micros
    assert LedgerEntry.objects.filter(request_id="req_t1").count() == 1


def test_settle_close_of_a_swept_hold_charges_nothing(workspace):
    before = _account(workspace)
    hold = billing.request_open_with_hold(request_id="req_t2", workspace=workspace, verb="llm_chat", amount=10_000)
    billing.hold_release(hold=Hold.objects.get(pk=hold.pk))  # expired and swept first
    charged, available = billing.hold_settle_close(hold=hold, charge=5_000, workspace=workspace, request_id="req_t2",
                                                   status="succeeded", http_status=200)
    assert charged == 0 and available == before.available_micros
    assert _account(workspace).balance_micros == before.balance_micros
    assert not LedgerEntry.objects.filter(request_id="req_t2").exists()


def test_zero_charge_releases_and_a_charge_above_the_hold_is_capped_by_the_balance(workspace):
    before = _account(workspace)
    hold = billing.request_open_with_hold(request_id="req_t3", workspace=workspace, verb="llm_chat", amount=10_000)
    charged, _ = billing.hold_settle_close(hold=hold, charge=0, workspace=workspace, request_id="req_t3",
                                           status="failed", http_status=502, error={"code": "provider_unavailable"})
    assert charged == 0 and Hold.objects.get(pk=hold.pk).status == "released"
    assert _account(workspace).available_micros == before.available_micros
    assert RequestRecord.objects.get(pk="req_t3").error == {"code": "provider_unavailable"}

    hold = billing.request_open_with_hold(request_id="req_t4", workspace=workspace, verb="llm_chat", amount=10_000)
    charged, available = billing.hold_settle_close(hold=hold, charge=before.balance_micros * 2, workspace=workspace,
                                                   request_id="req_t4", status="succeeded", http_status=200)
    assert charged == before.available_micros and available == 0


def test_open_with_hold_short_balance_opens_the_record_and_places_nothing(workspace):
    before = _account(workspace)
    assert billing.request_open_with_hold(request_id="req_t5", workspace=workspace, verb="llm_chat",
                                          amount=before.available_micros + 1) is None
    assert _account(workspace).reserved_micros == before.reserved_micros
    assert not Hold.objects.filter(request_id="req_t5").exists()
    assert RequestRecord.objects.get(pk="req_t5").status == "in_progress"
    exact = billing.request_open_with_hold(request_id="req_t6", workspace=workspace, verb="llm_chat",
                                           amount=before.available_micros)  # the edge: all of it
    assert exact is not None and _account(workspace).available_micros == 0
    assert billing.request_open_with_hold(request_id="req_t7", workspace=workspace, verb="llm_chat", amount=0) is None


# --- the SSE parser of the relay ------------------------------------------------------------------------
def test_sse_parser_handles_split_lines_crlf_comments_and_multiline_data():
    from llmproxy.views import sse_data

    parts = [b": keep-alive\r", b'\ndata: {"a"', b":1}\r\n\r", b"\ndata: x\ndata: y\n\n",
             b"event: e\ndata:z\n\ndata: [DONE]"]

    async def chunks():
        for part in parts:
            yield part

    async def collect():
        return [data async for data in sse_data(chunks())]

    assert asyncio.run(collect()) == [b'{"a":1}', b"x\ny", b"z", b"[DONE]"]


# --- one write for the end of a stream ------------------------------------------------------------------
def _stream_call(api_key, send) -> None:
    """A streamed chat call straight into config.asgi.application (no server, a client that never disconnects),
    `send` receiving the response's ASGI messages; background cleanups finish before it returns."""
    from llmproxy import upstream, views

    body = json.dumps({"model": "fake/ok", "messages": HELLO, "stream": True}).encode()
    scope = {"type": "http", "method": "POST", "path": "/v1/llm/chat/completions", "query_string": b"",
             "headers": [(b"authorization", f"Bearer {api_key}".encode()), (b"content-type", b"application/json"),
                         (b"content-length", str(len(body)).encode())]}

    async def main():
        pending = [{"type": "http.request", "body": body, "more_body": False}]

        async def receive():
            if pending:
                return pending.pop()
            await asyncio.Event().wait()  # the client stays connected

        try:
            await config.asgi.application(scope, receive, send)
        finally:
            while views._background:
                await asyncio.gather(*views._background, return_exceptions=True)
            await upstream.close_sessions()  # this loop's provider connections (a server's lifespan would)

    try:
        asyncio.run(main())
    finally:
        views.close_db_threads()


@pytest.mark.django_db(transaction=True)
def test_a_stream_ends_with_its_final_part_and_the_end_of_the_body_in_one_message(api_key, models_file):
    """The usage chunk with `service`, `data: [DONE]` and the end of the body go out as one ASGI message (one
    write): a client that stops reading at [DONE] finds the response complete and keeps its connection."""
    sent = []

    async def send(message):
        sent.append(message)

    _stream_call(api_key, send)
    assert sent[0]["type"] == "http.response.start" and sent[0]["status"] == 200
    parts = [m for m in sent[1:] if m["type"] == "http.response.body"]
    assert all(m["more_body"] for m in parts[:-1]) and parts[-1]["more_body"] is False
    final = parts[-1]["body"].decode()
    assert final.endswith("data: [DONE]\n\n")
    usage_chunk = json.loads(final.split("\n\n")[0].removeprefix("data: "))
    record = RequestRecord.objects.get(pk=usage_chunk["service"]["request_id"])
    assert record.status == "succeeded"
    assert usage_chunk["service"]["credits_charged"] == str(record.credits_charged_micros / 1_000_000).rstrip("0")


@pytest.mark.django_db(transaction=True)
def test_each_hot_path_step_is_one_statement_on_postgresql(workspace, django_assert_max_num_queries):
    """The hold before the provider call and the settlement before the final chunk: one statement each on
    PostgreSQL (billing.ledger_sql); a few in one transaction elsewhere."""
    from django.db import connection

    single = connection.vendor == "postgresql"
    with django_assert_max_num_queries(1 if single else 5):  # SQLite: BEGIN, record, reserve, hold, COMMIT
        hold = billing.request_open_with_hold(request_id="req_q1", workspace=workspace, verb="llm_chat",
                                              amount=10_000)
    with django_assert_max_num_queries(1 if single else 6):  # SQLite: BEGIN, claim, account, ledger, record, COMMIT
        charged, available = billing.hold_settle_close(hold=hold, charge=4_000, workspace=workspace,
                                                       request_id="req_q1", status="succeeded", http_status=200,
                                                       verb="llm_chat", usage={"total_tokens": 4})
    account = CreditAccount.objects.get(pk=workspace.pk)
    assert charged == 4_000 and available == account.available_micros and account.reserved_micros == 0
    entry = LedgerEntry.objects.get(request_id="req_q1")
    assert (entry.amount_micros, entry.balance_after_micros) == (-4_000, account.balance_micros)
    assert RequestRecord.objects.get(pk="req_q1").usage == {"total_tokens": 4}


def test_a_client_gone_before_a_streams_headers_leave_releases_the_hold_and_closes_the_provider_stream(
        transactional_db, models_file, api_key, workspace, fake):
    """The window between the view's answer and the first byte of its body: the relay never starts, so its own
    cleanup cannot run; the door's `on_unsent` hook does it (llmproxy.asgi, api/door.py)."""
    sent = []

    async def send(message):
        sent.append(message["type"])
        if message["type"] == "http.response.start":
            raise OSError("connection reset by peer")

    with pytest.raises(OSError):
        _stream_call(api_key, send)
    assert sent == ["http.response.start"]  # no byte of the body left
    rec = RequestRecord.objects.get(workspace=workspace)
    assert (rec.status, rec.http_status, rec.credits_charged_micros) == ("interrupted", 499, 0)
    assert not Hold.objects.filter(status="held").exists()
    acc = CreditAccount.objects.get(pk=workspace.pk)
    assert (acc.balance_micros, acc.reserved_micros) == (300_000_000, 0)


# --- where a stream ends ---------------------------------------------------------------------------------
def _relayed(monkeypatch, body: dict, datas: list[bytes]) -> tuple[list[bytes], list[str]]:
    """Run the relay over these SSE payloads: (the parts it yields, the statuses it settled with)."""
    from types import SimpleNamespace

    from llmproxy import metering, views

    settled = []

    async def finish(*, call, status, usage, http_status=200):
        settled.append(status)
        return {"request_id": "req_x", "credits_charged": "1", "credits_available": "2"}

    monkeypatch.setattr(views, "_finish", finish)

    class Resp:
        async def aclose(self):
            closed.append(True)

    closed = []

    async def events():
        for data in datas:
            yield data

    async def run():
        call = SimpleNamespace(model=SimpleNamespace(id="fake/x"), body=body)
        relay = views._relay(call, Resp(), events(), [], False, metering.StreamMeter(prompt_estimate=1), [False])
        parts = [part async for part in relay]
        mine = [t for t in views._background if t.get_loop() is asyncio.get_running_loop()]
        await asyncio.wait_for(asyncio.gather(*mine), 10)  # the drain of what follows the end, then the close
        return parts

    parts = asyncio.run(run())
    assert closed == [True]  # the provider's response closed once, whichever way the stream ended
    return parts, settled


def _chunk(choices, usage=None) -> bytes:
    out = {"id": "c", "object": "chat.completion.chunk", "model": "x", "choices": choices}
    if usage is not None:
        out["usage"] = usage
    return json.dumps(out).encode()


USAGE = {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}


def test_the_usage_chunk_ends_a_stream_only_once_every_choice_has_finished(monkeypatch):
    word = [{"index": 0, "delta": {"content": "a"}}]
    other = [{"index": 1, "delta": {"content": "b"}}]
    done0 = [{"index": 0, "delta": {}, "finish_reason": "stop"}]
    done1 = [{"index": 1, "delta": {}, "finish_reason": "stop"}]
    # n=2, a usage chunk after the first choice's finish only: not the end, the second choice still comes
    parts, settled = _relayed(monkeypatch, {"n": 2}, [_chunk(word), _chunk(done0), _chunk([], USAGE), _chunk(other),
                                                      _chunk(done1), _chunk([], USAGE), b"[DONE]"])
    assert any(b'"content": "b"' in p for p in parts) and settled == ["succeeded"]
    assert parts[-1].endswith(b"data: [DONE]\n\n") and b'"service"' in parts[-1]
    # n=1: the usage chunk after the finish is the end; anything after it is read in the background, not relayed
    parts, settled = _relayed(monkeypatch, {}, [_chunk(word), _chunk(done0), _chunk([], USAGE), _chunk(other),
                                                b"[DONE]"])
    assert not any(b'"content": "b"' in p for p in parts) and settled == ["succeeded"]
    assert b'"total_tokens":5' in parts[-1]


def test_a_repeated_finish_or_an_unusable_usage_does_not_end_a_stream_early(monkeypatch):
    word = [{"index": 0, "delta": {"content": "a"}}]
    other = [{"index": 1, "delta": {"content": "b"}}]
    done0 = [{"index": 0, "delta": {}, "finish_reason": "stop"}]
    done1 = [{"index": 1, "delta": {}, "finish_reason": "stop"}]
    parts, _ = _relayed(monkeypatch, {"n": 2}, [_chunk(word), _chunk(done0), _chunk(done0), _chunk([], USAGE),
                                                _chunk(other), _chunk(done1), _chunk([], USAGE), b"[DONE]"])
    assert any(b'"content": "b"' in p for p in parts)  # one choice finished twice is still one choice
    parts, settled = _relayed(monkeypatch, {}, [_chunk(word), _chunk(done0), _chunk([], {"prompt_tokens": "x"}),
                                                _chunk(other), b"[DONE]"])
    assert any(b'"content": "b"' in p for p in parts) and settled == ["succeeded"]
    final = json.loads(parts[-1].split(b"\n\n")[0][6:])
    assert final["usage"]["estimated"] is True  # charged on the estimate, and the final chunk says so

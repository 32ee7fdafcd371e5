"""The REST verbs' fast door (api.door, issue 20): over a real HTTP server it answers exactly as Django's
handler does (the test client below), and whatever it does not answer (another method, a Host that is not allowed)
still reaches Django."""

import json

import httpx
import pytest
from django.test import Client

from api import door as asgi_door
from billing.models import LedgerEntry, RequestRecord

pytestmark = pytest.mark.django_db(transaction=True)  # the server's threads have their own connections

SAME = {"content-type", "x-request-id", "x-content-type-options", "x-frame-options", "referrer-policy",
        "cross-origin-opener-policy", "ratelimit-limit", "ratelimit-remaining", "ratelimit-reset", "retry-after",
        "idempotent-replayed", "allow", "www-authenticate"}


@pytest.fixture
def server(api_key, monkeypatch):
    from config.asgi import application
    from tests.llmproxy.fake_upstream import serve_in_thread, stop_server

    calls = []
    real = asgi_door._run_verb
    monkeypatch.setattr(asgi_door, "_run_verb", lambda request, verb, *early: calls.append(verb.name) or real(request, verb, *early))
    srv, thread, port = serve_in_thread(application, lifespan="on")
    try:
        yield f"http://127.0.0.1:{port}", calls
    finally:
        stop_server(srv, thread)
        asgi_door.close_threads()


def _django(method, path, key, body=None, headers=None, content_type="application/json"):
    h = {f"HTTP_{k.upper().replace('-', '_')}": v for k, v in (headers or {}).items()}
    if key:
        h["HTTP_AUTHORIZATION"] = f"Bearer {key}"
    c = Client(HTTP_HOST="127.0.0.1")
    if method == "GET":
        return c.get(path, **h)
    return c.post(path, body if isinstance(body, str | bytes) else json.dumps(body), content_type=content_type, **h)


def _fast(base, method, path, key, body=None, headers=None, content_type="application/json"):
    h = {"Content-Type": content_type, **(headers or {})}
    if key:
        h["Authorization"] = f"Bearer {key}"
    content = body if isinstance(body, str | bytes) else json.dumps(body) if body is not None else None
    return httpx.request(method, base + path, content=content, headers=h, timeout=20)


def _shape(status, body: dict, headers) -> tuple:
    """What must agree: status, error code or result keys, the service envelope's keys, the headers present."""
    names = {k.lower() for k, _ in headers.items()} & SAME
    if "error" in body:
        return status, ("error", body["error"]["code"]), names
    return status, ("ok", sorted(body.get("result", body)), sorted(body.get("service", {}))), names


CASES = [
    ("POST", "/v1/verify_email", True, {"email": "not-an-address"}, None, "application/json"),
    ("POST", "/v1/verify_email", False, {"email": "not-an-address"}, None, "application/json"),
    ("POST", "/v1/verify_email", True, "{not json", None, "application/json"),
    ("POST", "/v1/verify_email", True, "email=x", None, "application/x-www-form-urlencoded"),
    ("POST", "/v1/verify_email", True, {"email": 7, "surprise": 1}, None, "application/json"),
    ("POST", "/v1/find_leads", True, {"audience": "vp sales", "titles": ["vp sales"], "limit": 2}, None,
     "application/json"),
    ("GET", "/v1/usage", True, None, None, "application/json"),
    ("POST", "/v1/verify_email", True, {"email": "not-an-address"}, {"Idempotency-Key": "k" * 256},
     "application/json"),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]} {c[1]} {i}" for i, c in enumerate(CASES)])
def test_fast_door_answers_as_django_does(server, api_key, case):
    base, calls = server
    method, path, authed, body, headers, ctype = case
    key = api_key if authed else None
    slow = _django(method, path, key, body, headers, ctype)
    fast = _fast(base, method, path, key, body, headers, ctype)
    assert calls, "the request did not take the fast door"
    assert _shape(fast.status_code, fast.json(), fast.headers) == _shape(slow.status_code, slow.json(), slow)
    assert fast.headers["x-request-id"].startswith("req_")
    assert int(fast.headers["content-length"]) == len(fast.content)


def test_a_charge_and_its_replay_through_the_fast_door(server, api_key, workspace):
    base, calls = server
    headers = {"Idempotency-Key": "once-1"}
    first = _fast(base, "POST", "/v1/verify_email", api_key, {"email": "not-an-address"}, headers)
    again = _fast(base, "POST", "/v1/verify_email", api_key, {"email": "not-an-address"}, headers)
    assert first.status_code == again.status_code == 200
    assert again.headers["idempotent-replayed"] == "true" and again.json() == first.json()
    rid = first.json()["service"]["request_id"]
    assert rid == first.headers["x-request-id"]
    record = RequestRecord.objects.get(pk=rid)
    assert record.status == "succeeded" and record.channel == "rest"
    charged = first.json()["service"]["credits_charged"]
    assert LedgerEntry.objects.filter(request_id=rid, kind="charge").count() == (0 if charged == "0" else 1)
    assert calls == ["verify_email", "verify_email"]


def test_what_the_fast_door_does_not_answer_still_reaches_django(server, api_key):
    base, calls = server
    wrong_method = httpx.get(base + "/v1/verify_email", headers={"Authorization": f"Bearer {api_key}"}, timeout=20)
    assert wrong_method.status_code == 405 and wrong_method.json()["error"]["code"] == "method_not_allowed"
    bad_host = httpx.post(base + "/v1/verify_email", json={"email": "x"}, timeout=20,
                          headers={"Authorization": f"Bearer {api_key}", "Host": "evil.example"})
    assert bad_host.status_code == 400
    assert calls == []
    too_big = httpx.post(base + "/v1/verify_email", content=b"{" + b" " * (17 * 1024 * 1024) + b"}", timeout=20,
                         headers={"Authorization": f"Bearer {api_key}", "Content-Type": "application/json"})
    assert too_big.status_code == 413 and too_big.json()["error"]["code"] == "payload_too_large"

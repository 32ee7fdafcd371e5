"""The provider request leaves while the hold is placed (llmproxy.services.EarlyStart, LLM_EARLY_START), once
this process has seen the workspace's available balance cover the hold; the hold still decides. Served live
(uvicorn, config.asgi) against the fake upstream over HTTP. Whether the provider had the request before the
hold was placed is observed at the hold itself: the hold step is wrapped to look for the provider's arrival."""

import json
import socket
import threading
from urllib.parse import urlparse

import httpx
import pytest

from api import pipeline
from billing import services as billing
from billing.models import Hold, RequestRecord
from llmproxy import services as llm
from tests.llmproxy.test_live import HELLO, START, account, settled, sse, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

CHARGE = 19_000  # fake/ok: 11 prompt + 8 completion tokens at 1 credit per 1k tokens


@pytest.fixture(autouse=True)
def early_start_on(settings):
    settings.LLM_EARLY_START = True  # the default


@pytest.fixture
def hold_probe(monkeypatch, fake):
    """Wrap the hold: `probe.seen` gets, per hold placed, whether the provider already had the request
    (waiting up to `probe.wait` seconds for it); `probe.release`, when set to an Event, is waited for first."""
    real = billing.request_open_with_hold

    class Probe:
        seen: list[bool] = []
        wait = 0.5
        release: threading.Event | None = None

    def hold(**kwargs):
        if Probe.release is not None:
            assert Probe.release.wait(30)
        Probe.seen.append(fake.arrived.acquire(timeout=Probe.wait))
        if Probe.seen[-1]:
            fake.arrived.release()  # the rate probe may look for the same arrival
        return real(**kwargs)

    monkeypatch.setattr(billing, "request_open_with_hold", hold)
    Probe.seen = []
    return Probe


def _drain(fake):
    while fake.arrived.acquire(blocking=False):
        pass


def _chat(live, api_key, fake, stream: bool, **extra):
    _drain(fake)
    body = {"model": "fake/ok", "messages": HELLO, "stream": stream, **extra}
    return settled(httpx.post(f"{live}/v1/llm/chat", headers={"Authorization": f"Bearer {api_key}"}, json=body,
                              timeout=30))


def _charged(resp, stream: bool) -> str:
    if stream:
        return json.loads(sse(resp.text.splitlines())[-2])["service"]["credits_charged"]
    return resp.json()["service"]["credits_charged"]


@pytest.mark.parametrize("stream", [False, True], ids=["once", "stream"])
def test_the_provider_request_leaves_while_the_hold_is_placed_once_the_balance_is_known(live, api_key, workspace,
                                                                                        fake, hold_probe, stream):
    first = _chat(live, api_key, fake, stream)  # nothing known yet about this workspace: hold first
    second = _chat(live, api_key, fake, stream)  # the first settlement said what is available: both at once
    assert (first.status_code, second.status_code) == (200, 200), (first.text, second.text)
    assert hold_probe.seen == [False, True]
    assert _charged(first, stream) == _charged(second, stream) == "0.019"
    acc = account(workspace)
    assert (acc.balance_micros, acc.reserved_micros) == (START - 2 * CHARGE, 0)
    assert not Hold.objects.filter(status="held").exists()
    assert list(RequestRecord.objects.filter(workspace=workspace).values_list("status", flat=True)) == ["succeeded"] * 2


@pytest.mark.parametrize("stream", [False, True], ids=["once", "stream"])
def test_a_stale_allowance_meets_the_hold_refused_402_nothing_charged_and_the_next_call_holds_first(
        live, api_key, workspace, fake, hold_probe, stream):
    assert _chat(live, api_key, fake, stream).status_code == 200
    # spent elsewhere (another process, another verb): this process still believes in its last settlement
    billing.credits_debit(workspace=workspace, amount=START - CHARGE - 1_000, kind="adjustment")
    before = len(fake.requests)
    refused = _chat(live, api_key, fake, stream)
    assert refused.status_code == 402, refused.text
    assert refused.headers["Content-Type"] == "application/json"  # no stream was started towards the client
    assert refused.json()["error"]["code"] == "insufficient_credits"
    assert hold_probe.seen == [False, True]  # the provider had the request: abandoned
    assert len(fake.requests) == before + 1
    acc = account(workspace)
    assert (acc.balance_micros, acc.reserved_micros) == (1_000, 0)  # nothing charged for the refused call
    assert not Hold.objects.filter(status="held").exists()
    rec = RequestRecord.objects.get(pk=refused.headers["X-Request-Id"])
    assert (rec.status, rec.http_status, rec.credits_charged_micros) == ("failed", 402, 0)
    assert rec.error["code"] == "insufficient_credits"

    again = _chat(live, api_key, fake, stream)  # the refusal taught this process: hold first now
    assert again.status_code == 402
    assert hold_probe.seen == [False, True, False]
    assert len(fake.requests) == before + 1  # refused before any provider request


def test_an_unaffordable_cap_is_refused_before_any_provider_request_even_with_an_allowance(live, api_key, fake,
                                                                                             hold_probe):
    assert _chat(live, api_key, fake, False).status_code == 200
    before = len(fake.requests)
    r = _chat(live, api_key, fake, False, max_tokens=400_000)  # more than the 300 credits the allowance knows
    assert r.status_code == 402 and r.json()["error"]["code"] == "insufficient_credits"
    assert len(fake.requests) == before and hold_probe.seen == [False, False]


def test_early_start_off_always_places_the_hold_first(live, api_key, fake, hold_probe, settings):
    settings.LLM_EARLY_START = False
    assert _chat(live, api_key, fake, False).status_code == 200
    assert _chat(live, api_key, fake, True).status_code == 200
    assert hold_probe.seen == [False, False]


def test_a_client_gone_while_the_hold_is_placed_abandons_the_provider_request_and_releases_the_hold(
        live, api_key, workspace, fake, hold_probe):
    assert _chat(live, api_key, fake, False).status_code == 200
    _drain(fake)
    hold_probe.release = threading.Event()
    hold_probe.wait = 10
    body = json.dumps({"model": "fake/gate", "messages": HELLO, "stream": True}).encode()
    url = urlparse(live)
    sock = socket.create_connection((url.hostname, url.port))
    sock.sendall(b"POST /v1/llm/chat HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 + f"Authorization: Bearer {api_key}\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
    wait_for(lambda: len(fake.requests) == 2, "the provider request, sent before the hold")
    sock.close()
    assert fake.cut_seen.wait(10)  # the provider stream (waiting for its first word) was closed
    hold_probe.release.set()  # now the hold is placed, and must be released at once
    wait_for(lambda: RequestRecord.objects.filter(workspace=workspace, status="interrupted").exists(),
             "the interrupted record")
    rec = RequestRecord.objects.get(workspace=workspace, status="interrupted")
    assert (rec.http_status, rec.credits_charged_micros) == (499, 0)
    wait_for(lambda: not Hold.objects.filter(status="held").exists(), "the hold released")
    acc = account(workspace)
    assert (acc.balance_micros, acc.reserved_micros) == (START - CHARGE, 0)
    assert hold_probe.seen == [False, True]


def test_the_allowance_is_taken_by_each_early_call_and_refreshed_by_settlements():
    allowance = llm.EarlyStart(seconds=60)
    assert not allowance.claim("ws", 10)  # nothing known
    allowance.learn("ws", 25)
    assert allowance.claim("ws", 10) and allowance.claim("ws", 10)
    assert not allowance.claim("ws", 10)  # 5 left: a third call places its hold first
    assert not allowance.claim("ws", 0)  # a free call has nothing to place early
    allowance.learn("ws", 100)
    assert allowance.claim("ws", 100)
    allowance.learn("ws", 100)
    allowance.forget("ws")
    assert not allowance.claim("ws", 1)
    allowance.learn("ws", None)  # a settlement that read no balance teaches nothing
    assert not allowance.claim("ws", 1)
    stale = llm.EarlyStart(seconds=-1)
    stale.learn("ws", 100)
    assert not stale.claim("ws", 1)  # older than its seconds: hold first



# --- admission on the event loop (llmproxy.services.admit): the rate-limit hit is confirmed like the hold ----------
@pytest.fixture
def rate_probe(monkeypatch, fake):
    """Wrap the rate-limit hit as hold_probe wraps the hold: `probe.seen` gets, per hit, whether the provider
    already had the request (an admitted call's hit is started beside its hold: `ratelimit_hit_start`)."""
    real, real_start = pipeline.ratelimit_hit, pipeline.ratelimit_hit_start

    class Probe:
        seen: list[bool] = []

    def arrived() -> bool:
        seen = fake.arrived.acquire(timeout=0.5)
        if seen:
            fake.arrived.release()  # the hold probe looks for the same arrival
        return seen

    def hit(subject, **kwargs):
        Probe.seen.append(arrived())
        return real(subject, **kwargs)

    def hit_start(subject, **kwargs):
        Probe.seen.append(arrived())
        return real_start(subject, **kwargs)

    monkeypatch.setattr(pipeline, "ratelimit_hit", hit)
    monkeypatch.setattr(pipeline, "ratelimit_hit_start", hit_start)
    Probe.seen = []
    return Probe


@pytest.mark.parametrize("stream", [False, True], ids=["once", "stream"])
def test_a_call_known_in_this_process_starts_before_its_rate_limit_hit_and_its_hold(live, api_key, workspace, fake,
                                                                                   hold_probe, rate_probe, stream):
    first = _chat(live, api_key, fake, stream)  # key, balance and rate unknown here: every check first
    second = _chat(live, api_key, fake, stream)  # all three known: the provider request leaves at once
    assert (first.status_code, second.status_code) == (200, 200), (first.text, second.text)
    assert rate_probe.seen == [False, True] and hold_probe.seen == [False, True]
    assert second.headers["RateLimit-Limit"] and second.headers["RateLimit-Remaining"]
    assert _charged(second, stream) == "0.019"
    acc = account(workspace)
    assert (acc.balance_micros, acc.reserved_micros) == (START - 2 * CHARGE, 0)


@pytest.mark.parametrize("stream", [False, True], ids=["once", "stream"])
def test_a_stale_rate_allowance_meets_the_limit_429_nothing_recorded_and_the_next_call_is_checked_first(
        live, api_key, workspace, fake, hold_probe, rate_probe, settings, stream):
    from core import ratelimit

    settings.RATE_LIMIT_PER_MINUTE = 5
    assert _chat(live, api_key, fake, stream).status_code == 200  # this process now believes 4 are left
    key_pk = RequestRecord.objects.get(workspace=workspace).api_key_id
    for _ in range(4):  # spent elsewhere (another process, another route)
        assert ratelimit.hit(f"key:{key_pk}").allowed
    before = len(fake.requests)
    refused = _chat(live, api_key, fake, stream)
    assert refused.status_code == 429, refused.text
    assert refused.headers["Content-Type"] == "application/json"  # no stream was started towards the client
    assert refused.json()["error"]["code"] == "rate_limited" and int(refused.headers["Retry-After"]) >= 1
    assert rate_probe.seen == [False, True]  # the provider had the request: abandoned
    assert len(fake.requests) == before + 1
    assert hold_probe.seen == [False, True]  # its hold was placed while the hit's answer came, then released
    assert RequestRecord.objects.filter(workspace=workspace).count() == 1  # a rate-limited call is not recorded
    assert not Hold.objects.filter(status="held").exists()
    acc = account(workspace)
    assert (acc.balance_micros, acc.reserved_micros) == (START - CHARGE, 0)

    again = _chat(live, api_key, fake, stream)  # the refusal taught this process: the rate limit first now
    assert again.status_code == 429
    assert rate_probe.seen == [False, True, False]
    assert len(fake.requests) == before + 1  # refused before any provider request


def test_a_large_body_is_checked_before_its_provider_request_starts(live, api_key, fake, hold_probe, rate_probe):
    assert _chat(live, api_key, fake, False).status_code == 200
    big = [{"role": "user", "content": "x" * (llm.ADMIT_MAX_BODY_BYTES + 1)}]
    assert _chat(live, api_key, fake, False, messages=big).status_code == 200
    assert rate_probe.seen == [False, False]  # not admitted on the event loop: the rate limit first
    assert hold_probe.seen == [False, True]  # (then started from the database thread, before the hold)


def test_a_key_revoked_in_this_process_is_never_admitted(live, api_key, workspace, fake, hold_probe):
    from accounts.models import ApiKey
    from accounts.services import key_revoke

    assert _chat(live, api_key, fake, False).status_code == 200
    key_revoke(key=ApiKey.objects.get(workspace=workspace))
    before = len(fake.requests)
    r = _chat(live, api_key, fake, False)
    assert r.status_code == 401 and r.json()["error"]["code"] == "unauthenticated"
    assert len(fake.requests) == before


def test_an_idempotent_call_is_checked_before_its_provider_request_starts(live, api_key, fake, hold_probe, rate_probe):
    assert _chat(live, api_key, fake, False).status_code == 200
    _drain(fake)
    r = httpx.post(f"{live}/v1/llm/chat", headers={"Authorization": f"Bearer {api_key}", "Idempotency-Key": "k-1"},
                   json={"model": "fake/ok", "messages": HELLO}, timeout=30)
    assert r.status_code == 200
    assert rate_probe.seen == [False, False]  # checked first (the replay store is read before any provider call)


def test_the_rate_allowance_is_taken_with_the_money_and_forgotten_on_a_refusal():
    from core.ratelimit import RateInfo

    allowance = llm.EarlyStart(seconds=60, rate_seconds=60)
    allowance.learn("ws", 100)
    assert not allowance.claim("ws", 10, "key")  # the key's rate unknown: checked first
    assert allowance.claim("ws", 10)  # (the database thread's early start has already hit the rate limit)
    allowance.learn_rate("key", RateInfo(limit=300, remaining=2, reset=1, allowed=True))
    assert allowance.claim("ws", 10, "key") and allowance.claim("ws", 10, "key")
    assert not allowance.claim("ws", 10, "key")  # no request left
    allowance.learn_rate("key", RateInfo(limit=300, remaining=5, reset=1, allowed=True))
    assert not allowance.claim("ws", 1_000, "key")  # money short: neither is taken
    assert allowance.claim("ws", 70, "key") and not allowance.claim("ws", 1, "key")  # 0 credits left
    allowance.learn("ws", 100)
    allowance.learn_rate("key", RateInfo(limit=300, remaining=0, reset=9, allowed=False))
    assert not allowance.claim("ws", 1, "key")  # refused: forgotten
    stale = llm.EarlyStart(seconds=60, rate_seconds=-1)
    stale.learn("ws", 100)
    stale.learn_rate("key", RateInfo(limit=300, remaining=5, reset=1, allowed=True))
    assert not stale.claim("ws", 1, "key")


def test_a_reading_taken_before_a_refusal_does_not_undo_it():
    import time

    from core.ratelimit import RateInfo

    allowance = llm.EarlyStart(seconds=60, rate_seconds=60)
    before = time.monotonic()
    allowance.learn("ws", 100, before)
    allowance.learn_rate("key", RateInfo(limit=300, remaining=5, reset=1, allowed=True), before)
    allowance.forget("ws")  # a hold refused
    allowance.learn_rate("key", RateInfo(limit=300, remaining=0, reset=9, allowed=False))  # a hit refused
    # late readings from other database threads, taken before those refusals: ignored
    allowance.learn("ws", 100, before)
    allowance.learn_rate("key", RateInfo(limit=300, remaining=5, reset=1, allowed=True), before)
    assert not allowance.claim("ws", 1) and not allowance.claim("ws", 1, "key")
    after = time.monotonic()
    allowance.learn("ws", 100, after)
    assert allowance.claim("ws", 1) and not allowance.claim("ws", 1, "key")
    allowance.learn_rate("key", RateInfo(limit=300, remaining=5, reset=1, allowed=True), after)
    assert allowance.claim("ws", 1, "key")

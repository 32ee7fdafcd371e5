"""The verb pipeline through HTTP: envelope, exact charges, holds, idempotency."""

import json
import threading

import pytest

from billing.models import CreditAccount, Hold, LedgerEntry, RequestRecord
from tests import testverbs


def balance(ws):
    return CreditAccount.objects.get(pk=ws.pk)


def test_envelope_and_exact_charge(api, workspace):
    r = api.post("/v1/test_echo", {"charge": "0.2", "payload": {"a": 1}})
    assert r.status_code == 200, r.content
    body = r.json()
    assert body["result"]["echo"] == {"a": 1}
    assert body["service"] == {"request_id": r["X-Request-Id"], "credits_charged": "0.2", "credits_available": "299.8"}
    acc = balance(workspace)
    assert (acc.balance_micros, acc.reserved_micros) == (299_800_000, 0)
    entry = LedgerEntry.objects.filter(kind="charge").get()
    assert entry.amount_micros == -200_000 and entry.request_id == r["X-Request-Id"] and entry.verb == "test_echo"
    rec = RequestRecord.objects.get(pk=r["X-Request-Id"])
    assert rec.status == "succeeded" and rec.credits_charged_micros == 200_000


def test_free_call_charges_zero_string(api):
    r = api.post("/v1/test_echo", {})
    assert r.json()["service"]["credits_charged"] == "0"


def test_hold_larger_than_charge_refunds_rest(api, workspace):
    r = api.post("/v1/test_echo", {"hold": "50", "charge": "0.00025"})
    assert r.json()["service"]["credits_charged"] == "0.00025"
    acc = balance(workspace)
    assert acc.reserved_micros == 0 and acc.balance_micros == 300_000_000 - 250
    assert Hold.objects.get().status == "captured"


def test_failure_releases_hold_and_charges_nothing(api, workspace):
    r = api.post("/v1/test_echo", {"hold": "5", "charge": "5", "fail": "provider_unavailable"})
    assert r.status_code == 502
    assert r.json()["error"]["code"] == "provider_unavailable"
    acc = balance(workspace)
    assert (acc.balance_micros, acc.reserved_micros) == (300_000_000, 0)
    assert Hold.objects.get().status == "released"
    rec = RequestRecord.objects.get(pk=r["X-Request-Id"])
    assert rec.status == "failed" and rec.error["code"] == "provider_unavailable"


def test_insufficient_credits_holds_nothing(api, workspace):
    r = api.post("/v1/test_echo", {"charge": "300.000001"})
    assert r.status_code == 402
    err = r.json()["error"]
    assert err["code"] == "insufficient_credits" and err["request_id"] == r["X-Request-Id"]
    assert err["details"] == {"required": "300.000001", "credits_available": "300"}
    assert balance(workspace).balance_micros == 300_000_000


def test_whole_balance_can_be_spent(api, workspace):
    r = api.post("/v1/test_echo", {"charge": "300"})
    assert r.status_code == 200
    assert r.json()["service"]["credits_available"] == "0"


class TestIdempotency:
    def test_replay_byte_for_byte_without_second_charge(self, api, workspace):
        h = {"Idempotency-Key": "abc-1"}
        first = api.post("/v1/test_echo", {"charge": "1"}, headers=h)
        second = api.post("/v1/test_echo", {"charge": "1"}, headers=h)
        assert first.status_code == second.status_code == 200
        assert first.content == second.content
        assert second["Idempotent-Replayed"] == "true"
        assert "Idempotent-Replayed" not in first
        assert second["X-Request-Id"] == first["X-Request-Id"]
        assert balance(workspace).balance_micros == 299_000_000
        assert LedgerEntry.objects.filter(kind="charge").count() == 1

    def test_same_key_different_body_is_409(self, api):
        api.post("/v1/test_echo", {"charge": "1"}, headers={"Idempotency-Key": "k"})
        r = api.post("/v1/test_echo", {"charge": "2"}, headers={"Idempotency-Key": "k"})
        assert r.status_code == 409 and r.json()["error"]["code"] == "idempotency_key_reused"

    def test_same_key_different_verb_is_409(self, api):
        api.post("/v1/test_echo", {"amount": 1}, headers={"Idempotency-Key": "k2"})
        r = api.post("/v1/test_confirm", {"amount": 1}, headers={"Idempotency-Key": "k2"})
        assert r.status_code == 409 and r.json()["error"]["code"] == "idempotency_key_reused"

    def test_key_order_in_body_does_not_matter(self, api):
        h = {"Idempotency-Key": "order"}
        a = api.post("/v1/test_echo", raw='{"charge":"1","payload":{"x":1,"y":2}}', headers=h)
        b = api.post("/v1/test_echo", raw='{"payload":{"y":2,"x":1},"charge":"1"}', headers=h)
        assert b["Idempotent-Replayed"] == "true" and a.content == b.content

    def test_keys_are_scoped_to_the_workspace(self, api, make_api):
        other, _, _ = make_api()
        h = {"Idempotency-Key": "shared"}
        a = api.post("/v1/test_echo", {"charge": "1"}, headers=h)
        b = other.post("/v1/test_echo", {"charge": "1"}, headers=h)
        assert "Idempotent-Replayed" not in b and a.json()["service"]["request_id"] != b.json()["service"]["request_id"]

    def test_non_retryable_errors_are_replayed(self, api):
        h = {"Idempotency-Key": "fail-1"}
        a = api.post("/v1/test_echo", {"fail": "campaign_not_draft"}, headers=h)
        b = api.post("/v1/test_echo", {"fail": "campaign_not_draft"}, headers=h)
        assert a.status_code == b.status_code == 409 and a.content == b.content
        assert b["Idempotent-Replayed"] == "true"

    @pytest.mark.parametrize("code", ["provider_unavailable", "internal", "rate_limited"])
    def test_retryable_errors_are_not_stored(self, api, workspace, code):
        h = {"Idempotency-Key": f"retry-{code}"}
        a = api.post("/v1/test_echo", {"fail": code}, headers=h)
        assert a.json()["error"]["code"] == code
        b = api.post("/v1/test_echo", {"fail": code}, headers=h)
        assert "Idempotent-Replayed" not in b and b["X-Request-Id"] != a["X-Request-Id"]

    @pytest.mark.parametrize("key", ["", "x" * 256, "caf\u00e9", "tab\there"])
    def test_malformed_key_is_400(self, api, key):
        r = api.post("/v1/test_echo", {}, headers={"Idempotency-Key": key})
        assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_request"

    def test_255_char_key_is_accepted(self, api):
        r = api.post("/v1/test_echo", {}, headers={"Idempotency-Key": "k" * 255})
        assert r.status_code == 200

    def test_required_key_is_428(self, api):
        r = api.post("/v1/test_confirm", {"amount": 1, "confirmation_token": "ct_x"})
        assert r.status_code == 428 and r.json()["error"]["code"] == "idempotency_key_required"


@pytest.mark.django_db(transaction=True)
def test_concurrent_in_flight_same_key_is_409(api_key):
    from tests.conftest import Api

    gate = threading.Event()
    testverbs.GATES["inflight"] = gate
    results = {}

    def first():
        from django.db import connection

        results["first"] = Api(api_key).post("/v1/test_echo", {"gate": "inflight"}, headers={"Idempotency-Key": "fly"})
        connection.close()

    t = threading.Thread(target=first)
    t.start()
    try:
        for _ in range(200):
            from billing.models import IdempotencyRecord

            if IdempotencyRecord.objects.filter(key="fly").exists():
                break
            threading.Event().wait(0.02)
        second = Api(api_key).post("/v1/test_echo", {"gate": "inflight"}, headers={"Idempotency-Key": "fly"})
        assert second.status_code == 409
        assert second.json()["error"]["code"] == "idempotency_in_progress"
    finally:
        gate.set()
        t.join()
    assert results["first"].status_code == 200
    third = Api(api_key).post("/v1/test_echo", {"gate": "inflight"}, headers={"Idempotency-Key": "fly"})
    assert third["Idempotent-Replayed"] == "true" and third.content == results["first"].content
    testverbs.GATES.pop("inflight", None)


def test_body_json_is_compact_utf8(api):
    r = api.post("/v1/test_echo", {"payload": "Zoë"})
    assert json.loads(r.content)["result"]["echo"] == "Zoë"
    assert "Zoë".encode() in r.content


def test_insufficient_credits_is_not_replayed_so_a_retry_after_top_up_executes(api, workspace):
    from billing.services import credits_grant

    h = {"Idempotency-Key": "after-top-up"}
    first = api.post("/v1/test_echo", {"charge": "400"}, headers=h)
    assert first.status_code == 402
    credits_grant(workspace=workspace, amount=200_000_000, memo="top-up")
    second = api.post("/v1/test_echo", {"charge": "400"}, headers=h)
    assert second.status_code == 200 and "Idempotent-Replayed" not in second
    assert second.json()["service"]["credits_charged"] == "400"
    third = api.post("/v1/test_echo", {"charge": "400"}, headers=h)
    assert third["Idempotent-Replayed"] == "true" and third.content == second.content


def test_an_invalid_body_places_no_hold_and_is_recorded_as_failed(api, workspace):
    """Issue 20: the pipeline validates before it writes anything; the refusal is still in the request log."""
    r = api.post("/v1/verify_email", {"email": 42, "extra": True})
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_request"
    assert not Hold.objects.exists()
    rec = RequestRecord.objects.get(pk=r["X-Request-Id"])
    assert (rec.status, rec.http_status, rec.error["code"], rec.credits_charged_micros) == (
        "failed", 400, "invalid_request", 0)
    acc = balance(workspace)
    assert (acc.balance_micros, acc.reserved_micros) == (300_000_000, 0)


def test_a_metered_call_is_a_handful_of_statements(api, django_assert_max_num_queries):
    """Issue 20: key (cached after the first call), rate limit, one statement for the record and the hold, the
    verb's own work, one statement to settle, close and read the balance back (PostgreSQL; a few more on
    SQLite inside one transaction each)."""
    from django.db import connection

    api.post("/v1/test_echo", {"hold": "1", "charge": "0.5"})  # the key is now cached
    # PostgreSQL: the open-with-hold and the settle-and-close statements; SQLite: their 3 + 4 steps
    with django_assert_max_num_queries(2 if connection.vendor == "postgresql" else 7):
        r = api.post("/v1/test_echo", {"hold": "1", "charge": "0.5"})
    assert r.status_code == 200 and r.json()["service"]["credits_charged"] == "0.5"


def test_rest_key_cache_honours_a_revocation_at_once(api, api_key, workspace):
    from accounts.models import ApiKey
    from accounts.services import key_revoke

    assert api.get("/v1/usage").status_code == 200  # cached now
    key_revoke(key=ApiKey.objects.get(workspace=workspace))
    r = api.get("/v1/usage")
    assert r.status_code == 401 and r.json()["error"]["code"] == "unauthenticated"

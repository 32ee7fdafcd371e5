"""SETTLE_AFTER_RESPONSE: a non-streamed call's answer leaves before its settlement commits, stating exactly
what the settlement then commits; off (the default), the settlement commits first. Served live (uvicorn,
config.asgi) against the fake upstream over HTTP. The order is observed, not timed: the settlement is held at
an Event that the test sets only once it has the answer (or never needs to)."""

from datetime import timedelta
from types import SimpleNamespace

import httpx
import pytest
from django.utils import timezone

from billing import services as billing
from billing.models import Hold, LedgerEntry, RequestRecord
from core.money import format_credits
from llmproxy import services as llm
from tests.llmproxy.test_live import HELLO, START, account, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

CHARGE = 19_000  # fake/ok: 11 prompt + 8 completion tokens at 1 credit per 1k tokens


def _chat(live, api_key, **headers):
    return httpx.post(f"{live}/v1/llm/chat", headers={"Authorization": f"Bearer {api_key}", **headers},
                      json={"model": "fake/ok", "messages": HELLO}, timeout=30)


def test_on_the_answer_leaves_first_and_the_settlement_commits_what_it_stated(live, api_key, workspace, fake,
                                                                               settings, settle_gate):
    settings.SETTLE_AFTER_RESPONSE = True
    r = _chat(live, api_key)  # returns while the settlement is still held at the gate
    settle_gate.order.append("response")
    assert r.status_code == 200, r.text
    service = r.json()["service"]
    assert service["credits_charged"] == format_credits(CHARGE)
    assert service["credits_available"] == format_credits(START - CHARGE)
    record = RequestRecord.objects.get(pk=service["request_id"])
    assert record.status == "in_progress"
    assert Hold.objects.get(request_id=record.pk).status == "held"  # nothing settled yet: the hold covers it

    settle_gate.open.set()
    wait_for(lambda: Hold.objects.get(request_id=record.pk).status == "captured", "the settlement")
    assert settle_gate.order == ["response", "settled"]
    record.refresh_from_db()
    assert (record.status, record.credits_charged_micros, record.http_status) == ("succeeded", CHARGE, 200)
    entry = LedgerEntry.objects.get(request_id=record.pk)
    assert entry.amount_micros == -CHARGE
    acc = account(workspace)
    assert (acc.balance_micros, acc.reserved_micros) == (START - CHARGE, 0)
    assert acc.balance_micros - acc.reserved_micros == START - CHARGE  # what the answer said was available


@pytest.mark.parametrize("setting, headers", [(False, {}), (True, {"Idempotency-Key": "k-1"})],
                         ids=["off", "idempotent"])
def test_otherwise_the_settlement_commits_before_the_answer_leaves(live, api_key, workspace, fake, settings,
                                                                   settle_gate, setting, headers):
    settings.SETTLE_AFTER_RESPONSE = setting
    settle_gate.open.set()
    r = _chat(live, api_key, **headers)
    settle_gate.order.append("response")
    assert r.status_code == 200, r.text
    assert settle_gate.order == ["settled", "response"]
    assert RequestRecord.objects.get(pk=r.json()["service"]["request_id"]).status == "succeeded"
    acc = account(workspace)
    assert (acc.balance_micros, acc.reserved_micros) == (START - CHARGE, 0)


def _hold(expires_in: timedelta = timedelta(hours=1), available: int | None = 1_000_000):
    """A hold as billing.services._reserve returns it: with the available balance its statement read, unless None."""
    hold = SimpleNamespace(expires_at=timezone.now() + expires_in, amount_micros=50_000)
    if available is not None:
        hold.available_after_micros = available
    return hold


def _call(**overrides):
    values = {"hold": _hold(), "hold_micros": 50_000, "idempotency_key": None, "replay": None, "request_id": "req_x"}
    values.update(overrides)
    return SimpleNamespace(**values)


def test_only_a_settlement_known_in_advance_is_left_for_after_the_answer(settings):
    def after(call, charge):
        return llm.promised_service(call, charge) is not None

    settings.SETTLE_AFTER_RESPONSE = True
    assert after(_call(), 50_000)  # the whole hold
    assert after(_call(), 0)  # a release
    assert not after(_call(), 50_001)  # above the hold: the locked path decides the charge
    assert not after(_call(idempotency_key="k"), 1)
    assert not after(_call(hold=_hold(available=None)), 1)
    assert not after(_call(hold=None), 1)
    soon = _hold(expires_in=billing.SETTLE_MARGIN - timedelta(seconds=1))
    assert not after(_call(hold=soon), 1)  # the expiry sweep could claim it first
    settings.SETTLE_AFTER_RESPONSE = False
    assert not after(_call(), 1)
    settings.SETTLE_AFTER_RESPONSE = True
    assert llm.promised_service(_call(), 20_000) == {"request_id": "req_x", "credits_charged": "0.02",
                                                      "credits_available": "1.03"}


def test_a_settlement_that_fails_after_its_response_is_retried(live, api_key, workspace, fake, settings,
                                                               flaky_settlement):
    settings.SETTLE_AFTER_RESPONSE = True
    r = _chat(live, api_key)
    assert r.status_code == 200, r.text
    rid = r.json()["service"]["request_id"]
    wait_for(lambda: Hold.objects.get(request_id=rid).status == "captured", "the settlement, third attempt")
    assert flaky_settlement == [rid, rid]
    assert RequestRecord.objects.get(pk=rid).credits_charged_micros == CHARGE
    acc = account(workspace)
    assert (acc.balance_micros, acc.reserved_micros) == (START - CHARGE, 0)

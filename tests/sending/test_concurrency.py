"""Racing purchases with one approved token: exactly one executes (PostgreSQL: real row locks)."""

import threading

import pytest
from django.db import connection, connections

from billing.services import account_get
from core.money import credits
from sending.models import Operation
from tests.conftest import Api
from tests.factories import make_workspace
from tests.sending.conftest import approve

BODY = {"emails_per_week": 500, "brand_hint": "Race"}


@pytest.mark.django_db(transaction=True)
def test_one_token_two_racing_keys_buys_once(monkeypatch):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL row locks")
    monkeypatch.setattr("sending.services._enqueue_advance", lambda op_id, countdown=None: None)  # no broker here
    ws, owner, key = make_workspace(extra_credits=credits("20000"))
    api = Api(key)
    token = api.post("/v1/setup_sending", BODY).json()["result"]["confirmation_token"]
    approve(token, owner)
    before = account_get(workspace=ws).available_micros
    barrier = threading.Barrier(4)
    results = []

    def buy(n):
        try:
            barrier.wait()
            r = Api(key).post("/v1/setup_sending", {**BODY, "confirmation_token": token},
                              headers={"Idempotency-Key": f"race-{n}"})
            results.append((r.status_code, r.json()))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=buy, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    codes = sorted(code for code, _ in results)
    assert codes == [200, 409, 409, 409], results
    assert {body["error"]["code"] for code, body in results if code == 409} == {"confirmation_used"}
    assert Operation.objects.filter(workspace=ws).count() == 1
    assert account_get(workspace=ws).available_micros == before - credits("4500")
    assert account_get(workspace=ws).reserved_micros == 0

"""LLM_ASYNC_COMMIT: on PostgreSQL the LLM door's hold and settle statements commit with synchronous_commit off,
for their own transactions only; every other money step stays synchronous, and the money stays exact."""

import pytest
from django.db import connection, transaction
from django.db.models import Sum

from billing import ledger_sql
from billing import services as billing
from billing.models import CreditAccount, LedgerEntry, RequestRecord

pytestmark = pytest.mark.skipif(connection.vendor != "postgresql",
                                reason="synchronous_commit is a PostgreSQL setting (SQLite has no asynchronous commit)")


def _setting() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('synchronous_commit')")
        return cursor.fetchone()[0]


def _exact(workspace):
    account = CreditAccount.objects.get(pk=workspace.pk)
    assert account.balance_micros == LedgerEntry.objects.filter(account=account).aggregate(s=Sum("amount_micros"))["s"]
    return account


@pytest.mark.django_db(transaction=True)
def test_async_commit_applies_inside_the_llm_statements_transaction_only(workspace):
    assert _setting() == "on"
    before = _exact(workspace)

    # Inside the statement's transaction the setting is off (made visible by an enclosing transaction) ...
    with transaction.atomic():
        hold = billing.request_open_with_hold(request_id="req_a1", workspace=workspace, verb="llm_chat",
                                              amount=50_000, async_commit=True)
        assert _setting() == "off"
    # ... and gone with it.
    assert _setting() == "on"
    with transaction.atomic():
        charged, available = billing.hold_settle_close(hold=hold, charge=12_345, workspace=workspace,
                                                       request_id="req_a1", status="succeeded", http_status=200,
                                                       verb="llm_chat", usage={"total_tokens": 3}, async_commit=True)
        assert _setting() == "off"
    assert _setting() == "on"

    # In autocommit (how the LLM door runs them: one statement, its own transaction) nothing leaks either.
    hold = billing.request_open_with_hold(request_id="req_a2", workspace=workspace, verb="llm_chat", amount=40_000,
                                          async_commit=True)
    assert _setting() == "on"
    billing.hold_settle_close(hold=hold, charge=40_000 * 3, workspace=workspace, request_id="req_a2",  # above the hold
                              status="succeeded", http_status=200, verb="llm_chat", async_commit=True)
    assert _setting() == "on"

    after = _exact(workspace)
    assert charged == 12_345 and available == before.available_micros - 12_345
    assert after.reserved_micros == 0
    charges = LedgerEntry.objects.filter(account=after, kind="charge").order_by("id")
    assert [e.amount_micros for e in charges] == [-12_345, -120_000]
    assert after.balance_micros == before.balance_micros - 12_345 - 120_000
    assert RequestRecord.objects.get(pk="req_a1").credits_charged_micros == 12_345


@pytest.mark.django_db(transaction=True)
def test_other_money_steps_stay_synchronous(workspace):
    with transaction.atomic():
        hold = billing.hold_place(workspace=workspace, amount=10_000, request_id="req_s1")
        assert _setting() == "on"
    with transaction.atomic():
        billing.hold_settle(hold=hold, charge=2_000, verb="enrich")
        assert _setting() == "on"
    with transaction.atomic():
        billing.request_open_with_hold(request_id="req_s2", workspace=workspace, verb="enrich", amount=1_000)
        assert _setting() == "on"
    with transaction.atomic():
        billing.credits_grant(workspace=workspace, amount=5_000, memo="t")
        assert _setting() == "on"
    _exact(workspace)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("flag", [True, False])
def test_the_llm_door_asks_for_it_as_configured(api_key, workspace, settings, monkeypatch, flag):
    """Through the LLM route: its hold and its settlement carry LLM_ASYNC_COMMIT; the money is exact."""
    settings.LLM_ASYNC_COMMIT = flag
    seen = []
    reserve, settle = ledger_sql.reserve, ledger_sql.settle

    def spy_reserve(**kw):
        seen.append(("reserve", kw.get("async_commit")))
        return reserve(**kw)

    def spy_settle(**kw):
        seen.append(("settle", kw.get("async_commit")))
        return settle(**kw)

    monkeypatch.setattr(ledger_sql, "reserve", spy_reserve)
    monkeypatch.setattr(ledger_sql, "settle", spy_settle)
    before = _exact(workspace)
    from tests.conftest import Api

    r = Api(api_key).post("/v1/llm/chat/completions", {"model": "vendor_a/model_small",
                                                        "messages": [{"role": "user", "content": "hi there"}]})
    assert r.status_code == 200, r.content
    assert seen == [("reserve", flag), ("settle", flag)]
    after = _exact(workspace)
    charged = RequestRecord.objects.get(pk=r.json()["service"]["request_id"]).credits_charged_micros
    assert charged > 0 and after.balance_micros == before.balance_micros - charged and after.reserved_micros == 0

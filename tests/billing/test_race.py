"""No concurrency can overspend: real threads race `execute` against the real database (PostgreSQL in CI)."""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection, connections
from django.db.models import Sum

from accounts.models import ApiKey
from api.pipeline import execute
from billing.models import CreditAccount, Hold, LedgerEntry
from core.ids import new_id
from core.verbs import Context
from tests import testverbs

# PostgreSQL's default max_connections is 100 for the whole server, so the 100 threads share at most 40
# database connections at a time: every thread is released at once by the barrier and then races for a
# connection, giving 40 concurrent transactions contending for one account row.
MAX_CONNECTIONS = 40


def _call(key_id, body, barrier, slots):
    barrier.wait(timeout=60)
    with slots:
        try:
            key = ApiKey.objects.select_related("workspace").get(pk=key_id)
            ctx = Context(workspace=key.workspace, api_key=key, request_id=new_id("req_"))
            return execute(testverbs.echo, ctx=ctx, raw=body)
        finally:
            connection.close()


def _race(key_id, body, n):
    barrier = threading.Barrier(n)
    slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
    with ThreadPoolExecutor(max_workers=n) as pool:
        return list(pool.map(lambda _: _call(key_id, body, barrier, slots), range(n)))


@pytest.mark.django_db(transaction=True)
def test_100_threads_holding_5_credits_each_exactly_60_succeed(workspace, api_key, settings):
    settings.RATE_LIMIT_PER_MINUTE = 10_000
    key_id = ApiKey.objects.get(workspace=workspace).pk
    results = _race(key_id, {"charge": "5"}, 100)
    codes = sorted(r.status for r in results)
    assert codes.count(200) == 60, codes
    assert codes.count(402) == 40
    assert all(r.data["error"]["code"] == "insufficient_credits" for r in results if r.status == 402)
    account = CreditAccount.objects.get(pk=workspace.pk)
    assert account.balance_micros == 0 and account.reserved_micros == 0
    ledger_sum = LedgerEntry.objects.filter(account=account).aggregate(s=Sum("amount_micros"))["s"]
    assert ledger_sum == account.balance_micros
    assert LedgerEntry.objects.filter(kind="charge").count() == 60
    assert Hold.objects.filter(status="held").count() == 0
    connections.close_all()


@pytest.mark.django_db(transaction=True)
def test_holds_larger_than_charges_never_overspend(workspace, settings):
    """Each call holds 7 but is charged 3: holds gate admission, settlement refunds the rest."""
    settings.RATE_LIMIT_PER_MINUTE = 10_000
    key_id = ApiKey.objects.get(workspace=workspace).pk
    results = _race(key_id, {"hold": "7", "charge": "3"}, 60)
    ok = [r for r in results if r.status == 200]
    account = CreditAccount.objects.get(pk=workspace.pk)
    assert account.reserved_micros == 0
    assert account.balance_micros == 300_000_000 - 3_000_000 * len(ok)
    assert account.balance_micros >= 0
    assert len(ok) >= 42  # 300 / 7 holds fit at once at minimum
    ledger_sum = LedgerEntry.objects.filter(account=account).aggregate(s=Sum("amount_micros"))["s"]
    assert ledger_sum == account.balance_micros
    connections.close_all()

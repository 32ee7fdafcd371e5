"""Usage as per-day rollups (billing.models.UsageDaily, kept by triggers on the request records): always equal
to the aggregate of the records, on SQLite and on PostgreSQL; GET /v1/usage and the console chart read the
rollup, never the records; the migration's backfill counts records that existed before it."""

import importlib
from datetime import UTC, timedelta

import pytest
import time_machine
from django.db import connection
from django.db.models import Count, Sum
from django.db.models.functions import TruncDate
from django.utils import timezone

from billing import services as billing
from billing.models import RequestRecord, UsageDaily
from tests.factories import make_workspace

HELLO = [{"role": "user", "content": "hello there world"}]


def _from_records():
    rows = (RequestRecord.objects.annotate(day=TruncDate("created_at", tzinfo=UTC))
            .values("workspace_id", "verb", "day").annotate(calls=Count("id"), charged=Sum("credits_charged_micros")))
    return {(r["workspace_id"], r["verb"], r["day"]): (r["calls"], int(r["charged"] or 0)) for r in rows}


def _from_rollup():
    return {(r.workspace_id, r.verb, r.day): (r.calls, r.charged_micros) for r in UsageDaily.objects.all()
            if r.calls or r.charged_micros}


def _mixed_traffic(api, other_api):
    api.post("/v1/test_echo", {"charge": "0.2"})
    api.post("/v1/test_echo", {"charge": "0", "hold": "1"})  # a miss: held, nothing charged
    api.post("/v1/test_echo", {"fail": "provider_unavailable", "hold": "2"})  # failed: hold released
    api.post("/v1/test_echo", {"fail": "crash", "charge": "1"})  # internal error
    api.post("/v1/test_echo", {"nope": 1})  # invalid input (recorded as failed)
    api.post("/v1/test_echo", {"charge": "1.5", "hold": "1"})  # a charge above its hold
    api.post("/v1/test_echo", {"charge": "0.7"}, headers={"Idempotency-Key": "k1"})
    api.post("/v1/test_echo", {"charge": "0.7"}, headers={"Idempotency-Key": "k1"})  # replay: no new record
    api.get("/v1/usage")
    r = api.post("/v1/llm/chat/completions", {"model": "vendor_a/model_small", "messages": HELLO})
    assert r.status_code == 200, r.content
    r = api.post("/v1/llm/chat/completions", {"model": "vendor_a/model_small", "messages": HELLO, "max_tokens": 1_000_000, "n": 8})
    assert r.status_code == 402  # refused: recorded, nothing charged
    other_api.post("/v1/test_echo", {"charge": "3"})


@pytest.mark.django_db(transaction=True)
def test_rollup_equals_the_records_after_mixed_traffic_over_several_days(api, workspace, make_api):
    other_api, other_ws, _ = make_api()
    now = timezone.now()
    for days_ago in (40, 29, 1):
        with time_machine.travel(now - timedelta(days=days_ago)):
            _mixed_traffic(api, other_api)
    _mixed_traffic(api, other_api)
    # a refund after the fact moves the ledger, not the record; a record re-closed with another charge moves
    # the rollup by the difference; a record deleted leaves it
    billing.credits_refund(workspace=workspace, amount=200_000, memo="goodwill")
    rid = RequestRecord.objects.filter(workspace=workspace, credits_charged_micros__gt=0).first().pk
    billing.request_close(request_id=rid, status="succeeded", http_status=200, charged=123)
    RequestRecord.objects.filter(pk=RequestRecord.objects.filter(workspace=other_ws).first().pk).delete()

    records = _from_records()
    assert len(records) >= 8
    assert _from_rollup() == records

    # GET /v1/usage: the last 30 UTC days (today and the 29 before), from the rollup
    start = timezone.now().date() - timedelta(days=29)
    expected = {}
    for (ws, verb, day), (calls, charged) in records.items():
        if ws == workspace.pk and day >= start:
            c, m = expected.get(verb, (0, 0))
            expected[verb] = (c + calls, m + charged)
    from core.money import format_credits

    body = api.get("/v1/usage").json()
    assert {r["verb"]: (r["calls"], r["credits_charged"]) for r in body["last_30_days"]} == {
        verb: (calls, format_credits(charged)) for verb, (calls, charged) in expected.items()}


@pytest.mark.django_db
def test_usage_and_the_console_chart_never_read_the_request_records(api, workspace, owner, client,
                                                                     django_assert_max_num_queries):
    for _ in range(3):
        api.post("/v1/test_echo", {"charge": "0.1"})
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as ctx:
        body = api.get("/v1/usage").json()
    assert body["last_30_days"] == [{"verb": "test_echo", "calls": 3, "credits_charged": "0.3"}]
    reads = [q["sql"] for q in ctx.captured_queries if q["sql"].lstrip().upper().startswith("SELECT")]
    assert not [sql for sql in reads if "billing_requestrecord" in sql], reads

    from billing.console_views import _daily_chart

    with CaptureQueriesContext(connection) as ctx:
        chart = _daily_chart(workspace)
    assert chart["total"] == "0.3"
    assert not [q for q in ctx.captured_queries if "billing_requestrecord" in q["sql"]]


@pytest.mark.django_db(transaction=True)
def test_the_migration_backfills_records_written_before_it():
    ws, _, _ = make_workspace()
    today = timezone.now()
    for i, (verb, charged) in enumerate([("enrich", 5_000_000), ("enrich", 0), ("find_leads", 400_000)] * 3):
        RequestRecord.objects.create(id=f"req_b{i}", workspace=ws, verb=verb, credits_charged_micros=charged,
                                     created_at=today - timedelta(days=i % 3))
    expected = _from_records()
    migration = importlib.import_module("billing.migrations.0003_usagedaily")

    class Editor:  # what the migration's functions use of a schema editor
        def __init__(self):
            self.connection = connection

        def execute(self, sql, params=None):
            with connection.cursor() as cursor:
                cursor.execute(sql, params)

    migration.uninstall(None, Editor())  # as before the migration: records, no triggers, no rollup
    UsageDaily.objects.all().delete()
    RequestRecord.objects.create(id="req_before", workspace=ws, verb="enrich", credits_charged_micros=1)
    expected = _from_records()
    assert not UsageDaily.objects.exists()
    migration.install(None, Editor())
    assert _from_rollup() == expected
    RequestRecord.objects.create(id="req_after", workspace=ws, verb="enrich", credits_charged_micros=2)
    assert _from_rollup() == _from_records()

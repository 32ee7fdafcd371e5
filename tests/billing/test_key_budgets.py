"""Key budgets (CONTRACT 4.12): the limit is checked in the statement that places the hold; holds count until
they settle, refunds give back; periods roll over at midnight UTC (the clock injected with time-machine)."""

import json
from datetime import UTC, datetime
from io import StringIO

import pytest
import time_machine
from django.core.management import call_command
from django.db.models import Sum

from accounts.models import ApiKey
from billing import services as billing
from billing.models import CreditAccount, Hold, KeyBudget, LedgerEntry, RequestRecord
from core.money import credits

pytestmark = pytest.mark.django_db


def _key(workspace):
    return ApiKey.objects.get(workspace=workspace)


def test_call_within_the_limit_passes_and_one_past_it_is_402_with_details(api, workspace):
    key = _key(workspace)
    with time_machine.travel(datetime(2026, 3, 10, 15, 0, tzinfo=UTC), tick=False):
        billing.key_limits_set(api_key=key, daily=credits(10))
        assert api.post("/v1/test_echo", {"charge": "6"}).status_code == 200
        r = api.post("/v1/test_echo", {"charge": "5"})
    assert r.status_code == 402
    err = r.json()["error"]
    assert err["code"] == "key_budget_exceeded"
    assert err["details"] == {"period": "day", "limit": "10", "spent": "6", "resets_at": "2026-03-11T00:00:00Z"}
    record = RequestRecord.objects.get(pk=err["request_id"])
    assert record.status == "failed" and record.credits_charged_micros == 0
    assert record.error["code"] == "key_budget_exceeded"
    account = CreditAccount.objects.get(pk=workspace.pk)
    assert account.balance_micros == credits(294) and account.reserved_micros == 0
    assert not Hold.objects.filter(request_id=err["request_id"]).exists()


def test_monthly_limit_and_holds_count_until_settled(api, workspace):
    key = _key(workspace)
    with time_machine.travel(datetime(2026, 3, 31, 12, 0, tzinfo=UTC), tick=False):
        billing.key_limits_set(api_key=key, monthly=credits(20))
        # holds 15, charges 4: the 11 not captured are given back
        assert api.post("/v1/test_echo", {"hold": "15", "charge": "4"}).status_code == 200
        assert KeyBudget.objects.get(pk=key.pk).month_micros == credits(4)
        assert api.post("/v1/test_echo", {"hold": "16", "charge": "1"}).status_code == 200
        r = api.post("/v1/test_echo", {"hold": "16", "charge": "1"})
        assert r.status_code == 402
        assert r.json()["error"]["details"] == {"period": "month", "limit": "20", "spent": "5",
                                                "resets_at": "2026-04-01T00:00:00Z"}


def test_period_rolls_over_at_midnight_utc(api, workspace):
    key = _key(workspace)
    with time_machine.travel(datetime(2026, 5, 1, 23, 59, 59, tzinfo=UTC), tick=False) as clock:
        billing.key_limits_set(api_key=key, daily=credits(5))
        assert api.post("/v1/test_echo", {"charge": "5"}).status_code == 200
        assert api.post("/v1/test_echo", {"charge": "1"}).json()["error"]["code"] == "key_budget_exceeded"
        clock.move_to(datetime(2026, 5, 2, 0, 0, 0, tzinfo=UTC))
        assert api.post("/v1/test_echo", {"charge": "5"}).status_code == 200
        view = billing.key_budget_view(api_key=key)
        assert view["day"] == {"limit": "5", "spent": "5", "remaining": "0", "resets_at": "2026-05-03T00:00:00Z"}
        assert view["month"] is None


def test_a_hold_from_yesterday_settling_today_gives_nothing_back_to_today(workspace):
    key = _key(workspace)
    with time_machine.travel(datetime(2026, 5, 1, 23, 59, 0, tzinfo=UTC), tick=False) as clock:
        billing.key_limits_set(api_key=key, daily=credits(10))
        hold = billing.hold_place(workspace=workspace, amount=credits(8), request_id="r1", api_key=key)
        assert hold.budget_key_id == key.pk
        clock.move_to(datetime(2026, 5, 2, 0, 0, 1, tzinfo=UTC))
        h2 = billing.hold_place(workspace=workspace, amount=credits(9), request_id="r2", api_key=key)
        billing.hold_settle(hold=hold, charge=credits(1))
        budget = KeyBudget.objects.get(pk=key.pk)
        assert budget.day_micros == credits(9)  # today's counter untouched by yesterday's hold
        assert budget.month_micros == credits(1 + 9)  # same month: 7 given back
        billing.hold_release(hold=h2)
        assert KeyBudget.objects.get(pk=key.pk).day_micros == 0


def test_refund_gives_back_to_the_budget(workspace):
    key = _key(workspace)
    billing.key_limits_set(api_key=key, daily=credits(10))
    hold = billing.hold_place(workspace=workspace, amount=credits(8), request_id="req_x", api_key=key)
    billing.hold_settle(hold=hold, charge=credits(8))
    assert KeyBudget.objects.get(pk=key.pk).day_micros == credits(8)
    billing.credits_refund(workspace=workspace, amount=credits(3), request_id="req_x", verb="test")
    assert KeyBudget.objects.get(pk=key.pk).day_micros == credits(5)


def test_limit_set_mid_day_counts_what_was_already_spent(api, workspace):
    key = _key(workspace)
    assert api.post("/v1/test_echo", {"charge": "7"}).status_code == 200
    billing.key_limits_set(api_key=key, daily=credits(10))
    assert KeyBudget.objects.get(pk=key.pk).day_micros == credits(7)
    assert api.post("/v1/test_echo", {"charge": "4"}).json()["error"]["code"] == "key_budget_exceeded"
    assert api.post("/v1/test_echo", {"charge": "3"}).status_code == 200


def test_other_keys_and_insufficient_credits_unchanged(api, workspace, make_api):
    key = _key(workspace)
    billing.key_limits_set(api_key=key, daily=credits(1000))
    r = api.post("/v1/test_echo", {"charge": "301"})
    assert r.json()["error"]["code"] == "insufficient_credits"
    assert KeyBudget.objects.get(pk=key.pk).day_micros == 0  # the refused hold was not counted
    billing.key_limits_set(api_key=key, daily=credits(1))
    assert api.post("/v1/test_echo", {"charge": "2"}).json()["error"]["code"] == "key_budget_exceeded"


def test_free_calls_pass_an_exhausted_budget(api, workspace):
    billing.key_limits_set(api_key=_key(workspace), daily=0)
    assert api.post("/v1/test_echo", {}).status_code == 200
    assert api.post("/v1/test_echo", {"charge": "0.000001"}).json()["error"]["code"] == "key_budget_exceeded"


def test_key_limits_command(workspace):
    key = _key(workspace)
    out = StringIO()
    call_command("key_limits", str(key.pk), "--daily", "12.5", "--monthly", "100", stdout=out)
    data = json.loads(out.getvalue())
    assert data["key_id"] == str(key.pk) and data["daily_limit"] == "12.5" and data["monthly_limit"] == "100"
    assert data["limits"]["day"]["remaining"] == "12.5"
    out = StringIO()
    call_command("key_limits", str(key.pk), "--daily", "none", stdout=out)
    data = json.loads(out.getvalue())
    assert data["daily_limit"] is None and data["monthly_limit"] == "100" and data["limits"]["day"] is None


def test_ledger_equals_balance_after_budget_refusals(api, workspace):
    billing.key_limits_set(api_key=_key(workspace), daily=credits(3))
    for _ in range(5):
        api.post("/v1/test_echo", {"charge": "1"})
    account = CreditAccount.objects.get(pk=workspace.pk)
    assert LedgerEntry.objects.filter(account=account).aggregate(s=Sum("amount_micros"))["s"] == account.balance_micros
    assert account.balance_micros == credits(297)


@pytest.mark.django_db(transaction=True)
def test_100_threads_against_a_small_limit_never_overspend(workspace, settings):
    """Real threads race `execute` (PostgreSQL: 40 concurrent transactions on one budget row and one account)."""
    from django.db import connections

    from tests.billing.test_race import _race

    settings.RATE_LIMIT_PER_MINUTE = 10_000
    key = _key(workspace)
    billing.key_limits_set(api_key=key, daily=credits(100), monthly=credits(1000))
    results = _race(key.pk, {"hold": "5", "charge": "3"}, 100)
    ok = [r for r in results if r.status == 200]
    refused = [r for r in results if r.status != 200]
    assert all(r.data["error"]["code"] == "key_budget_exceeded" for r in refused)
    budget = KeyBudget.objects.get(pk=key.pk)
    assert budget.day_micros == budget.month_micros == credits(3) * len(ok) <= credits(100)
    assert len(ok) >= 20  # at least 100 / 5 holds fit at once
    failed = RequestRecord.objects.filter(api_key=key, status="failed")
    assert failed.count() == len(refused) and not failed.exclude(credits_charged_micros=0).exists()
    account = CreditAccount.objects.get(pk=workspace.pk)
    assert account.reserved_micros == 0 and account.balance_micros == credits(300) - credits(3) * len(ok)
    assert LedgerEntry.objects.filter(account=account).aggregate(s=Sum("amount_micros"))["s"] == account.balance_micros
    connections.close_all()


def test_usage_shows_the_calling_key_and_spend_by_key(api, workspace, make_api):
    key = _key(workspace)
    with time_machine.travel(datetime(2026, 7, 15, 8, 0, tzinfo=UTC), tick=False):
        billing.key_limits_set(api_key=key, daily=credits(10), monthly=credits(100))
        assert api.post("/v1/test_echo", {"hold": "5", "charge": "2.5"}).status_code == 200
        body = api.get("/v1/usage").json()
    assert body["key"] == {"key_id": str(key.pk), "name": key.name, "limits": {
        "day": {"limit": "10", "spent": "2.5", "remaining": "7.5", "resets_at": "2026-07-16T00:00:00Z"},
        "month": {"limit": "100", "spent": "2.5", "remaining": "97.5", "resets_at": "2026-08-01T00:00:00Z"}}}
    assert body["by_key"] == [{"key_id": str(key.pk), "name": key.name, "kind": "api_key", "calls": 1,
                               "credits_charged": "2.5"}]


def test_warning_at_80_percent_and_exceeded_once_per_period_with_email(api, workspace, owner, settings,
                                                                     django_capture_on_commit_callbacks, monkeypatch,
                                                                     mailoutbox):
    from webhooks import services as webhooks
    from webhooks.models import WebhookEvent

    settings.WEBHOOKS_ALLOW_PRIVATE_NETWORKS = True
    settings.BASE_URL = "http://svc.example"
    monkeypatch.setattr(webhooks, "_enqueue", lambda ids: None)  # (delivery is the webhooks tests' business)
    webhooks.endpoint_create(workspace=workspace, url="http://127.0.0.1:9/hooks", events=["*"])
    key = _key(workspace)

    def post(charge):
        with django_capture_on_commit_callbacks(execute=True):
            return api.post("/v1/test_echo", {"charge": charge})

    with time_machine.travel(datetime(2026, 7, 15, 8, 0, tzinfo=UTC), tick=False) as clock:
        billing.key_limits_set(api_key=key, daily=credits(10))
        post("7")
        assert not WebhookEvent.objects.filter(type__startswith="key.").exists()
        post("1")  # 8 of 10: the warning
        post("1")  # no second warning
        assert post("5").status_code == 402  # refused: exceeded
        assert post("5").status_code == 402  # once per period
        events = list(WebhookEvent.objects.filter(type__startswith="key.").order_by("created_at"))
        assert [e.type for e in events] == ["key.budget_warning", "key.budget_exceeded"]
        assert events[0].data["period"] == "day" and events[0].data["spent"] == "8"
        assert events[0].data["limits_url"] == f"http://svc.example/console/keys/?limits={key.pk}#limits-{key.pk}"
        assert len(mailoutbox) == 1 and "80%" in mailoutbox[0].subject and mailoutbox[0].to == [owner.email]
        assert f"http://svc.example/console/keys/?limits={key.pk}#limits-{key.pk}" in mailoutbox[0].body
        clock.move_to(datetime(2026, 7, 16, 0, 0, 1, tzinfo=UTC))  # a new day: alerts re-arm
        post("10")  # straight to 100%: warning and exceeded
        assert WebhookEvent.objects.filter(type__startswith="key.").count() == 4


def test_balance_low_fires_at_the_charge_that_crosses_it_not_at_a_tick(api, workspace, settings, monkeypatch,
                                                                       django_capture_on_commit_callbacks):
    from webhooks import services as webhooks
    from webhooks.models import WebhookEvent

    settings.WEBHOOKS_ALLOW_PRIVATE_NETWORKS = True
    monkeypatch.setattr(webhooks, "_enqueue", lambda ids: None)
    webhooks.endpoint_create(workspace=workspace, url="http://127.0.0.1:9/hooks", events=["balance.low"])
    webhooks.balance_threshold_set(workspace=workspace, threshold=credits(100))

    def post(body):
        with django_capture_on_commit_callbacks(execute=True):
            return api.post("/v1/test_echo", body)

    assert post({"charge": "150"}).status_code == 200  # 150 left: above
    assert not WebhookEvent.objects.filter(type="balance.low").exists()
    assert post({"hold": "100", "charge": "60"}).status_code == 200  # 90 left: this charge crosses it
    (event,) = WebhookEvent.objects.filter(type="balance.low")
    assert event.data == {"credits_balance": "90", "credits_reserved": "0", "credits_available": "90",
                          "threshold": "100"}
    post({"charge": "1"})
    assert webhooks.balances_check() == 0  # once: neither the next charge nor the tick fires it again
    assert WebhookEvent.objects.filter(type="balance.low").count() == 1
    billing.credits_grant(workspace=workspace, amount=credits(50))  # 139 available: re-armed by the grant itself
    assert CreditAccount.objects.get(pk=workspace.pk).low_balance_fired_at is None
    assert post({"charge": "40"}).status_code == 200  # 99: below again, fires again at this charge
    assert WebhookEvent.objects.filter(type="balance.low").count() == 2


def test_an_oauth_connection_has_its_own_budget_and_row_in_by_key(api, workspace, owner):
    """An OAuth connection's principal is a key without a secret: its budget and spend are its own."""
    from accounts.models import OAuthClient, OAuthGrant
    from api.pipeline import execute
    from core.ids import new_id
    from core.verbs import Context
    from tests import testverbs

    client = OAuthClient.objects.create(client_id="c1", kind="registered", client_name="Agent Desk",
                                        redirect_uris=["http://127.0.0.1/cb"])
    principal = ApiKey.objects.create(workspace=workspace, name="MCP: Agent Desk", prefix="oauth_x1",
                                      hashed_secret="-", last4="", scopes=[])
    OAuthGrant.objects.create(workspace=workspace, user=owner, client=client, client_name="Agent Desk",
                              redirect_uri="http://127.0.0.1/cb", api_key=principal)
    billing.key_limits_set(api_key=principal, daily=credits(2))

    def call(charge):
        ctx = Context(workspace=workspace, api_key=principal, request_id=new_id("req_"), channel="mcp")
        return execute(testverbs.echo, ctx=ctx, raw={"charge": charge})

    assert call("1.5").status == 200
    refused = call("1")
    assert refused.status == 402 and refused.data["error"]["code"] == "key_budget_exceeded"
    assert api.post("/v1/test_echo", {"charge": "1"}).status_code == 200  # the workspace's own key: no limit
    by_key = {row["key_id"]: row for row in api.get("/v1/usage").json()["by_key"]}
    assert by_key[str(principal.pk)] == {"key_id": str(principal.pk), "name": "Agent Desk",
                                         "kind": "oauth_connection", "calls": 2, "credits_charged": "1.5"}
    assert by_key[str(ApiKey.objects.get(workspace=workspace, oauth_grant__isnull=True).pk)]["kind"] == "api_key"

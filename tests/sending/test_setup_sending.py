from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from accounts import services as accounts
from billing.services import account_get
from sending.models import Mailbox, Operation, SendingDomain
from tests.sending.conftest import approve

BODY = {"emails_per_week": 500, "brand_hint": "Acme", "sender": {"first_name": "Ann", "last_name": "Lee"}}


def _available(ws) -> int:
    return account_get(workspace=ws).available_micros


def quote(api, body=BODY):
    r = api.post("/v1/setup_sending", body)
    assert r.status_code == 200, r.content
    return r.json()


def buy(api, token, body=BODY, key="k-1"):
    return api.post("/v1/setup_sending", {**body, "confirmation_token": token}, headers={"Idempotency-Key": key})


@pytest.mark.parametrize(("epw", "mailboxes", "domains", "setup", "upkeep"), [
    (50, 1, 1, "1500", "750"),
    (125, 1, 1, "1500", "750"),
    (126, 2, 1, "1500", "1500"),
    (625, 5, 1, "1500", "3750"),
    (626, 6, 2, "3000", "4500"),
    (50000, 400, 80, "120000", "300000"),
])
def test_quote_sizing_is_free(api, workspace, epw, mailboxes, domains, setup, upkeep):
    before = _available(workspace)
    data = quote(api, {"emails_per_week": epw})
    q = data["result"]["quote"]
    assert data["result"]["status"] == "quote"
    assert (q["mailboxes"], q["domains"], q["setup_credits"], q["upkeep_credits_per_month"]) == (mailboxes, domains, setup, upkeep)
    assert q["renewal_cadence"] == "monthly"
    assert q["ready_estimate"]
    assert data["result"]["confirmation_token"].startswith("ct_")
    assert data["result"]["approval_url"].endswith("/")
    assert "/console/approvals/" in data["result"]["approval_url"]
    assert data["service"]["credits_charged"] == "0"
    assert _available(workspace) == before


def test_quote_token_lasts_15_minutes_and_carries_a_summary(api):
    with time_machine.travel("2026-03-01T10:00:00Z", tick=False):
        data = quote(api)["result"]
        assert data["quote"]["quote_expires_at"] == "2026-03-01T10:15:00Z"
        assert data["confirmation_expires_at"] == "2026-03-01T10:15:00Z"
    token = accounts.token_lookup(plaintext=data["confirmation_token"])
    assert token.summary["Mailboxes"] == 4
    assert token.summary["Charged on purchase (setup + first month)"] == "4500"


@pytest.mark.parametrize("body", [
    {"emails_per_week": 49}, {"emails_per_week": 50001}, {"emails_per_week": "500"}, {"emails_per_week": 500.5},
    {"emails_per_week": True}, {}, {"emails_per_week": 500, "extra": 1}, {"emails_per_week": 500, "sender": "Ann"},
    {"emails_per_week": 500, "brand_hint": 7}, {"emails_per_week": 500, "sender": {"first_name": "A", "x": 1}},
])
def test_bad_bodies_are_400(api, body):
    r = api.post("/v1/setup_sending", body)
    assert r.status_code == 400
    assert r.json()["error"]["code"] == "invalid_request"


def test_limits_edges_accepted(api):
    for epw in (50, 50000):
        assert api.post("/v1/setup_sending", {"emails_per_week": epw}).status_code == 200


def test_scope_required_for_quote_and_purchase(make_api):
    api, ws, _ = make_api(scopes=["campaign:write", "campaign:launch"])
    r = api.post("/v1/setup_sending", BODY)
    assert r.status_code == 403
    assert r.json()["error"]["code"] == "insufficient_scope"
    assert r.json()["error"]["details"] == {"required_scope": "assets:purchase"}


def test_full_purchase_flow(rich_api, rich):
    ws, owner, _ = rich
    before = _available(ws)
    token = quote(rich_api)["result"]["confirmation_token"]
    # not approved yet
    r = buy(rich_api, token, key="pending-1")
    assert r.status_code == 409 and r.json()["error"]["code"] == "confirmation_pending"
    assert _available(ws) == before
    approve(token, owner)
    r = buy(rich_api, token)
    assert r.status_code == 200, r.content
    data = r.json()
    res = data["result"]
    assert res["status"] == "purchased"
    assert res["operation_id"].startswith("op_")
    assert res["domains"] == ["getacme.com"]
    assert res["mailboxes"] == ["ann@getacme.com", "ann.lee@getacme.com", "a.lee@getacme.com", "annlee@getacme.com"]
    assert data["service"]["credits_charged"] == "4500"
    assert _available(ws) == before - 4500 * 10**6
    assert data["service"]["credits_available"] == str((before - 4500 * 10**6) // 10**6)
    op = Operation.objects.get(pk=res["operation_id"])
    assert op.status == "queued" and op.charged_micros == 4500 * 10**6 and op.workspace == ws
    assert Mailbox.objects.filter(workspace=ws, status="provisioning").count() == 4
    assert SendingDomain.objects.get(name="getacme.com").workspace == ws

    # replay: same key and body -> byte-identical, nothing charged again
    again = buy(rich_api, token)
    assert again.status_code == 200 and again.content == r.content
    assert again.headers["Idempotent-Replayed"] == "true"
    assert _available(ws) == before - 4500 * 10**6
    # a new key with the used token
    used = buy(rich_api, token, key="k-2")
    assert used.status_code == 409 and used.json()["error"]["code"] == "confirmation_used"
    assert _available(ws) == before - 4500 * 10**6
    assert Operation.objects.filter(workspace=ws).count() == 1


def test_purchase_needs_idempotency_key(rich_api, rich):
    token = quote(rich_api)["result"]["confirmation_token"]
    approve(token, rich[1])
    r = rich_api.post("/v1/setup_sending", {**BODY, "confirmation_token": token})
    assert r.status_code == 428 and r.json()["error"]["code"] == "idempotency_key_required"


@pytest.mark.parametrize("change", [
    {"emails_per_week": 501}, {"brand_hint": "Other"}, {"sender": {"first_name": "Bob", "last_name": "Lee"}},
    {"sender": None},
])
def test_changed_parameters_are_confirmation_invalid(rich_api, rich, change):
    ws, owner, _ = rich
    token = quote(rich_api)["result"]["confirmation_token"]
    approve(token, owner)
    before = _available(ws)
    r = buy(rich_api, token, body={**BODY, **change})
    assert r.status_code == 400 and r.json()["error"]["code"] == "confirmation_invalid"
    assert _available(ws) == before
    # the token is still good for the approved parameters
    assert buy(rich_api, token, key="k-ok").status_code == 200


def test_absent_and_null_optionals_are_the_same_call(rich_api, rich):
    token = quote(rich_api, {"emails_per_week": 100})["result"]["confirmation_token"]
    approve(token, rich[1])
    r = buy(rich_api, token, body={"emails_per_week": 100, "brand_hint": None, "sender": None})
    assert r.status_code == 200, r.content


def test_unknown_and_foreign_tokens_are_invalid(rich_api, make_api):
    other_api, other_ws, other_owner = make_api()
    foreign = quote(other_api)["result"]["confirmation_token"]
    approve(foreign, other_owner)
    for tok in (foreign, "ct_nope", "garbage"):
        r = buy(rich_api, tok, key=f"k-{tok}")
        assert r.status_code == 400 and r.json()["error"]["code"] == "confirmation_invalid"


def test_denied_token(rich_api, rich):
    token = quote(rich_api)["result"]["confirmation_token"]
    accounts.token_deny(token=accounts.token_lookup(plaintext=token), user=rich[1])
    r = buy(rich_api, token)
    assert r.status_code == 403 and r.json()["error"]["code"] == "confirmation_denied"


def test_expired_token(rich_api, rich):
    ws, owner, _ = rich
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        token = quote(rich_api)["result"]["confirmation_token"]
        approve(token, owner)
        traveller.shift(timedelta(minutes=14, seconds=59))
        assert buy(rich_api, token, key="in-time").status_code == 200


def test_expired_token_after_15_minutes(rich_api, rich):
    ws, owner, _ = rich
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        token = quote(rich_api)["result"]["confirmation_token"]
        approve(token, owner)
        traveller.shift(timedelta(minutes=15))
        before = _available(ws)
        r = buy(rich_api, token)
        assert r.status_code == 410 and r.json()["error"]["code"] == "confirmation_expired"
        assert _available(ws) == before


def test_insufficient_credits_charges_nothing(api, workspace, owner):
    token = quote(api)["result"]["confirmation_token"]  # 4500 > 300 signup credits
    approve(token, owner)
    r = buy(api, token)
    assert r.status_code == 402 and r.json()["error"]["code"] == "insufficient_credits"
    assert _available(workspace) == 300 * 10**6
    assert Operation.objects.count() == 0
    assert accounts.token_lookup(plaintext=token).status == "approved"  # still usable after a top-up


def test_exactly_affordable_purchase(make_api):
    from billing.services import credits_grant
    from core.money import credits

    api, ws, owner = make_api()
    credits_grant(workspace=ws, amount=credits("2250") - credits("300"), memo="t")  # balance exactly 2250
    token = quote(api, {"emails_per_week": 125})["result"]["confirmation_token"]
    approve(token, owner)
    r = buy(api, token, body={"emails_per_week": 125})
    assert r.status_code == 200 and r.json()["service"]["credits_charged"] == "2250"
    assert r.json()["service"]["credits_available"] == "0"


def test_domains_avoid_taken_names_and_default_sender(rich_api, rich, make_api):
    SendingDomain.objects.create(workspace=rich[0], name="getacme.com")
    token = quote(rich_api, {"emails_per_week": 700, "brand_hint": "Acme!"})["result"]["confirmation_token"]
    approve(token, rich[1])
    res = buy(rich_api, token, body={"emails_per_week": 700, "brand_hint": "Acme!"}).json()["result"]
    assert res["domains"] == ["tryacme.com", "acmehq.com"]
    assert len(res["mailboxes"]) == 6
    assert res["mailboxes"][0] == "hello@tryacme.com"


def test_purchase_and_charge_commit_together(rich_api, rich, monkeypatch):
    """The charge is captured inside the purchase transaction: if creating the purchase fails, nothing is charged
    and the token stays usable; if it succeeds, the ledger already holds the charge."""
    from billing.models import LedgerEntry

    ws, owner, _ = rich
    token = quote(rich_api)["result"]["confirmation_token"]
    approve(token, owner)
    before = _available(ws)
    real_create = Operation.objects.create

    def boom(**kw):
        raise RuntimeError("database went away")

    monkeypatch.setattr(Operation.objects, "create", boom)
    r = buy(rich_api, token, key="crash")
    assert r.status_code == 500 and r.json()["error"]["code"] == "internal"
    assert _available(ws) == before
    assert accounts.token_lookup(plaintext=token).status == "approved"
    monkeypatch.setattr(Operation.objects, "create", real_create)
    r = buy(rich_api, token, key="crash")  # internal errors are not stored: the same key executes again
    assert r.status_code == 200
    entry = LedgerEntry.objects.get(kind="charge", request_id=r.json()["service"]["request_id"])
    assert entry.amount_micros == -4500 * 10**6 and entry.memo.startswith("setup_sending op_")
    assert _available(ws) == before - 4500 * 10**6

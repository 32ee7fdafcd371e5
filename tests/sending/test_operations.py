from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from billing.models import LedgerEntry
from billing.services import account_get
from sending import services, tasks
from sending.models import Mailbox, Operation
from sending.selectors import mailboxes_active
from tests.sending.conftest import approve
from tests.sending.fakes import ScriptedProvider

BODY = {"emails_per_week": 700, "brand_hint": "Acme", "sender": {"first_name": "Ann", "last_name": "Lee"}}
# 6 mailboxes on 2 domains: getacme.com (5) and tryacme.com (1); 3000 setup + 4500 first month = 7500


@pytest.fixture
def scripted(settings):
    ScriptedProvider.reset()
    settings.SENDING_PROVIDER = "tests.sending.fakes.ScriptedProvider"
    return ScriptedProvider


def purchase(api, owner, body=BODY, key="k"):
    token = api.post("/v1/setup_sending", body).json()["result"]["confirmation_token"]
    approve(token, owner)
    r = api.post("/v1/setup_sending", {**body, "confirmation_token": token}, headers={"Idempotency-Key": key})
    assert r.status_code == 200, r.content
    return r.json()["result"]["operation_id"]


def poll(api, op_id):
    r = api.get(f"/v1/operations/{op_id}")
    return r


def run_until_final(op_id, traveller, max_steps=20):
    seen = []
    for _ in range(max_steps):
        status = tasks.operation_advance(op_id)
        if not seen or seen[-1] != status:
            seen.append(status)
        if status in Operation.FINAL:
            return seen
        traveller.shift(timedelta(seconds=2))
    raise AssertionError(seen)


def test_sandbox_operation_moves_through_states_in_order(rich_api, rich, settings):
    settings.SANDBOX_PROVISION_SECONDS = 2
    ws, owner, _ = rich
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        op_id = purchase(rich_api, owner)
        first = poll(rich_api, op_id)
        assert first.status_code == 200
        body = first.json()
        assert set(body) >= {"operation_id", "kind", "status", "request_id", "created_at", "updated_at"}
        assert "service" not in body
        assert (body["operation_id"], body["kind"], body["status"]) == (op_id, "setup_sending", "queued")
        statuses = ["queued"]
        for _ in range(10):
            tasks.operation_advance(op_id)
            tasks.operation_advance(op_id)  # a duplicate delivery changes nothing
            status = poll(rich_api, op_id).json()["status"]
            if status != statuses[-1]:
                statuses.append(status)
            # not yet due: each state lasts SANDBOX_PROVISION_SECONDS
            traveller.shift(timedelta(seconds=1.99))
            assert tasks.operation_advance(op_id) == status
            traveller.shift(timedelta(seconds=0.01))
            if status == "succeeded":
                break
    assert statuses == ["queued", "running", "waiting_external", "succeeded"]
    final = poll(rich_api, op_id).json()
    assert final["result"]["credits_refunded"] == "0"
    assert [d["status"] for d in final["result"]["domains"]] == ["active", "active"]
    for d in final["result"]["domains"]:  # a DKIM key per domain, its record ready to publish
        assert d["dns_records"][0]["name"].endswith(f"._domainkey.{d['name']}")
        assert d["dns_records"][0]["value"].startswith("v=DKIM1; k=rsa; p=")
    assert "error" not in final
    active = list(mailboxes_active(workspace=ws))
    assert len(active) == 6
    assert all(m.renews_at == m.activated_at + timedelta(days=30) or m.renews_at > m.activated_at for m in active)
    assert {m.provider for m in active} == {"sandbox"}


def test_sweep_advances_due_operations(rich_api, rich):
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        op_id = purchase(rich_api, rich[1])
        assert tasks.operations_sweep() == 1
        assert Operation.objects.get(pk=op_id).status == "running"
        assert tasks.operations_sweep() == 0  # not due yet
        traveller.shift(timedelta(seconds=10))
        tasks.operations_sweep()
        assert Operation.objects.get(pk=op_id).status == "waiting_external"


def test_another_workspaces_operation_is_404(rich_api, rich, make_api):
    op_id = purchase(rich_api, rich[1])
    other, _, _ = make_api()
    for path in (f"/v1/operations/{op_id}", "/v1/operations/op_doesnotexist"):
        r = other.get(path)
        assert r.status_code == 404
        assert r.json()["error"]["code"] == "not_found"


def test_partial_failure_refunds_what_was_not_delivered(rich_api, rich, scripted):
    ws, owner, _ = rich
    scripted.script["tryacme.com"] = ["fail"]  # the 1-mailbox domain: 1500 + 750
    scripted.script["ann.lee@getacme.com"] = ["fail"]  # one mailbox: 750
    scripted.status_script["ref-a.lee@getacme.com"] = ["pending", "failed"]  # fails later: 750
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        op_id = purchase(rich_api, owner)
        after_purchase = account_get(workspace=ws).available_micros
        seen = run_until_final(op_id, traveller)
    assert seen == ["running", "waiting_external", "partially_succeeded"]
    op = Operation.objects.get(pk=op_id)
    assert op.refunded_micros == 3750 * 10**6
    assert account_get(workspace=ws).available_micros == after_purchase + 3750 * 10**6
    refund = LedgerEntry.objects.get(kind="refund", external_ref=f"refund:{op_id}")
    assert refund.amount_micros == 3750 * 10**6
    body = rich_api.get(f"/v1/operations/{op_id}").json()
    assert body["status"] == "partially_succeeded"
    assert body["result"]["credits_refunded"] == "3750"
    assert body["error"]["code"] == "provisioning_incomplete"
    assert Mailbox.objects.filter(operation_id=op_id, status="active").count() == 3
    # running the task again refunds nothing more
    assert tasks.operation_advance(op_id) == "partially_succeeded"
    assert LedgerEntry.objects.filter(kind="refund", external_ref=f"refund:{op_id}").count() == 1


def test_total_failure_refunds_everything(rich_api, rich, scripted):
    ws, owner, _ = rich
    scripted.script["getacme.com"] = ["fail"]
    scripted.script["tryacme.com"] = ["fail"]
    before = account_get(workspace=ws).available_micros
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        op_id = purchase(rich_api, owner)
        assert account_get(workspace=ws).available_micros == before - 7500 * 10**6
        assert run_until_final(op_id, traveller)[-1] == "failed"
    assert account_get(workspace=ws).available_micros == before
    assert rich_api.get(f"/v1/operations/{op_id}").json()["error"]["code"] == "provisioning_failed"


def test_transient_errors_are_retried(rich_api, rich, scripted):
    scripted.script["getacme.com"] = ["transient", "transient", "ok"]
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        op_id = purchase(rich_api, rich[1])
        assert run_until_final(op_id, traveller)[-1] == "succeeded"
    assert [c for c in scripted.calls if c == ("order", "getacme.com")] == [("order", "getacme.com")] * 3


def test_unknown_outcome_is_502_and_read_back_not_reexecuted(rich_api, rich, scripted):
    scripted.script["getacme.com"] = ["unknown", "ok"]
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        op_id = purchase(rich_api, rich[1])
        tasks.operation_advance(op_id)  # -> running
        traveller.shift(timedelta(seconds=5))
        tasks.operation_advance(op_id)  # the order's answer is lost
        r = rich_api.get(f"/v1/operations/{op_id}")
        assert r.status_code == 502
        err = r.json()["error"]
        assert err["code"] == "operation_unknown_state"
        assert err["details"]["operation_id"] == op_id
        assert err["details"]["request_id"]
        assert r.headers["X-Request-Id"] == err["request_id"]
        traveller.shift(timedelta(seconds=5))
        tasks.operation_advance(op_id)  # read back: it exists, so it is not ordered again
        assert rich_api.get(f"/v1/operations/{op_id}").status_code == 200
        assert run_until_final(op_id, traveller)[-1] == "succeeded"
    assert scripted.calls.count(("order", "getacme.com")) == 1
    assert ("lookup", "getacme.com") in scripted.calls


def test_unknown_outcome_that_never_reached_the_vendor_is_ordered_after_lookup(rich_api, rich, scripted):
    scripted.script["ann@getacme.com"] = ["unknown-lost", "ok"]
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        op_id = purchase(rich_api, rich[1])
        assert run_until_final(op_id, traveller)[-1] == "succeeded"
    calls = [c for c in scripted.calls if c[1] == "ann@getacme.com"]
    assert calls == [("order", "ann@getacme.com"), ("lookup", "ann@getacme.com"), ("order", "ann@getacme.com")]


def test_advance_of_unknown_id_is_harmless(db):
    assert services.operation_advance(operation_id="op_missing") is None


def test_mailboxes_are_ordered_only_once_their_domain_is_active(rich_api, rich, scripted):
    scripted.status_script["ref-getacme.com"] = ["pending", "pending", "active"]
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        op_id = purchase(rich_api, rich[1])
        seen = run_until_final(op_id, traveller)
    assert seen == ["running", "waiting_external", "succeeded"]
    orders = [key for kind, key in scripted.calls if kind == "order"]
    # tryacme.com went active at the first poll, so its mailbox was ordered before getacme.com's five
    assert orders[:2] == ["getacme.com", "tryacme.com"]
    assert orders[2:] == ["ann@tryacme.com", "a.lee@getacme.com", "ann.l@getacme.com", "ann.lee@getacme.com",
                          "ann@getacme.com", "annlee@getacme.com"]


def test_live_items_stuck_past_the_deadline_fail_and_are_refunded(rich_api, rich, scripted, settings):
    settings.SANDBOX = False
    ws = rich[0]
    scripted.status_script["ref-tryacme.com"] = ["pending"]  # never goes live
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        op_id = purchase(rich_api, rich[1])
        after = account_get(workspace=ws).available_micros
        for _ in range(3):
            tasks.operation_advance(op_id)
            traveller.shift(timedelta(minutes=6))
        assert Operation.objects.get(pk=op_id).status == "waiting_external"
        traveller.shift(services.WAITING_DEADLINE)
        tasks.operation_advance(op_id)
        traveller.shift(timedelta(minutes=6))
        assert tasks.operation_advance(op_id) == "partially_succeeded"
    assert account_get(workspace=ws).available_micros == after + 2250 * 10**6  # 1500 domain + 750 mailbox


@pytest.mark.parametrize("vendor_answer", ["active", "failed"])
def test_mailbox_removed_while_its_vendor_state_is_read_is_not_resurrected(rich_api, rich, scripted, monkeypatch,
                                                                      vendor_answer):
    """The owner removes a mailbox (committed) after the poll selected it and while it asks the vendor. A
    delivered mailbox must not be resurrected by the poll's write (active, then renewed and charged every
    month): it stays removed, not refunded (it was delivered), deleted at the vendor after the grace period.
    One the vendor failed to deliver was never had: it is a failure and refunded, removed or not."""
    from sending import byo

    ws, owner, _ = rich
    removed = {}
    real_status = ScriptedProvider.mailbox_status

    def removed_meanwhile(self, *, ref):
        if not removed:
            m = Mailbox.objects.get(vendor_ref=ref)
            byo.mailbox_remove(mailbox=m)  # what the console's "Remove" commits between the poll's read and write
            removed["id"] = m.id
            scripted.status_script[ref] = [vendor_answer]
        return real_status(self, ref=ref)

    monkeypatch.setattr(ScriptedProvider, "mailbox_status", removed_meanwhile)
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        op_id = purchase(rich_api, owner)
        after_purchase = account_get(workspace=ws).available_micros
        final = run_until_final(op_id, traveller)[-1]
        m = Mailbox.objects.get(pk=removed["id"])
        status = "removed" if vendor_answer == "active" else "failed"
        assert (m.status, m.renews_at, m.activated_at, m.secret_encrypted) == (status, None, None, "")
        assert Mailbox.objects.filter(operation_id=op_id, status="active").count() == 5
        op = Operation.objects.get(pk=op_id)
        if vendor_answer == "active":
            assert final == "succeeded" and op.refunded_micros == 0
        else:  # not delivered: the month paid with the purchase comes back
            assert final == "partially_succeeded" and op.refunded_micros == 750 * 10**6
            assert account_get(workspace=ws).available_micros == after_purchase + 750 * 10**6
        assert {x["status"] for x in op.result["mailboxes"] if x["mailbox_id"] == m.id} == {status}
        traveller.shift(timedelta(days=40))
        tasks.upkeep_sweep()
    assert not LedgerEntry.objects.filter(external_ref__startswith=f"upkeep:{m.id}:").exists()
    assert LedgerEntry.objects.filter(external_ref__startswith="upkeep:").count() == 5  # the delivered five
    refund = 0 if vendor_answer == "active" else 750 * 10**6
    assert account_get(workspace=ws).available_micros == after_purchase + refund - 5 * 750 * 10**6
    m.refresh_from_db()
    if vendor_answer == "active":
        assert m.status == "removed" and m.vendor_deleted_at is not None  # deleted at the vendor after the grace

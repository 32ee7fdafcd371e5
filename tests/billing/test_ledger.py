import pytest
from django.db import IntegrityError, transaction
from django.db.models import Sum

from billing import services
from billing.models import AppendOnly, CreditAccount, Hold, LedgerEntry


def test_signup_grant_is_a_ledger_entry(workspace):
    entry = LedgerEntry.objects.get(account_id=workspace.pk)
    assert entry.kind == "signup_grant" and entry.amount_micros == 300_000_000 and entry.balance_after_micros == 300_000_000


def test_ledger_is_append_only(workspace):
    entry = LedgerEntry.objects.get(account_id=workspace.pk)
    entry.memo = "tampered"
    with pytest.raises(AppendOnly):
        entry.save()
    with pytest.raises(AppendOnly):
        entry.delete()


def test_account_cannot_be_deleted_while_it_has_entries(workspace):
    from django.db.models import ProtectedError

    with pytest.raises(ProtectedError):
        CreditAccount.objects.get(pk=workspace.pk).delete()


def test_database_refuses_negative_available(workspace):
    with pytest.raises(IntegrityError), transaction.atomic():
        CreditAccount.objects.filter(pk=workspace.pk).update(reserved_micros=300_000_001)


def test_hold_resolves_once(workspace):
    hold = services.hold_place(workspace=workspace, amount=5_000_000)
    assert services.hold_settle(hold=hold, charge=2_000_000) == 2_000_000
    assert services.hold_settle(hold=hold, charge=5_000_000) == 2_000_000
    services.hold_release(hold=hold)
    acc = CreditAccount.objects.get(pk=workspace.pk)
    assert (acc.balance_micros, acc.reserved_micros) == (298_000_000, 0)
    assert LedgerEntry.objects.filter(kind="charge").count() == 1


def test_charge_above_hold_is_capped_at_available(workspace):
    hold = services.hold_place(workspace=workspace, amount=100_000_000)
    other = services.hold_place(workspace=workspace, amount=150_000_000)
    # 50 available beyond both holds: a charge of 500 takes the hold (100) plus the 50, never more.
    assert services.hold_settle(hold=hold, charge=500_000_000) == 150_000_000
    acc = CreditAccount.objects.get(pk=workspace.pk)
    assert acc.balance_micros == 150_000_000 and acc.reserved_micros == 150_000_000 and acc.available_micros == 0
    services.hold_release(hold=other)


def test_expired_holds_are_released(workspace, settings):
    import time_machine
    from django.utils import timezone

    settings.HOLD_TTL_SECONDS = 60
    hold = services.hold_place(workspace=workspace, amount=10_000_000)
    assert services.holds_release_expired() == 0
    with time_machine.travel(timezone.now() + timezone.timedelta(seconds=61)):
        assert services.holds_release_expired() == 1
    hold.refresh_from_db()
    assert hold.status == Hold.Status.RELEASED
    assert CreditAccount.objects.get(pk=workspace.pk).reserved_micros == 0


def test_the_sweep_closes_the_records_of_requests_that_never_settled(workspace, settings):
    import time_machine
    from django.utils import timezone

    from billing.models import RequestRecord

    settings.HOLD_TTL_SECONDS = 60
    crashed = services.request_open_with_hold(request_id="req_crashed", workspace=workspace, verb="llm.chat",
                                              amount=10_000_000)
    settled = services.request_open_with_hold(request_id="req_settled", workspace=workspace, verb="llm.chat",
                                              amount=10_000_000)
    services.hold_settle_close(hold=settled, charge=4_000_000, workspace=workspace, request_id="req_settled",
                               status="succeeded", http_status=200, verb="llm.chat")
    # A hold whose record was already closed (a settlement that failed after closing it, say) keeps its record.
    closed = services.request_open_with_hold(request_id="req_closed", workspace=workspace, verb="llm.chat",
                                             amount=10_000_000)
    RequestRecord.objects.filter(pk="req_closed").update(status="interrupted", http_status=499)
    with time_machine.travel(timezone.now() + timezone.timedelta(seconds=61)):
        assert services.holds_release_expired() == 2
    record = RequestRecord.objects.get(pk="req_crashed")
    assert (record.status, record.http_status, record.credits_charged_micros) == ("failed", None, 0)
    assert record.error["code"] == "internal" and record.completed_at is not None
    assert RequestRecord.objects.get(pk="req_settled").status == "succeeded"
    assert RequestRecord.objects.get(pk="req_closed").status == "interrupted"
    crashed.refresh_from_db()
    closed.refresh_from_db()
    assert crashed.status == closed.status == Hold.Status.RELEASED
    acc = CreditAccount.objects.get(pk=workspace.pk)
    assert (acc.balance_micros, acc.reserved_micros) == (296_000_000, 0)


def test_grant_with_external_ref_happens_once(workspace):
    assert services.credits_grant(workspace=workspace, amount=1_000_000, kind="topup", external_ref="evt_1")
    assert services.credits_grant(workspace=workspace, amount=1_000_000, kind="topup", external_ref="evt_1") is None
    assert CreditAccount.objects.get(pk=workspace.pk).balance_micros == 301_000_000


def test_debit_needs_available_balance(workspace):
    from core import errors

    services.hold_place(workspace=workspace, amount=299_000_000)
    with pytest.raises(errors.InsufficientCredits):
        services.credits_debit(workspace=workspace, amount=2_000_000, kind="upkeep")
    services.credits_debit(workspace=workspace, amount=1_000_000, kind="upkeep")
    acc = CreditAccount.objects.get(pk=workspace.pk)
    assert acc.available_micros == 0


def test_ledger_sum_equals_cached_balance_after_mixed_activity(workspace):
    services.credits_grant(workspace=workspace, amount=5_000_000, memo="x")
    h = services.hold_place(workspace=workspace, amount=7_000_000)
    services.hold_settle(hold=h, charge=6_999_999)
    services.credits_refund(workspace=workspace, amount=1, memo="r")
    services.credits_debit(workspace=workspace, amount=3, kind="upkeep")
    acc = CreditAccount.objects.get(pk=workspace.pk)
    assert LedgerEntry.objects.filter(account=acc).aggregate(s=Sum("amount_micros"))["s"] == acc.balance_micros
    assert acc.balance_micros == 300_000_000 + 5_000_000 - 6_999_999 + 1 - 3
    last = LedgerEntry.objects.order_by("-id").first()
    assert last.balance_after_micros == acc.balance_micros


def test_hold_extend_keeps_a_working_request_from_the_sweep(workspace, settings):
    import time_machine
    from django.utils import timezone

    settings.HOLD_TTL_SECONDS = 60
    hold = services.hold_place(workspace=workspace, amount=10_000_000)
    with time_machine.travel(timezone.now() + timezone.timedelta(seconds=50)):
        assert services.hold_extend(hold=hold) is True
    with time_machine.travel(timezone.now() + timezone.timedelta(seconds=90)):
        assert services.holds_release_expired() == 0  # 90 s after placing, but extended at 50 s
    assert services.hold_settle(hold=hold, charge=4_000_000) == 4_000_000
    assert services.hold_extend(hold=hold) is False  # a resolved hold is never revived
    hold.refresh_from_db()
    assert hold.status == Hold.Status.CAPTURED

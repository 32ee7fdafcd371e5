import mailbox as maildir_lib
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage

import pytest
import time_machine

from billing.models import LedgerEntry
from billing.services import account_get, credits_debit, credits_grant
from core.money import credits
from sending import services, tasks
from sending.models import Mailbox
from sending.selectors import mailboxes_active
from sending.testing import make_active_mailbox
from sending.transport import PermanentSendError, send_message

T0 = datetime(2027, 1, 31, 10, 0, tzinfo=UTC)


def _activate_at(workspace, when, **kw):
    return make_active_mailbox(workspace, activated_at=when, renews_at=services.add_months(when, 1), renewals=1, **kw)


def _available(ws):
    return account_get(workspace=ws).available_micros


def _upkeep_entries(mbx):
    return list(LedgerEntry.objects.filter(kind="upkeep", external_ref__startswith=f"upkeep:{mbx.id}:").order_by("id"))


@pytest.mark.parametrize(("start", "months", "expected"), [
    (datetime(2027, 1, 31, tzinfo=UTC), 1, datetime(2027, 2, 28, tzinfo=UTC)),
    (datetime(2028, 1, 31, tzinfo=UTC), 1, datetime(2028, 2, 29, tzinfo=UTC)),
    (datetime(2027, 1, 31, tzinfo=UTC), 2, datetime(2027, 3, 31, tzinfo=UTC)),
    (datetime(2027, 11, 15, tzinfo=UTC), 3, datetime(2028, 2, 15, tzinfo=UTC)),
])
def test_add_months(start, months, expected):
    assert services.add_months(start, months) == expected


def test_monthly_renewal_across_month_boundaries(rich):
    ws = rich[0]
    mbx = _activate_at(ws, T0)
    with time_machine.travel(T0 + timedelta(days=28) - timedelta(seconds=1), tick=False) as t:  # Feb 28 09:59:59
        before = _available(ws)
        assert tasks.upkeep_sweep() == 0
        t.move_to(datetime(2027, 2, 28, 10, 0, tzinfo=UTC))
        assert tasks.upkeep_sweep() == 1
        assert tasks.upkeep_sweep() == 0  # safe to run twice
        assert services.mailbox_renew(mailbox_id=mbx.id) == "active"
        assert _available(ws) == before - credits("750")
        mbx.refresh_from_db()
        assert mbx.renews_at == datetime(2027, 3, 31, 10, 0, tzinfo=UTC)  # from activation, not from Feb 28
        t.move_to(datetime(2027, 3, 31, 10, 0, tzinfo=UTC))
        tasks.upkeep_sweep()
        mbx.refresh_from_db()
        assert mbx.renews_at == datetime(2027, 4, 30, 10, 0, tzinfo=UTC)
    entries = _upkeep_entries(mbx)
    assert [e.amount_micros for e in entries] == [-credits("750")] * 2
    assert _available(ws) == before - credits("1500")


def test_missed_months_are_each_charged_once(rich):
    ws = rich[0]
    mbx = _activate_at(ws, T0)
    before = _available(ws)
    with time_machine.travel(datetime(2027, 5, 1, tzinfo=UTC), tick=False):
        tasks.upkeep_sweep()
        tasks.mailbox_renew(mbx.id)
    assert len(_upkeep_entries(mbx)) == 3  # Feb 28, Mar 31, Apr 30
    assert _available(ws) == before - credits("2250")


def test_exactly_affordable_renewal(workspace):
    mbx = _activate_at(workspace, T0)
    credits_grant(workspace=workspace, amount=credits("450"), memo="t")  # 300 + 450 = 750
    with time_machine.travel(datetime(2027, 2, 28, 10, tzinfo=UTC), tick=False):
        assert services.mailbox_renew(mailbox_id=mbx.id) == "active"
    assert _available(workspace) == 0


def test_unpaid_renewal_suspends_and_emails_owner_then_topup_reactivates(workspace, owner, settings,
                                                                         django_capture_on_commit_callbacks):
    settings.EMAIL_BACKEND = "core.mail.MaildirEmailBackend"
    mbx = _activate_at(workspace, T0)
    credits_grant(workspace=workspace, amount=credits("449.999999"), memo="t")  # 1 micro-credit short of 750
    with time_machine.travel(datetime(2027, 2, 28, 10, tzinfo=UTC), tick=False):
        with django_capture_on_commit_callbacks(execute=True):
            assert services.mailbox_renew(mailbox_id=mbx.id) == "suspended"
        assert services.mailbox_renew(mailbox_id=mbx.id) == "suspended"  # no second email, no charge
    mbx.refresh_from_db()
    assert mbx.status == "suspended" and mbx.suspended_reason
    assert _upkeep_entries(mbx) == []
    assert list(mailboxes_active(workspace=workspace)) == []
    msg = EmailMessage()
    msg["To"] = "x@example.org"
    with pytest.raises(PermanentSendError):
        send_message(mailbox=mbx, message=msg)
    mails = list(maildir_lib.Maildir(str(settings.MAIL_SINK_DIR), create=False))
    assert len(mails) == 1
    assert mails[0]["To"] == owner.email
    assert "suspended" in mails[0]["Subject"]

    credits_grant(workspace=workspace, amount=credits("1"), memo="top-up")
    reactivated_at = datetime(2027, 3, 5, 12, tzinfo=UTC)
    with time_machine.travel(reactivated_at, tick=False):
        assert tasks.upkeep_sweep() == 1
    mbx.refresh_from_db()
    assert mbx.status == "active" and mbx.suspended_at is None
    assert mbx.renews_at == datetime(2027, 4, 5, 12, tzinfo=UTC)  # a new monthly cycle from reactivation
    assert len(_upkeep_entries(mbx)) == 1
    assert _available(workspace) == credits("0.999999")
    assert list(mailboxes_active(workspace=workspace)) == [mbx]


def test_concurrent_spend_cannot_make_upkeep_overdraw(workspace):
    mbx = _activate_at(workspace, T0)
    credits_debit(workspace=workspace, amount=credits("300"), kind="charge", memo="spent")
    with time_machine.travel(datetime(2027, 3, 1, tzinfo=UTC), tick=False):
        assert services.mailbox_renew(mailbox_id=mbx.id) == "suspended"
    assert _available(workspace) == 0


def test_non_active_mailboxes_are_not_charged(rich):
    ws = rich[0]
    for status in ("provisioning", "failed", "removed"):
        _activate_at(ws, T0, status=status)
    with time_machine.travel(datetime(2027, 6, 1, tzinfo=UTC), tick=False):
        assert tasks.upkeep_sweep() == 0
    assert not LedgerEntry.objects.filter(kind="upkeep").exists()
    assert Mailbox.objects.filter(status="active").count() == 0


def test_renewal_during_a_vendor_suspend_is_repaired_by_the_sweep(workspace, settings, monkeypatch):
    """Sync 1 reads `suspended` and suspends the vendor-side mailbox; meanwhile a top-up renews and reactivates
    it and sync 2 finds it active and (still) not suspended at the vendor, so does nothing. Sync 1 must record
    that the vendor mailbox is now suspended even though the status changed, or the sweep never resumes it and
    a paid, active mailbox stays dead at the vendor."""
    from django.utils import timezone

    from sending.models import Provider
    from tests.sending.fakes import ScriptedProvider

    settings.SENDING_PROVIDER = "tests.sending.fakes.ScriptedProvider"
    monkeypatch.setattr(services, "_enqueue_vendor_sync", lambda mailbox: None)  # no broker: syncs run below
    vendor = {}  # ref -> suspended at the vendor
    syncs = []

    def suspend(self, *, ref):
        if not syncs:  # while this call is in flight: the renewal and its own sync
            assert services.mailbox_renew(mailbox_id=m.id) == "active"
            syncs.append(services.mailbox_vendor_sync(mailbox_id=m.id))
        vendor[ref] = True

    def resume(self, *, ref):
        vendor[ref] = False

    monkeypatch.setattr(ScriptedProvider, "mailbox_suspend", suspend)
    monkeypatch.setattr(ScriptedProvider, "mailbox_resume", resume)
    past = timezone.now() - timedelta(days=1)
    m = make_active_mailbox(workspace, provider=Provider.VENDOR, vendor_ref="ref-m", status=Mailbox.Status.SUSPENDED,
                            suspended_at=past, renews_at=past, vendor_suspended=False)
    credits_grant(workspace=workspace, amount=credits("750"), memo="top-up")  # the renewal can pay
    assert services.mailbox_vendor_sync(mailbox_id=m.id) == "suspended"
    assert syncs == ["in_sync"]
    m.refresh_from_db()
    assert m.status == "active" and vendor["ref-m"] is True
    assert m.vendor_suspended is True  # what the vendor really holds, so the sweep sees the mismatch
    assert services.mailboxes_vendor_due() == [m.id]
    tasks.upkeep_sweep()
    m.refresh_from_db()
    assert vendor["ref-m"] is False and m.vendor_suspended is False and m.status == "active"
    assert services.mailboxes_vendor_due() == []

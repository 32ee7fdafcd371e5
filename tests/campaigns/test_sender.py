"""The scheduler and sender end to end into the sandbox Maildir sink, on a frozen, travelling clock."""

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.utils import timezone

from campaigns import scheduler, sender, services
from campaigns.models import Campaign, CampaignLead, SentMessage, Suppression
from sending import transport
from sending.models import Mailbox
from sending.testing import make_active_mailbox
from tests.campaigns.conftest import ALWAYS, T0, run_tick, sink_messages
from tests.campaigns.helpers import create, launch


def test_first_step_message_content(launched, settings):
    campaign, mb = launched
    stats = run_tick()
    assert stats["dispatched"] == 2
    msgs = sink_messages(settings)
    assert len(msgs) == 2
    ann, bob = msgs
    assert ann["To"] == "Ann <ann@acme.test>" and ann["From"] == "Alex Sender <alex@out-mail.test>"
    assert ann["Subject"] == "Hi Ann" and bob["Subject"] == "Hi there"  # fallback
    assert ann["Message-ID"].endswith("@out-mail.test>")
    assert ann["In-Reply-To"] is None and ann["References"] is None
    unsub = ann["List-Unsubscribe"]
    assert "<http://" in unsub or "<https://" in unsub
    assert "<mailto:alex@out-mail.test?subject=unsubscribe%20" in unsub
    assert ann["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert ann.get_content_type() == "multipart/alternative"
    text = ann.get_body(("plain",)).get_content()
    html = ann.get_body(("html",)).get_content()
    assert "Hello Ann at Acme" in text and "Hello there at your team" in bob.get_body(("plain",)).get_content()
    url = unsub.split("<", 1)[1].split(">", 1)[0]
    assert url in text and url in html and "unsubscribe" in html
    sent = SentMessage.objects.get(campaign_lead__email="ann@acme.test")
    assert sent.state == "sent" and f"<{sent.message_id}>" == ann["Message-ID"] and sent.mailbox_id == mb.pk
    lead = sent.campaign_lead
    lead.refresh_from_db()
    assert lead.current_step == 1 and lead.next_send_at == T0 + timedelta(days=2)
    # nothing more is due: a second tick sends nothing
    assert run_tick()["due"] == 0 and len(sink_messages(settings)) == 2


def test_follow_up_threads_and_campaign_completes(launched, settings, clock):
    campaign, _ = launched
    run_tick()
    clock.shift(timedelta(days=1, hours=23))
    assert run_tick()["due"] == 0
    clock.shift(timedelta(hours=1))
    assert run_tick()["dispatched"] == 2
    msgs = [m for m in sink_messages(settings) if m["To"].startswith("Ann")]
    first, follow = sorted(msgs, key=lambda m: m["Subject"])
    assert follow["Subject"] == "Re: Hi Ann"
    assert follow["In-Reply-To"] == first["Message-ID"] and follow["References"] == first["Message-ID"]
    assert "Following up, Ann." in follow.get_body(("plain",)).get_content()
    campaign.refresh_from_db()
    assert campaign.state == "completed"
    assert set(campaign.leads.values_list("state", flat=True)) == {"finished"}


def test_new_subject_starts_new_thread_and_references_chain(api, owner, workspace, clock, settings):
    make_active_mailbox(workspace)
    steps = [{"subject": "One", "body": "1"}, {"body": "2"}, {"body": "3"}, {"subject": "Fresh {{first_name}}", "body": "4"}]
    cid = create(api, leads=[{"email": "a@x.test", "first_name": "Al"}], steps=steps,
                 sending_window=ALWAYS).json()["result"]["campaign_id"]
    launch(api, cid, owner)
    for _ in steps:
        run_tick()
    msgs = {m["Subject"]: m for m in sink_messages(settings)}
    assert set(msgs) == {"One", "Re: One", "Fresh Al"}  # step 2 and 3 share a subject
    ids = [f"<{r.message_id}>" for r in SentMessage.objects.order_by("step_index")]
    parsed = {m["Message-ID"]: m for m in sink_messages(settings)}
    assert parsed[ids[1]]["In-Reply-To"] == ids[0] and parsed[ids[1]]["References"] == ids[0]
    assert parsed[ids[2]]["In-Reply-To"] == ids[1] and parsed[ids[2]]["References"] == f"{ids[0]} {ids[1]}"
    assert parsed[ids[3]]["In-Reply-To"] is None
    assert Campaign.objects.get(pk=cid).state == "completed"


def test_daily_cap_per_mailbox(api, owner, workspace, clock, settings):
    make_active_mailbox(workspace)
    leads = [{"email": f"p{i}@x.test"} for i in range(30)]
    cid = create(api, leads=leads, steps=[{"subject": "s", "body": "b"}], sending_window=ALWAYS).json()["result"]["campaign_id"]
    launch(api, cid, owner)
    stats = run_tick()
    assert (stats["dispatched"], stats["capped"]) == (25, 5)
    assert len(sink_messages(settings)) == 25
    capped = CampaignLead.objects.filter(campaign_id=cid, state="active")
    assert capped.count() == 5 and {lead.next_send_at for lead in capped} == {datetime(2026, 11, 19, tzinfo=UTC)}
    clock.shift(timedelta(hours=13, minutes=59))  # 23:59 the same day: still capped, not even due
    assert run_tick()["dispatched"] == 0
    clock.shift(timedelta(minutes=1))  # midnight UTC: a new day
    assert run_tick()["dispatched"] == 5
    assert len(sink_messages(settings)) == 30
    assert Campaign.objects.get(pk=cid).state == "completed"


def test_cap_is_enforced_at_claim_too(api, owner, workspace, clock):
    """Even if two ticks raced past the scheduler's count, the claim (mailbox row locked) refuses #26."""
    mb = make_active_mailbox(workspace, daily_limit=2)
    leads = [{"email": f"p{i}@x.test"} for i in range(3)]
    cid = create(api, leads=leads, steps=[{"subject": "s", "body": "b"}], sending_window=ALWAYS).json()["result"]["campaign_id"]
    launch(api, cid, owner)
    results = [sender.send_lead_step(lead_id=lead.pk, step=0) for lead in CampaignLead.objects.filter(campaign_id=cid)]
    assert sorted(results) == ["capped", "sent", "sent"]
    assert SentMessage.objects.filter(mailbox=mb, state="sent").count() == 2


def test_daily_cap_and_warmup_ramp(workspace):
    now = T0
    sandbox = make_active_mailbox(workspace, activated_at=now)
    assert sender.daily_cap(sandbox, now) == 25  # sandbox: no ramp
    live = make_active_mailbox(workspace, provider="vendor", activated_at=now)
    assert [sender.daily_cap(live, now + timedelta(days=d)) for d in (0, 1, 5, 10, 30)] == [5, 7, 15, 25, 25]
    low = make_active_mailbox(workspace, daily_limit=10)
    assert sender.daily_cap(low, now) == 10


def test_crash_between_claim_and_send_sends_once(launched, settings, clock, monkeypatch):
    """The worker dies after the claim committed, before SMTP: nothing is sent twice, and the claim is
    released after CLAIM_RELEASE_AFTER so the message still goes out exactly once."""
    def die(lead, sent):
        raise SystemExit("worker killed")

    monkeypatch.setattr(sender, "_hand_over", die)
    with pytest.raises(SystemExit):
        run_tick()
    monkeypatch.undo()
    claimed = SentMessage.objects.get()
    assert claimed.state == "claimed" and sink_messages(settings) == []
    lead = claimed.campaign_lead
    lead.refresh_from_db()
    assert lead.next_send_at is None  # parked: no tick re-dispatches it
    # the other lead was never reached by the dead worker; it is still leased, so wait out the lease
    clock.shift(scheduler.LEASE)
    stats = run_tick()
    assert stats["released"] == 0 and stats["dispatched"] == 1  # only the un-claimed lead
    clock.shift(sender.CLAIM_RELEASE_AFTER)
    stats = run_tick()
    assert stats["released"] == 1 and stats["dispatched"] == 1
    assert sorted(m["To"] for m in sink_messages(settings)) == ["Ann <ann@acme.test>", "Stone <bob@beta.test>"]
    assert SentMessage.objects.filter(state="sent", step_index=0).count() == 2


def test_crash_during_smtp_is_reported_never_resent(launched, settings, clock, monkeypatch):
    def killed(*, mailbox, message):
        raise RuntimeError("process killed mid-DATA")

    monkeypatch.setattr(transport, "send_message", killed)
    with pytest.raises(RuntimeError):
        run_tick()
    monkeypatch.undo()
    stuck = SentMessage.objects.get()
    assert stuck.state == "sending"
    lease = timezone.now() + scheduler.LEASE
    # a redelivered task (acks_late) finds the lead parked: nothing happens
    assert sender.send_lead_step(lead_id=stuck.campaign_lead_id, step=0, lease=lease) == "stale"
    for _ in range(3):
        clock.shift(timedelta(minutes=6))
        run_tick()
    stuck.refresh_from_db()
    assert stuck.state == "sending" and stuck.stuck_reported_at is not None
    lead = stuck.campaign_lead
    lead.refresh_from_db()
    assert (lead.state, lead.stop_reason) == ("stopped", "send_unknown")
    assert SentMessage.objects.filter(campaign_lead=lead).count() == 1
    assert [m["To"] for m in sink_messages(settings)] == ["Stone <bob@beta.test>"]


def test_suppression_mid_campaign_stops_next_step(launched, settings, clock, workspace):
    run_tick()
    services.suppression_add(workspace=workspace, email="ann@acme.test", reason="replied", source="reply")
    clock.shift(timedelta(days=2))
    run_tick()
    assert [m["Subject"] for m in sink_messages(settings) if m["To"].startswith("Ann")] == ["Hi Ann"]
    lead = CampaignLead.objects.get(email="ann@acme.test")
    assert (lead.state, lead.stop_reason) == ("stopped", "replied")


def test_suppression_rechecked_in_claim_transaction(launched, settings, workspace):
    """A suppression written behind the service's back (no lead_stop) is still caught by the claim."""
    Suppression.objects.create(workspace=workspace, email="bob@beta.test", reason="unsubscribed")
    run_tick()
    assert [m["To"] for m in sink_messages(settings)] == ["Ann <ann@acme.test>"]
    lead = CampaignLead.objects.get(email="bob@beta.test")
    assert (lead.state, lead.stop_reason) == ("stopped", "suppressed_at_send")
    assert not SentMessage.objects.filter(campaign_lead=lead).exists()


def test_stop_between_claim_and_handover_drops_message(launched, settings, monkeypatch, workspace):
    real = sender._hand_over

    def reply_arrives(lead, sent):
        services.suppression_add(workspace=workspace, email=lead.email, reason="replied")
        return real(lead, sent)

    monkeypatch.setattr(sender, "_hand_over", reply_arrives)
    run_tick()
    assert sink_messages(settings) == []
    assert set(SentMessage.objects.values_list("state", flat=True)) == {"failed"}


def test_transient_failure_retries_with_backoff(launched, settings, clock, monkeypatch):
    calls = []

    def flaky(*, mailbox, message):
        calls.append(message["To"])
        raise transport.TransientSendError("451 try later", 451)

    monkeypatch.setattr(transport, "send_message", flaky)
    run_tick()
    lead = CampaignLead.objects.get(email="ann@acme.test")
    assert (lead.attempts, lead.next_send_at, lead.current_step) == (1, T0 + timedelta(minutes=5), 0)
    clock.shift(timedelta(minutes=5))
    run_tick()
    lead.refresh_from_db()
    assert (lead.attempts, lead.next_send_at) == (2, T0 + timedelta(minutes=15))
    monkeypatch.undo()
    clock.shift(timedelta(minutes=10))
    run_tick()
    lead.refresh_from_db()
    assert (lead.state, lead.current_step, lead.attempts) == ("active", 1, 0)
    assert SentMessage.objects.filter(campaign_lead=lead).count() == 3  # failed, failed, sent
    assert SentMessage.objects.filter(campaign_lead=lead, state="sent").count() == 1
    assert len(sink_messages(settings)) == 2


def test_transient_failures_give_up(launched, clock, monkeypatch):
    monkeypatch.setattr(transport, "send_message",
                        lambda **kw: (_ for _ in ()).throw(transport.TransientSendError("timeout")))
    for _ in range(sender.MAX_ATTEMPTS):
        run_tick()
        clock.shift(timedelta(hours=2))
    lead = CampaignLead.objects.get(email="ann@acme.test")
    assert (lead.state, lead.stop_reason, lead.attempts) == ("stopped", "send_failed", sender.MAX_ATTEMPTS)


def test_permanent_failure_is_a_bounce(launched, settings, monkeypatch, workspace):
    real = transport.send_message

    def reject(*, mailbox, message):
        if "ann@" in message["To"]:
            raise transport.PermanentSendError("550 5.1.1 no such user", 550)
        return real(mailbox=mailbox, message=message)

    monkeypatch.setattr(transport, "send_message", reject)
    run_tick()
    assert Suppression.objects.get(workspace=workspace, email="ann@acme.test").reason == "bounced"
    lead = CampaignLead.objects.get(email="ann@acme.test")
    assert (lead.state, lead.stop_reason) == ("stopped", "bounced")
    sent = SentMessage.objects.get(campaign_lead=lead)
    assert sent.state == "failed" and sent.bounced and "550" in sent.error
    assert [m["To"] for m in sink_messages(settings)] == ["Stone <bob@beta.test>"]


def test_mailbox_problem_is_not_a_bounce(launched, monkeypatch, workspace):
    monkeypatch.setattr(transport, "send_message",
                        lambda **kw: (_ for _ in ()).throw(transport.PermanentSendError("535 auth failed", 535)))
    run_tick()
    assert not Suppression.objects.filter(workspace=workspace).exists()
    assert CampaignLead.objects.get(email="ann@acme.test").state == "active"


def test_suspended_mailbox_never_sends(launched, settings, clock):
    campaign, mb = launched
    Mailbox.objects.filter(pk=mb.pk).update(status="suspended")
    stats = run_tick()
    assert stats["mailbox_inactive"] == 2 and sink_messages(settings) == []
    Mailbox.objects.filter(pk=mb.pk).update(status="active")
    clock.shift(sender.MAILBOX_WAIT)
    assert run_tick()["dispatched"] == 2


def test_sending_window_in_campaign_zone(api, owner, workspace, settings):
    make_active_mailbox(workspace)
    window = {"timezone": "America/New_York", "days": ["mon", "tue", "wed", "thu", "fri"], "start_hour": 9,
              "end_hour": 17}
    # Friday 2026-03-06 17:30 EST: closed; DST starts on Sunday; Monday 09:00 EDT = 13:00 UTC
    with time_machine.travel(datetime(2026, 3, 6, 22, 30, tzinfo=UTC), tick=False) as clock:
        cid = create(api, sending_window=window, steps=[{"subject": "s", "body": "b", "wait_days": 0}]
                     ).json()["result"]["campaign_id"]
        launch(api, cid, owner)
        assert set(CampaignLead.objects.filter(campaign_id=cid).values_list("next_send_at", flat=True)) == {
            datetime(2026, 3, 9, 13, 0, tzinfo=UTC)}
        assert run_tick()["due"] == 0
        clock.move_to(datetime(2026, 3, 9, 12, 59, tzinfo=UTC))
        assert run_tick()["due"] == 0
        clock.move_to(datetime(2026, 3, 9, 13, 0, tzinfo=UTC))
        assert run_tick()["dispatched"] == 2
    assert len(sink_messages(settings)) == 2


def test_due_lead_outside_window_is_moved_not_sent(launched, settings):
    campaign, _ = launched
    Campaign.objects.filter(pk=campaign.pk).update(
        sending_window={"timezone": "UTC", "days": ["thu"], "start_hour": 9, "end_hour": 10})
    stats = run_tick()
    assert stats["outside_window"] == 2 and sink_messages(settings) == []
    assert set(CampaignLead.objects.values_list("next_send_at", flat=True)) == {datetime(2026, 11, 19, 9, tzinfo=UTC)}


def test_stale_task_is_ignored(launched, settings):
    lead = CampaignLead.objects.get(email="ann@acme.test")
    assert sender.send_lead_step(lead_id=lead.pk, step=0, lease=T0 - timedelta(seconds=1)) == "stale"
    assert sender.send_lead_step(lead_id=lead.pk, step=1) == "not_due"
    assert sink_messages(settings) == []


def test_draft_never_sends(api, workspace, settings, clock):
    make_active_mailbox(workspace)
    create(api, sending_window=ALWAYS)
    assert run_tick()["due"] == 0 and sink_messages(settings) == []


def test_celery_task_path(launched, settings):
    """The real Celery tasks, run eagerly: the beat task dispatches send tasks with an ISO lease."""
    from campaigns import tasks

    settings.CELERY_TASK_ALWAYS_EAGER = True
    from config.celery import app

    app.conf.task_always_eager = True
    try:
        tasks.scheduler_tick.delay()
    finally:
        app.conf.task_always_eager = False
    assert len(sink_messages(settings)) == 2


def test_removed_mailbox_before_first_send_reassigns(launched, settings, workspace):
    campaign, mb = launched
    other = make_active_mailbox(workspace, email="jo@out-mail.test")
    Mailbox.objects.filter(pk=mb.pk).update(status="removed")
    stats = run_tick()
    assert stats["mailbox_gone"] == 2
    assert set(CampaignLead.objects.values_list("mailbox_id", flat=True)) == {other.pk}
    run_tick()
    assert {m["From"] for m in sink_messages(settings)} == {"Alex Sender <jo@out-mail.test>"}


def test_removed_mailbox_mid_thread_stops_lead(launched, settings, clock):
    campaign, mb = launched
    run_tick()
    Mailbox.objects.filter(pk=mb.pk).update(status="failed")
    clock.shift(timedelta(days=2))
    run_tick()
    assert set(CampaignLead.objects.values_list("stop_reason", flat=True)) == {"mailbox_gone"}
    assert len(sink_messages(settings)) == 2
    campaign.refresh_from_db()
    assert campaign.state == "completed"


def test_header_injection_in_lead_values_is_flattened(api, owner, workspace, clock, settings):
    make_active_mailbox(workspace)
    leads = [{"email": "eve@x.test", "first_name": "Eve\r\nBcc: victim@x.test", "company_name": "A\nB"}]
    cid = create(api, leads=leads, steps=[{"subject": "Hi {{first_name}} of {{company_name}}", "body": "x"}],
                 sending_window=ALWAYS).json()["result"]["campaign_id"]
    launch(api, cid, owner)
    run_tick()
    (msg,) = sink_messages(settings)
    assert msg["Subject"] == "Hi Eve Bcc: victim@x.test of A B"
    assert msg["Bcc"] is None and msg["To"].endswith("<eve@x.test>")


def test_needs_reconnect_mailbox_never_sends_claim_rechecks(launched, settings, clock):
    """An OAuth mailbox whose consent was revoked: the claim re-checks the status under the mailbox lock (a
    lead dispatched before the flip is not sent), the lead waits on its sticky mailbox, and resumes after
    reconnecting."""
    campaign, mb = launched
    lead = CampaignLead.objects.get(email="ann@acme.test")
    lease = lead.next_send_at
    Mailbox.objects.filter(pk=mb.pk).update(status=Mailbox.Status.NEEDS_RECONNECT, reconnect_reason="revoked")
    assert sender.send_lead_step(lead_id=lead.pk, step=0, lease=lease) == "mailbox_needs_reconnect"
    assert sink_messages(settings) == [] and not SentMessage.objects.exists()
    lead.refresh_from_db()
    assert lead.state == "active" and lead.next_send_at == T0 + sender.MAILBOX_WAIT
    assert run_tick()["dispatched"] == 0 and sink_messages(settings) == []
    Mailbox.objects.filter(pk=mb.pk).update(status=Mailbox.Status.ACTIVE, reconnect_reason="")
    clock.shift(sender.MAILBOX_WAIT)
    assert run_tick()["dispatched"] == 2 and len(sink_messages(settings)) == 2


def test_tick_never_overwrites_a_due_time_set_after_it_read_the_lead(launched, settings, clock, monkeypatch):
    """Between the tick's read of due leads and its lease UPDATE, a late task sends the lead's step and sets the
    next step's due time (days ahead). The tick must not replace it with its lease (the follow-up would go out
    minutes later instead of after wait_days); the task it dispatched finds the lease gone and sends nothing."""
    campaign, _ = launched
    ann = CampaignLead.objects.get(campaign=campaign, email="ann@acme.test")
    later = timezone.now() + timedelta(days=2)
    real = sender.sends_today

    def late_task_first(mailbox_ids, now):  # runs between the read and the UPDATE
        CampaignLead.objects.filter(pk=ann.pk).update(current_step=1, next_send_at=later)
        return real(mailbox_ids, now)

    monkeypatch.setattr(sender, "sends_today", late_task_first)
    queued = []
    scheduler.tick(dispatch=queued.extend)
    monkeypatch.undo()
    ann.refresh_from_db()
    assert ann.next_send_at == later
    results = {lead_id: sender.send_lead_step(lead_id=lead_id, step=step, lease=lease)
               for lead_id, step, lease in queued}
    assert results[ann.pk] in ("not_due", "stale")
    assert [m["To"] for m in sink_messages(settings)] == ["Stone <bob@beta.test>"]


def test_a_campaign_left_without_active_leads_is_completed_by_the_tick(launched, clock):
    """A worker that died between a lead's last change and the completion check leaves a launched campaign
    with nothing left to send: the scheduler tick's safety net completes it."""
    campaign, _ = launched
    CampaignLead.objects.filter(campaign=campaign).update(state=CampaignLead.State.FINISHED, next_send_at=None)
    assert Campaign.objects.get(pk=campaign.pk).state == "launched"
    stats = run_tick()
    assert stats["completed"] == 1
    assert Campaign.objects.get(pk=campaign.pk).state == "completed"
    assert run_tick()["completed"] == 0


def test_a_pause_and_resume_between_claim_and_hand_over_leave_the_lead_due(launched, settings, clock, monkeypatch):
    """The hand-over's conditional UPDATE fails because the campaign is paused; the campaign is resumed before
    the next statement looks at it. The claim is dropped, and the lead is due again (not parked for ever with
    no due time)."""
    from django.db.models import QuerySet

    campaign, _ = launched
    real_hand_over, real_exists = sender._hand_over, QuerySet.exists
    resumed = []

    def exists_after_resume(qs):
        if qs.model is Campaign and not resumed:
            resumed.append(services.campaign_resume(workspace=campaign.workspace, campaign_id=campaign.pk))
        return real_exists(qs)

    def pause_first(lead, sent):
        services.campaign_pause(workspace=campaign.workspace, campaign_id=campaign.pk)
        monkeypatch.setattr(QuerySet, "exists", exists_after_resume)
        return real_hand_over(lead, sent)

    monkeypatch.setattr(sender, "_hand_over", pause_first)
    lead = CampaignLead.objects.get(campaign=campaign, email="ann@acme.test")
    assert sender.send_lead_step(lead_id=lead.pk, step=0) == "stopped"
    monkeypatch.undo()
    assert resumed and sink_messages(settings) == []
    lead.refresh_from_db()
    assert lead.state == "active" and lead.next_send_at is not None
    run_tick()
    assert sorted(m["To"] for m in sink_messages(settings)) == ["Ann <ann@acme.test>", "Stone <bob@beta.test>"]

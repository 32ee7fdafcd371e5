"""The health rules of CONTRACT 4.13: bounce and complaint thresholds, stickiness, resume, clamped settings,
what the API shows, and the webhook events and emails a change sends."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone

from deliverability import services as health
from deliverability.models import Complaint, HealthEvent
from sending.models import Mailbox
from sending.testing import make_active_mailbox
from tests.deliverability.conftest import add_sends

pytestmark = pytest.mark.django_db


def state(mailbox):
    mailbox.refresh_from_db()
    return mailbox.health_state, mailbox.health_reasons


def test_bounce_rate_needs_20_sends_then_warns_at_3_and_pauses_at_5_percent(workspace):
    mb = make_active_mailbox(workspace)
    add_sends(mb, sent=18, bounced=1)  # 19 attempts: too few to judge, whatever the rate
    health.mailbox_evaluate(mailbox_id=mb.pk)
    assert state(mb) == ("healthy", [])
    assert mb.health_figures["sends_recent"] == 19

    mb2 = make_active_mailbox(workspace)
    add_sends(mb2, sent=32, bounced=1)  # 1/33 = 3.0%
    assert health.mailbox_evaluate(mailbox_id=mb2.pk) == "warning"
    assert state(mb2) == ("warning", ["bounce_rate"])

    mb3 = make_active_mailbox(workspace)
    add_sends(mb3, sent=47, bounced=3)  # 3/50 = 6%
    assert health.mailbox_evaluate(mailbox_id=mb3.pk) == "paused"
    mb3.refresh_from_db()
    assert mb3.health_figures == {"bounce_rate": 0.06, "sends_recent": 50, "bounces_recent": 3, "complaints_7d": 0}


def test_only_the_last_50_sends_count(workspace):
    mb = make_active_mailbox(workspace)
    add_sends(mb, sent=0, bounced=5, at=timezone.now() - timedelta(days=2))  # old bounces
    add_sends(mb, sent=50)  # 50 clean sends since
    assert health.mailbox_evaluate(mailbox_id=mb.pk) == "healthy"


def test_a_pause_is_sticky_and_only_a_resume_lifts_it_with_fresh_windows(workspace):
    mb = make_active_mailbox(workspace)
    add_sends(mb, sent=19, bounced=1)
    assert health.mailbox_evaluate(mailbox_id=mb.pk) == "paused"  # 1/20 = 5%
    add_sends(mb, sent=200)  # the rate falls back under every threshold: still paused (only a human lifts it)
    assert health.mailbox_evaluate(mailbox_id=mb.pk) == "paused"

    health.mailbox_resume(workspace=workspace, mailbox_id=mb.pk, actor="owner@example.test")
    assert state(mb) == ("healthy", [])
    assert mb.health_armed_at is not None
    assert mb.health_figures["sends_recent"] == 0  # the window starts afresh
    events = list(HealthEvent.objects.filter(mailbox=mb).order_by("at", "pk").values_list("from_state", "to_state",
                                                                                           "actor"))
    assert events == [("healthy", "paused", ""), ("paused", "healthy", "owner@example.test")]


def test_settings_may_lower_thresholds_never_raise_them(workspace, settings):
    settings.DELIVERABILITY_BOUNCE_PAUSE = 0.5  # an attempt to loosen: ignored
    settings.DELIVERABILITY_BOUNCE_MIN_SENDS = 500
    lim = health.limits()
    assert lim.bounce_pause == 0.05 and lim.bounce_min_sends == 20
    settings.DELIVERABILITY_BOUNCE_MIN_SENDS = 5  # stricter: applies
    mb = make_active_mailbox(workspace)
    add_sends(mb, sent=4, bounced=1)
    assert health.mailbox_evaluate(mailbox_id=mb.pk) == "paused"


@pytest.mark.parametrize("complaints,sends,expected", [
    (0, 100, "healthy"), (1, 100_000, "warning"), (2, 1000, "warning"), (2, 666, "paused"), (3, 1_000_000, "paused"),
])
def test_complaint_thresholds(complaints, sends, expected):
    assert health.complaint_verdict(complaints, sends, health.limits()) == expected


def test_a_paused_domain_pauses_its_mailboxes_and_its_resume_lifts_them(workspace):
    a = make_active_mailbox(workspace, email="a@brand-mail.test")
    b = make_active_mailbox(workspace, email="b@brand-mail.test")
    for n in range(3):
        Complaint.objects.create(workspace=workspace, mailbox=a, domain_name="brand-mail.test", inbound_id=f"i{n}")
    assert health.domain_evaluate(domain_id=a.domain_id) == "paused"
    assert state(a) == ("paused", ["complaint_rate"]) and state(b) == ("paused", ["complaint_rate"])
    assert a.health_figures["complaints_7d"] == 3 and b.health_figures["complaints_7d"] == 0

    health.domain_resume(workspace=workspace, domain_id=a.domain_id, actor="admin@example.test")
    assert state(a) == ("healthy", []) and state(b) == ("healthy", [])
    a.domain.refresh_from_db()
    assert a.domain.health_state == "healthy"  # complaints before the resume no longer count


def test_resuming_a_mailbox_under_a_paused_domain_does_not_send_from_it(workspace):
    mb = make_active_mailbox(workspace, email="c@listed-mail.test")
    domain = mb.domain
    domain.blocklists, domain.blocklist_checked_at = ["dbl.spamhaus.org"], timezone.now()
    domain.save()
    health.domain_evaluate(domain_id=domain.pk)
    health.mailbox_resume(workspace=workspace, mailbox_id=mb.pk, actor="owner@example.test")
    assert state(mb) == ("paused", ["blocklisted"])


def test_api_mailboxes_health_and_domains(api, workspace):
    mb = make_active_mailbox(workspace, email="d@api-mail.test")
    add_sends(mb, sent=30, bounced=1)
    health.mailbox_evaluate(mailbox_id=mb.pk)
    body = api.get("/v1/mailboxes").json()
    (row,) = [m for m in body["mailboxes"] if m["mailbox_id"] == mb.pk]
    assert row["health"] == {"state": "warning", "reasons": ["bounce_rate"], "bounce_rate": 0.0323,
                             "sends_recent": 31, "complaints_7d": 0, "changed_at": row["health"]["changed_at"]}
    assert row["health"]["changed_at"]
    domains = api.get("/v1/domains").json()["domains"]
    assert domains == [{"domain": "api-mail.test", "state": "healthy", "reasons": [],
                        "checks": {"spf": None, "dkim": None, "dmarc": None, "mx": None}, "blocklists": [],
                        "checked_at": None, "changed_at": None, "mailbox_ids": [mb.pk]}]


def test_other_workspaces_domains_are_not_listed_and_cannot_be_resumed(api, workspace, make_api):
    from accounts.models import Workspace
    from core import errors

    other = Workspace.objects.create(name="other")
    mb = make_active_mailbox(other, email="e@elsewhere-mail.test")
    assert api.get("/v1/domains").json()["domains"] == []
    with pytest.raises(errors.NotFound):
        health.mailbox_resume(workspace=workspace, mailbox_id=mb.pk, actor="x@example.test")
    with pytest.raises(errors.NotFound):
        health.domain_resume(workspace=workspace, domain_id=mb.domain_id, actor="x@example.test")


def test_a_change_emits_a_webhook_event_and_emails_the_owners_once(workspace, owner, django_capture_on_commit_callbacks):
    from webhooks.models import WebhookEvent
    from webhooks.services import endpoint_create

    endpoint_create(workspace=workspace, url="https://hooks.example.com/x", events=["mailbox.health_changed",
                                                                                  "domain.health_changed"])
    mb = make_active_mailbox(workspace)
    add_sends(mb, sent=19, bounced=1)
    with django_capture_on_commit_callbacks(execute=True):
        health.mailbox_evaluate(mailbox_id=mb.pk)
    with django_capture_on_commit_callbacks(execute=True):
        health.mailbox_evaluate(mailbox_id=mb.pk)  # no change: no event, no mail
    (event,) = WebhookEvent.objects.filter(type="mailbox.health_changed")
    assert event.data["health"]["state"] == "paused" and event.data["previous_state"] == "healthy"
    assert len(mail.outbox) == 1
    assert mail.outbox[0].to == [owner.email] and "healthy -> paused" in mail.outbox[0].subject


def test_the_sweep_evaluates_a_flagged_mailbox(workspace):
    mb = make_active_mailbox(workspace)
    add_sends(mb, sent=19, bounced=1)
    Mailbox.objects.filter(pk=mb.pk).update(health_dirty=True, health_evaluated_at=timezone.now())
    stats = health.sweep()
    assert stats["flagged"] == 1 and state(mb)[0] == "paused"
    mb.refresh_from_db()
    assert mb.health_dirty is False

"""Gmail Postmaster Tools v2 as a complaint signal, against a local fake built from the public reference
(tests/deliverability/postmaster_fake.py): any reported spam warns, 0.3% pauses, no statistics is no signal, an
unavailable API keeps the last figure."""

from __future__ import annotations

import json
from datetime import date, timedelta

import pytest
from django.utils import timezone

from deliverability import postmaster
from deliverability import services as health
from sending.dkim_keys import dkim_key_generate
from sending.models import Operation, SendingDomain
from sending.testing import make_active_mailbox
from tests.deliverability.postmaster_fake import FakePostmaster
from tests.sending import google_fake

pytestmark = pytest.mark.django_db


@pytest.fixture
def fake(settings, tmp_path, monkeypatch):
    from sending.providers import google_workspace as gw

    key_file = tmp_path / "sa.json"
    key_file.write_text(json.dumps(google_fake.SERVICE_ACCOUNT))
    settings.GOOGLE_WORKSPACE_SERVICE_ACCOUNT_FILE = str(key_file)
    settings.GOOGLE_WORKSPACE_ADMIN_EMAIL = google_fake.ADMIN
    settings.POSTMASTER_TOOLS_ENABLED = True
    settings.DELIVERABILITY_DNSBL_ZONES = []
    settings.VERIFIER_NAMESERVERS = ["127.0.0.1:9"]  # nothing answers: DNS checks keep their (empty) results
    settings.VERIFIER_TIMEOUT_SECONDS = 0.2
    gw._token_cache.clear()
    server = FakePostmaster()
    monkeypatch.setattr(postmaster.Postmaster, "transport", server.transport())
    yield server
    gw._token_cache.clear()


def workspace_domain(workspace, name):
    mb = make_active_mailbox(workspace, email=f"alex@{name}")
    op = Operation.objects.create(workspace=workspace, kind="setup_sending", provider="google_workspace")
    domain = SendingDomain.objects.get(pk=mb.domain_id)
    dkim_key_generate(domain)  # signed like every bought domain (its DNS lookups get no answer here: kept)
    domain.operation = op
    domain.save()
    return mb


@pytest.mark.parametrize("rates,state", [
    ([0.0, 0.0, 0.0], "healthy"),
    ([0.0, 0.0008, 0.0], "warning"),  # any reported spam warns (Gmail asks for under 0.1%)
    ([0.001, 0.0031, 0.0], "paused"),  # a day at 0.3% or more pauses
])
def test_the_spam_rate_sets_the_domain_state(fake, workspace, rates, state):
    mb = workspace_domain(workspace, "gw-mail.test")
    today = timezone.now().date()
    fake.rates["gw-mail.test"] = {today - timedelta(days=i + 1): r for i, r in enumerate(rates)}
    domain = health.domain_check(domain_id=mb.domain_id)
    assert domain.health_state == state
    assert domain.health_reasons == ([] if state == "healthy" else ["postmaster"])
    assert domain.checks["postmaster_spam_rate"] == max(rates)
    query = fake.queries[-1]
    assert query["metricDefinitions"] == [{"name": "spam_rate", "baseMetric": {"standardMetric": "SPAM_RATE"}}]
    assert query["aggregationGranularity"] == "DAILY"
    mb.refresh_from_db()
    assert mb.health_state == state


def test_pages_are_followed(fake, workspace):
    today = date(2026, 11, 28)
    fake.rates["paged-mail.test"] = {today - timedelta(days=i): 0.0 for i in range(8)}
    fake.rates["paged-mail.test"][today - timedelta(days=7)] = 0.004
    original = fake._query

    def small_pages(domain, body):
        return original(domain, {**body, "pageSize": 3})

    fake._query = small_pages
    assert postmaster.spam_rate("paged-mail.test", today=today) == 0.004


def test_no_statistics_and_unknown_domains_are_no_signal(fake, workspace):
    mb = workspace_domain(workspace, "quiet-gw.test")
    fake.rates["quiet-gw.test"] = {}
    assert health.domain_check(domain_id=mb.domain_id).health_state == "healthy"
    other = workspace_domain(workspace, "unregistered-gw.test")  # not in Postmaster Tools: 404
    assert postmaster.spam_rate("unregistered-gw.test") is None
    assert health.domain_check(domain_id=other.domain_id).health_state == "healthy"


def test_an_unavailable_api_keeps_the_last_figure(fake, workspace, settings, monkeypatch):
    mb = workspace_domain(workspace, "flaky-gw.test")
    fake.rates["flaky-gw.test"] = {timezone.now().date() - timedelta(days=1): 0.002}
    assert health.domain_check(domain_id=mb.domain_id).health_state == "warning"
    monkeypatch.setattr(postmaster.Postmaster, "transport",
                        __import__("httpx").MockTransport(lambda request: __import__("httpx").Response(503)))
    from sending.providers import google_workspace as gw

    gw._token_cache.clear()
    domain = health.domain_check(domain_id=mb.domain_id)
    assert domain.checks["postmaster_spam_rate"] == 0.002 and domain.health_state == "warning"


def test_only_google_workspace_domains_are_asked(fake, workspace):
    mb = make_active_mailbox(workspace, email="alex@plain-mail.test")
    health.domain_check(domain_id=mb.domain_id)
    assert fake.queries == []


# --- domains.getComplianceStatus: Gmail's own verdict on the bulk-sender requirements ------------------------
def test_the_compliance_status_is_read_in_the_documented_shape(fake, workspace):
    fake.compliance["shape-gw.test"] = {"DMARC_ALIGNMENT": "", "ONE_CLICK_UNSUBSCRIBE": "NO_UNSUB_SPAM_REPORTS"}
    assert postmaster.compliance_needs_work("shape-gw.test") == {
        "DMARC_ALIGNMENT": "", "ONE_CLICK_UNSUBSCRIBE": "NO_UNSUB_SPAM_REPORTS"}
    fake.compliance["fine-gw.test"] = {}
    assert postmaster.compliance_needs_work("fine-gw.test") == {}
    assert postmaster.compliance_needs_work("unknown-gw.test") is None  # no compliance data: 404, no signal
    # a subdomain with its own figures is judged by them, not by its registrable domain's
    fake.compliance["news.sub-gw.test"] = {"SPF": ""}
    fake.subdomain_compliance["news.sub-gw.test"] = {"DKIM": ""}
    assert postmaster.compliance_needs_work("news.sub-gw.test") == {"DKIM": ""}
    fake.forbidden.add("locked-gw.test")
    with pytest.raises(postmaster.PostmasterUnavailable):
        postmaster.compliance_needs_work("locked-gw.test")


def test_a_spam_rate_gmail_calls_non_compliant_pauses_at_once(fake, workspace):
    mb = workspace_domain(workspace, "spammy-gw.test")
    fake.compliance["spammy-gw.test"] = {"USER_REPORTED_SPAM_RATE": ""}
    domain = health.domain_check(domain_id=mb.domain_id)
    assert fake.compliance_reads == ["spammy-gw.test"]
    assert domain.health_state == "paused" and domain.health_reasons == ["postmaster"]
    assert domain.checks["postmaster_compliance"] == {"USER_REPORTED_SPAM_RATE": ""}
    mb.refresh_from_db()
    assert mb.health_state == "paused" and mb.health_reasons == ["postmaster"]


def test_a_requirement_that_needs_work_warns_then_pauses_after_the_grace(fake, workspace):
    mb = workspace_domain(workspace, "unaligned-gw.test")
    fake.compliance["unaligned-gw.test"] = {"DMARC_ALIGNMENT": ""}
    start = timezone.now()
    domain = health.domain_check(domain_id=mb.domain_id, now=start)
    assert domain.health_state == "warning" and domain.health_reasons == ["postmaster"]
    assert domain.check_failing_since["postmaster:DMARC_ALIGNMENT"] == start.isoformat()
    domain = health.domain_check(domain_id=mb.domain_id, now=start + timedelta(hours=23))
    assert domain.health_state == "warning"  # the first "needs work" is kept, not moved on each read
    domain = health.domain_check(domain_id=mb.domain_id, now=start + timedelta(hours=24, minutes=1))
    assert domain.health_state == "paused" and domain.health_reasons == ["postmaster"]
    mb.refresh_from_db()
    assert mb.health_state == "paused"


def test_a_requirement_fixed_within_the_grace_clears_the_warning(fake, workspace):
    mb = workspace_domain(workspace, "fixed-gw.test")
    fake.compliance["fixed-gw.test"] = {"HONOR_UNSUBSCRIBE": "NOT_HONORING"}
    start = timezone.now()
    assert health.domain_check(domain_id=mb.domain_id, now=start).health_state == "warning"
    fake.compliance["fixed-gw.test"] = {}
    domain = health.domain_check(domain_id=mb.domain_id, now=start + timedelta(hours=2))
    assert domain.health_state == "healthy" and domain.health_reasons == []
    assert not any(k.startswith("postmaster:") for k in domain.check_failing_since)


def test_an_unreadable_compliance_status_keeps_the_last_verdict(fake, workspace):
    mb = workspace_domain(workspace, "denied-gw.test")
    fake.compliance["denied-gw.test"] = {"SPF": ""}
    start = timezone.now()
    assert health.domain_check(domain_id=mb.domain_id, now=start).health_state == "warning"
    fake.forbidden.add("denied-gw.test")  # PERMISSION_DENIED: no definite answer
    domain = health.domain_check(domain_id=mb.domain_id, now=start + timedelta(hours=25))
    assert domain.checks["postmaster_compliance"] == {"SPF": ""}
    assert domain.health_state == "paused"  # the last verdict stands and its grace ran out


def test_a_resume_restarts_the_compliance_grace(fake, workspace, owner):
    mb = workspace_domain(workspace, "resumed-gw.test")
    fake.compliance["resumed-gw.test"] = {"DKIM": ""}
    start = timezone.now() - timedelta(hours=30)
    health.domain_check(domain_id=mb.domain_id, now=start)
    assert health.domain_check(domain_id=mb.domain_id).health_state == "paused"
    domain = health.domain_resume(workspace=workspace, domain_id=mb.domain_id, actor=owner.email)
    assert domain.health_state == "healthy"  # the verdict read before the resume no longer counts
    domain = health.domain_check(domain_id=mb.domain_id)
    assert domain.health_state == "warning"  # Gmail still says so: a fresh 24 hours from the resume
    mb.refresh_from_db()
    assert mb.health_state == "warning"

"""DNS technology signals: detection, stored scans, a signal only on change, and find_intent through HTTP."""

import threading
from datetime import date, timedelta

import pytest
import time_machine
from django.utils import timezone

from leads.providers import IntentQuery, ProviderError, registered, waterfall
from leads.verification import dnslayer, technology
from leads.verification.intent import DnsTechnology
from leads.verification.models import TechnologyChange, TechnologyScan


@pytest.fixture
def tech(net, settings):
    settings.DNS_TECHNOLOGY_ENABLED = True
    settings.DNS_TECHNOLOGY_RESCAN_SECONDS = 3600
    return net


def query(*domains, since=None, signals=("technology",)):
    return IntentQuery(company_domains=list(domains), signals=list(signals),
                       since=since or date.today() - timedelta(days=90))


def test_detect_from_mx_spf_and_verification_records():
    found = technology.detect(
        ["aspmx.l.google.com", "alt1.aspmx.l.google.com", "acme-com.mail.protection.outlook.com."],
        ["v=spf1 include:_spf.google.com include:sendgrid.net include:123456.spf06.hubspotemail.net ~all",
         "atlassian-domain-verification=abc123", "MS=ms12345678", "unrelated=1",
         "v=spf1 redirect=_spf.mktomail.com"],
    )
    assert sorted(found) == ["Atlassian", "Google Workspace", "HubSpot", "Marketo", "Microsoft 365", "SendGrid"]
    assert found["HubSpot"]["category"] == "marketing automation"
    assert "SPF include 123456.spf06.hubspotemail.net" in found["HubSpot"]["evidence"]
    assert found["Google Workspace"]["evidence"][0] == "MX aspmx.l.google.com"


def test_no_false_match_on_lookalike_suffix():
    assert technology.detect(["mx.notgoogle.com", "evilsendgrid.net"], ["v=spf1 include:fakesendgrid.net"]) == {}


def test_provider_is_registered_and_in_the_waterfall(settings):
    settings.DNS_TECHNOLOGY_ENABLED = True
    assert registered("intent")["dns_technology"] is DnsTechnology
    assert any(isinstance(p, DnsTechnology) for p in waterfall("intent"))
    settings.DNS_TECHNOLOGY_ENABLED = False
    assert not any(isinstance(p, DnsTechnology) for p in waterfall("intent"))


def test_first_scan_is_a_baseline_then_a_change_is_a_signal(db, tech):
    tech.zone.mx("acme.com", (1, "aspmx.l.google.com"))
    tech.zone.txt("acme.com", "v=spf1 include:_spf.google.com ~all")
    assert DnsTechnology().find(query("acme.com")) == []
    scan = TechnologyScan.objects.get()
    assert scan.technologies == ["Google Workspace"]
    assert scan.records["mx"] == ["aspmx.l.google.com"]

    # the company adopts HubSpot and SendGrid; seen on the next scan after the rescan interval
    tech.zone.records.pop(("acme.com", "TXT"))
    tech.zone.txt("acme.com", "v=spf1 include:_spf.google.com include:sendgrid.net "
                              "include:1.spf06.hubspotemail.net ~all")
    dnslayer.reset()  # forget the cached TXT answer
    later = timezone.now() + timedelta(hours=2)
    with time_machine.travel(later):
        signals = DnsTechnology().find(query("acme.com"))
    assert len(signals) == 1
    s = signals[0]
    assert (s.company_domain, s.signal, s.observed_at) == ("acme.com", "technology", later.date())
    assert s.summary.startswith("Adopted HubSpot (marketing automation), SendGrid (email delivery)")
    change = TechnologyChange.objects.get()
    assert (change.added, change.removed) == (["HubSpot", "SendGrid"], [])


def test_unchanged_stack_emits_nothing_and_scans_are_throttled(db, tech):
    tech.zone.mx("acme.com", (1, "aspmx.l.google.com"))
    DnsTechnology().find(query("acme.com"))
    queries = tech.zone.queries
    DnsTechnology().find(query("acme.com"))  # within the rescan interval: no DNS at all
    assert tech.zone.queries == queries
    with time_machine.travel(timezone.now() + timedelta(hours=2)):
        assert DnsTechnology().find(query("acme.com")) == []
    assert TechnologyScan.objects.count() == 2 and not TechnologyChange.objects.exists()


def test_a_drop_is_a_change_too(db, tech):
    tech.zone.mx("acme.com", (1, "eu-smtp-inbound-1.mimecast.com"))
    DnsTechnology().find(query("acme.com"))
    tech.zone.records.clear()
    tech.zone.mx("acme.com", (0, "acme-com.mail.protection.outlook.com"))
    dnslayer.reset()
    with time_machine.travel(timezone.now() + timedelta(hours=2)):
        [signal] = DnsTechnology().find(query("acme.com"))
    assert signal.summary.startswith("Adopted Microsoft 365 (email hosting); dropped Mimecast (email security)")


def test_changes_older_than_the_window_are_not_reported(db, tech):
    tech.zone.mx("acme.com", (1, "aspmx.l.google.com"))
    DnsTechnology().find(query("acme.com"))
    tech.zone.txt("acme.com", "stripe-verification=abc")
    dnslayer.reset()
    DnsTechnology().find(query("acme.com"))  # throttled: nothing new yet
    technology.technology_scan(domains=["acme.com"], force=True)
    assert TechnologyChange.objects.count() == 1
    assert len(DnsTechnology().find(query("acme.com"))) == 1
    assert DnsTechnology().find(query("acme.com", since=date.today() + timedelta(days=1))) == []


def test_nxdomain_stores_nothing_and_dns_failure_everywhere_is_provider_error(db, tech):
    assert DnsTechnology().find(query("nowhere.com")) == []
    assert not TechnologyScan.objects.exists()
    tech.zone.servfail.update({"down1.com", "down2.com"})
    with pytest.raises(ProviderError):
        DnsTechnology().find(query("down1.com", "down2.com"))
    tech.zone.mx("up.com", (1, "aspmx.l.google.com"))
    assert DnsTechnology().find(query("down1.com", "up.com")) == []  # a partial failure still answers
    assert list(TechnologyScan.objects.values_list("domain", flat=True)) == ["up.com"]


def test_find_intent_over_http_reports_an_adoption(api, workspace, tech):
    tech.zone.mx("acme.com", (1, "aspmx.l.google.com"))
    tech.zone.mx("static.com", (1, "aspmx.l.google.com"))
    body = {"company_domains": ["acme.com", "static.com"], "signals": ["technology"]}
    first = api.post("/v1/find_intent", body)
    assert first.status_code == 200, first.content
    assert first.json()["result"]["signals"] == []
    assert first.json()["service"]["credits_charged"] == "0"
    tech.zone.txt("acme.com", "v=spf1 include:servers.mcsv.net ~all")
    dnslayer.reset()
    with time_machine.travel(timezone.now() + timedelta(hours=2)):
        second = api.post("/v1/find_intent", body)
    assert second.status_code == 200, second.content
    [signal] = second.json()["result"]["signals"]
    assert signal["company_domain"] == "acme.com" and signal["signal"] == "technology"
    assert signal["summary"].startswith("Adopted Mailchimp (marketing automation)")
    # 10 for the company with a signal + 0.5 for the other one scanned
    assert second.json()["service"]["credits_charged"] == "10.5"


def test_periodic_rescan_finds_changes_between_calls(db, tech):
    from leads.verification import tasks

    tech.zone.mx("acme.com", (1, "aspmx.l.google.com"))
    DnsTechnology().find(query("acme.com"))
    assert tasks.technology_rescan() == 0  # scanned just now: not due
    tech.zone.txt("acme.com", "docusign=0000-1111")
    dnslayer.reset()
    with time_machine.travel(timezone.now() + timedelta(hours=2)):
        assert tasks.technology_rescan() == 1
    assert TechnologyChange.objects.get().added == ["DocuSign"]
    with time_machine.travel(timezone.now() + timedelta(days=200)):
        assert tasks.technology_rescan() == 0  # outside the intent window: no longer tracked


def test_amazon_mx_only_matches_ses_inbound():
    assert list(technology.detect(["inbound-smtp.eu-west-1.amazonaws.com"], [])) == ["Amazon SES"]
    assert technology.detect(["ec2-1-2-3-4.compute-1.amazonaws.com"], []) == {}


def test_scan_budget_bounds_a_slow_resolver(db, tech):
    tech.zone.mx("fast.com", (1, "aspmx.l.google.com"))
    tech.zone.mx("slow.com", (1, "aspmx.l.google.com"))
    release = threading.Event()
    original = technology.observe

    def observe(domain):
        if domain == "slow.com":
            release.wait(5)
        return original(domain)

    technology.observe = observe
    try:
        report = technology.technology_scan(domains=["fast.com", "slow.com"], budget=2.0)
    finally:
        release.set()
        technology.observe = original
    assert report.failed == ["slow.com"]
    assert report.scans["slow.com"] is None and report.scans["fast.com"].technologies == ["Google Workspace"]


@pytest.mark.django_db(transaction=True)
def test_two_scans_of_one_domain_at_once_record_one_change(monkeypatch):
    """Two workers store a scan of the same domain at once, both seeing a new stack. Locking the latest scan row
    was not enough: the second compared against the old scan (not the one just stored) and recorded the
    adoption twice. One writer per domain at a time, reading the latest scan afresh, records it once."""
    from django.db import connection

    from tests.rendezvous import Rendezvous, in_threads

    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL locks (SQLite's IMMEDIATE transactions queue the writers)")
    old = technology.Observation("acme.test", ["mx.acme.test"], [])
    new = technology.Observation("acme.test", ["aspmx.l.google.com"], ["v=spf1 include:_spf.google.com ~all"])
    technology.technology_record(old)
    meet, real_summary = Rendezvous(2), technology._summary

    def summary_after_both_read(*args):  # between the read of the latest scan and the change's insert
        meet.wait()
        return real_summary(*args)

    monkeypatch.setattr(technology, "_summary", summary_after_both_read)
    assert in_threads(*[lambda: technology.technology_record(new)] * 2) == []
    assert TechnologyScan.objects.filter(domain="acme.test").count() == 3
    assert TechnologyChange.objects.filter(domain="acme.test").count() == 1

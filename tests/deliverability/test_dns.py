"""DNS authentication and blocklist checks against a real DNS server (dnslib on loopback): SPF, DKIM, DMARC and
MX pass / fail / missing, DNSBL listings, error codes that are not listings, and the 24-hour grace."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from deliverability import checks
from deliverability import services as health
from leads.verification import dnslayer
from sending.dkim_keys import dkim_key_generate, dkim_public_record
from sending.testing import make_active_mailbox
from tests.verification.peers import DnsPeer

pytestmark = pytest.mark.django_db

ZONE = "dbl.spamhaus.org"


@pytest.fixture(scope="module")
def dns_peer():
    peer = DnsPeer()
    yield peer
    peer.stop()


@pytest.fixture
def zone(dns_peer, settings):
    settings.VERIFIER_NAMESERVERS = [dns_peer.nameserver]
    settings.VERIFIER_TIMEOUT_SECONDS = 2
    settings.DELIVERABILITY_DNS_CHECKS = True
    settings.DELIVERABILITY_DNSBL_ZONES = [ZONE]
    settings.DELIVERABILITY_SPF_REQUIRE = ["include:_spf.sender.test"]
    dns_peer.zone.clear()
    dnslayer.reset()
    yield dns_peer.zone
    dns_peer.zone.clear()
    dnslayer.reset()


def good_domain(zone, workspace, name="good-mail.test"):
    mb = make_active_mailbox(workspace, email=f"alex@{name}")
    domain = mb.domain
    dkim_key_generate(domain)
    domain.save()
    zone.txt(name, "v=spf1 include:relay.test ~all")
    zone.txt("relay.test", "v=spf1 include:_spf.sender.test -all")  # the sending path, one include deep
    zone.txt("_spf.sender.test", "v=spf1 ip4:192.0.2.0/24 -all")
    zone.txt(f"{domain.dkim_selector}._domainkey.{name}", dkim_public_record(domain))
    zone.txt(f"_dmarc.{name}", "v=DMARC1; p=none; rua=mailto:dmarc@" + name)
    zone.mx(name, (10, f"mx.{name}"))
    zone.a(f"mx.{name}", "192.0.2.10")
    return mb


def test_a_well_configured_domain_passes_every_check(zone, workspace, api):
    mb = good_domain(zone, workspace)
    domain = health.domain_check(domain_id=mb.domain_id)
    assert domain.checks == {"spf": "pass", "dkim": "pass", "dmarc": "pass", "mx": "pass"}
    assert domain.health_state == "healthy" and domain.blocklists == []
    row = api.get("/v1/domains").json()["domains"][0]
    assert row["checks"] == domain.checks and row["checked_at"] and row["state"] == "healthy"


@pytest.mark.parametrize("setup,check,expected", [
    (lambda z, n, s: None, "spf", "missing"),
    (lambda z, n, s: z.txt(n, "v=spf1 ip4:198.51.100.1 -all"), "spf", "fail"),  # not the sending path
    (lambda z, n, s: (z.txt(n, "v=spf1 include:_spf.sender.test -all"), z.txt(n, "v=spf1 -all")), "spf", "fail"),
    (lambda z, n, s: None, "dkim", "missing"),
    (lambda z, n, s: z.txt(f"{s}._domainkey.{n}", "v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAwrong"),
     "dkim", "fail"),
    (lambda z, n, s: z.txt(f"{s}._domainkey.{n}", "v=DKIM1; k=rsa; p="), "dkim", "fail"),  # revoked
    (lambda z, n, s: None, "dmarc", "missing"),
    (lambda z, n, s: z.txt(f"_dmarc.{n}", "v=DMARC1; rua=mailto:x@y.test"), "dmarc", "fail"),  # no policy
    (lambda z, n, s: None, "mx", "missing"),
    (lambda z, n, s: z.mx(n, (0, ".")), "mx", "fail"),  # null MX: replies and bounces cannot come back
])
def test_each_check_fails_or_is_missing(zone, workspace, setup, check, expected):
    name = f"{check}-{expected}.test"
    mb = make_active_mailbox(workspace, email=f"alex@{name}")
    dkim_key_generate(mb.domain)
    mb.domain.save()
    zone.a(name, "192.0.2.20")  # the name exists
    setup(zone, name, mb.domain.dkim_selector)
    domain = health.domain_check(domain_id=mb.domain_id)
    assert domain.checks[check] == expected
    assert domain.health_state == "warning" and f"dns_{check}" in domain.health_reasons
    mb.refresh_from_db()
    assert mb.health_state == "warning"


def test_a_dns_failure_pauses_after_24_hours_and_a_fix_before_only_warns(zone, workspace):
    mb = good_domain(zone, workspace, "grace-mail.test")
    zone.records.pop(("_dmarc.grace-mail.test", "TXT"))
    t0 = timezone.now()
    with time_machine.travel(t0, tick=False):
        domain = health.domain_check(domain_id=mb.domain_id)
    assert domain.health_state == "warning" and domain.health_reasons == ["dns_dmarc"]
    with time_machine.travel(t0 + timedelta(hours=23), tick=False):
        assert health.sweep()["domains"] == 1
    domain.refresh_from_db()
    assert domain.health_state == "warning"
    with time_machine.travel(t0 + timedelta(hours=24, minutes=1), tick=False):
        health.sweep()
    domain.refresh_from_db()
    mb.refresh_from_db()
    assert domain.health_state == "paused" and mb.health_state == "paused" and mb.health_reasons == ["dns_dmarc"]

    # fixed, then resumed by a human: healthy again; the grace of a new failure starts afresh
    zone.txt("_dmarc.grace-mail.test", "v=DMARC1; p=quarantine")
    dnslayer.reset()
    with time_machine.travel(t0 + timedelta(hours=25), tick=False):
        health.domain_check(domain_id=mb.domain_id)
        domain.refresh_from_db()
        assert domain.health_state == "paused"  # still paused: only a human lifts it
        health.domain_resume(workspace=workspace, domain_id=domain.pk, actor="owner@example.test")
    domain.refresh_from_db()
    mb.refresh_from_db()
    assert domain.health_state == "healthy" and mb.health_state == "healthy"


def test_a_resolver_failure_keeps_the_last_result(zone, workspace):
    mb = good_domain(zone, workspace, "flaky-mail.test")
    health.domain_check(domain_id=mb.domain_id)
    zone.servfail.add("flaky-mail.test")
    zone.servfail.add("_dmarc.flaky-mail.test")
    dnslayer.reset()
    domain = health.domain_check(domain_id=mb.domain_id)
    assert domain.checks == {"spf": "pass", "dkim": "pass", "dmarc": "pass", "mx": "pass"}
    assert domain.health_state == "healthy"


@pytest.mark.parametrize("answer,listed", [
    ("127.0.1.2", True),  # low-reputation domain
    ("127.0.1.4", True),  # phishing
    ("127.0.1.102", True),  # abused legit
    ("127.0.1.255", False),  # error: IP query against a domain list
    ("127.255.255.252", False),  # error: typing error in the zone name
    ("127.255.255.254", False),  # error: query through a public resolver
    ("127.255.255.255", False),  # error: excessive queries
    ("127.0.0.1", False),  # RFC 5782: never a listing
    ("192.0.2.55", False),  # a resolver rewriting NXDOMAIN
])
def test_dbl_return_codes(zone, workspace, answer, listed):
    mb = good_domain(zone, workspace, "bl-mail.test")
    zone.a(f"bl-mail.test.{ZONE}", answer)
    domain = health.domain_check(domain_id=mb.domain_id)
    assert domain.blocklists == ([ZONE] if listed else [])
    assert domain.health_state == ("paused" if listed else "healthy")
    mb.refresh_from_db()
    assert mb.health_state == domain.health_state
    if listed:
        assert domain.health_reasons == ["blocklisted"] and mb.health_reasons == ["blocklisted"]


def test_an_error_answer_neither_lists_nor_clears_and_nxdomain_clears(zone, workspace):
    mb = good_domain(zone, workspace, "relist-mail.test")
    zone.a(f"relist-mail.test.{ZONE}", "127.0.1.2")
    assert health.domain_check(domain_id=mb.domain_id).blocklists == [ZONE]
    zone.records.pop((f"relist-mail.test.{ZONE}", "A"))
    zone.a(f"relist-mail.test.{ZONE}", "127.255.255.254")  # refused: says nothing either way
    dnslayer.reset()  # the resolver caches answers within their TTL
    assert health.domain_check(domain_id=mb.domain_id).blocklists == [ZONE]
    zone.records.pop((f"relist-mail.test.{ZONE}", "A"))  # delisted: NXDOMAIN
    dnslayer.reset()
    domain = health.domain_check(domain_id=mb.domain_id)
    assert domain.blocklists == [] and domain.health_state == "paused"  # the pause stays until resumed


def test_generic_zones_list_any_127_answer_but_the_errors():
    assert checks.dnsbl_answer("bl.example.test", "127.0.0.2") == checks.LISTED
    assert checks.dnsbl_answer("bl.example.test", "127.0.0.1") == checks.ERROR
    assert checks.dnsbl_answer("bl.example.test", "127.255.255.254") == checks.ERROR
    assert checks.dnsbl_answer("key.dbl.dq.spamhaus.net", "127.0.1.255") == checks.ERROR


def test_the_sweep_checks_domains_due(zone, workspace, settings):
    mb = good_domain(zone, workspace, "sweep-mail.test")
    stats = health.sweep()
    assert stats["checked"] == 1
    mb.domain.refresh_from_db()
    assert mb.domain.dns_checked_at is not None
    assert health.sweep()["checked"] == 0  # checked less than DELIVERABILITY_CHECK_INTERVAL_SECONDS ago

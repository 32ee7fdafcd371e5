"""Technology signals from DNS: a company's mail and SaaS stack seen in its MX and TXT (SPF, verification) records.

A scan stores what was seen; a `technology` signal is a *change* between two consecutive scans of a domain (an
adoption, or a drop, is intent; a stack that has been there all along is not). The first scan of a domain is
the baseline and emits nothing.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from leads.verification import dnslayer
from leads.verification.models import TechnologyChange, TechnologyScan


@dataclass(frozen=True)
class Tech:
    name: str
    category: str


GOOGLE = Tech("Google Workspace", "email hosting")
M365 = Tech("Microsoft 365", "email hosting")

# MX exchange suffix (or a full-name pattern) -> technology
MX_RULES: list[tuple[str | re.Pattern, Tech]] = [
    ("aspmx.l.google.com", GOOGLE), ("googlemail.com", GOOGLE), ("smtp.google.com", GOOGLE),
    ("mail.protection.outlook.com", M365),
    ("pphosted.com", Tech("Proofpoint", "email security")),
    ("ppe-hosted.com", Tech("Proofpoint Essentials", "email security")),
    ("mimecast.com", Tech("Mimecast", "email security")),
    ("barracudanetworks.com", Tech("Barracuda", "email security")),
    ("iphmx.com", Tech("Cisco Secure Email", "email security")),
    ("messagelabs.com", Tech("Broadcom Email Security", "email security")),
    ("zoho.com", Tech("Zoho Mail", "email hosting")), ("zoho.eu", Tech("Zoho Mail", "email hosting")),
    ("messagingengine.com", Tech("Fastmail", "email hosting")),
    ("protonmail.ch", Tech("Proton Mail", "email hosting")),
    ("secureserver.net", Tech("GoDaddy Email", "email hosting")),
    ("mx.yandex.net", Tech("Yandex Mail", "email hosting")),
    (re.compile(r"^inbound-smtp\.[a-z0-9-]+\.amazonaws\.com$"), Tech("Amazon SES", "email delivery")),
    ("mailgun.org", Tech("Mailgun", "email delivery")),
]

# SPF include:/redirect= domain suffix -> technology
SPF_RULES: list[tuple[str, Tech]] = [
    ("_spf.google.com", GOOGLE),
    ("spf.protection.outlook.com", M365),
    ("sendgrid.net", Tech("SendGrid", "email delivery")),
    ("mailgun.org", Tech("Mailgun", "email delivery")),
    ("amazonses.com", Tech("Amazon SES", "email delivery")),
    ("mtasv.net", Tech("Postmark", "email delivery")),
    ("sparkpostmail.com", Tech("SparkPost", "email delivery")),
    ("mailjet.com", Tech("Mailjet", "email delivery")),
    ("servers.mcsv.net", Tech("Mailchimp", "marketing automation")),
    ("mandrillapp.com", Tech("Mailchimp Transactional", "email delivery")),
    ("hubspotemail.net", Tech("HubSpot", "marketing automation")),
    ("mktomail.com", Tech("Marketo", "marketing automation")),
    ("pardot.com", Tech("Salesforce Pardot", "marketing automation")),
    ("_spf.salesforce.com", Tech("Salesforce", "crm")),
    ("createsend.com", Tech("Campaign Monitor", "marketing automation")),
    ("constantcontact.com", Tech("Constant Contact", "marketing automation")),
    ("mail.zendesk.com", Tech("Zendesk", "customer support")),
    ("freshdesk.com", Tech("Freshdesk", "customer support")),
    ("helpscoutemail.com", Tech("Help Scout", "customer support")),
    ("intercom.io", Tech("Intercom", "customer support")),
    ("zoho.com", Tech("Zoho Mail", "email hosting")), ("zoho.eu", Tech("Zoho Mail", "email hosting")),
    ("pphosted.com", Tech("Proofpoint", "email security")),
    ("mimecast.com", Tech("Mimecast", "email security")),
]

# TXT record prefix (domain verification tokens) -> technology
TXT_RULES: list[tuple[str, Tech]] = [
    ("google-site-verification=", Tech("Google Search Console", "web analytics")),
    ("ms=ms", M365),
    ("atlassian-domain-verification=", Tech("Atlassian", "collaboration")),
    ("slack-domain-verification=", Tech("Slack", "collaboration")),
    ("zoom_verify_", Tech("Zoom", "collaboration")),
    ("miro-verification=", Tech("Miro", "collaboration")),
    ("dropbox-domain-verification=", Tech("Dropbox", "collaboration")),
    ("smartsheet-site-validation=", Tech("Smartsheet", "collaboration")),
    ("cisco-ci-domain-verification=", Tech("Webex", "collaboration")),
    ("docusign=", Tech("DocuSign", "e-signature")),
    ("adobe-idp-site-verification=", Tech("Adobe", "design")),
    ("canva-site-verification=", Tech("Canva", "design")),
    ("facebook-domain-verification=", Tech("Meta Business", "advertising")),
    ("apple-domain-verification=", Tech("Apple Business", "devices")),
    ("stripe-verification=", Tech("Stripe", "payments")),
    ("onetrust-domain-verification=", Tech("OneTrust", "privacy")),
    ("knowbe4-site-verification=", Tech("KnowBe4", "security training")),
    ("segment-site-verification=", Tech("Segment", "customer data")),
    ("hubspot-developer-verification=", Tech("HubSpot", "marketing automation")),
    ("logmein-verification-code=", Tech("LogMeIn", "it management")),
]

_SPF_TERM = re.compile(r"(?:^|\s)[+\-~?]?(?:include:|redirect=)(\S+)", re.I)


def _match_suffix(value: str, suffix: str | re.Pattern) -> bool:
    value = value.lower().rstrip(".")
    if isinstance(suffix, re.Pattern):
        return bool(suffix.match(value))
    return value == suffix or value.endswith("." + suffix)


def detect(mx: list[str], txt: list[str]) -> dict[str, dict]:
    """Technologies seen in the records: {name: {"category", "evidence": [record, ...]}}."""
    found: dict[str, dict] = {}

    def add(tech: Tech, evidence: str):
        entry = found.setdefault(tech.name, {"category": tech.category, "evidence": []})
        if evidence not in entry["evidence"]:
            entry["evidence"].append(evidence)

    for host in mx:
        for suffix, tech in MX_RULES:
            if _match_suffix(host, suffix):
                add(tech, f"MX {host}")
                break
    for record in txt:
        low = record.strip().lower()
        if low.startswith("v=spf1"):
            for target in _SPF_TERM.findall(record):
                for suffix, tech in SPF_RULES:
                    if _match_suffix(target, suffix):
                        add(tech, f"SPF include {target.lower()}")
                        break
            continue
        for prefix, tech in TXT_RULES:
            if low.startswith(prefix):
                add(tech, f"TXT {record.strip()[:120]}")
                break
    return found


@dataclass
class Observation:
    domain: str
    mx: list[str]
    txt: list[str]
    error: str = ""  # "nxdomain" or a DNS failure; no scan is stored then


def observe(domain: str) -> Observation:
    """The DNS half of a scan (no database), safe to run in threads."""
    try:
        return Observation(domain, dnslayer.mx_hosts(domain), sorted(dnslayer.txt_records(domain)))
    except dnslayer.DomainNotFound:
        return Observation(domain, [], [], error="nxdomain")
    except dnslayer.DnsFailure as exc:
        return Observation(domain, [], [], error=str(exc) or "dns_error")


def _summary(added: list[str], removed: list[str], found: dict, previous: dict) -> str:
    def named(names, table):
        return ", ".join(f"{n} ({table[n]['category']})" if n in table else n for n in names)

    parts = []
    if added:
        parts.append(f"Adopted {named(added, found)}")
    if removed:
        parts.append(f"dropped {named(removed, previous)}" if parts else f"Dropped {named(removed, previous)}")
    return ("; ".join(parts) + " (seen in DNS MX/SPF/TXT records)")[:500]


def technology_record(obs: Observation, *, now=None) -> TechnologyScan | None:
    """Store a scan from an observation; record a TechnologyChange when the stack differs from the previous
    scan. Returns the scan, or None when the DNS gave no usable answer (nothing is stored: a failed lookup is not
    an empty stack)."""
    if obs.error:
        return None
    now = now or timezone.now()
    found = detect(obs.mx, obs.txt)
    names = sorted(found)
    with transaction.atomic():
        # one writer per domain at a time, then the latest scan read afresh: locking the latest row is not enough
        # (a second writer would wait on it and then compare against it, not against the scan just inserted, and
        # a domain's first scan has no row to lock). SQLite's IMMEDIATE transactions already queue writers.
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [f"technology_scan:{obs.domain}"])
        previous = TechnologyScan.objects.filter(domain=obs.domain).order_by("-scanned_at", "-id").first()
        scan = TechnologyScan.objects.create(domain=obs.domain, technologies=names,
                                             records={"mx": obs.mx, "txt": obs.txt, "found": found},
                                             scanned_at=now)
        if previous is not None and previous.technologies != names:
            before = set(previous.technologies)
            added = sorted(set(names) - before)
            removed = sorted(before - set(names))
            TechnologyChange.objects.create(
                domain=obs.domain, scan=scan, previous_scan=previous, added=added, removed=removed,
                summary=_summary(added, removed, found, previous.records.get("found", {})), observed_at=now,
            )
    return scan


@dataclass
class ScanReport:
    scans: dict  # domain -> the latest TechnologyScan (new or recent), or None (NXDOMAIN or DNS failure)
    failed: list[str]  # domains whose lookup failed (SERVFAIL, timeout): not NXDOMAIN


def technology_scan(*, domains: list[str], force: bool = False, workers: int = 16,
                    budget: float | None = None) -> ScanReport:
    """Scan domains whose last scan is older than DNS_TECHNOLOGY_RESCAN_SECONDS (all of them with `force`).
    DNS lookups run in parallel threads, all within `budget` seconds (default: two DNS timeouts plus one), so a
    dead resolver cannot hold find_intent for minutes; a domain not observed in time counts as failed. The
    database writes stay on the calling thread."""
    domains = sorted({d.strip().lower().rstrip(".") for d in domains if d and d.strip()})
    fresh_since = timezone.now() - timedelta(seconds=settings.DNS_TECHNOLOGY_RESCAN_SECONDS)
    out: dict[str, TechnologyScan | None] = {}
    failed: list[str] = []
    todo = []
    for domain in domains:
        recent = None if force else (TechnologyScan.objects.filter(domain=domain, scanned_at__gte=fresh_since)
                                     .order_by("-scanned_at", "-id").first())
        if recent is not None:
            out[domain] = recent
        else:
            todo.append(domain)
    if todo:
        if budget is None:
            budget = 2 * float(settings.VERIFIER_TIMEOUT_SECONDS) + 1
        pool = ThreadPoolExecutor(max_workers=max(1, min(workers, len(todo))))
        futures = {pool.submit(observe, d): d for d in todo}
        done, _pending = wait(futures, timeout=budget)
        pool.shutdown(wait=False, cancel_futures=True)
        observations = [f.result() if f in done else Observation(futures[f], [], [], error="timeout")
                        for f in futures]
        for obs in observations:
            out[obs.domain] = technology_record(obs)
            if obs.error and obs.error != "nxdomain":
                failed.append(obs.domain)
    return ScanReport(out, failed)


def technology_changes(*, domains: list[str], since) -> list[TechnologyChange]:
    """Stack changes observed on or after `since` (a date) for these domains, newest first."""
    return list(TechnologyChange.objects.filter(domain__in=domains, observed_at__date__gte=since)
                .order_by("domain", "-observed_at", "-id"))


def technology_rescan_due(*, limit: int = 500) -> int:
    """Re-scan domains that were scanned within the intent window and whose latest scan is older than the
    rescan interval, so that a stack change is seen even between two find_intent calls. Returns how many."""
    from django.db.models import Max

    now = timezone.now()
    window_start = now - timedelta(days=settings.LEADS_INTENT_WINDOW_DAYS)
    stale_before = now - timedelta(seconds=settings.DNS_TECHNOLOGY_RESCAN_SECONDS)
    due = list(TechnologyScan.objects.values("domain").annotate(last=Max("scanned_at"))
               .filter(last__gte=window_start, last__lt=stale_before).order_by("last")
               .values_list("domain", flat=True)[:limit])
    if due:
        technology_scan(domains=due, force=True)
    return len(due)

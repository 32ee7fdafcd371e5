"""DNS checks of a sending domain: authentication (SPF, DKIM, DMARC, MX) and DNS blocklist listings.

Every lookup goes through the verifier's DNS layer (`VERIFIER_NAMESERVERS`, `VERIFIER_TIMEOUT_SECONDS`). A lookup
that gets no definite answer (timeout, SERVFAIL) raises `dnslayer.DnsFailure`: the caller keeps the previous
result of that check rather than calling a domain broken because a resolver was.
"""

from __future__ import annotations

import ipaddress
import logging

from leads.verification import dnslayer

logger = logging.getLogger("deliverability")

PASS, FAIL, MISSING = "pass", "fail", "missing"
CHECKS = ("spf", "dkim", "dmarc", "mx")
LISTED, CLEAR, ERROR = "listed", "clear", "error"

# Spamhaus DBL, documented return codes ("Available Zones", docs.spamhaus.com, datasets/040-zones): these are
# listings; 127.0.1.255 ("IP queries not allowed") and 127.255.255.252/254/255 (typing error in the zone name,
# query through a public resolver, excessive queries) are errors, never listings.
SPAMHAUS_DBL_LISTED = frozenset({"127.0.1.2", "127.0.1.4", "127.0.1.5", "127.0.1.6", "127.0.1.102", "127.0.1.103",
                                 "127.0.1.104", "127.0.1.105", "127.0.1.106"})
SPF_MAX_LOOKUPS = 10  # RFC 7208 4.6.4


def _txt(name: str) -> list[str]:
    try:
        return dnslayer.txt_records(name)
    except dnslayer.DomainNotFound:
        return []


def _spf_records(domain: str) -> list[str]:
    return [t.strip() for t in _txt(domain) if t.strip().lower() == "v=spf1" or t.strip().lower().startswith("v=spf1 ")]


def _spf_contains(domain: str, mechanism: str, budget: list[int]) -> bool:
    """Whether `domain`'s SPF record authorizes `mechanism` itself or through its includes / redirect (at most
    SPF_MAX_LOOKUPS records read, as a receiver would)."""
    if budget[0] <= 0:
        return False
    budget[0] -= 1
    records = _spf_records(domain)
    if len(records) != 1:
        return False
    want = mechanism.lower().lstrip("+")
    for term in records[0].split()[1:]:
        t = term.lower().lstrip("+")
        if t == want:
            return True
        if t.startswith("include:") and _spf_contains(t[len("include:"):], mechanism, budget):
            return True
        if t.startswith("redirect=") and _spf_contains(t[len("redirect="):], mechanism, budget):
            return True
    return False


def check_spf(domain: str, required: list[str]) -> str:
    """`missing`: no SPF record. `fail`: more than one (a permanent error for receivers, RFC 7208 4.5), or one that
    does not authorize the sending path (`required`: each mechanism must be reachable through includes); with no
    known sending path, one that authorizes nobody (`v=spf1 -all`). Else `pass`."""
    records = _spf_records(domain)
    if not records:
        return MISSING
    if len(records) > 1:
        return FAIL
    if required:
        budget = [SPF_MAX_LOOKUPS]
        return PASS if all(_spf_contains(domain, m, budget) for m in required) else FAIL
    terms = [t.lower().lstrip("+") for t in records[0].split()[1:]]
    authorizes = any(t.split(":")[0].split("/")[0] in ("a", "mx", "ip4", "ip6", "include", "exists", "ptr")
                     or t.startswith("redirect=") or t == "all" for t in terms)
    return PASS if authorizes else FAIL


def _tags(record: str) -> dict[str, str]:
    out = {}
    for part in record.split(";"):
        key, eq, value = part.partition("=")
        if eq:
            out[key.strip().lower()] = value.strip()
    return out


def check_dkim(domain: str, selector: str, public_record: str | None) -> str:
    """The record at `<selector>._domainkey.<domain>` must carry the public key the service signs with:
    `missing` without a record (or without a signing key), `fail` with a different or revoked key."""
    if not selector or not public_record:
        return MISSING
    records = [r for r in _txt(f"{selector}._domainkey.{domain}") if "p=" in r.replace(" ", "")]
    if not records:
        return MISSING
    want = "".join(_tags(public_record).get("p", "").split())
    for record in records:
        if "".join(_tags(record).get("p", "").split()) == want:
            return PASS
    return FAIL


def check_dmarc(domain: str) -> str:
    """One `v=DMARC1` record at `_dmarc.<domain>` with a policy (`p=none|quarantine|reject`): `pass`; several, or
    none with a valid policy: `fail`; no record: `missing`."""
    records = [r for r in _txt(f"_dmarc.{domain}") if r.strip().lower().startswith("v=dmarc1")]
    if not records:
        return MISSING
    if len(records) > 1:
        return FAIL
    return PASS if _tags(records[0]).get("p", "").lower() in ("none", "quarantine", "reject") else FAIL


def check_mx(domain: str) -> str:
    """MX records that accept mail (replies and bounces come back there): `pass`; a null MX (RFC 7505): `fail`;
    none: `missing`."""
    route = dnslayer.mail_route(domain)
    if route.kind == "mx":
        return PASS
    if route.kind == "null_mx":
        return FAIL
    return MISSING


def dnsbl_answer(zone: str, address: str) -> str:
    """What one A record answered by a DNSBL means: `listed` or `error` (never a listing).

    Errors: anything outside 127.0.0.0/8 (a resolver rewriting NXDOMAIN), 127.0.0.1 (RFC 5782 2.1: never a
    listing), 127.255.255.0/24 (Spamhaus' error answers); on a Spamhaus DBL zone (dbl.spamhaus.org, or its DQS
    form `<key>.dbl.dq.spamhaus.net`) every code not documented as a listing, 127.0.1.255 included."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return ERROR
    if ip.version != 4 or ip not in ipaddress.ip_network("127.0.0.0/8"):
        return ERROR
    if address == "127.0.0.1" or ip in ipaddress.ip_network("127.255.255.0/24"):
        return ERROR
    zone = zone.lower().strip(".")
    if zone == "dbl.spamhaus.org" or zone.endswith(".dbl.dq.spamhaus.net"):
        return LISTED if address in SPAMHAUS_DBL_LISTED else ERROR
    return LISTED


def check_blocklist(domain: str, zone: str) -> tuple[str, list[str]]:
    """(`listed` | `clear` | `error`, the answers). NXDOMAIN or no A record: clear; one listing answer: listed;
    only error answers, or no definite DNS answer: error (the previous result stands)."""
    name = f"{domain}.{zone}"
    try:
        addresses = [a for a in dnslayer.host_addresses(name) if ":" not in a]
    except dnslayer.DomainNotFound:
        return CLEAR, []
    except dnslayer.DnsFailure as exc:
        logger.warning("blocklist %s: no answer for %s (%s)", zone, domain, exc)
        return ERROR, []
    if not addresses:
        return CLEAR, []
    verdicts = [dnsbl_answer(zone, a) for a in addresses]
    if LISTED in verdicts:
        return LISTED, addresses
    logger.warning("blocklist %s answered %s for %s: an error code, not a listing", zone, addresses, domain)
    return ERROR, addresses

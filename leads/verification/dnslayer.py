"""The DNS layer shared by the email verifier and the technology scanner (dnspython).

Queries go to `VERIFIER_NAMESERVERS` (comma-separated `host:port`; the system resolver when empty), with
`VERIFIER_TIMEOUT_SECONDS` as the lifetime of each lookup. Answers are cached per resolver within their TTL.
"""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass, field

import dns.exception
import dns.name
import dns.nameserver
import dns.rdatatype
import dns.resolver
from django.conf import settings


class DnsFailure(Exception):
    """The DNS could not give a definite answer (SERVFAIL, timeout, no nameserver answered)."""


class DomainNotFound(Exception):
    """NXDOMAIN: the name does not exist."""


@dataclass
class MailRoute:
    """Where mail for a domain goes.

    kind: `mx` (hosts from MX records, preference order), `implicit` (no MX: the domain's own A/AAAA, RFC 5321
    5.1), `null_mx` (RFC 7505: the domain accepts no mail), `none` (neither MX nor A/AAAA), `nxdomain`."""

    kind: str
    hosts: list[str] = field(default_factory=list)


_lock = threading.Lock()
_resolvers: dict[tuple, dns.resolver.Resolver] = {}


def _parse_nameserver(entry: str) -> dns.nameserver.Do53Nameserver:
    entry = entry.strip()
    if entry.startswith("["):  # [v6]:port
        host, _, port = entry[1:].partition("]:")
        return dns.nameserver.Do53Nameserver(host, int(port or 53))
    if entry.count(":") == 1:
        host, port = entry.split(":")
        return dns.nameserver.Do53Nameserver(host, int(port))
    return dns.nameserver.Do53Nameserver(entry, 53)


def resolver() -> dns.resolver.Resolver:
    """The resolver for the current settings (one per configuration, shared by threads, with an answer cache)."""
    servers = tuple(settings.VERIFIER_NAMESERVERS)
    timeout = float(settings.VERIFIER_TIMEOUT_SECONDS)
    key = (servers, timeout)
    res = _resolvers.get(key)
    if res is not None:
        return res
    with _lock:
        res = _resolvers.get(key)
        if res is None:
            res = dns.resolver.Resolver(configure=not servers)
            if servers:
                res.nameservers = [_parse_nameserver(s) for s in servers]
            res.timeout = timeout
            res.lifetime = timeout
            res.cache = dns.resolver.LRUCache(50_000)
            _resolvers[key] = res
    return res


def reset() -> None:
    """Forget every resolver and its cache (tests, and after a configuration change)."""
    with _lock:
        _resolvers.clear()


def _query(name: str, rdtype: str):
    """Answer rrset or None (no record of that type). Raises DomainNotFound or DnsFailure."""
    try:
        return resolver().resolve(name, rdtype, search=False, raise_on_no_answer=False)
    except dns.resolver.NXDOMAIN as exc:
        raise DomainNotFound(name) from exc
    except (dns.resolver.NoNameservers, dns.exception.Timeout, dns.resolver.YXDOMAIN) as exc:
        raise DnsFailure(f"{rdtype} {name}: {exc.__class__.__name__}") from exc
    except dns.exception.DNSException as exc:
        raise DnsFailure(f"{rdtype} {name}: {exc}") from exc


def _has_address(name: str) -> bool:
    for rdtype in ("A", "AAAA"):
        answer = _query(name, rdtype)
        if answer.rrset:
            return True
    return False


def mail_route(domain: str) -> MailRoute:
    """MX hosts in preference order (equal preferences shuffled, RFC 5321 5.1), null MX, or the A/AAAA fallback.

    Raises DnsFailure when the DNS cannot answer definitely."""
    try:
        answer = _query(domain, "MX")
    except DomainNotFound:
        return MailRoute("nxdomain")
    records = list(answer.rrset or [])
    if records:
        real = [r for r in records if r.exchange != dns.name.root]
        if not real:
            return MailRoute("null_mx")
        random.shuffle(real)
        real.sort(key=lambda r: r.preference)
        hosts: list[str] = []
        for r in real:
            host = r.exchange.to_text(omit_final_dot=True).lower()
            if host not in hosts:
                hosts.append(host)
        return MailRoute("mx", hosts)
    try:
        if _has_address(domain):
            return MailRoute("implicit", [domain])
    except DomainNotFound:
        return MailRoute("nxdomain")
    return MailRoute("none")


def host_addresses(host: str) -> list[str]:
    """IPv4 then IPv6 addresses of a mail host. Raises DomainNotFound or DnsFailure."""
    out: list[str] = []
    for rdtype in ("A", "AAAA"):
        answer = _query(host, rdtype)
        out.extend(r.address for r in (answer.rrset or []))
    return out


def txt_records(domain: str) -> list[str]:
    """TXT strings of a name (each record's character-strings joined). Raises DomainNotFound or DnsFailure."""
    answer = _query(domain, "TXT")
    out = []
    for r in answer.rrset or []:
        out.append(b"".join(r.strings).decode("utf-8", "replace"))
    return out


def mx_hosts(domain: str) -> list[str]:
    """MX exchange names of a domain (empty when none or null MX). Raises DomainNotFound or DnsFailure."""
    answer = _query(domain, "MX")
    return sorted({r.exchange.to_text(omit_final_dot=True).lower() for r in (answer.rrset or [])
                   if r.exchange != dns.name.root})

"""The verifier engine: syntax -> lists -> DNS -> SMTP dialogue -> status (CONTRACT 4.3).

Database-free: what it needs to remember (catch-all domains, delivery evidence) comes through a `Memory`
object, so the benchmark and the unit tests can run it alone. `services.verification_run` wires the database.

Statuses and reasons:

| status | reason |
|---|---|
| valid | `accepted` |
| invalid | `invalid_syntax` (syntax only: names under `.test` and other special-use names are looked up like any other), `disposable`, `no_domain` (NXDOMAIN; `.invalid` and `.localhost` without a lookup, RFC 6761), `null_mx` (RFC 7505), `no_mail_host` (no MX and no A/AAAA, or every MX host is a name that does not exist), `user_unknown`, `rejected` (a 5xx to RCPT naming no policy reason) |
| risky | `role_account` (deliverable role address), `mailbox_full` (452 4.2.2 / 552 5.2.2) |
| catch_all_valid | `delivery_evidence` |
| catch_all_unknown | `catch_all` |
| unknown | `blocked` (policy or blocklist rejection of the prober), `blocked_address` (MX on a private network), `greylisted`, `temporary_failure`, `timeout`, `unreachable`, `dns_error`, `protocol_error`, `busy` (the per-host connection limit stayed full) |
"""

from __future__ import annotations

import ipaddress
import logging
import secrets
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field

from django.conf import settings

from core import emails
from leads.verification import dnslayer, lists
from leads.verification import smtpclient as sc

logger = logging.getLogger("leads.verification")

MAX_MX_HOSTS = 5
MAX_ADDRESSES_PER_HOST = 2


@dataclass
class Config:
    port: int
    timeout: float
    helo_name: str
    mail_from: str
    allow_private: bool
    greylist_delay: float
    per_host_limit: int
    total_timeout: float = 60.0

    @classmethod
    def from_settings(cls) -> Config:
        return cls(
            port=int(settings.VERIFIER_SMTP_PORT),
            timeout=float(settings.VERIFIER_TIMEOUT_SECONDS),
            helo_name=smtp_domain(settings.VERIFIER_HELO_NAME),
            mail_from=_mail_from(settings.VERIFIER_MAIL_FROM),
            allow_private=bool(settings.VERIFIER_ALLOW_PRIVATE_NETWORKS),
            greylist_delay=float(settings.VERIFIER_GREYLIST_RETRY_SECONDS),
            per_host_limit=int(settings.VERIFIER_MAX_CONNECTIONS_PER_HOST),
            total_timeout=float(settings.VERIFIER_TOTAL_TIMEOUT_SECONDS),
        )


def smtp_domain(name: str) -> str:
    """A HELO/EHLO argument: a domain, or an address literal (RFC 5321 4.1.3) when the name is an IP address
    (as the default is when BASE_URL is http://127.0.0.1:8000)."""
    name = (name or "localhost").strip().strip("[]")
    try:
        addr = ipaddress.ip_address(name)
    except ValueError:
        return name
    return f"[IPv6:{addr}]" if addr.version == 6 else f"[{addr}]"


def _mail_from(address: str) -> str:
    local, sep, domain = (address or "").rpartition("@")
    return f"{local}@{smtp_domain(domain)}" if sep else address


class Memory:
    """What the engine remembers between calls. This base class remembers nothing."""

    def catch_all(self, domain: str) -> bool | None:
        """True/False when the domain's catch-all behaviour was probed recently; None to probe again."""
        return None

    def remember_catch_all(self, domain: str, is_catch_all: bool, mx_host: str) -> None:
        pass

    def has_delivery_evidence(self, email_key: str) -> bool:
        return False


class DictMemory(Memory):
    """In-process memory (benchmarks, tests)."""

    def __init__(self):
        self.domains: dict[str, bool] = {}
        self.evidence: set[str] = set()

    def catch_all(self, domain):
        return self.domains.get(domain)

    def remember_catch_all(self, domain, is_catch_all, mx_host):
        self.domains[domain] = is_catch_all

    def has_delivery_evidence(self, email_key):
        return email_key in self.evidence


@dataclass
class Result:
    email: str  # as given
    key: str  # lower-cased lookup key ("" when the syntax is invalid)
    domain: str
    status: str
    reason: str
    mx_host: str | None = None
    is_catch_all_domain: bool = False
    is_disposable: bool = False
    is_role_account: bool = False
    is_free_provider: bool = False
    smtp_code: int | None = None
    smtp_message: str = ""
    catch_all_probed: bool = False
    trace: list[str] = field(default_factory=list)


# --- the private-network guard ------------------------------------------------------------------------
# One guard for every outbound connection (core.outbound): globally routable unicast addresses only.
from core.outbound import address_allowed  # noqa: E402, F401

# --- the per-host concurrency limit ---------------------------------------------------------------------
_slots_lock = threading.Lock()
_slots: dict[tuple[str, int], threading.BoundedSemaphore] = {}


@contextmanager
def host_slot(host: str, limit: int, wait: float, *, lease: float = 120.0):
    """At most `limit` concurrent probes per MX host; yields False when no slot freed within `wait` seconds.

    With REDIS_URL set the limit is shared by every process (a sorted set of leases per host, taken by an atomic
    script; a lease left by a crashed process expires after `lease` seconds); otherwise it is per process."""
    url = settings.REDIS_URL
    if url:
        with _shared_slot(url, host, limit, wait, lease) as acquired:
            yield acquired
        return
    with _slots_lock:
        sem = _slots.get((host, limit))
        if sem is None:
            sem = _slots[(host, limit)] = threading.BoundedSemaphore(limit)
    acquired = sem.acquire(timeout=wait)
    try:
        yield acquired
    finally:
        if acquired:
            sem.release()


_ACQUIRE = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[3]) then
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
  redis.call('EXPIRE', KEYS[1], ARGV[5])
  return 1
end
return 0
"""
_redis_clients: dict[str, object] = {}


def _redis(url: str):
    client = _redis_clients.get(url)
    if client is None:
        import redis

        client = _redis_clients[url] = redis.Redis.from_url(url)
    return client


@contextmanager
def _shared_slot(url: str, host: str, limit: int, wait: float, lease: float):
    client = _redis(url)
    key = f"verifier:mx-slots:{host}"
    token = secrets.token_hex(8)
    give_up = time.monotonic() + wait
    acquired = False
    while True:
        now = time.time()
        acquired = bool(client.eval(_ACQUIRE, 1, key, now, now + lease, limit, token, int(lease) + 60))
        if acquired or time.monotonic() >= give_up:
            break
        time.sleep(min(0.05, max(0.0, give_up - time.monotonic())))
    try:
        yield acquired
    finally:
        if acquired:
            client.zrem(key, token)


# --- one SMTP dialogue ------------------------------------------------------------------------------------
@dataclass
class Probe:
    """The outcome of one dialogue with one MX address.

    outcome: `verdict` (the RCPT for the address was answered: see `verdict`), `blocked`, `transient` (4xx:
    greylisted or temporary), `timeout`, `unreachable`, `protocol_error`, `tls_failed`, `busy`."""

    outcome: str
    verdict: str | None = None
    catch_all: bool | None = None
    reply: sc.Reply | None = None
    transient_kind: str = ""


def _probe(ip: str, host: str, local_part: str, domain: str, random_local: str | None, cfg: Config,
           use_tls: bool = True) -> Probe:
    try:
        session = sc.Session(ip, cfg.port, cfg.timeout)
    except sc.SmtpTimeout:
        return Probe("timeout")
    except OSError:
        return Probe("unreachable")
    polite = True
    try:
        banner = session.read_reply()
        if banner.code != 220:
            if banner.code >= 500 and sc._BLOCK.search(banner.text):
                return Probe("blocked", reply=banner)
            return Probe("unreachable", reply=banner)
        reply = session.command(f"EHLO {cfg.helo_name}")
        features: set[str] = set()
        if reply.code == 250:
            features = sc.ehlo_features(reply)
        else:
            reply = session.command(f"HELO {cfg.helo_name}")
            if reply.code != 250:
                kind = sc.classify_transient(reply)
                return Probe("blocked" if kind == sc.BLOCKED else "transient", reply=reply, transient_kind=kind)
        if use_tls and "STARTTLS" in features:
            tls_reply = session.starttls(host)
            if tls_reply.code == 220:
                reply = session.command(f"EHLO {cfg.helo_name}")
                if reply.code != 250:
                    return Probe("protocol_error", reply=reply)
                features = sc.ehlo_features(reply)
        address = f"{local_part}@{domain}"
        smtputf8 = " SMTPUTF8" if not address.isascii() and "SMTPUTF8" in features else ""
        reply = session.command(f"MAIL FROM:<{cfg.mail_from}>{smtputf8}")
        if reply.code != 250:
            kind = sc.classify_transient(reply)
            return Probe("blocked" if kind == sc.BLOCKED else "transient", reply=reply, transient_kind=kind)
        catch_all = None
        if random_local is not None:
            reply = session.command(f"RCPT TO:<{random_local}@{domain}>")
            kind = sc.classify_rcpt(reply)
            if kind in (sc.GREYLISTED, sc.TEMPORARY):
                return Probe("transient", reply=reply, transient_kind=kind)
            if kind == sc.BLOCKED:
                return Probe("blocked", reply=reply)
            catch_all = kind == sc.ACCEPTED
        reply = session.command(f"RCPT TO:<{address}>")
        kind = sc.classify_rcpt(reply)
        if kind in (sc.GREYLISTED, sc.TEMPORARY):
            return Probe("transient", reply=reply, transient_kind=kind, catch_all=catch_all)
        if kind == sc.BLOCKED:
            return Probe("blocked", reply=reply)
        return Probe("verdict", verdict=kind, catch_all=catch_all, reply=reply)
    except sc.SmtpTimeout:
        polite = False
        return Probe("timeout")
    except sc.SmtpClosed:
        polite = False
        return Probe("unreachable")
    except sc.SmtpTlsError:
        polite = False
        return Probe("tls_failed")
    except sc.SmtpProtocolError:
        polite = False
        return Probe("protocol_error")
    finally:
        if polite:
            session.quit()  # every dialogue that is still in order ends with QUIT
        else:
            session.close()


# --- the whole verification -----------------------------------------------------------------------------
def _random_local() -> str:
    return f"nx{secrets.token_hex(8)}"


def parse_address(address: str) -> tuple[str, str, str] | None:
    """(local part as given, lower-cased ASCII domain, lower-cased lookup key), or None when malformed: the one
    syntax rule of `core.emails.parse_address` (special-use names such as `.test` are names like any other)."""
    parsed = emails.parse_address(address)
    return (parsed.local_part, parsed.domain, parsed.key) if parsed else None


def verify(address: str, *, memory: Memory | None = None, config: Config | None = None,
           sleep: Callable[[float], None] = time.sleep) -> Result:
    """Verify one address. Never raises for anything the outside world does; returns a `Result`."""
    memory = memory or Memory()
    cfg = config or Config.from_settings()
    deadline = time.monotonic() + cfg.total_timeout  # DNS included
    parsed = parse_address(address)
    if parsed is None:
        return Result(email=address, key="", domain="", status="invalid", reason="invalid_syntax")
    local_part, domain, key = parsed
    result = Result(
        email=address, key=key, domain=domain, status="unknown", reason="",
        is_disposable=lists.is_disposable(domain),
        is_role_account=lists.is_role_account(local_part),
        is_free_provider=lists.is_free_provider(domain),
    )

    def done(status: str, reason: str, reply: sc.Reply | None = None) -> Result:
        result.status, result.reason = status, reason
        if reply is not None:
            result.smtp_code, result.smtp_message = reply.code, reply.summary
        return result

    if result.is_disposable:
        return done("invalid", "disposable")
    if emails.parse_address(address).never_exists:  # .invalid / .localhost: RFC 6761 lets us answer without DNS
        result.trace.append(f"{domain}: a reserved name that never exists (RFC 6761)")
        return done("invalid", "no_domain")

    try:
        route = dnslayer.mail_route(domain)
    except dnslayer.DnsFailure as exc:
        result.trace.append(str(exc))
        return done("unknown", "dns_error")
    if route.kind == "nxdomain":
        return done("invalid", "no_domain")
    if route.kind == "null_mx":
        return done("invalid", "null_mx")
    if route.kind == "none":
        return done("invalid", "no_mail_host")

    # Resolve the MX hosts and apply the private-network guard before any connection.
    candidates: list[tuple[str, list[str]]] = []
    blocked_hosts = dns_failures = 0
    for host in route.hosts[:MAX_MX_HOSTS]:
        if candidates and time.monotonic() >= deadline:
            break
        try:
            addresses = dnslayer.host_addresses(host)
        except dnslayer.DomainNotFound:
            result.trace.append(f"{host}: NXDOMAIN")
            continue
        except dnslayer.DnsFailure as exc:
            result.trace.append(str(exc))
            dns_failures += 1
            continue
        allowed = [a for a in addresses if address_allowed(a, allow_private=cfg.allow_private)]
        if addresses and not allowed:
            result.trace.append(f"{host}: only non-public addresses {addresses}")
            blocked_hosts += 1
            continue
        if allowed:
            candidates.append((host, allowed[:MAX_ADDRESSES_PER_HOST]))
    if not candidates:
        if blocked_hosts:
            result.mx_host = route.hosts[0]
            return done("unknown", "blocked_address")
        if dns_failures:
            return done("unknown", "dns_error")
        return done("invalid", "no_mail_host")

    remembered = memory.catch_all(domain)
    failures: list[str] = []
    last_reply: sc.Reply | None = None
    for host, ips in candidates:
        if time.monotonic() >= deadline:
            failures.append("timeout")
            break
        result.mx_host = host
        probe = _probe_host_limited(host, ips, local_part, domain, remembered, cfg, deadline)
        if probe.outcome == "transient":
            # Greylisting (or another 4xx): one retry after a short delay (not holding a connection slot),
            # then give up on this domain: a greylisting primary's backups rarely know more.
            if time.monotonic() + cfg.greylist_delay >= deadline:
                return done("unknown", probe.transient_kind or sc.TEMPORARY, probe.reply)
            result.trace.append(f"{host}: {probe.reply.summary if probe.reply else ''}; retrying")
            sleep(cfg.greylist_delay)
            probe = _probe_host_limited(host, ips, local_part, domain, remembered, cfg, deadline)
            if probe.outcome == "transient":
                return done("unknown", probe.transient_kind or sc.TEMPORARY, probe.reply)
        if probe.reply is not None:
            last_reply = probe.reply
        if probe.outcome == "blocked":
            return done("unknown", "blocked", probe.reply)
        if probe.outcome == "verdict":
            catch_all = probe.catch_all if probe.catch_all is not None else bool(remembered)
            if probe.catch_all is not None:
                result.catch_all_probed = True
                memory.remember_catch_all(domain, probe.catch_all, host)
            result.is_catch_all_domain = catch_all
            return _decide(result, probe, catch_all, memory, done)
        result.trace.append(f"{host}: {probe.outcome}")
        failures.append(probe.outcome)
    for reason in ("timeout", "protocol_error", "busy"):
        if reason in failures:
            return done("unknown", reason, last_reply)
    return done("unknown", "unreachable", last_reply)


def _probe_host_limited(host: str, ips: list[str], local_part: str, domain: str, remembered: bool | None,
                        cfg: Config, deadline: float) -> Probe:
    """`_probe_host` inside the host's concurrency limit; `busy` when no slot freed within a step timeout."""
    with host_slot(host, cfg.per_host_limit, cfg.timeout, lease=cfg.total_timeout + 30) as acquired:
        if not acquired:
            return Probe("busy")
        return _probe_host(host, ips, local_part, domain, remembered, cfg, deadline)


def _probe_host(host: str, ips: list[str], local_part: str, domain: str, remembered: bool | None,
                cfg: Config, deadline: float) -> Probe:
    """Try the host's addresses in turn until one gives a dialogue; a failed TLS handshake is retried in clear."""
    probe = Probe("unreachable")
    for ip in ips:
        if time.monotonic() >= deadline:
            return Probe("timeout")
        random_local = None if remembered is not None else _random_local()
        probe = _probe(ip, host, local_part, domain, random_local, cfg)
        if probe.outcome == "tls_failed":
            probe = _probe(ip, host, local_part, domain, random_local, cfg, use_tls=False)
        if probe.outcome not in ("timeout", "unreachable", "tls_failed"):
            return probe
    if probe.outcome == "tls_failed":
        probe.outcome = "protocol_error"
    return probe


def _decide(result: Result, probe: Probe, catch_all: bool, memory: Memory, done) -> Result:
    verdict = probe.verdict
    if verdict == sc.MAILBOX_FULL:
        return done("risky", "mailbox_full", probe.reply)
    if verdict in (sc.USER_UNKNOWN, sc.REJECTED):
        return done("invalid", verdict, probe.reply)
    # accepted
    if catch_all:
        if not memory.has_delivery_evidence(result.key):
            return done("catch_all_unknown", "catch_all", probe.reply)
        if result.is_role_account:
            return done("risky", "role_account", probe.reply)
        return done("catch_all_valid", "delivery_evidence", probe.reply)
    if result.is_role_account:
        return done("risky", "role_account", probe.reply)
    return done("valid", "accepted", probe.reply)

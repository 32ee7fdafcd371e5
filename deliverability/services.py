"""Deliverability rules (CONTRACT 4.13, docs/deliverability.md): the health of each mailbox and sending domain.

States are `healthy`, `warning` and `paused`, with reasons `bounce_rate`, `complaint_rate`, `dns_spf`, `dns_dkim`,
`dns_dmarc`, `dns_mx`, `blocklisted`, `postmaster`. The detector only ever moves a state up to `paused`; `paused` is
sticky: only an owner or admin lifts it (`mailbox_resume`, `domain_resume`, from the console), and lifting re-arms
the windows (signals before the resume no longer count; a DNS failure's 24 hours start again).

- Mailbox: the hard-bounce rate over its last 50 sends (sent or bounced attempts), once it has 20: `warning` at 3%,
  `paused` at 5%. Plus its domain's state and reasons (a paused domain pauses its mailboxes).
- Domain: complaints (ARF reports) over 7 days: `warning` at the first, `paused` at 0.3% of its sends with at
  least 2 complaints, or at 3 complaints whatever the volume; each failing DNS check: `warning` at once, `paused`
  24 hours later if it still fails; a listing on any `DELIVERABILITY_DNSBL_ZONES` zone: `paused`; Gmail
  Postmaster Tools (Google Workspace domains, when configured): any reported spam warns and 0.3% pauses; a
  compliance requirement Gmail says needs work warns, and pauses 24 hours later if it still does (the spam-rate
  requirement pauses at once).
  A mailbox without a sending-domain row (bring-your-own) applies the complaint rule to its own domain name.

Every state change is recorded (`HealthEvent`), emitted as a webhook event (`mailbox.health_changed`,
`domain.health_changed`) and emailed to the workspace's owners and admins once.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from campaigns.models import SentMessage
from core import events
from deliverability import checks, postmaster
from deliverability.models import Complaint, HealthEvent
from leads.verification import dnslayer
from sending.models import HEALTH_REASONS, HealthState, Mailbox, SendingDomain
from sending.selectors import mailbox_render

logger = logging.getLogger("deliverability")

HEALTHY, WARNING, PAUSED = HealthState.HEALTHY.value, HealthState.WARNING.value, HealthState.PAUSED.value
RANK = {HEALTHY: 0, WARNING: 1, PAUSED: 2}
REASONS = HEALTH_REASONS
DOMAIN_REASONS = frozenset(REASONS) - {"bounce_rate"}
COMPLAINT_DAYS = 7
# check_failing_since key prefix of a Gmail compliance requirement (`postmaster:SPF`): since when Gmail says it
# needs work
COMPLIANCE_KEY = "postmaster:"


@dataclass(frozen=True)
class Limits:
    bounce_window: int = 50
    bounce_min_sends: int = 20
    bounce_warning: float = 0.03
    bounce_pause: float = 0.05
    complaint_warning_count: int = 1
    complaint_pause_rate: float = 0.003
    complaint_pause_rate_min: int = 2
    complaint_pause_count: int = 3
    dns_grace_hours: float = 24.0


# The most lenient value each threshold may take: the documented defaults (config/settings.py reads each
# setting, with that default, from the environment). An operator may lower a threshold, never raise it above these.
CEILINGS = Limits()


def limits() -> Limits:
    """The thresholds in force: each setting, clamped so an operator can lower it (stricter) but never raise it
    above its ceiling."""
    def low(value, ceiling, floor):
        return max(floor, min(type(ceiling)(value), ceiling))

    return Limits(
        bounce_window=low(settings.DELIVERABILITY_BOUNCE_WINDOW, CEILINGS.bounce_window, 1),
        bounce_min_sends=low(settings.DELIVERABILITY_BOUNCE_MIN_SENDS, CEILINGS.bounce_min_sends, 1),
        bounce_warning=low(settings.DELIVERABILITY_BOUNCE_WARNING, CEILINGS.bounce_warning, 0.0),
        bounce_pause=low(settings.DELIVERABILITY_BOUNCE_PAUSE, CEILINGS.bounce_pause, 0.0),
        complaint_warning_count=low(settings.DELIVERABILITY_COMPLAINT_WARNING_COUNT, CEILINGS.complaint_warning_count, 1),
        complaint_pause_rate=low(settings.DELIVERABILITY_COMPLAINT_PAUSE_RATE, CEILINGS.complaint_pause_rate, 0.0),
        complaint_pause_rate_min=low(settings.DELIVERABILITY_COMPLAINT_PAUSE_RATE_MIN, CEILINGS.complaint_pause_rate_min, 1),
        complaint_pause_count=low(settings.DELIVERABILITY_COMPLAINT_PAUSE_COUNT, CEILINGS.complaint_pause_count, 1),
        dns_grace_hours=low(settings.DELIVERABILITY_DNS_GRACE_HOURS, CEILINGS.dns_grace_hours, 0.0),
    )


def _since(armed_at: datetime | None, now: datetime, days: float) -> datetime:
    start = now - timedelta(days=days)
    return max(start, armed_at) if armed_at else start


# --- figures and verdicts -----------------------------------------------------------------------------------
def mailbox_bounce_figures(mailbox: Mailbox, lim: Limits) -> tuple[int, int]:
    """(attempts, hard bounces) over the mailbox's last `bounce_window` attempts since its last resume. An
    attempt is a message delivered (`sent`) or bounced (at SMTP time or by a later DSN)."""
    qs = SentMessage.objects.filter(mailbox_id=mailbox.pk).filter(Q(state=SentMessage.State.SENT) | Q(bounced=True))
    if mailbox.health_armed_at:
        qs = qs.filter(claimed_at__gte=mailbox.health_armed_at)
    flags = list(qs.order_by("-claimed_at").values_list("bounced", flat=True)[:lim.bounce_window])
    return len(flags), sum(1 for f in flags if f)


def bounce_verdict(attempts: int, bounced: int, lim: Limits) -> str:
    if attempts < lim.bounce_min_sends or not attempts:
        return HEALTHY
    rate = bounced / attempts
    if rate >= lim.bounce_pause:
        return PAUSED
    if rate >= lim.bounce_warning:
        return WARNING
    return HEALTHY


def domain_complaint_figures(*, workspace_id, domain_name: str, armed_at, now) -> tuple[int, int]:
    """(complaints, messages sent) for a sending domain over the last 7 days since its last resume."""
    since = _since(armed_at, now, COMPLAINT_DAYS)
    complaints = Complaint.objects.filter(workspace_id=workspace_id, domain_name=domain_name,
                                          received_at__gte=since).count()
    mailbox_ids = list(Mailbox.objects.filter(workspace_id=workspace_id, email__iendswith="@" + domain_name)
                       .values_list("pk", flat=True))
    sends = SentMessage.objects.filter(mailbox_id__in=mailbox_ids, claimed_at__gte=since,
                                       state=SentMessage.State.SENT).count() if mailbox_ids else 0
    return complaints, sends


def complaint_verdict(complaints: int, sends: int, lim: Limits) -> str:
    if complaints >= lim.complaint_pause_count:
        return PAUSED
    if complaints >= lim.complaint_pause_rate_min and (not sends or complaints / sends >= lim.complaint_pause_rate):
        return PAUSED
    if complaints >= lim.complaint_warning_count:
        return WARNING
    return HEALTHY


def _worst(verdicts: list[tuple[str, str]]) -> tuple[str, list[str]]:
    verdicts = [(s, r) for s, r in verdicts if s != HEALTHY]
    if not verdicts:
        return HEALTHY, []
    state = max((s for s, _ in verdicts), key=RANK.__getitem__)
    return state, sorted({r for _, r in verdicts}, key=REASONS.index)


# --- applying a verdict -------------------------------------------------------------------------------------
def _apply(obj, *, state: str, reasons: list[str], now, detail: dict, actor: str = "",
           release_pause: bool = False) -> str | None:
    """Set `obj`'s (a locked Mailbox or SendingDomain) health. `paused` is sticky: the detector never lifts it
    (its reasons may grow) unless `release_pause`. Returns the previous state when the state changed."""
    old = obj.health_state
    if old == PAUSED and not release_pause:
        state = PAUSED
        reasons = sorted(set(obj.health_reasons or []) | set(reasons), key=REASONS.index)
    obj.health_reasons = reasons
    if state == old:
        return None
    obj.health_state, obj.health_changed_at = state, now
    kind = {"mailbox": obj} if isinstance(obj, Mailbox) else {"domain": obj}
    HealthEvent.objects.create(workspace_id=obj.workspace_id, from_state=old, to_state=state, reasons=reasons,
                               actor=actor, detail=detail, at=now, **kind)
    return old


def mailbox_evaluate(*, mailbox_id: str, now: datetime | None = None, release_domain_pause: bool = False,
                     actor: str = "") -> str | None:
    """Re-evaluate one mailbox from its signals; returns its state (None when it does not exist).
    `release_domain_pause`: its domain was just resumed, so a pause that came only from the domain is lifted."""
    now = now or timezone.now()
    lim = limits()
    changed = None
    with transaction.atomic():
        mailbox = Mailbox.objects.select_for_update().filter(pk=mailbox_id).first()
        if mailbox is None:
            return None
        attempts, bounced = mailbox_bounce_figures(mailbox, lim)
        verdicts = [(bounce_verdict(attempts, bounced, lim), "bounce_rate")]
        mine_since = _since(mailbox.health_armed_at, now, COMPLAINT_DAYS)
        complaints_mine = Complaint.objects.filter(mailbox_id=mailbox.pk, received_at__gte=mine_since).count()
        domain = SendingDomain.objects.filter(pk=mailbox.domain_id).first() if mailbox.domain_id else None
        if domain is None:
            complaints, sends = domain_complaint_figures(workspace_id=mailbox.workspace_id,
                                                         domain_name=mailbox.domain_name,
                                                         armed_at=mailbox.health_armed_at, now=now)
            verdicts.append((complaint_verdict(complaints, sends, lim), "complaint_rate"))
        else:
            verdicts += [(domain.health_state, r) for r in domain.health_reasons or []]
        state, reasons = _worst(verdicts)
        figures = {"bounce_rate": round(bounced / attempts, 4) if attempts else None, "sends_recent": attempts,
                   "bounces_recent": bounced, "complaints_7d": complaints_mine}
        release = (release_domain_pause and mailbox.health_state == PAUSED
                   and set(mailbox.health_reasons or []) <= DOMAIN_REASONS)
        changed = _apply(mailbox, state=state, reasons=reasons, now=now, detail=figures, actor=actor,
                         release_pause=release)
        mailbox.health_figures, mailbox.health_evaluated_at = figures, now
        mailbox.save(update_fields=["health_state", "health_reasons", "health_changed_at", "health_figures",
                                    "health_evaluated_at"])
        if changed is not None:
            _announce_mailbox(mailbox, changed)
    return mailbox.health_state


def domain_evaluate(*, domain_id: str, now: datetime | None = None, actor: str = "",
                    cascade: bool = True, release_mailboxes: bool = False) -> str | None:
    """Re-evaluate one sending domain from its complaints, DNS checks and blocklist listings, then its mailboxes."""
    now = now or timezone.now()
    lim = limits()
    with transaction.atomic():
        domain = SendingDomain.objects.select_for_update().filter(pk=domain_id).first()
        if domain is None:
            return None
        complaints, sends = domain_complaint_figures(workspace_id=domain.workspace_id, domain_name=domain.name,
                                                     armed_at=domain.health_armed_at, now=now)
        verdicts = [(complaint_verdict(complaints, sends, lim), "complaint_rate")]
        grace = timedelta(hours=lim.dns_grace_hours)
        for check in checks.CHECKS:
            value = (domain.checks or {}).get(check)
            since = (domain.check_failing_since or {}).get(check)
            if value in (checks.FAIL, checks.MISSING) and since:
                start = datetime.fromisoformat(since)
                if domain.health_armed_at and domain.health_armed_at > start:
                    start = domain.health_armed_at
                verdicts.append((PAUSED if now - start >= grace else WARNING, f"dns_{check}"))
        rate = (domain.checks or {}).get("postmaster_spam_rate")
        measured = (domain.checks or {}).get("postmaster_checked_at")
        if isinstance(rate, int | float) and measured and (
                domain.health_armed_at is None or datetime.fromisoformat(measured) >= domain.health_armed_at):
            # Gmail's own spam rate: the complaint rule with Gmail's figure (any complaint warns, 0.3% pauses)
            verdicts.append((PAUSED if rate >= lim.complaint_pause_rate else WARNING if rate > 0 else HEALTHY,
                             "postmaster"))
        verdicts += _compliance_verdicts(domain, now=now, grace=grace)
        listed_after_arm = (domain.blocklist_checked_at is not None and
                            (domain.health_armed_at is None or domain.blocklist_checked_at >= domain.health_armed_at))
        if domain.blocklists and listed_after_arm:
            verdicts.append((PAUSED, "blocklisted"))
        state, reasons = _worst(verdicts)
        detail = {"complaints_7d": complaints, "sends_7d": sends, "checks": domain.checks,
                  "blocklists": domain.blocklists}
        changed = _apply(domain, state=state, reasons=reasons, now=now, detail=detail, actor=actor)
        domain.save(update_fields=["health_state", "health_reasons", "health_changed_at"])
        if changed is not None:
            _announce_domain(domain, changed)
    if cascade:
        for mailbox_id in domain.mailboxes.exclude(status=Mailbox.Status.REMOVED).values_list("pk", flat=True):
            mailbox_evaluate(mailbox_id=mailbox_id, now=now, release_domain_pause=release_mailboxes, actor=actor)
    return domain.health_state


def _compliance_verdicts(domain: SendingDomain, *, now: datetime, grace: timedelta) -> list[tuple[str, str]]:
    """Gmail's own compliance verdict (Postmaster Tools `getComplianceStatus`), read after the last resume, as
    `postmaster` verdicts: `USER_REPORTED_SPAM_RATE` needing work is Gmail saying the spam rate is over its 0.3%
    limit, so it pauses like the complaint rule; any other requirement needing work (authentication, formatting,
    TLS, unsubscribe) is treated like a failing DNS check: `warning` at once, `paused` if Gmail still says so once
    the DNS grace has passed since it first did (or since the resume)."""
    found = (domain.checks or {}).get("postmaster_compliance")
    measured = (domain.checks or {}).get("postmaster_compliance_checked_at")
    if not isinstance(found, dict) or not found or not measured:
        return []
    if domain.health_armed_at is not None and datetime.fromisoformat(measured) < domain.health_armed_at:
        return []
    verdicts = []
    for requirement in found:
        if requirement == "USER_REPORTED_SPAM_RATE":
            verdicts.append((PAUSED, "postmaster"))
            continue
        since = (domain.check_failing_since or {}).get(f"{COMPLIANCE_KEY}{requirement}")
        start = datetime.fromisoformat(since) if since else now
        if domain.health_armed_at and domain.health_armed_at > start:
            start = domain.health_armed_at
        verdicts.append((PAUSED if now - start >= grace else WARNING, "postmaster"))
    return verdicts


# --- signals ----------------------------------------------------------------------------------------------
def mailbox_signal(*, mailbox_id: str) -> str | None:
    """A new signal (a hard bounce) for this mailbox: clear its flag, then evaluate it."""
    Mailbox.objects.filter(pk=mailbox_id, health_dirty=True).update(health_dirty=False)
    return mailbox_evaluate(mailbox_id=mailbox_id)


def complaint_record(*, workspace_id, mailbox: Mailbox | None, domain_name: str, source: str = "arf",
                     feedback_type: str = "", recipient: str = "", message_id: str = "",
                     inbound_id: str = "") -> Complaint | None:
    """Record one complaint against a sending domain (and the mailbox that sent, when known); the domain (or the
    mailboxes of a domain without a row) is evaluated after the commit. Once per inbound report."""
    domain_name = (domain_name or "").strip().lower()
    if not domain_name:
        return None
    if inbound_id and Complaint.objects.filter(workspace_id=workspace_id, inbound_id=inbound_id).exists():
        return None
    complaint = Complaint.objects.create(workspace_id=workspace_id, mailbox=mailbox, domain_name=domain_name[:253],
                                         source=source[:16], feedback_type=feedback_type[:32],
                                         recipient=recipient[:254], message_id=message_id[:255],
                                         inbound_id=inbound_id[:40])
    transaction.on_commit(lambda: complaint_evaluate(workspace_id=workspace_id, domain_name=domain_name))
    return complaint


def complaint_evaluate(*, workspace_id, domain_name: str) -> None:
    domain = SendingDomain.objects.filter(workspace_id=workspace_id, name=domain_name).first()
    if domain is not None:
        domain_evaluate(domain_id=domain.pk)
        return
    for mailbox_id in (Mailbox.objects.filter(workspace_id=workspace_id, email__iendswith="@" + domain_name)
                       .exclude(status=Mailbox.Status.REMOVED).values_list("pk", flat=True)):
        mailbox_evaluate(mailbox_id=mailbox_id)


# --- DNS checks ----------------------------------------------------------------------------------------------
def spf_required(domain: SendingDomain) -> list[str]:
    """The SPF mechanisms the sending path needs: DELIVERABILITY_SPF_REQUIRE, else the provider's own."""
    if settings.DELIVERABILITY_SPF_REQUIRE:
        return list(settings.DELIVERABILITY_SPF_REQUIRE)
    provider = (domain.operation.provider if domain.operation_id and domain.operation else "") or ""
    if "google" in provider.lower():
        return ["include:_spf.google.com"]
    if "microsoft" in provider.lower():
        return ["include:spf.protection.outlook.com"]
    return []


def domain_check(*, domain_id: str, now: datetime | None = None) -> SendingDomain | None:
    """Look the domain's authentication records and blocklist listings up (outside any transaction: network),
    store the results, then evaluate it. A check whose lookup got no definite answer keeps its last result."""
    from sending.dkim_keys import dkim_public_record

    now = now or timezone.now()
    domain = SendingDomain.objects.select_related("operation").filter(pk=domain_id).first()
    if domain is None:
        return None
    found: dict[str, object] = {}
    lookups = {
        "spf": lambda: checks.check_spf(domain.name, spf_required(domain)),
        "dkim": lambda: checks.check_dkim(domain.name, domain.dkim_selector, dkim_public_record(domain)),
        "dmarc": lambda: checks.check_dmarc(domain.name),
        "mx": lambda: checks.check_mx(domain.name),
    }
    for name, lookup in lookups.items():
        try:
            found[name] = lookup()
        except dnslayer.DnsFailure as exc:
            logger.warning("domain %s: %s check got no definite DNS answer (%s); keeping the last result",
                           domain.name, name, exc)
    listings: dict[str, str] = {}
    for zone in settings.DELIVERABILITY_DNSBL_ZONES:
        listings[zone], _ = checks.check_blocklist(domain.name, zone)
    provider = (domain.operation.provider if domain.operation_id and domain.operation else "") or ""
    if postmaster.enabled() and "google" in provider.lower():  # Gmail's figures: Google Workspace domains
        try:
            found["postmaster_spam_rate"] = postmaster.spam_rate(domain.name, today=now.date())
            found["postmaster_checked_at"] = now.isoformat()
        except postmaster.PostmasterUnavailable as exc:
            logger.warning("domain %s: no Postmaster Tools figure (%s); keeping the last one", domain.name, exc)
        try:
            found["postmaster_compliance"] = postmaster.compliance_needs_work(domain.name)
            found["postmaster_compliance_checked_at"] = now.isoformat()
        except postmaster.PostmasterUnavailable as exc:
            logger.warning("domain %s: no Postmaster Tools compliance status (%s); keeping the last one",
                           domain.name, exc)
    with transaction.atomic():
        domain = SendingDomain.objects.select_for_update().get(pk=domain_id)
        current = dict(domain.checks or {})
        failing = dict(domain.check_failing_since or {})
        current.update(found)
        for name, value in current.items():
            if name not in checks.CHECKS:
                continue  # the Postmaster figures are not pass/fail checks
            if value == checks.PASS:
                failing.pop(name, None)
            else:
                failing.setdefault(name, now.isoformat())
        if "postmaster_compliance" in found:  # a definite answer: each requirement's first "needs work" is kept
            needs_work = set(found["postmaster_compliance"] or {})
            for key in [k for k in failing if k.startswith(COMPLIANCE_KEY)]:
                if key[len(COMPLIANCE_KEY):] not in needs_work:
                    failing.pop(key)
            for requirement in needs_work:
                failing.setdefault(f"{COMPLIANCE_KEY}{requirement}", now.isoformat())
        # a listing stays until a definite "not listed" (an error answer neither lists nor clears); a zone no
        # longer configured is dropped
        listed = {z for z in domain.blocklists or [] if z in listings}
        listed |= {z for z, v in listings.items() if v == checks.LISTED}
        listed -= {z for z, v in listings.items() if v == checks.CLEAR}
        domain.checks, domain.check_failing_since, domain.blocklists = current, failing, sorted(listed)
        domain.dns_checked_at = now
        domain.blocklist_checked_at = now
        domain.save(update_fields=["checks", "check_failing_since", "blocklists", "dns_checked_at",
                                   "blocklist_checked_at"])
    domain_evaluate(domain_id=domain_id, now=now)
    domain.refresh_from_db()
    return domain


# --- resume (owner or admin, console) --------------------------------------------------------------------
def mailbox_resume(*, workspace, mailbox_id: str, actor: str) -> Mailbox:
    """Lift a mailbox's pause (recorded with the member's address) and start its windows afresh. A pause that
    comes from its domain comes back at once: resume the domain instead. Safe to repeat."""
    from core import errors

    now = timezone.now()
    with transaction.atomic():
        mailbox = Mailbox.objects.select_for_update().filter(workspace=workspace, pk=mailbox_id).first()
        if mailbox is None:
            raise errors.NotFound("No such mailbox.")
        if mailbox.health_state == PAUSED:
            old = _apply(mailbox, state=HEALTHY, reasons=[], now=now, detail={"resumed": True}, actor=actor,
                         release_pause=True)
            mailbox.health_armed_at = now
            mailbox.save(update_fields=["health_state", "health_reasons", "health_changed_at", "health_armed_at"])
            if old is not None:
                _announce_mailbox(mailbox, old)
    mailbox_evaluate(mailbox_id=mailbox.pk, now=now)
    mailbox.refresh_from_db()
    return mailbox


def domain_resume(*, workspace, domain_id: str, actor: str) -> SendingDomain:
    """Lift a domain's pause (recorded), start its windows afresh (complaints before now no longer count, a
    failing DNS check gets 24 hours again, a listing counts again only once a check after now finds it) and lift
    the pauses its mailboxes had only because of it."""
    from core import errors

    now = timezone.now()
    with transaction.atomic():
        domain = SendingDomain.objects.select_for_update().filter(workspace=workspace, pk=domain_id).first()
        if domain is None:
            raise errors.NotFound("No such domain.")
        if domain.health_state == PAUSED:
            old = _apply(domain, state=HEALTHY, reasons=[], now=now, detail={"resumed": True}, actor=actor,
                         release_pause=True)
            domain.health_armed_at = now
            domain.save(update_fields=["health_state", "health_reasons", "health_changed_at", "health_armed_at"])
            if old is not None:
                _announce_domain(domain, old)
    domain_evaluate(domain_id=domain.pk, now=now, actor=actor, release_mailboxes=True)
    domain.refresh_from_db()
    return domain


# --- the periodic sweep ------------------------------------------------------------------------------------
def sweep(*, now: datetime | None = None, limit: int = 200) -> dict:
    """Every scheduler tick (its own beat task, not the send tick): evaluate mailboxes flagged by a signal whose
    evaluation was lost; re-check the DNS of active domains not checked for DELIVERABILITY_CHECK_INTERVAL_SECONDS
    (when DELIVERABILITY_DNS_CHECKS); re-evaluate domains in `warning` (a DNS failure becomes a pause after its
    grace) and refresh the figures of mailboxes not evaluated for 5 minutes."""
    now = now or timezone.now()
    stats = {"flagged": 0, "checked": 0, "domains": 0, "mailboxes": 0}
    for mailbox_id in list(Mailbox.objects.filter(health_dirty=True).values_list("pk", flat=True)[:limit]):
        mailbox_signal(mailbox_id=mailbox_id)
        stats["flagged"] += 1
    if settings.DELIVERABILITY_DNS_CHECKS:
        due = (SendingDomain.objects.filter(status=SendingDomain.Status.ACTIVE)
               .filter(Q(dns_checked_at__isnull=True) |
                       Q(dns_checked_at__lt=now - timedelta(seconds=settings.DELIVERABILITY_CHECK_INTERVAL_SECONDS)))
               .order_by("dns_checked_at").values_list("pk", flat=True)[:20])
        for domain_id in list(due):
            try:
                domain_check(domain_id=domain_id, now=now)
                stats["checked"] += 1
            except Exception:  # noqa: BLE001 - one broken domain must not stop the others
                logger.exception("domain %s: the DNS check failed", domain_id)
    for domain_id in list(SendingDomain.objects.filter(health_state=WARNING).values_list("pk", flat=True)[:limit]):
        domain_evaluate(domain_id=domain_id, now=now)
        stats["domains"] += 1
    stale = (Mailbox.objects.filter(status=Mailbox.Status.ACTIVE)
             .filter(Q(health_evaluated_at__isnull=True) | Q(health_evaluated_at__lt=now - timedelta(minutes=5)))
             .values_list("pk", flat=True)[:limit])
    for mailbox_id in list(stale):
        mailbox_evaluate(mailbox_id=mailbox_id, now=now)
        stats["mailboxes"] += 1
    return stats


# --- telling people --------------------------------------------------------------------------------------------
def _announce_mailbox(mailbox: Mailbox, old: str) -> None:
    events.emit(workspace=mailbox.workspace_id, type="mailbox.health_changed",
                data=lambda: {**mailbox_render(mailbox), "previous_state": old})
    transaction.on_commit(lambda: _notify(mailbox.workspace_id, f"Mailbox {mailbox.email}", old,
                                          mailbox.health_state, list(mailbox.health_reasons or [])))


def _announce_domain(domain: SendingDomain, old: str) -> None:
    from deliverability.selectors import domain_render

    events.emit(workspace=domain.workspace_id, type="domain.health_changed",
                data=lambda: {**domain_render(domain), "previous_state": old})
    transaction.on_commit(lambda: _notify(domain.workspace_id, f"Sending domain {domain.name}", old,
                                          domain.health_state, list(domain.health_reasons or [])))


WHAT_IT_MEANS = {
    HEALTHY: "It is healthy again and sends normally.",
    WARNING: "It still sends, but a signal is close to the limit the mailbox providers enforce.",
    PAUSED: "Nothing is sent from it until an owner or admin resumes it on the console's Deliverability page. "
            "Campaigns keep sending from their other healthy mailboxes; leads already in a thread with it wait.",
}


def _notify(workspace_id, subject: str, old: str, new: str, reasons: list[str]) -> None:
    from django.core.mail import send_mail

    from accounts.selectors import workspace_approver_emails

    recipients = workspace_approver_emails(workspace_id=workspace_id)
    if not recipients:
        return
    why = ", ".join(reasons) or "none"
    send_mail(
        subject=f"{subject}: deliverability {old} -> {new}",
        message=(f"{subject} is now {new} (was {old}). Reasons: {why}.\n\n{WHAT_IT_MEANS[new]}\n\n"
                 f"What each reason means and what to do: the Deliverability page, "
                 f"{settings.BASE_URL}/console/deliverability/"),
        from_email=None, recipient_list=recipients, fail_silently=True,
    )

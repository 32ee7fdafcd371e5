"""Deliverability reads. Selectors take the workspace first."""

from __future__ import annotations

from datetime import timedelta

from django.db.models import Count, Q
from django.utils import timezone

from campaigns.models import SentMessage
from deliverability.models import Complaint, HealthEvent
from sending.models import Mailbox, SendingDomain

CHECK_NAMES = ("spf", "dkim", "dmarc", "mx")


def domains_list(*, workspace):
    return SendingDomain.objects.filter(workspace=workspace).order_by("created_at", "name")


def domain_render(domain: SendingDomain) -> dict:
    """One row of GET /v1/domains (CONTRACT 4.13). A check never run yet is null."""
    checked = [t for t in (domain.dns_checked_at, domain.blocklist_checked_at) if t]
    return {
        "domain": domain.name,
        "state": domain.health_state,
        "reasons": list(domain.health_reasons or []),
        "checks": {name: (domain.checks or {}).get(name) for name in CHECK_NAMES},
        "blocklists": list(domain.blocklists or []),
        "checked_at": max(checked) if checked else None,
        "changed_at": domain.health_changed_at,
        "mailbox_ids": list(domain.mailboxes.exclude(status=Mailbox.Status.REMOVED).order_by("created_at", "id")
                            .values_list("pk", flat=True)),
    }


def history(*, workspace, limit: int = 50):
    return (HealthEvent.objects.filter(workspace=workspace).select_related("mailbox", "domain")
            .order_by("-at", "-pk")[:limit])


def mailboxes(*, workspace):
    return (Mailbox.objects.filter(workspace=workspace).exclude(status=Mailbox.Status.REMOVED)
            .select_related("domain").order_by("created_at", "id"))


def _rates(sent_qs, complaints_qs, now) -> dict:
    """{"24h": {...}, "7d": {...}}: attempts, hard bounces, complaints and the rates (null without sends)."""
    out = {}
    for label, span in (("24h", timedelta(hours=24)), ("7d", timedelta(days=7))):
        since = now - span
        agg = sent_qs.filter(claimed_at__gte=since).filter(Q(state="sent") | Q(bounced=True)).aggregate(
            attempts=Count("pk"), bounced=Count("pk", filter=Q(bounced=True)))
        complaints = complaints_qs.filter(received_at__gte=since).count()
        attempts = agg["attempts"]
        out[label] = {"sends": attempts, "bounces": agg["bounced"], "complaints": complaints,
                      "bounce_rate": round(agg["bounced"] / attempts, 4) if attempts else None,
                      "complaint_rate": round(complaints / attempts, 4) if attempts else None}
    return out


def mailbox_rates(*, mailbox, now=None) -> dict:
    return _rates(SentMessage.objects.filter(mailbox_id=mailbox.pk), Complaint.objects.filter(mailbox_id=mailbox.pk),
                  now or timezone.now())


def domain_rates(*, workspace, domain_name: str, now=None) -> dict:
    ids = list(Mailbox.objects.filter(workspace=workspace, email__iendswith="@" + domain_name)
               .values_list("pk", flat=True))
    return _rates(SentMessage.objects.filter(mailbox_id__in=ids),
                  Complaint.objects.filter(workspace=workspace, domain_name=domain_name), now or timezone.now())

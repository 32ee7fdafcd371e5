"""Deliverability reads. Selectors take the workspace first."""

from __future__ import annotations

from deliverability.models import HealthEvent
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

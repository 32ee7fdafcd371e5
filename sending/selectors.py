"""Reads for sending capacity. Every selector takes the workspace first: there is no unscoped path."""

from __future__ import annotations

from django.conf import settings
from django.db.models import QuerySet

from core import errors
from sending.models import Mailbox, Operation, Provider, SendingDomain


def mailboxes_active(*, workspace) -> QuerySet[Mailbox]:
    """The workspace's sending capacity: mailboxes with status `active` (never `suspended`, `provisioning`,
    `failed` or `removed`), oldest first. Campaign sends only ever use these. In live mode (SANDBOX=0) a sandbox
    mailbox is no capacity: its mail would only land in the sandbox sink (CONTRACT 4.14)."""
    qs = Mailbox.objects.filter(workspace=workspace, status=Mailbox.Status.ACTIVE)
    if not settings.SANDBOX:
        qs = qs.exclude(provider=Provider.SANDBOX)
    return qs.order_by("activated_at", "id")


def mailboxes_list(*, workspace) -> QuerySet[Mailbox]:
    return Mailbox.objects.filter(workspace=workspace).exclude(status=Mailbox.Status.REMOVED).order_by("created_at", "id")


def mailbox_for_address(*, address: str) -> Mailbox | None:
    """The mailbox (any workspace, any status but removed) that owns `address`: for inbound mail, which arrives
    without a workspace. Case-insensitive."""
    return (Mailbox.objects.filter(email__iexact=(address or "").strip())
            .exclude(status=Mailbox.Status.REMOVED).select_related("workspace").first())


def mailbox_get(*, workspace, mailbox_id: str) -> Mailbox:
    try:
        return Mailbox.objects.get(workspace=workspace, pk=mailbox_id)
    except Mailbox.DoesNotExist:
        raise errors.NotFound("No such mailbox.") from None


def domains_list(*, workspace) -> QuerySet[SendingDomain]:
    return SendingDomain.objects.filter(workspace=workspace).order_by("created_at", "name")


def operation_get(*, workspace, operation_id: str) -> Operation:
    """The operation if it belongs to this workspace; otherwise 404 (never reveal it exists elsewhere)."""
    try:
        return Operation.objects.get(workspace=workspace, pk=operation_id)
    except Operation.DoesNotExist:
        raise errors.NotFound("No such operation.") from None


def mailbox_provider_kind(mailbox: Mailbox) -> str:
    """Who hosts a mailbox: `google`, `microsoft` or `other` (`Mailbox.host_provider`: the kind chosen at purchase,
    else known from how the service signs in to it: an OAuth-connected or bought Google / Microsoft mailbox, or a
    password mailbox on Google's or Microsoft's SMTP submission hosts; sandbox mailboxes and other hosts are
    `other`)."""
    return mailbox.host_provider


def mailbox_render(m) -> dict:
    """A mailbox as list_mailboxes returns it (and mailbox events carry it)."""
    return {"mailbox_id": m.id, "email": m.email, "source": m.provider, "auth": m.auth,
            "oauth_provider": m.oauth_provider or None, "mail_provider": m.host_provider, "status": m.status,
            "reconnect_reason": m.reconnect_reason or None if m.status == "needs_reconnect" else None,
            "needs_reconnect_since": m.needs_reconnect_at if m.status == "needs_reconnect" else None,
            "daily_limit": m.daily_limit, "activated_at": m.activated_at, "renews_at": m.renews_at,
            "health": mailbox_health_render(m)}


def mailbox_health_render(m) -> dict:
    """The `health` object of a mailbox (its figures as of its last evaluation)."""
    figures = m.health_figures or {}
    return {"state": m.health_state, "reasons": list(m.health_reasons or []),
            "bounce_rate": figures.get("bounce_rate"), "sends_recent": figures.get("sends_recent", 0),
            "complaints_7d": figures.get("complaints_7d", 0), "changed_at": m.health_changed_at}

"""Test helpers other apps' tests may use (campaigns, replies)."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from core.ids import new_id
from sending.models import Mailbox, Provider, SendingDomain


def make_active_mailbox(workspace, email: str | None = None, **fields) -> Mailbox:
    """An `active` sandbox mailbox (sends into the Maildir sink) on a sandbox sending domain, renewing a month
    from now. `email` defaults to a unique address; extra keyword arguments set Mailbox fields."""
    if email is None:
        email = f"alex.{new_id('', 8)}@{new_id('', 8)}-mail.test"
    domain_name = email.rpartition("@")[2].lower()
    domain, _ = SendingDomain.objects.get_or_create(
        name=domain_name,
        defaults={"workspace": workspace, "provider": Provider.SANDBOX, "status": SendingDomain.Status.ACTIVE,
                  "activated_at": timezone.now()},
    )
    now = timezone.now()
    defaults = {"first_name": "Alex", "last_name": "Sender", "provider": Provider.SANDBOX,
                "status": Mailbox.Status.ACTIVE, "activated_at": now, "renews_at": now + timedelta(days=30),
                "renewals": 1}
    defaults.update(fields)
    return Mailbox.objects.create(workspace=workspace, domain=domain, email=email, **defaults)

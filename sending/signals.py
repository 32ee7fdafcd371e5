"""Signals other apps send about sending capacity. The `deliverability` app receives them; sending and
campaigns never import it (it sits above both)."""

from __future__ import annotations

from django.db import transaction
from django.dispatch import Signal

from sending.models import Mailbox

# a deliverability signal about this mailbox arrived (a hard bounce): kwargs `mailbox_id`
mailbox_health_signal = Signal()


def mailbox_health_mark(*, mailbox_id: str | None) -> None:
    """Record that `mailbox_id` has a new signal (a hard bounce) to evaluate. The flag is written in the caller's
    transaction, so a crash cannot lose it (the deliverability sweep evaluates flagged mailboxes every scheduler
    tick); the receivers evaluate at once after the commit."""
    if not mailbox_id:
        return
    Mailbox.objects.filter(pk=mailbox_id, health_dirty=False).update(health_dirty=True)
    transaction.on_commit(lambda: mailbox_health_signal.send(sender=Mailbox, mailbox_id=mailbox_id))

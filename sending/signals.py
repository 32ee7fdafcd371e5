"""What sending tells the apps above it (they subscribe; sending imports none of them): `deliverability`
receives the health signals, `campaigns` the mailboxes that can send again."""

from __future__ import annotations

from django.db import transaction
from django.dispatch import Signal

from sending.models import Mailbox

# a deliverability signal about this mailbox arrived (a hard bounce): kwargs `mailbox_id`
mailbox_health_signal = Signal()

# A mailbox can send again (reconnected, or reactivated once its upkeep was paid); sent after the commit that
# made it active. Argument: mailbox_id. Campaigns bring the leads that waited for it back to the next tick.
mailbox_sendable = Signal()


def mailbox_health_mark(*, mailbox_id: str | None) -> None:
    """Record that `mailbox_id` has a new signal (a hard bounce) to evaluate. The flag is written in the caller's
    transaction, so a crash cannot lose it (the deliverability sweep evaluates flagged mailboxes every scheduler
    tick); the receivers evaluate at once after the commit."""
    if not mailbox_id:
        return
    Mailbox.objects.filter(pk=mailbox_id, health_dirty=False).update(health_dirty=True)
    transaction.on_commit(lambda: mailbox_health_signal.send(sender=Mailbox, mailbox_id=mailbox_id))

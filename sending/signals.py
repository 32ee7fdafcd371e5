"""What sending tells the apps above it (they subscribe; sending imports none of them)."""

from django.dispatch import Signal

# A mailbox can send again (reconnected, or reactivated once its upkeep was paid); sent after the commit that
# made it active. Argument: mailbox_id. Campaigns bring the leads that waited for it back to the next tick.
mailbox_sendable = Signal()

"""What campaigns do when sending tells them something (sending.signals)."""

from __future__ import annotations

import logging

from django.dispatch import receiver

from campaigns import sender as campaign_sender
from sending.signals import mailbox_sendable

logger = logging.getLogger("campaigns.sender")


@receiver(mailbox_sendable, dispatch_uid="campaigns-mailbox-back")
def _on_mailbox_sendable(sender, mailbox_id, **kwargs):
    try:
        moved = campaign_sender.leads_mailbox_back(mailbox_id=mailbox_id)
    except Exception:  # noqa: BLE001 - never fails the reconnect; the leads then wait out MAILBOX_WAIT as before
        logger.exception("could not bring back the leads waiting for mailbox %s", mailbox_id)
        return
    if moved:
        logger.info("mailbox %s can send again: %s waiting leads due at the next tick", mailbox_id, moved)

"""Evaluate a mailbox as soon as a signal about it is committed (the sweep is the safety net)."""

import logging

from django.dispatch import receiver

from sending.signals import mailbox_health_signal

logger = logging.getLogger("deliverability")


@receiver(mailbox_health_signal)
def _mailbox_signal(sender, mailbox_id, **kwargs):
    from deliverability.services import mailbox_signal

    try:
        mailbox_signal(mailbox_id=mailbox_id)
    except Exception:  # noqa: BLE001 - the flag stays set: the next sweep evaluates it
        logger.exception("mailbox %s: health evaluation failed; the sweep retries", mailbox_id)

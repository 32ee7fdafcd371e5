"""Celery beat task: the deliverability sweep (flagged mailboxes, DNS and blocklist checks, grace expiries)."""

from celery import shared_task

from deliverability import services


@shared_task(name="deliverability.tasks.sweep", ignore_result=True)
def sweep() -> dict:
    return services.sweep()

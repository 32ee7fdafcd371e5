from celery import shared_task


@shared_task(name="webhooks.tasks.deliver", acks_late=True)
def deliver(delivery_id: str) -> str:
    """One attempt of one delivery (skipped when it is not due or another worker holds it)."""
    from webhooks.services import delivery_attempt

    return delivery_attempt(delivery_id=delivery_id)


@shared_task(name="webhooks.tasks.sweep")
def sweep() -> int:
    """Every scheduler tick: queue the deliveries that are due (retries, and those whose worker died
    mid-attempt once their lease has passed); disable endpoints failing for 3 days; emit balance.low."""
    from webhooks.services import _enqueue, balances_check, deliveries_due, endpoints_disable_failing

    endpoints_disable_failing()
    balances_check()
    due = deliveries_due()
    _enqueue(due)
    return len(due)


@shared_task(name="webhooks.tasks.purge")
def purge() -> int:
    from django.conf import settings

    from webhooks.services import events_purge

    return events_purge(days=getattr(settings, "WEBHOOK_RETENTION_DAYS", 30))

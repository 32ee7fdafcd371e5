from celery import shared_task

# Every webhook task runs on the `webhooks` queue (config.settings CELERY_TASK_ROUTES) and its own workers.


@shared_task(name="webhooks.tasks.deliver", acks_late=True)
def deliver(delivery_id: str) -> str:
    """One attempt of one delivery (skipped when it is not due, another worker holds it, or its endpoint is
    busy), then the same endpoint's next due delivery is queued: one endpoint, one attempt at a time."""
    from webhooks.services import _enqueue, delivery_attempt, delivery_next

    outcome = delivery_attempt(delivery_id=delivery_id)
    if outcome in ("succeeded", "retrying", "failed"):
        following = delivery_next(delivery_id=delivery_id)
        if following:
            _enqueue([following])
    return outcome


@shared_task(name="webhooks.tasks.sweep")
def sweep() -> int:
    """Every scheduler tick: queue the deliveries that are due (retries, and those whose worker died
    mid-attempt once their lease has passed), at most one per endpoint and none already queued; disable
    endpoints failing for 3 days; emit balance.low."""
    from webhooks.services import _enqueue, balances_check, deliveries_queue_due, endpoints_disable_failing

    endpoints_disable_failing()
    balances_check()
    due = deliveries_queue_due()
    _enqueue(due)
    return len(due)


@shared_task(name="webhooks.tasks.purge")
def purge() -> int:
    from django.conf import settings

    from webhooks.services import events_purge

    return events_purge(days=settings.WEBHOOK_RETENTION_DAYS)

from celery import shared_task

from billing.services import holds_release_expired, idempotency_purge


@shared_task(name="billing.tasks.release_expired_holds")
def release_expired_holds() -> int:
    return holds_release_expired()


@shared_task(name="billing.tasks.purge_idempotency_records")
def purge_idempotency_records() -> int:
    return idempotency_purge()

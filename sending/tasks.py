"""Celery tasks: each takes ids, re-reads state from the database and is safe to run twice.

The periodic sweeps pick up anything a lost message or a worker restart left behind: an operation's next step
and a mailbox's renewal live in the database (`Operation.next_step_at`, `Mailbox.renews_at`).
"""

from celery import shared_task

from sending import services


@shared_task(name="sending.tasks.operation_advance")
def operation_advance(operation_id: str) -> str | None:
    return services.operation_advance(operation_id=operation_id)


@shared_task(name="sending.tasks.operations_sweep")
def operations_sweep() -> int:
    due = services.operations_due()
    for operation_id in due:
        services.operation_advance(operation_id=operation_id)
    return len(due)


@shared_task(name="sending.tasks.mailbox_renew")
def mailbox_renew(mailbox_id: str) -> str:
    return services.mailbox_renew(mailbox_id=mailbox_id)


@shared_task(name="sending.tasks.mailbox_vendor_sync")
def mailbox_vendor_sync(mailbox_id: str) -> str:
    return services.mailbox_vendor_sync(mailbox_id=mailbox_id)


@shared_task(name="sending.tasks.upkeep_sweep")
def upkeep_sweep() -> int:
    """Renew what is due, then bring vendor-side mailboxes in line (suspend, resume, delete after the grace)."""
    due = services.mailboxes_due()
    for mailbox_id in due:
        services.mailbox_renew(mailbox_id=mailbox_id)
    for mailbox_id in services.mailboxes_vendor_due():
        services.mailbox_vendor_sync(mailbox_id=mailbox_id)
    return len(due)

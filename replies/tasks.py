"""Celery tasks: each takes ids, re-reads state from the database and is safe to run twice."""

import logging

from celery import shared_task

from replies import answers, imap, services
from sending.models import Mailbox

logger = logging.getLogger("replies")


@shared_task(name="replies.tasks.classify_inbound")
def classify_inbound(inbound_id: str) -> str | None:
    inbound = services.inbound_classify(inbound_id=inbound_id)
    return inbound.classification if inbound is not None else None


@shared_task(name="replies.tasks.classify_sweep")
def classify_sweep() -> int:
    """Classify whatever is still unclassified a minute after it arrived (a lost task, a broker outage)."""
    pending = services.inbound_pending(older_than_seconds=60)
    for inbound_id in pending:
        try:
            services.inbound_classify(inbound_id=inbound_id)
        except Exception:  # noqa: BLE001 - one bad message must not hold back the others
            logger.exception("classifying inbound message %s failed", inbound_id)
    return len(pending)


@shared_task(name="replies.tasks.imap_poll_all")
def imap_poll_all() -> int:
    """Queue one poll per active mailbox with IMAP details (dispatched every SCHEDULER_TICK_SECONDS)."""
    ids = list(imap.mailboxes_to_poll().values_list("pk", flat=True))
    for mailbox_id in ids:
        imap_poll_mailbox.delay(mailbox_id)
    return len(ids)


@shared_task(name="replies.tasks.imap_poll_mailbox")
def imap_poll_mailbox(mailbox_id: str) -> int:
    mailbox = Mailbox.objects.filter(pk=mailbox_id, status=Mailbox.Status.ACTIVE).select_related("workspace").first()
    if mailbox is None:
        return 0
    return imap.mailbox_poll(mailbox=mailbox)


@shared_task(name="replies.tasks.answers_sweep")
def answers_sweep() -> dict:
    """Send answers whose time has come (a temporary failure's retry); report those stuck mid-send."""
    due = answers.answers_due()
    for answer_id in due:
        try:
            answers.answer_deliver(answer_id=answer_id)
        except Exception:  # noqa: BLE001 - one bad answer must not hold back the others
            logger.exception("delivering answer %s failed", answer_id)
    return {"due": len(due), "in_doubt": answers.answers_report_in_doubt()}

"""Celery tasks: the scheduler tick (beat) and one send per dispatched lead. Both take ids and are safe to run
twice (the send's lease and claim make a repeat a no-op)."""

from datetime import datetime

from celery import shared_task

from campaigns import scheduler, sender


@shared_task(name="campaigns.tasks.scheduler_tick", ignore_result=True)
def scheduler_tick():
    return scheduler.tick()


@shared_task(name="campaigns.tasks.send_lead_step", ignore_result=True, acks_late=True)
def send_lead_step(lead_id: int, step: int, lease: str | None = None):
    return sender.send_lead_step(lead_id=lead_id, step=step, lease=datetime.fromisoformat(lease) if lease else None)

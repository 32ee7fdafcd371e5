"""Celery tasks: the scheduler tick (beat) and one send per dispatched lead. Both take ids and are safe to run
twice (the send's lease and claim make a repeat a no-op)."""

from datetime import datetime

from celery import shared_task


@shared_task(name="campaigns.tasks.scheduler_tick", ignore_result=True)
def scheduler_tick():
    from campaigns.scheduler import tick

    return tick()


@shared_task(name="campaigns.tasks.send_lead_step", ignore_result=True, acks_late=True)
def send_lead_step(lead_id: int, step: int, lease: str | None = None):
    from campaigns.sender import send_lead_step as send

    return send(lead_id=lead_id, step=step, lease=datetime.fromisoformat(lease) if lease else None)

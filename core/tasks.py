from pathlib import Path

from celery import shared_task
from django.conf import settings


@shared_task(name="core.tasks.ping")
def ping(token: str) -> str:
    """Liveness probe for the worker: writes DATA_DIR/ping-<token>. Used by the serve test and operators."""
    safe = "".join(c for c in token if c.isalnum() or c in "-_")[:64]
    (Path(settings.DATA_DIR) / f"ping-{safe}").write_text("pong")
    return safe

import os
from pathlib import Path

from celery import shared_task
from django.conf import settings


@shared_task(name="core.tasks.ping")
def ping(token: str) -> str:
    """Liveness probe for the worker: writes DATA_DIR/ping-<token>. Used by the serve test and operators."""
    safe = "".join(c for c in token if c.isalnum() or c in "-_")[:64]
    target = Path(settings.DATA_DIR) / f"ping-{safe}"
    partial = target.with_name(f".{target.name}.{os.getpid()}")
    partial.write_text("pong")
    os.replace(partial, target)  # appears whole: a reader never sees the file created but still empty
    return safe

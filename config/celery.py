import os

from celery import Celery
from kombu.transport import TRANSPORT_ALIASES

# `filesystem://` (the embedded default's broker) is kombu's transport with whole-file writes and skipped
# undecodable messages (config/broker.py); registered before any connection is made.
TRANSPORT_ALIASES["filesystem"] = "config.broker:Transport"

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("service")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


def ensure_broker_dirs() -> None:
    """The filesystem broker needs its folders before the first message."""
    from django.conf import settings

    if not settings.REDIS_URL:
        for key in ("data_folder_in", "data_folder_out", "processed_folder", "control_folder", "tmp_folder"):
            os.makedirs(settings.CELERY_BROKER_TRANSPORT_OPTIONS[key], exist_ok=True)

"""Issue 14: no warning repeated on every broker connection or every /openapi.json request."""

import logging

from django.conf import settings
from kombu import Connection


def test_broker_connection_logs_no_hostname_warning(caplog):
    caplog.set_level(logging.WARNING)
    with Connection(settings.CELERY_BROKER_URL, transport_options=settings.CELERY_BROKER_TRANSPORT_OPTIONS) as conn:
        conn.info()
        conn.as_uri()
    assert not [r for r in caplog.records if "No hostname was supplied" in r.getMessage()]

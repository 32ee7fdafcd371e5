"""Issue 14: no warning repeated on every broker connection or every /openapi.json request."""

import logging

import pytest
from django.conf import settings
from kombu import Connection


def test_broker_connection_logs_no_hostname_warning(caplog):
    caplog.set_level(logging.WARNING)
    with Connection(settings.CELERY_BROKER_URL, transport_options=settings.CELERY_BROKER_TRANSPORT_OPTIONS) as conn:
        conn.info()
        conn.as_uri()
    assert not [r for r in caplog.records if "No hostname was supplied" in r.getMessage()]
@pytest.mark.django_db
def test_openapi_json_logs_no_schema_warnings(client, caplog, capsys):
    caplog.set_level(logging.WARNING)
    for _ in range(2):
        assert client.get("/openapi.json").status_code == 200
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
    err = capsys.readouterr().err  # drf-spectacular prints its warnings to stderr
    assert "Warning" not in err and "Error" not in err, err

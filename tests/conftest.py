"""Fixture chain: workspace -> key -> api (an HTTP client that sends the key)."""

import json
import os

import pytest
from django.conf import settings as django_settings
from django.core.cache import cache
from django.test import Client
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

from tests.factories import make_workspace

# Tests never depend on timing: Hypothesis' per-example deadline and its "too slow" health check fail a correct
# property on a busy machine (CI shares two cores), so both are off for the whole suite.
hypothesis_settings.register_profile("service", deadline=None, suppress_health_check=[HealthCheck.too_slow])
hypothesis_settings.load_profile("service")

# Each test process namespaces its cache keys and, with Redis, deletes only its own keys after each test:
# a FLUSHDB would wipe what a parallel test run on the same Redis database is using.
_CACHE_PREFIX = f"t{os.getpid()}"
django_settings.CACHES["default"]["KEY_PREFIX"] = _CACHE_PREFIX


def _clear_own_cache():
    client_getter = getattr(getattr(cache, "_cache", None), "get_client", None)
    if django_settings.REDIS_URL and client_getter:
        client = client_getter(write=True)
        keys = list(client.scan_iter(match=f"{_CACHE_PREFIX}:*", count=1000))
        if keys:
            client.delete(*keys)
    else:
        cache.clear()


@pytest.fixture(scope="session", autouse=True)
def _drop_leftover_sessions(django_db_setup, django_db_blocker):
    """Before pytest-django drops the PostgreSQL test database, end the sessions that threads of live-server
    tests (LLM database threads, MCP workers) still hold; otherwise the DROP fails and the database stays."""
    yield
    from django.db import connection

    if connection.vendor != "postgresql":
        return
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                       "WHERE datname = current_database() AND pid <> pg_backend_pid()")


@pytest.fixture(autouse=True)
def _test_urls(settings):
    settings.ROOT_URLCONF = "tests.urls"


@pytest.fixture(autouse=True)
def _sandbox_dirs(settings, tmp_path):
    settings.MAIL_SINK_DIR = tmp_path / "mail"
    settings.DATA_DIR = tmp_path
    yield
    _clear_own_cache()


class Api:
    """An HTTP client bound to one API key: api.post("/v1/x", {...}) -> response with .json()."""

    def __init__(self, key: str | None):
        self.key = key
        self.client = Client()

    def _headers(self, headers):
        h = {}
        if self.key:
            h["Authorization"] = f"Bearer {self.key}"
        h.update(headers or {})
        return h

    def post(self, path, body=None, *, headers=None, raw=None, content_type="application/json"):
        data = raw if raw is not None else json.dumps(body if body is not None else {})
        return self.client.post(path, data=data, content_type=content_type, headers=self._headers(headers))

    def get(self, path, *, headers=None):
        return self.client.get(path, headers=self._headers(headers))

    def delete(self, path, *, headers=None):
        return self.client.delete(path, headers=self._headers(headers))


@pytest.fixture
def workspace_bundle(db):
    return make_workspace()


@pytest.fixture
def workspace(workspace_bundle):
    return workspace_bundle[0]


@pytest.fixture
def owner(workspace_bundle):
    return workspace_bundle[1]


@pytest.fixture
def api_key(workspace_bundle):
    return workspace_bundle[2]


@pytest.fixture
def api(api_key):
    return Api(api_key)


@pytest.fixture
def make_api(db):
    def _make(**kwargs):
        ws, user, key = make_workspace(**kwargs)
        return Api(key), ws, user
    return _make


@pytest.fixture
def settle_gate(monkeypatch):
    """SETTLE_AFTER_RESPONSE tests: the settlement (billing.services.hold_settle_close) waits for `gate.open` (an
    Event) and then appends "settled" to `gate.order`; opened at the end whatever happened, so no server thread is
    left waiting."""
    import threading
    from types import SimpleNamespace

    from billing import services as billing

    real = billing.hold_settle_close
    gate = SimpleNamespace(open=threading.Event(), order=[])

    def settle(**kwargs):
        assert gate.open.wait(30)
        try:
            return real(**kwargs)
        finally:
            gate.order.append("settled")

    monkeypatch.setattr(billing, "hold_settle_close", settle)
    yield gate
    gate.open.set()


@pytest.fixture
def flaky_settlement(monkeypatch):
    """The first two settlements fail (their request ids are appended to the returned list), the next succeed; no
    wait between retries (billing.services.SETTLE_RETRIES)."""
    from billing import services as billing

    real = billing.hold_settle_close
    failures = []

    def flaky(**kwargs):
        if len(failures) < 2:
            failures.append(kwargs["request_id"])
            raise RuntimeError("database unavailable")
        return real(**kwargs)

    monkeypatch.setattr(billing, "SETTLE_RETRIES", (0.0, 0.0))
    monkeypatch.setattr(billing, "hold_settle_close", flaky)
    return failures


def pytest_terminal_summary(terminalreporter):
    """Name the optional peers (Dovecot, Chromium, PostgreSQL, Redis) this run skipped, and why (issue 14)."""
    from tests.peers import skip_reason, summarize

    reasons = [skip_reason(report) for report in terminalreporter.stats.get("skipped", [])]
    terminalreporter.write_sep("-", "optional peers")
    for line in summarize(reasons):
        terminalreporter.write_line(line)

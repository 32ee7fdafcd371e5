"""Races on webhook endpoints: the per-workspace cap, and disabling an endpoint that just recovered."""

from __future__ import annotations

from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.db import connection, transaction
from django.utils import timezone

from core import errors
from tests.factories import make_workspace
from tests.rendezvous import Rendezvous, in_threads
from webhooks import services
from webhooks.models import WebhookEndpoint


@pytest.mark.django_db(transaction=True)
def test_concurrent_creates_cannot_exceed_the_endpoint_cap(settings, monkeypatch):
    """The workspace has MAX_ENDPOINTS - 1 endpoints and two creates arrive together: without the workspace row
    lock both count one free place before either inserts, and the workspace ends with MAX_ENDPOINTS + 1."""
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL row locks (SQLite serializes the two writers instead)")
    settings.WEBHOOKS_ALLOW_PRIVATE_NETWORKS = True
    ws, owner, _ = make_workspace()
    for i in range(services.MAX_ENDPOINTS - 1):
        services.endpoint_create(workspace=ws, url=f"http://127.0.0.1:9/{i}", events=["*"])
    rendezvous = Rendezvous(2)
    real_secret_new = services.secret_new

    def meet_then_secret():  # called between the count and the insert
        rendezvous.wait()
        return real_secret_new()

    monkeypatch.setattr(services, "secret_new", meet_then_secret)
    created = []

    def create(n):
        with transaction.atomic():  # as the API verb and the console view run it
            created.append(services.endpoint_create(workspace=ws, url=f"http://127.0.0.1:9/race{n}",
                                                    events=["*"])[0].pk)

    failures = in_threads(lambda: create(0), lambda: create(1))
    assert [type(exc) for exc in failures] == [errors.InvalidRequest]  # one refused, nothing unexpected
    assert len(created) == 1
    assert WebhookEndpoint.objects.filter(workspace=ws, deleted_at__isnull=True).count() == services.MAX_ENDPOINTS


@pytest.mark.django_db
def test_an_endpoint_that_recovers_after_the_sweep_read_it_is_not_disabled(settings, monkeypatch):
    """The sweep selects an endpoint failing for 3 days; before it disables it a delivery succeeds (clearing
    `failing_since`, committed). The disabling update must re-check the condition, so the healthy endpoint
    stays active (and its pending deliveries are not failed)."""
    settings.WEBHOOKS_ALLOW_PRIVATE_NETWORKS = True
    ws, owner, _ = make_workspace()
    endpoint, _ = services.endpoint_create(workspace=ws, url="http://127.0.0.1:9/hooks", events=["*"])
    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(failing_since=timezone.now() - timedelta(days=4))
    real_atomic = transaction.atomic

    def recovered_then_atomic(*args, **kwargs):  # between the sweep's SELECT and its UPDATE
        WebhookEndpoint.objects.filter(pk=endpoint.pk).update(failing_since=None)  # as a successful delivery does
        return real_atomic(*args, **kwargs)

    monkeypatch.setattr(services, "transaction", SimpleNamespace(atomic=recovered_then_atomic,
                                                                 on_commit=transaction.on_commit))
    assert services.endpoints_disable_failing() == 0
    endpoint.refresh_from_db()
    assert endpoint.status == WebhookEndpoint.Status.ACTIVE and endpoint.disabled_at is None

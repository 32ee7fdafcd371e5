"""Races on webhook endpoints: the per-workspace cap."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, transaction

from core import errors
from tests.factories import make_workspace
from tests.rendezvous import Rendezvous
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
    created, refused, unexpected = [], [], []

    def create(n):
        try:
            with transaction.atomic():  # as the API verb and the console view run it
                created.append(services.endpoint_create(workspace=ws, url=f"http://127.0.0.1:9/race{n}",
                                                        events=["*"])[0].pk)
        except errors.InvalidRequest as exc:
            refused.append(exc)
        except Exception as exc:  # noqa: BLE001 - reported below
            unexpected.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=create, args=(n,)) for n in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert unexpected == []
    assert (len(created), len(refused)) == (1, 1)
    assert WebhookEndpoint.objects.filter(workspace=ws, deleted_at__isnull=True).count() == services.MAX_ENDPOINTS


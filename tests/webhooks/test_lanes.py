"""No receiver holds anyone else: a trickling receiver costs one timeout, one endpoint gets one attempt at a
time, a delivery is queued at most once at a time (the sweep queues no copies), and deliveries have their own
Celery queue and workers."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
import time_machine
from django.db import transaction
from django.utils import timezone

from tests.factories import make_workspace
from tests.slowloris import Trickler
from webhooks import services
from webhooks.models import WebhookDelivery

pytestmark = pytest.mark.django_db(transaction=True)


def emit(workspace, n=1):
    for i in range(n):
        with transaction.atomic():
            services.event_emit(workspace=workspace, type="approval.requested", data={"n": i})


def test_a_trickling_receiver_costs_one_timeout_and_the_error_is_recorded(settings, queued):
    settings.WEBHOOKS_ALLOW_PRIVATE_NETWORKS = True
    settings.WEBHOOK_TIMEOUT_SECONDS = 1
    workspace, _, _ = make_workspace()
    with Trickler(pause=0.1) as peer:  # each byte well inside 1 s, the answer 20 s or more
        services.endpoint_create(workspace=workspace, url=peer.url + "/hook", events=["*"])
        emit(workspace)
        assert services.delivery_attempt(delivery_id=queued[0]) == "retrying"
        assert not peer.finished.is_set()
    d = WebhookDelivery.objects.get(pk=queued[0])
    assert d.status == "pending" and "timed out" in d.last_error


def test_the_sweep_never_queues_a_delivery_twice_and_one_per_endpoint(settings, queued):
    """Thirty events to an endpoint that is down: each is queued once when it happens; the sweep adds no copy
    while they are queued, and once they are all due for a retry it queues one (the endpoint's worker queues
    the next after each attempt)."""
    settings.WEBHOOKS_ALLOW_PRIVATE_NETWORKS = True
    workspace, _, _ = make_workspace()
    services.endpoint_create(workspace=workspace, url="http://127.0.0.1:9/down", events=["*"])
    emit(workspace, 30)
    assert len(queued) == len(set(queued)) == 30
    for _ in range(3):
        assert services.deliveries_queue_due() == []  # all already in the queue
    for delivery_id in list(queued):  # the worker runs each message: the endpoint refuses the connection
        assert services.delivery_attempt(delivery_id=delivery_id) == "retrying"
    assert WebhookDelivery.objects.filter(queued_at__isnull=False).count() == 0
    later = timezone.now() + timedelta(minutes=2)
    with time_machine.travel(later):
        first = services.deliveries_queue_due()
        assert len(first) == 1
        assert services.deliveries_queue_due() == []  # queued: not again
        assert services.delivery_attempt(delivery_id=first[0]) == "retrying"
        following = services.delivery_next(delivery_id=first[0])
        assert following and following != first[0]
        assert services.deliveries_queue_due() == []  # the next one is queued by the worker, not copied
    with time_machine.travel(later + timedelta(seconds=settings.WEBHOOK_QUEUED_STALE_SECONDS + 1)):
        # a message the broker lost: queued again once its queued time is stale
        assert following in services.deliveries_queue_due()


def test_one_attempt_at_a_time_per_endpoint(settings, queued):
    """While a delivery trickles into endpoint A, another delivery to A is not sent (its message is dropped and
    A's worker queues it next), and a delivery to endpoint B goes out at once."""
    settings.WEBHOOKS_ALLOW_PRIVATE_NETWORKS = True
    settings.WEBHOOK_TIMEOUT_SECONDS = 120  # far beyond the trickle: only the lanes are under test
    settings.WEBHOOK_LEASE_SECONDS = 300
    a_ws, _, _ = make_workspace()
    b_ws, _, _ = make_workspace()
    with Trickler(pause=0.2) as slow, Trickler(pause=0) as fast:
        services.endpoint_create(workspace=a_ws, url=slow.url + "/a", events=["*"])
        services.endpoint_create(workspace=b_ws, url=fast.url + "/b", events=["*"])
        emit(a_ws, 2)
        a1, a2 = queued
        emit(b_ws)
        b1 = queued[2]
        outcome = {}
        thread = threading.Thread(target=lambda: outcome.setdefault("a1", services.delivery_attempt(delivery_id=a1)),
                                  daemon=True)
        thread.start()
        assert slow.wait_requests(1)
        assert services.delivery_attempt(delivery_id=a2) == "busy"
        assert services.delivery_attempt(delivery_id=b1) == "succeeded"
        assert thread.is_alive() and not slow.finished.is_set() and slow.requests == 1
        slow.close()  # the slow answer ends (cut off): A is free again
        thread.join(60)
    assert outcome["a1"] == "retrying"
    assert services.delivery_next(delivery_id=a1) == a2  # A's worker queues A's next delivery


def test_deliveries_have_their_own_queue_and_workers():
    from config.celery import app
    from core.management.commands.serve import child_commands
    from tests.production_shape import procfile

    assert app.amqp.router.route({}, "webhooks.tasks.deliver")["queue"].name == "webhooks"
    assert app.amqp.router.route({}, "webhooks.tasks.sweep")["queue"].name == "webhooks"
    assert app.amqp.router.route({}, "campaigns.tasks.send_one")["queue"].name == "celery"
    cmds = child_commands()
    assert cmds["webhooks"][cmds["webhooks"].index("--queues") + 1] == "webhooks"
    assert cmds["worker"][cmds["worker"].index("--queues") + 1] == "celery"
    pf = procfile()
    assert pf["webhooks"].endswith("-Q webhooks") and pf["worker"].endswith("-Q celery")


@pytest.mark.parametrize("url", ["http://0177.0.0.1:9443/hook", "http://a..b/hook", "https://1.2.3/hook"])
def test_an_invalid_host_is_refused_and_a_delivery_that_cannot_be_made_records_why(settings, queued, url):
    from core import errors

    settings.WEBHOOKS_ALLOW_PRIVATE_NETWORKS = True
    workspace, _, _ = make_workspace()
    with pytest.raises(errors.InvalidRequest):
        services.endpoint_create(workspace=workspace, url=url, events=["*"])
    # one stored before hosts were checked: its attempts record the refusal instead of hanging pending
    endpoint, _ = services.endpoint_create(workspace=workspace, url="http://127.0.0.1:9/hook", events=["*"])
    type(endpoint).objects.filter(pk=endpoint.pk).update(url=url)
    emit(workspace)
    assert services.delivery_attempt(delivery_id=queued[0]) == "retrying"
    assert "not a valid" in WebhookDelivery.objects.get(pk=queued[0]).last_error

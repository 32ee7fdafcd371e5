"""Races with real threads and real database locking: the same message stored by two receivers at once, and the
same message classified by two workers at once."""

from __future__ import annotations

import threading

import pytest
from django.db import close_old_connections

from replies import services
from replies.models import InboundMessage, Reply
from tests.replies.conftest import make_world, reply_bytes

pytestmark = pytest.mark.django_db(transaction=True)


def race(n, fn):
    barrier = threading.Barrier(n)
    results, failures = [], []

    def run():
        try:
            barrier.wait(10)
            results.append(fn())
        except Exception as exc:  # noqa: BLE001
            failures.append(exc)
        finally:
            close_old_connections()

    threads = [threading.Thread(target=run) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not failures, failures
    return results


def test_the_same_message_stored_at_once_is_stored_once(workspace):
    world = make_world(workspace)
    raw = reply_bytes(in_reply_to="<msg-0@outreach-sbx.test>")
    results = race(4, lambda: services.inbound_store(mailbox=world.mailbox, raw=raw, source="smtp"))
    assert sorted(r.created for r in results) == [False, False, False, True]
    assert len({r.inbound.pk for r in results}) == 1
    assert InboundMessage.objects.count() == 1 and Reply.objects.count() == 1


def test_the_same_message_classified_at_once_is_acted_on_once(workspace):
    world = make_world(workspace)
    stored = services.inbound_store(mailbox=world.mailbox, raw=reply_bytes(in_reply_to="<msg-0@outreach-sbx.test>"),
                                    source="smtp")
    race(4, lambda: services.inbound_classify(inbound_id=stored.inbound.pk))
    inbound = InboundMessage.objects.get()
    assert inbound.state == "processed" and 1 <= inbound.attempts <= 4
    assert inbound.detail["stopped"] == [world.jane.pk]

"""Races with real threads and real database locking: the same message stored by two receivers at once, and the
same message classified by two workers at once."""

from __future__ import annotations

import threading

import pytest
from django.db import close_old_connections

from replies import services
from replies.models import InboundMessage, Reply
from tests.rendezvous import Rendezvous, in_threads
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


def test_one_person_replying_in_two_campaigns_at_once_does_not_deadlock(workspace, monkeypatch):
    """Jane is a lead in two campaigns and answers both at once. Each reply stops its own lead, then suppresses
    her address, which stops her lead in the other campaign. Without a lock order the two classifications lock
    the two leads in opposite orders and PostgreSQL kills one as a deadlock victim; with every lead locked first
    in primary-key order, the second waits for the first."""
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL row locks")
    from campaigns import services as campaigns_services
    from campaigns.models import CampaignLead

    one = make_world(workspace)
    two = make_world(workspace, mailbox_email="sam@outreach-sbx.test", prefix="b-")
    first = services.inbound_store(mailbox=one.mailbox, source="smtp", raw=reply_bytes(
        in_reply_to="<msg-0@outreach-sbx.test>", message_id="<r1@acme.com>"))
    second = services.inbound_store(mailbox=two.mailbox, source="smtp", raw=reply_bytes(
        to="sam@outreach-sbx.test", in_reply_to="<b-msg-0@outreach-sbx.test>", message_id="<r2@acme.com>"))
    real_stop, both_stopped_own = campaigns_services.lead_stop, Rendezvous(2)
    waited = threading.local()

    def stop_then_wait(*, lead, reason):  # each classification stops its own lead, then waits for the other's
        moved = real_stop(lead=lead, reason=reason)
        if not getattr(waited, "done", False):
            waited.done = True
            both_stopped_own.wait()  # with the lock order the other one is blocked on a lock before this point
        return moved

    monkeypatch.setattr(campaigns_services, "lead_stop", stop_then_wait)
    # a deadlock victim would be among the failures
    assert in_threads(*(lambda s=s: services.inbound_classify(inbound_id=s.inbound.pk) for s in (first, second))) == []
    assert set(InboundMessage.objects.values_list("state", flat=True)) == {"processed"}
    assert set(CampaignLead.objects.filter(email="jane@acme.com").values_list("state", flat=True)) == {"stopped"}

"""Ingestion, threading and effects: raw first, classified after; stop + suppress; delivery evidence."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from campaigns.models import CampaignLead, SentMessage, Suppression
from replies import services
from replies.models import InboundMessage, Reply
from tests.factories import make_workspace
from tests.replies.conftest import corpus, make_world, reply_bytes

pytestmark = pytest.mark.django_db


def store_and_classify(world, raw, **kw):
    stored = services.inbound_store(mailbox=world.mailbox, raw=raw, source="smtp", **kw)
    services.inbound_classify(inbound_id=stored.inbound.pk)
    stored.inbound.refresh_from_db()
    return stored.inbound


def suppression(world, email):
    row = Suppression.objects.filter(workspace=world.workspace, email=email).first()
    return row.reason if row else None


def lead_state(lead):
    lead.refresh_from_db()
    return lead.state, lead.stop_reason


def evidence(email):
    from leads.verification.selectors import delivery_evidence_exists

    return delivery_evidence_exists(email=email)


def test_raw_is_stored_first_and_classification_is_null_until_classified(world):
    raw = reply_bytes(in_reply_to="<msg-0@outreach-sbx.test>")
    stored = services.inbound_store(mailbox=world.mailbox, raw=raw, source="smtp")
    assert stored.created
    inbound = stored.inbound
    assert bytes(inbound.raw) == raw and inbound.state == "received" and inbound.classification is None
    reply = Reply.objects.get(inbound=inbound)
    assert reply.classification is None
    assert (reply.campaign_id, reply.campaign_lead_id, reply.sent_message_id, reply.matched_by) == (
        world.campaign.pk, world.jane.pk, world.sent_jane.pk, "in_reply_to")
    assert reply.from_email == "jane@acme.com" and reply.subject == "Re: Quick question"
    assert reply.snippet == "Sounds good, let's talk on Tuesday."
    assert lead_state(world.jane)[0] == "active"  # nothing happens before classification

    services.inbound_classify(inbound_id=inbound.pk)
    reply.refresh_from_db()
    assert reply.classification == "interested"
    assert lead_state(world.jane) == ("stopped", "replied")
    assert suppression(world, "jane@acme.com") == "replied"
    assert evidence("jane@acme.com")
    assert lead_state(world.tom)[0] == "active"


def test_classification_task_is_queued_on_commit(world, eager, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        stored = services.inbound_store(mailbox=world.mailbox, raw=reply_bytes(
            in_reply_to="<msg-0@outreach-sbx.test>", body="No thanks."), source="smtp")
    assert len(callbacks) == 1
    assert Reply.objects.get(inbound=stored.inbound).classification == "not_interested"


def test_duplicates_are_stored_once(world):
    raw = reply_bytes(in_reply_to="<msg-0@outreach-sbx.test>")
    first = services.inbound_store(mailbox=world.mailbox, raw=raw, source="smtp")
    again = services.inbound_store(mailbox=world.mailbox, raw=raw.replace(b"Tuesday", b"Wednesday"),
                                   source="imap")
    assert first.created and not again.created and again.inbound.pk == first.inbound.pk
    assert InboundMessage.objects.count() == 1 and Reply.objects.count() == 1


def test_messages_without_message_id_are_deduplicated_by_content(world):
    raw = reply_bytes(message_id=None, in_reply_to="<msg-0@outreach-sbx.test>")
    assert services.inbound_store(mailbox=world.mailbox, raw=raw, source="smtp").created
    assert not services.inbound_store(mailbox=world.mailbox, raw=raw, source="smtp").created
    assert services.inbound_store(mailbox=world.mailbox, raw=raw + b"x", source="smtp").created


def test_own_sent_copies_are_never_replies(world):
    # the very message this service sent (same Message-ID) and mail From the mailbox itself
    copy = reply_bytes(frm=f"Alex <{world.mailbox.email}>", to="jane@acme.com", message_id="<msg-0@outreach-sbx.test>")
    by_hand = reply_bytes(frm=f"Alex <{world.mailbox.email.upper()}>", to="x@y.z", message_id="<hand@x>")
    for raw in (copy, by_hand):
        inbound = store_and_classify(world, raw)
        assert inbound.state == "ignored"
    assert Reply.objects.count() == 0
    assert lead_state(world.jane)[0] == "active" and not Suppression.objects.exists()


def test_threading_by_references_when_in_reply_to_is_foreign(world):
    raw = reply_bytes(in_reply_to="<someone-else@acme.com>",
                      references="<msg-1@outreach-sbx.test> <someone-else@acme.com>", frm="Tom <tom@northwind.io>")
    inbound = store_and_classify(world, raw)
    reply = inbound.reply
    assert (reply.campaign_lead_id, reply.matched_by) == (world.tom.pk, "references")


def test_threading_falls_back_to_the_sender_among_the_mailboxs_leads(world):
    inbound = store_and_classify(world, reply_bytes(frm="Tom Becker <TOM@northwind.io>", body="Not interested."))
    reply = inbound.reply
    assert (reply.campaign_lead_id, reply.matched_by, reply.classification) == (world.tom.pk, "address",
                                                                                "not_interested")
    assert lead_state(world.tom) == ("stopped", "replied") and suppression(world, "tom@northwind.io") == "replied"


def test_a_stranger_is_kept_as_a_reply_but_suppresses_nobody(world):
    inbound = store_and_classify(world, reply_bytes(frm="someone@else.org", body="Interested!"))
    assert inbound.reply.campaign_id is None and inbound.reply.classification == "interested"
    assert not Suppression.objects.exists()


def test_another_workspaces_sent_message_is_not_matched(world):
    other_ws, _, _ = make_workspace()
    other = make_world(other_ws, mailbox_email="bob@other-sbx.test", prefix="o-")
    # a reply reaching our mailbox but quoting the other workspace's Message-ID and from its lead's address
    inbound = store_and_classify(world, reply_bytes(frm="nobody@acme.org", in_reply_to="<o-msg-0@outreach-sbx.test>"))
    assert inbound.reply.campaign_id is None
    assert lead_state(other.jane)[0] == "active"


def test_unsubscribe_reply_suppresses_as_unsubscribed(world):
    store_and_classify(world, reply_bytes(in_reply_to="<msg-0@outreach-sbx.test>", body="Please remove me from "
                                          "your list."))
    assert suppression(world, "jane@acme.com") == "unsubscribed"
    assert lead_state(world.jane) == ("stopped", "unsubscribed")


def test_out_of_office_stops_and_suppresses_as_replied(world):
    raw = corpus("exchange-en").replace(b"In-Reply-To: <20261118093000.4f2a@outreach-sbx.test>",
                                        b"In-Reply-To: <msg-0@outreach-sbx.test>")
    inbound = store_and_classify(world, raw)
    assert inbound.reply.classification == "out_of_office"
    assert lead_state(world.jane) == ("stopped", "replied") and suppression(world, "jane@acme.com") == "replied"


def test_dsn_bounce_suppresses_the_final_recipient_as_bounced(world):
    raw = corpus("postfix-user-unknown").replace(b"msg-postfix-user-unknown@outreach-sbx.test",
                                                 b"msg-0@outreach-sbx.test")
    inbound = store_and_classify(world, raw)
    reply = inbound.reply
    assert reply.classification == "bounce" and reply.from_email == "mailer-daemon@mail.outreach-sbx.test"
    assert (reply.campaign_lead_id, reply.matched_by) == (world.jane.pk, "returned_message")
    assert lead_state(world.jane) == ("stopped", "bounced") and suppression(world, "jane@acme.com") == "bounced"
    assert SentMessage.objects.get(pk=world.sent_jane.pk).bounced
    assert not evidence("jane@acme.com")  # a bounce is no evidence of delivery
    assert inbound.detail["bounced"] == ["jane@acme.com"]


def test_plain_text_bounce_attributed_by_failed_address(world):
    raw = corpus("qmail-no-mailbox").replace(b"walter@graymatter.com", b"tom@northwind.io").replace(
        b"msg-qmail-no-mailbox@", b"unknown-id@")
    inbound = store_and_classify(world, raw)
    assert (inbound.reply.campaign_lead_id, inbound.reply.matched_by) == (world.tom.pk, "address")
    assert suppression(world, "tom@northwind.io") == "bounced"


def test_plain_text_bounce_attributed_by_returned_message_id_only(world):
    raw = corpus("generic-msgid-only").replace(b"msg-generic-msgid-only@outreach-sbx.test", b"msg-1@outreach-sbx.test")
    inbound = store_and_classify(world, raw)
    assert inbound.reply.campaign_lead_id == world.tom.pk
    assert lead_state(world.tom) == ("stopped", "bounced") and suppression(world, "tom@northwind.io") == "bounced"


@pytest.mark.parametrize("name", ["postfix-delayed", "gmail-delay", "mdn-read-receipt", "outlook-read-receipt"])
def test_delay_notices_and_read_receipts_stop_and_suppress_nobody(world, name):
    raw = corpus(name)
    for old in (b"sara@umbrella.co", b"dwight@dundermifflin.com", b"tom@northwind.io"):
        raw = raw.replace(old, b"jane@acme.com")
    raw = raw.replace(b"msg-postfix-delayed@", b"msg-0@").replace(b"msg-gmail-delay@", b"msg-0@")
    inbound = store_and_classify(world, raw)
    assert inbound.reply.classification == "other"
    assert lead_state(world.jane)[0] == "active" and lead_state(world.tom)[0] == "active"
    assert not Suppression.objects.exists()


def test_classification_is_applied_once(world):
    stored = services.inbound_store(mailbox=world.mailbox, raw=reply_bytes(in_reply_to="<msg-0@outreach-sbx.test>"),
                                    source="smtp")
    services.inbound_classify(inbound_id=stored.inbound.pk)
    CampaignLead.objects.filter(pk=world.jane.pk).update(state="active", stop_reason="")
    services.inbound_classify(inbound_id=stored.inbound.pk)  # a redelivered task: nothing happens again
    assert lead_state(world.jane)[0] == "active"
    assert InboundMessage.objects.get(pk=stored.inbound.pk).attempts == 1


def test_sweeper_classifies_what_a_lost_task_left(world, settings):
    import time_machine
    from django.utils import timezone

    from replies import tasks

    stored = services.inbound_store(mailbox=world.mailbox, raw=reply_bytes(in_reply_to="<msg-0@outreach-sbx.test>"),
                                    source="smtp")
    assert tasks.classify_sweep() == 0  # too fresh: its own task is still expected
    with time_machine.travel(timezone.now() + timedelta(seconds=59)):
        assert tasks.classify_sweep() == 0
    with time_machine.travel(timezone.now() + timedelta(seconds=61)):
        assert tasks.classify_sweep() == 1
    assert Reply.objects.get(inbound=stored.inbound).classification == "interested"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(raw=st.binary(max_size=1500))
def test_fuzz_ingestion_never_crashes(world, raw):
    stored = services.inbound_store(mailbox=world.mailbox, raw=raw, source="smtp")
    inbound = services.inbound_classify(inbound_id=stored.inbound.pk)
    assert inbound.state in ("processed", "ignored")


def test_list_unsubscribe_mailto_unsubscribes_the_lead_its_token_names(world):
    from urllib.parse import unquote, urlsplit

    from campaigns.messages import unsubscribe_mailto

    mailto = urlsplit(unsubscribe_mailto(world.tom, world.mailbox.email))
    subject = unquote(mailto.query.partition("=")[2])
    # sent by a mail client's one-click unsubscribe, from an alias address, with no thread headers
    raw = (f"From: t.becker@northwind-alias.io\r\nTo: {mailto.path}\r\nSubject: {subject}\r\n"
           f"Message-ID: <unsub-1@northwind.io>\r\n\r\nThis message was automatically generated.\r\n").encode()
    inbound = store_and_classify(world, raw)
    reply = inbound.reply
    assert reply.matched_by == "mailto_token"
    assert (reply.classification, reply.campaign_lead_id, inbound.rule) == ("unsubscribe", world.tom.pk,
                                                                            "list_unsubscribe_mailto")
    assert suppression(world, "tom@northwind.io") == "unsubscribed"
    assert lead_state(world.tom) == ("stopped", "unsubscribed")
    assert lead_state(world.jane)[0] == "active"


def test_a_forged_unsubscribe_token_is_just_a_reply(world):
    raw = (b"From: someone@else.org\r\nTo: alex@outreach-sbx.test\r\nSubject: unsubscribe 1.AAAAAAAAAAAAAAAAAAAAAAAAAAAA"
           b"\r\nMessage-ID: <forged@else.org>\r\n\r\n\r\n")
    inbound = store_and_classify(world, raw)
    assert inbound.reply.classification == "unsubscribe" and inbound.reply.campaign_id is None
    assert not Suppression.objects.exists()


def test_pathological_nesting_is_stored_and_classified(world):
    from tests.replies.test_classify import nested_multipart

    inbound = store_and_classify(world, nested_multipart(1000, subject="Re: hello"))
    assert inbound.state == "processed" and inbound.reply.subject == "Re: hello"


def test_sweep_survives_a_message_that_cannot_be_classified(world, monkeypatch):
    import time_machine
    from django.utils import timezone

    from replies import classify as cl
    from replies import tasks

    real = cl.classify

    def classify(raw):
        if b"POISON" in raw:
            raise RuntimeError("a classifier bug")
        return real(raw)

    monkeypatch.setattr(cl, "classify", classify)
    bad = services.inbound_store(mailbox=world.mailbox, source="smtp", raw=reply_bytes(message_id="<p@x>", body="POISON"))
    good = services.inbound_store(mailbox=world.mailbox, source="smtp", raw=reply_bytes(
        message_id="<g@x>", in_reply_to="<msg-0@outreach-sbx.test>"))
    later = timezone.now() + timedelta(minutes=2)
    with time_machine.travel(later):
        assert tasks.classify_sweep() == 2  # the bad one first (oldest); the good one is still classified
    assert InboundMessage.objects.get(pk=good.inbound.pk).state == "processed"
    for i in range(4):
        with time_machine.travel(later + timedelta(minutes=i + 1)):
            assert tasks.classify_sweep() == 1
    with time_machine.travel(later + timedelta(minutes=10)):
        assert tasks.classify_sweep() == 0  # given up after 5 attempts: raw kept, reply unclassified
    bad.inbound.refresh_from_db()
    assert (bad.inbound.state, bad.inbound.attempts, bad.inbound.reply.classification) == ("received", 5, None)



def test_a_reply_waits_while_the_model_builds_in_the_background(world, tmp_path, monkeypatch):
    """`make run` starts the service at once and builds the reply model beside it (replies.model_background): a
    reply that needs the model meanwhile stays received, without counting a failed attempt, instead of building a
    second copy inside the worker; once the model is there it is classified as usual."""
    import os

    from replies import model, model_background

    monkeypatch.setattr(model, "_model", None)
    monkeypatch.setenv("REPLIES_MODEL_DIR", str(tmp_path))
    model_background.building_path().write_text(str(os.getpid()))  # a live builder (this process stands in)
    stored = services.inbound_store(mailbox=world.mailbox, raw=reply_bytes(in_reply_to="<msg-0@outreach-sbx.test>"),
                                    source="smtp")
    services.inbound_classify(inbound_id=stored.inbound.pk)
    inbound = InboundMessage.objects.get(pk=stored.inbound.pk)
    assert inbound.state == "received" and inbound.attempts == 0
    assert Reply.objects.get(inbound=inbound).classification is None
    assert not list(tmp_path.glob("model-*.pkl"))  # nothing built here
    monkeypatch.undo()  # the model is there now (the shared cache)
    services.inbound_classify(inbound_id=stored.inbound.pk)
    assert Reply.objects.get(inbound=inbound).classification == "interested"


def test_a_dead_builders_mark_does_not_make_replies_wait(tmp_path, monkeypatch):
    from replies import model, model_background

    monkeypatch.setattr(model, "_model", None)
    monkeypatch.setenv("REPLIES_MODEL_DIR", str(tmp_path))
    model_background.building_path().write_text("999999999")  # no such process: a build that died
    assert not model_background.waiting()

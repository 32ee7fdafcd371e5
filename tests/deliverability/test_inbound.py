"""Signals through the real inbound paths: a burst of DSN bounces and ARF complaint reports delivered over SMTP to
the sandbox listener and polled over IMAP from Dovecot. Reports are never replies of a lead."""

from __future__ import annotations

import os
import shutil
import smtplib
import socket
import tempfile
from pathlib import Path

import pytest

from campaigns.models import CampaignLead, SentMessage, Suppression
from deliverability.models import Complaint
from replies.models import InboundMessage, Reply
from sending.testing import make_active_mailbox
from tests.deliverability.conftest import add_sends, arf_bytes, dsn_bytes
from tests.replies.dovecot import DOVECOT, Dovecot

pytestmark = pytest.mark.django_db(transaction=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def listener(eager):
    from replies.smtp import make_controller

    controller = make_controller(host="127.0.0.1", port=free_port())
    controller.start()
    yield controller
    controller.stop()


def smtp_send(listener, raw: bytes, rcpt: str, sender: str = "") -> None:
    with smtplib.SMTP(listener.hostname, listener.port, timeout=10) as client:
        assert client.sendmail(sender, [rcpt], raw) == {}


def test_a_burst_of_dsn_bounces_over_smtp_pauses_the_mailbox_that_sent(listener, workspace):
    mb = make_active_mailbox(workspace, email="alex@bounce-mail.test")
    other = make_active_mailbox(workspace, email="sam@bounce-mail.test")
    add_sends(mb, sent=40)
    sent = list(SentMessage.objects.filter(mailbox=mb).order_by("claimed_at")[:3])
    for n, msg in enumerate(sent):
        smtp_send(listener, dsn_bytes(to=mb.email, recipient=msg.to_email, returned_id=msg.message_id, n=n), mb.email)
    assert SentMessage.objects.filter(mailbox=mb, bounced=True).count() == 3
    assert set(Suppression.objects.filter(reason="bounced").values_list("email", flat=True)) == {
        m.to_email for m in sent}
    mb.refresh_from_db()
    other.refresh_from_db()
    assert mb.health_state == "paused" and mb.health_reasons == ["bounce_rate"]  # 3/40 = 7.5%
    assert mb.health_dirty is False  # evaluated at once, not left for the sweep
    assert other.health_state == "healthy"  # same domain, other mailbox: its own sends are clean


def test_arf_reports_over_smtp_are_complaints_not_replies(listener, workspace):
    mb = make_active_mailbox(workspace, email="alex@arf-mail.test")
    sibling = make_active_mailbox(workspace, email="kim@arf-mail.test")
    add_sends(mb, sent=10)
    sent = list(SentMessage.objects.filter(mailbox=mb).select_related("campaign_lead").order_by("claimed_at")[:3])
    CampaignLead.objects.filter(pk=sent[0].campaign_lead_id).update(state="active", current_step=1)
    smtp_send(listener, arf_bytes(to=mb.email, sender=mb.email, recipient=sent[0].to_email,
                                  message_id=sent[0].message_id, n=0), mb.email)
    assert Reply.objects.count() == 0
    inbound = InboundMessage.objects.get()
    assert inbound.state == "processed" and inbound.rule == "feedback_report"
    assert inbound.detail["complaint"]["mailbox_id"] == mb.pk
    (complaint,) = Complaint.objects.all()
    assert (complaint.domain_name, complaint.mailbox_id, complaint.recipient, complaint.feedback_type) == (
        "arf-mail.test", mb.pk, sent[0].to_email, "abuse")
    assert Suppression.objects.get(email=sent[0].to_email).reason == "unsubscribed"
    assert CampaignLead.objects.get(pk=sent[0].campaign_lead_id).state == "stopped"
    mb.domain.refresh_from_db()
    assert mb.domain.health_state == "warning"  # the first complaint warns

    # two more (one with headers only): 3 complaints in 7 days pause the domain and every mailbox on it
    for n, msg in enumerate(sent[1:], start=1):
        smtp_send(listener, arf_bytes(to=sibling.email, sender=mb.email, recipient=msg.to_email,
                                      message_id=msg.message_id, n=n, headers_only=n == 2), sibling.email)
    smtp_send(listener, arf_bytes(to=mb.email, sender=mb.email, recipient=sent[1].to_email,
                                  message_id=sent[1].message_id, n=1), mb.email)  # the same report again
    assert Complaint.objects.count() == 3 and Reply.objects.count() == 0
    for row in (mb.domain, mb, sibling):
        row.refresh_from_db()
        assert row.health_state == "paused" and row.health_reasons == ["complaint_rate"]


def test_a_report_about_mail_this_workspace_did_not_send_counts_nowhere(listener, workspace):
    mb = make_active_mailbox(workspace, email="alex@quiet-mail.test")
    smtp_send(listener, arf_bytes(to=mb.email, sender="x@stranger.test", recipient="y@dest.test",
                                  message_id="nope@stranger.test"), mb.email)
    inbound = InboundMessage.objects.get()
    assert inbound.detail["complaint"]["unmatched"] is True
    assert Complaint.objects.count() == 0 and Reply.objects.count() == 0


@pytest.fixture(scope="module")
def dovecot():
    if not os.path.exists(DOVECOT):
        pytest.skip("Debian dovecot-imapd is not installed")
    root = Path(tempfile.mkdtemp(prefix="deliverability-dovecot-"))
    root.chmod(0o755)
    server = Dovecot(host="127.0.0.1", port=free_port(), root=root)
    try:
        yield server.start()
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


def test_dsn_and_arf_polled_over_imap(dovecot, workspace, eager):
    import imaplib

    from replies import imap as replies_imap
    from replies import services
    from sending.crypto import encrypt

    account = dovecot.user(7)
    mb = make_active_mailbox(workspace, email=account, provider="byo", imap_host=dovecot.host,
                             imap_port=dovecot.port, imap_security="none", imap_username=account,
                             secret_encrypted=encrypt(dovecot.password))
    add_sends(mb, sent=20)
    sent = list(SentMessage.objects.filter(mailbox=mb).order_by("claimed_at")[:2])
    conn = imaplib.IMAP4(dovecot.host, dovecot.port)
    conn.login(account, dovecot.password)
    conn.append("INBOX", None, None, dsn_bytes(to=account, recipient=sent[0].to_email, returned_id=sent[0].message_id))
    conn.append("INBOX", None, None, arf_bytes(to=account, sender=account, recipient=sent[1].to_email,
                                               message_id=sent[1].message_id))
    conn.logout()
    assert replies_imap.mailbox_poll(mailbox=mb) == 2  # classification runs on commit (eager tasks)
    for inbound in InboundMessage.objects.filter(state="received"):
        services.inbound_classify(inbound_id=inbound.pk)
    assert Reply.objects.get().classification == "bounce"  # the DSN; the ARF report is no reply
    assert Complaint.objects.get().mailbox_id == mb.pk
    mb.refresh_from_db()
    # 1 bounce in 20 sends = 5%: paused; the first complaint on its domain warns (and shows on the mailbox)
    assert mb.health_state == "paused" and set(mb.health_reasons) == {"bounce_rate", "complaint_rate"}

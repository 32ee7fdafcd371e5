"""Deliverability fixtures: mailboxes with a send history, DSN and ARF messages as mailbox providers send them."""

from __future__ import annotations

import itertools
from datetime import timedelta

import pytest
from django.utils import timezone

SEQ = itertools.count()


def make_campaign(workspace, mailboxes, *, leads=0, state="launched", window=None):
    """A launched campaign with these mailboxes attached and `leads` active leads due now, round robin."""
    from campaigns.models import Campaign, CampaignLead

    window = window or {"timezone": "UTC", "days": ["mon", "tue", "wed", "thu", "fri", "sat", "sun"],
                        "start_hour": 0, "end_hour": 24}
    now = timezone.now()
    campaign = Campaign.objects.create(workspace=workspace, name=f"c{next(SEQ)}", state=state,
                                       steps=[{"subject": "Hello {{first_name|there}}", "body": "Hi", "wait_days": 0},
                                              {"subject": None, "body": "Bump", "wait_days": 3}],
                                       sending_window=window, leads_accepted=leads, launched_at=now,
                                       mailboxes_attached=len(mailboxes))
    campaign.mailboxes.set(mailboxes)
    CampaignLead.objects.bulk_create([
        CampaignLead(campaign=campaign, workspace=workspace, email=f"lead{i}.{campaign.pk.hex[:6]}@prospect.test",
                     position=i, state=CampaignLead.State.ACTIVE, mailbox=mailboxes[i % len(mailboxes)],
                     current_step=0, next_send_at=now)
        for i in range(leads)])
    return campaign


def add_sends(mailbox, *, sent: int, bounced: int = 0, at=None):
    """`sent` delivered and `bounced` hard-bounced messages from `mailbox` (each to a lead of its own campaign)."""
    from campaigns.models import CampaignLead, SentMessage

    campaign = make_campaign(mailbox.workspace, [mailbox])
    at = at or timezone.now()
    rows = []
    for i in range(sent + bounced):
        n = next(SEQ)
        lead = CampaignLead.objects.create(campaign=campaign, workspace=mailbox.workspace, email=f"r{n}@dest.test",
                                           position=i, state="finished", mailbox=mailbox, current_step=2)
        rows.append(SentMessage(workspace=mailbox.workspace, campaign=campaign, campaign_lead=lead, step_index=0,
                                mailbox=mailbox, message_id=f"hist-{n}@{mailbox.domain_name}", to_email=lead.email,
                                state="sent" if i < sent else "failed", bounced=i >= sent,
                                claimed_at=at - timedelta(seconds=sent + bounced - i), sent_at=at))
    SentMessage.objects.bulk_create(rows)
    return campaign


def dsn_bytes(*, to: str, recipient: str, returned_id: str, n: int = 0) -> bytes:
    """A Postfix-style RFC 3464 delivery failure for `recipient`, returning the message `returned_id`."""
    return (
        f"From: MAILER-DAEMON@mx.dest.test (Mail Delivery System)\r\nTo: {to}\r\n"
        f"Subject: Undelivered Mail Returned to Sender\r\nMessage-ID: <dsn-{n}-{returned_id}>\r\n"
        "Date: Thu, 19 Nov 2026 10:00:00 +0000\r\nAuto-Submitted: auto-replied\r\nMIME-Version: 1.0\r\n"
        'Content-Type: multipart/report; report-type=delivery-status; boundary="B"\r\n\r\n'
        "--B\r\nContent-Type: text/plain\r\n\r\nI'm sorry to have to inform you that your message could not be "
        f"delivered.\r\n<{recipient}>: host mx.dest.test said: 550 5.1.1 User unknown\r\n\r\n"
        "--B\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx.dest.test\r\n\r\n"
        f"Final-Recipient: rfc822; {recipient}\r\nAction: failed\r\nStatus: 5.1.1\r\n"
        "Diagnostic-Code: smtp; 550 5.1.1 User unknown\r\n\r\n"
        f"--B\r\nContent-Type: text/rfc822-headers\r\n\r\nMessage-ID: <{returned_id}>\r\nTo: {recipient}\r\n"
        "Subject: Hello\r\n\r\n--B--\r\n").encode()


def arf_bytes(*, to: str, sender: str, recipient: str, message_id: str, n: int = 0,
              headers_only: bool = False) -> bytes:
    """An RFC 5965 abuse report as a mailbox provider's feedback loop sends it (RFC 5965 appendix B.2 shape)."""
    original = (f"From: {sender}\r\nTo: {recipient}\r\nSubject: Hello\r\nMessage-ID: <{message_id}>\r\n"
                "Date: Wed, 18 Nov 2026 10:00:00 +0000\r\n")
    third = (f"Content-Type: text/rfc822-headers\r\n\r\n{original}" if headers_only else
             f"Content-Type: message/rfc822\r\nContent-Disposition: inline\r\n\r\n{original}\r\nHi there\r\n")
    return (
        f"From: <abusedesk@fbl.provider.test>\r\nTo: {to}\r\nSubject: FW: Hello\r\n"
        f"Message-ID: <arf-{n}-{message_id}>\r\nDate: Thu, 19 Nov 2026 10:00:00 +0000\r\nMIME-Version: 1.0\r\n"
        'Content-Type: multipart/report; report-type=feedback-report; boundary="part1_13d.2e68ed54_boundary"\r\n\r\n'
        "--part1_13d.2e68ed54_boundary\r\nContent-Type: text/plain; charset=\"US-ASCII\"\r\n\r\n"
        "This is an email abuse report for an email message received from IP 192.0.2.1 on "
        "Thu, 19 Nov 2026 10:00:00 +0000.\r\n\r\n"
        "--part1_13d.2e68ed54_boundary\r\nContent-Type: message/feedback-report\r\n\r\n"
        "Feedback-Type: abuse\r\nUser-Agent: SomeGenerator/1.0\r\nVersion: 1\r\n"
        f"Original-Mail-From: <{sender}>\r\nOriginal-Rcpt-To: <{recipient}>\r\n"
        "Arrival-Date: Thu, 19 Nov 2026 09:59:00 +0000\r\nSource-IP: 192.0.2.1\r\n"
        f"Reported-Domain: {sender.rpartition('@')[2]}\r\n\r\n"
        f"--part1_13d.2e68ed54_boundary\r\n{third}\r\n--part1_13d.2e68ed54_boundary--\r\n").encode()


@pytest.fixture
def eager():
    from config.celery import app

    old = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = old

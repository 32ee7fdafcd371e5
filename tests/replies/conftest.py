"""Fixtures: a workspace with a sandbox mailbox, a launched campaign, leads and the messages sent to them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

CORPUS = Path(__file__).resolve().parents[1] / "data" / "replies"
MAILBOX = "alex@outreach-sbx.test"


def corpus(name: str) -> bytes:
    (path,) = [p for p in CORPUS.glob("*/*.eml") if p.name.endswith(f"-{name}.eml")]
    return path.read_bytes()


def reply_bytes(*, frm="Jane Doe <jane@acme.com>", to=MAILBOX, subject="Re: Quick question", body="Sounds good, "
                "let's talk on Tuesday.", message_id="<r1@acme.com>", in_reply_to=None, references=None,
                extra="") -> bytes:
    lines = [f"From: {frm}", f"To: {to}", f"Subject: {subject}", "Date: Thu, 19 Nov 2026 10:00:00 +0000"]
    if message_id:
        lines.append(f"Message-ID: {message_id}")
    if in_reply_to:
        lines.append(f"In-Reply-To: {in_reply_to}")
    if references:
        lines.append(f"References: {references}")
    if extra:
        lines.append(extra)
    lines += ["MIME-Version: 1.0", "Content-Type: text/plain; charset=utf-8", "", body, "",
              "On Wed, Nov 18, 2026 Alex <alex@outreach-sbx.test> wrote:", "> Would you be interested in a call?"]
    return "\r\n".join(lines).encode()


@dataclass
class World:
    workspace: object
    mailbox: object
    campaign: object
    jane: object  # lead, sent step 0 from the mailbox
    tom: object  # lead, sent step 0
    sent_jane: object
    sent_tom: object


def make_world(workspace, mailbox_email=MAILBOX, prefix="") -> World:
    from campaigns.models import Campaign, CampaignLead, SentMessage
    from sending.testing import make_active_mailbox

    mailbox = make_active_mailbox(workspace, email=mailbox_email)
    now = timezone.now()
    campaign = Campaign.objects.create(workspace=workspace, name="Q4 outreach", state=Campaign.State.LAUNCHED,
                                       steps=[{"subject": "Quick question", "body": "Hi", "wait_days": 0},
                                              {"subject": None, "body": "Bump", "wait_days": 3}],
                                       leads_accepted=2, launched_at=now, mailboxes_attached=1)
    campaign.mailboxes.add(mailbox)
    leads, sent = [], []
    for i, email in enumerate(["jane@acme.com", "tom@northwind.io"]):
        lead = CampaignLead.objects.create(campaign=campaign, workspace=workspace, email=email, position=i,
                                           state=CampaignLead.State.ACTIVE, mailbox=mailbox, current_step=1,
                                           next_send_at=now + timedelta(days=3))
        leads.append(lead)
        sent.append(SentMessage.objects.create(
            workspace=workspace, campaign=campaign, campaign_lead=lead, step_index=0, mailbox=mailbox,
            message_id=f"{prefix}msg-{i}@outreach-sbx.test", to_email=email, subject="Quick question",
            state=SentMessage.State.SENT, sent_at=now))
    return World(workspace, mailbox, campaign, leads[0], leads[1], sent[0], sent[1])


@pytest.fixture
def world(workspace):
    return make_world(workspace)


@pytest.fixture
def eager():
    from config.celery import app

    old = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = old

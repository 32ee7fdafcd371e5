"""Answers through real SMTP peers: aiosmtpd with a password (STARTTLS + AUTH), aiosmtpd accepting only XOAUTH2
bearer tokens of a local authorization server, and a mailbox bought through the Google Workspace fake (delegated
mail token, XOAUTH2; its reply read over IMAP from Dovecot). What the lead's side receives is read as raw bytes with a compat32
parser: one thread (the References chain from our first step to their reply), DKIM-signed like campaign mail, no
List-Unsubscribe."""

from __future__ import annotations

import email
import email.policy

import pytest
from django.test import Client

from accounts import services as accounts
from campaigns.models import CampaignLead, SentMessage
from replies import services
from replies.models import Reply
from sending import crypto
from sending.dkim_keys import dkim_key_generate, dkim_public_record
from sending.models import Mailbox, SendingDomain
from tests.replies.conftest import make_world, reply_bytes
from tests.sending import peers
from tests.sending.conftest import rich, rich_api  # noqa: F401 - fixtures
from tests.sending.oauth_env import (  # noqa: F401 - fixtures
    GOOGLE_ACCOUNT,
    connect,
    google_as,
    microsoft_as,
    oauth_certs,
    oauth_settings,
    xoauth2_imap,
    xoauth2_smtp,
)
from tests.sending.test_google_workspace import _purchase, _run, fake, workspace_peers  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db

BODY = "Thanks Jane, Tuesday 10:00 works. Invite on its way."


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    return peers.self_signed(tmp_path_factory.mktemp("answer-tls"))


@pytest.fixture(scope="module")
def password_smtp(certs):
    controller, handler = peers.start_smtp(*certs)
    yield controller, handler
    controller.stop()


def _thread_on(workspace, mailbox: Mailbox):
    """The campaign world of tests.replies.conftest, its steps sent from `mailbox`, and Jane's reply to step 0."""
    world = make_world(workspace, mailbox_email=f"seed@{mailbox.pk.lower()}-seed.test", prefix=f"{mailbox.pk}-")
    CampaignLead.objects.filter(campaign=world.campaign).update(mailbox=mailbox)
    SentMessage.objects.filter(campaign=world.campaign).update(mailbox=mailbox)
    world.campaign.mailboxes.add(mailbox)
    step_id = world.sent_jane.message_id
    stored = services.inbound_store(mailbox=mailbox, source="smtp", raw=reply_bytes(
        to=mailbox.email, message_id=f"<reply-{mailbox.pk}@acme.com>", in_reply_to=f"<{step_id}>",
        references=f"<{step_id}>"))
    services.inbound_classify(inbound_id=stored.inbound.pk)
    return Reply.objects.get(inbound=stored.inbound), step_id


def _send_approved(api, owner, reply) -> dict:
    preview = api.post("/v1/send_reply", {"reply_id": reply.pk, "body": BODY}).json()["result"]
    accounts.token_approve(token=accounts.token_lookup(plaintext=preview["confirmation_token"]), user=owner)
    resp = api.post("/v1/send_reply", {"reply_id": reply.pk, "body": BODY,
                                       "confirmation_token": preview["confirmation_token"]},
                    headers={"Idempotency-Key": f"peer-{reply.pk}"})
    assert resp.status_code == 200, resp.content
    return resp.json()["result"]


def _one_thread(raw: bytes, step_id: str, reply_id: str, message_id: str) -> email.message.Message:
    msg = email.message_from_bytes(raw, policy=email.policy.compat32)
    assert msg["Message-ID"] == f"<{message_id}>"
    assert msg["In-Reply-To"] == f"<{reply_id}>"
    assert msg["References"].split() == [f"<{step_id}>", f"<{reply_id}>"]  # the root is our first step
    assert msg["Subject"] == "Re: Quick question" and msg["To"] == "jane@acme.com"
    assert msg["List-Unsubscribe"] is None and msg["List-Unsubscribe-Post"] is None
    assert msg.get_payload(decode=True).decode().strip() == BODY
    return msg


def test_answer_over_password_smtp_dkim_signed_in_the_thread(api, owner, workspace, settings, password_smtp, certs):
    import dkim

    controller, handler = password_smtp
    settings.SANDBOX = False
    settings.SENDING_TLS_CA_FILE = str(certs[0])
    settings.SENDING_ALLOW_PRIVATE_NETWORKS = True
    domain = SendingDomain.objects.create(workspace=workspace, name="byo.test", provider="byo", status="active")
    dkim_key_generate(domain)
    domain.save()
    mailbox = Mailbox.objects.create(
        workspace=workspace, domain=domain, email="ann@byo.test", first_name="Ann", last_name="Byo", provider="byo",
        status=Mailbox.Status.ACTIVE, smtp_host="localhost", smtp_port=controller.port, smtp_security="starttls",
        smtp_username="ann@byo.test", secret_encrypted=crypto.encrypt("s3cret"))
    reply, step_id = _thread_on(workspace, mailbox)
    before = len(handler.messages)
    out = _send_approved(api, owner, reply)
    assert out["status"] == "sent"
    (got,) = handler.messages[before:]
    assert got["authenticated"] and got["tls"] and got["mail_from"] == "ann@byo.test"
    assert got["rcpt_tos"] == ["jane@acme.com"]
    raw = got["data"]
    msg = _one_thread(raw, step_id, f"reply-{mailbox.pk}@acme.com", out["message_id"])
    assert msg["From"] == "Ann Byo <ann@byo.test>"
    assert "d=byo.test" in msg["DKIM-Signature"].replace("\r\n", "").replace(" ", "")
    record = dkim_public_record(domain)
    assert dkim.verify(raw, dnsfunc=lambda name, timeout=5: record.encode())


@pytest.fixture
def console(owner):
    c = Client()
    c.force_login(owner)
    return c


def test_answer_over_xoauth2_only_smtp(api, owner, workspace, oauth_settings, console, google_as, xoauth2_smtp):  # noqa: F811
    _, page = connect(console, google_as, "google")
    assert page.status_code == 200
    mailbox = Mailbox.objects.get(email=GOOGLE_ACCOUNT)
    assert mailbox.auth == Mailbox.Auth.OAUTH2
    reply, step_id = _thread_on(workspace, mailbox)
    controller, handler = xoauth2_smtp
    before = len(handler.messages)
    out = _send_approved(api, owner, reply)
    assert out["status"] == "sent"
    (got,) = handler.messages[before:]
    assert got["authenticated"] and got["tls"] and got["mail_from"] == GOOGLE_ACCOUNT
    assert handler.xoauth2_logins[-1] == (GOOGLE_ACCOUNT, True)
    _one_thread(got["data"], step_id, f"reply-{mailbox.pk}@acme.com", out["message_id"])


def test_answer_through_a_bought_google_workspace_mailbox(rich_api, rich, fake, workspace_peers):  # noqa: F811
    """setup_sending against the Google Workspace fake, a campaign step sent and the prospect's reply read over
    IMAP (XOAUTH2), then the answer sent through the same Workspace mailbox with a delegated mail token."""
    import time_machine
    from django.utils import timezone

    from campaigns.models import CampaignLead
    from replies.imap import mailbox_poll
    from replies.models import InboundMessage
    from sending.providers import google_workspace as gw
    from tests.campaigns.conftest import ALWAYS, run_tick
    from tests.campaigns.helpers import create, launch

    handler, imap, _ = workspace_peers
    ws, owner, _ = rich
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        result = _purchase(rich_api, owner, emails_per_week=125)
        assert _run(result["operation_id"], traveller)[0] == "succeeded"
    mailbox = Mailbox.objects.get(workspace=ws)
    cid = create(rich_api, sending_window=ALWAYS).json()["result"]["campaign_id"]
    assert launch(rich_api, cid, owner).status_code == 200
    run_tick()
    sent = SentMessage.objects.filter(state="sent").order_by("pk").first()
    lead = CampaignLead.objects.get(pk=sent.campaign_lead_id)
    token, _ = gw.mailbox_access_token(mailbox)
    imap.append(mailbox.email, token, (
        f"From: {lead.email}\r\nTo: {mailbox.email}\r\nSubject: Re: {sent.subject}\r\n"
        f"Message-ID: <gw-reply@prospect.test>\r\nIn-Reply-To: <{sent.message_id}>\r\n"
        f"References: <{sent.message_id}>\r\n\r\nSounds interesting, can we talk on Thursday?\r\n").encode())
    assert mailbox_poll(mailbox=mailbox) == 1
    services.inbound_classify(inbound_id=InboundMessage.objects.get(mailbox=mailbox).pk)
    reply = Reply.objects.get(inbound__mailbox=mailbox)
    before = len(handler.messages)
    out = _send_approved(rich_api, owner, reply)
    assert out["status"] == "sent"
    (got,) = handler.messages[before:]
    assert got["authenticated"] and got["tls"] and got["mail_from"] == mailbox.email
    assert handler.xoauth2_logins[-1] == (mailbox.email, True)
    msg = email.message_from_bytes(got["data"], policy=email.policy.compat32)
    assert msg["In-Reply-To"] == "<gw-reply@prospect.test>"
    assert msg["References"].split() == [f"<{sent.message_id}>", "<gw-reply@prospect.test>"]
    assert msg["Subject"] == f"Re: {sent.subject}" and msg["To"] == lead.email

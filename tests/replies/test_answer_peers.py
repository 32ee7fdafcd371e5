"""Answers through real SMTP peers: aiosmtpd with a password (STARTTLS + AUTH) and aiosmtpd accepting only XOAUTH2
bearer tokens of a local authorization server. What the lead's side receives is read as raw bytes with a compat32
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

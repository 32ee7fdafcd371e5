"""The sender against a real SMTP peer (aiosmtpd): delivery, a 550 recipient rejection recorded as a bounce,
and a 451 retried later."""

import email
import email.policy
import socket

import pytest
from aiosmtpd.controller import Controller

from campaigns.models import CampaignLead, SentMessage, Suppression
from sending.testing import make_active_mailbox
from tests.campaigns.conftest import ALWAYS, run_tick
from tests.campaigns.helpers import create, launch


class Peer:
    def __init__(self):
        self.messages = []

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address.startswith("bounce@"):
            return f"550 5.1.1 <{address}>: user unknown"
        if address.startswith("later@"):
            return "451 4.7.1 greylisted, try again later"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        self.messages.append((envelope.mail_from, list(envelope.rcpt_tos),
                              email.message_from_bytes(envelope.content, policy=email.policy.default)))
        return "250 2.0.0 queued"


@pytest.fixture
def peer():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    handler = Peer()
    controller = Controller(handler, hostname="127.0.0.1", port=port)
    controller.start()
    handler.port = port
    yield handler
    controller.stop()


def test_real_smtp_delivery_bounce_and_retry(api, owner, workspace, clock, peer):
    make_active_mailbox(workspace, email="sam@byo-mail.test", provider="byo", smtp_host="127.0.0.1",
                        smtp_port=peer.port, smtp_security="none")
    leads = [{"email": "ok@corp.test", "first_name": "Oki"}, {"email": "bounce@corp.test"},
             {"email": "later@corp.test"}]
    cid = create(api, leads=leads, sending_window=ALWAYS).json()["result"]["campaign_id"]
    assert launch(api, cid, owner).status_code == 200
    run_tick()
    assert len(peer.messages) == 1
    mail_from, rcpts, msg = peer.messages[0]
    assert mail_from == "sam@byo-mail.test" and rcpts == ["ok@corp.test"]
    assert msg["Subject"] == "Hi Oki" and msg["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert SentMessage.objects.get(to_email="ok@corp.test").state == "sent"

    assert Suppression.objects.get(workspace=workspace, email="bounce@corp.test").reason == "bounced"
    bounced = CampaignLead.objects.get(email="bounce@corp.test")
    assert (bounced.state, bounced.stop_reason) == ("stopped", "bounced")
    later = CampaignLead.objects.get(email="later@corp.test")
    assert later.state == "active" and later.attempts == 1 and "451" in later.last_error

"""A worker SIGKILLed mid-send: the answer was handed to the SMTP peer (DATA under way) when the process died. The row
stays `sending`, nothing sends it again (not the sweep, not a retry of the same call), and once the doubt has lasted
it is `send_unknown`."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import threading
from datetime import timedelta

import pytest
import time_machine
from aiosmtpd.controller import Controller
from django.conf import settings as dj_settings
from django.db import connection
from django.utils import timezone

from accounts import services as accounts
from campaigns.models import CampaignLead, SentMessage
from replies import answers, services
from replies.models import Reply, ReplyAnswer
from sending.models import Mailbox
from tests.replies.conftest import make_world, reply_bytes
from tests.sending.peers import free_port

pytestmark = pytest.mark.django_db(transaction=True)


class HangingPeer:
    """Accepts the envelope, then never answers DATA: the sender is stuck mid-send."""

    def __init__(self):
        self.arrived = threading.Event()
        self.data_started = 0

    async def handle_DATA(self, server, session, envelope):
        self.data_started += 1
        self.arrived.set()
        await asyncio.sleep(120)
        return "250 OK"


def _database_url() -> str:
    name = connection.settings_dict["NAME"]
    if connection.vendor == "sqlite":
        return f"sqlite:///{name}"
    from urllib.parse import urlsplit, urlunsplit

    return urlunsplit(urlsplit(os.environ["DATABASE_URL"])._replace(path="/" + name))


def test_a_worker_killed_mid_send_never_sends_the_answer_again(api, owner, workspace):
    peer = HangingPeer()
    controller = Controller(peer, hostname="127.0.0.1", port=free_port())
    controller.start()
    try:
        world = make_world(workspace)
        mailbox = Mailbox.objects.create(workspace=workspace, domain=world.mailbox.domain, email="sam@outreach-sbx.test",
                                         provider="byo", status=Mailbox.Status.ACTIVE, smtp_host="127.0.0.1",
                                         smtp_port=controller.port, smtp_security="none")
        CampaignLead.objects.filter(campaign=world.campaign).update(mailbox=mailbox)
        SentMessage.objects.filter(campaign=world.campaign).update(mailbox=mailbox)
        stored = services.inbound_store(mailbox=mailbox, source="smtp", raw=reply_bytes(
            to=mailbox.email, message_id="<kill@acme.com>", in_reply_to="<msg-0@outreach-sbx.test>"))
        services.inbound_classify(inbound_id=stored.inbound.pk)
        reply = Reply.objects.get(inbound=stored.inbound)
        preview = api.post("/v1/send_reply", {"reply_id": reply.pk, "body": "See you Tuesday."}).json()["result"]
        accounts.token_approve(token=accounts.token_lookup(plaintext=preview["confirmation_token"]), user=owner)
        # the approved call queues the answer; its delivery runs in a separate worker process
        answer = answers.answer_approved(workspace=workspace, api_key=None, reply_id=reply.pk, body="See you Tuesday.",
                                         confirmation_token=preview["confirmation_token"], idempotency_key="kill-1")
        assert answer.state == "queued"
        script = textwrap.dedent("""
            import os, sys
            os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
            import django
            django.setup()
            from replies.answers import answer_deliver
            print(answer_deliver(answer_id=sys.argv[1]), flush=True)
        """)
        env = {**os.environ, "DATABASE_URL": _database_url(), "SENDING_ALLOW_PRIVATE_NETWORKS": "1"}
        worker = subprocess.Popen([sys.executable, "-c", script, answer.pk], env=env, cwd=str(dj_settings.BASE_DIR))
        try:
            assert peer.arrived.wait(60), "the worker never reached DATA"
            worker.send_signal(signal.SIGKILL)
            worker.wait(30)
        finally:
            if worker.poll() is None:
                worker.kill()
        answer.refresh_from_db()
        assert answer.state == "sending" and answer.attempts == 1
        assert answers.answers_due() == []
        assert answers.answer_deliver(answer_id=answer.pk) == "sending"  # a second worker sends nothing
        retry = answers.answer_approved(workspace=workspace, api_key=None, reply_id=reply.pk, body="See you Tuesday.",
                                        confirmation_token=preview["confirmation_token"], idempotency_key="kill-1")
        assert retry.pk == answer.pk and retry.state == "sending"
        with time_machine.travel(timezone.now() + timedelta(minutes=11)):
            assert api.get(f"/v1/replies/{reply.pk}").json()["thread"][-1]["state"] == "send_unknown"
            assert answers.answers_report_in_doubt() == 1
        assert ReplyAnswer.objects.get(pk=answer.pk).state == "send_unknown"
        assert answers.answer_deliver(answer_id=answer.pk) == "send_unknown"
        assert peer.data_started == 1
    finally:
        controller.stop()

"""The sandbox inbound SMTP listener, spoken to by a real SMTP client (smtplib) over TCP."""

from __future__ import annotations

import smtplib
import socket

import pytest

from replies.models import InboundMessage, Reply
from tests.replies.conftest import MAILBOX, make_world, reply_bytes

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


@pytest.fixture
def world(workspace):
    return make_world(workspace)


def send(listener, raw: bytes, rcpts, sender="jane@acme.com"):
    with smtplib.SMTP(listener.hostname, listener.port, timeout=10) as client:
        return client.sendmail(sender, rcpts, raw)


def test_reply_to_a_sandbox_mailbox_is_stored_and_classified(listener, world):
    raw = reply_bytes(in_reply_to="<msg-0@outreach-sbx.test>", body="Interested - can we talk Friday?")
    assert send(listener, raw, [MAILBOX]) == {}
    inbound = InboundMessage.objects.get()
    assert inbound.source == "smtp" and inbound.envelope_from == "jane@acme.com" and inbound.envelope_to == MAILBOX
    assert bytes(inbound.raw).rstrip() == raw.rstrip()
    reply = Reply.objects.get()
    assert reply.classification == "interested"  # queued on commit; the eager fixture runs it inline
    assert reply.campaign_id == world.campaign.pk
    world.jane.refresh_from_db()
    assert world.jane.state == "stopped"


def test_unknown_recipients_get_550(listener, world):
    with pytest.raises(smtplib.SMTPRecipientsRefused) as exc:
        send(listener, reply_bytes(), ["nobody@outreach-sbx.test"])
    code, text = exc.value.recipients["nobody@outreach-sbx.test"]
    assert code == 550 and b"sandbox mailboxes only" in text
    assert not InboundMessage.objects.exists()


def test_non_sandbox_and_removed_mailboxes_are_refused(listener, workspace):
    from sending.testing import make_active_mailbox

    make_active_mailbox(workspace, email="own@byo-mail.test", provider="byo")
    make_active_mailbox(workspace, email="gone@outreach-sbx.test", status="removed")
    for rcpt in ("own@byo-mail.test", "gone@outreach-sbx.test"):
        with pytest.raises(smtplib.SMTPRecipientsRefused):
            send(listener, reply_bytes(), [rcpt])


def test_mixed_recipients_plus_addressing_and_duplicates(listener, world):
    raw = reply_bytes(in_reply_to="<msg-0@outreach-sbx.test>")
    refused = send(listener, raw, ["alex+replies@outreach-sbx.test", "stranger@elsewhere.test"])
    assert refused == {"stranger@elsewhere.test": (550, refused["stranger@elsewhere.test"][1])}
    send(listener, raw, [MAILBOX])  # the same message again: stored once
    assert InboundMessage.objects.count() == 1 and Reply.objects.count() == 1


def test_malformed_mime_is_accepted_and_never_crashes(listener, world):
    raw = b"From: =?bogus?q?x?=\r\nContent-Type: multipart/report; boundary=\r\n\r\n--\r\n\x00\xff garbage"
    assert send(listener, raw, [MAILBOX]) == {}
    assert InboundMessage.objects.get().state == "processed"


def test_serve_runs_the_listener_in_sandbox_mode(settings):
    from core.management.commands.serve import child_commands

    settings.SANDBOX, settings.SANDBOX_SMTP_PORT = True, 2525
    assert child_commands()["smtp"][-1] == "smtp_inbound"
    settings.SANDBOX_SMTP_PORT = 0
    assert "smtp" not in child_commands()


def test_the_management_command_listens_and_stops_on_sigterm(tmp_path):
    import os
    import signal
    import subprocess
    import sys

    from django.conf import settings as dj

    port = free_port()
    env = {**os.environ, "DATA_DIR": str(tmp_path), "SANDBOX": "1", "HOST": "127.0.0.1",
           "SANDBOX_SMTP_PORT": str(port)}
    proc = subprocess.Popen([sys.executable, str(dj.BASE_DIR / "manage.py"), "smtp_inbound"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=str(dj.BASE_DIR))
    try:
        line = proc.stdout.readline().decode()  # printed once the socket is bound
        assert f"127.0.0.1:{port}" in line, line
        with smtplib.SMTP("127.0.0.1", port, timeout=10) as client:
            code, _ = client.ehlo("test")
            assert code == 250
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_demo_seed_prints_where_replies_go(workspace, settings):
    import io

    from replies.demo import seed
    from sending.testing import make_active_mailbox

    settings.SANDBOX, settings.SANDBOX_SMTP_PORT, settings.HOST = True, 2525, "127.0.0.1"
    make_active_mailbox(workspace, email="alex@demo-sbx.test")
    out = io.StringIO()
    seed(workspace, out)
    assert "alex@demo-sbx.test over SMTP at 127.0.0.1:2525" in out.getvalue()


def test_sandbox_reply_command_threads_a_reply_into_the_listener(listener, world):
    """Issue 14 (tour step 8): one command sends a lead's reply into the sandbox listener, threaded to the sent
    message, so the tour's get_replies has something to show."""
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("sandbox_reply", "Jane@acme.com", "Sounds interesting - can we talk on Thursday?",
                 "--host", listener.hostname, "--port", str(listener.port), stdout=out)
    assert "In-Reply-To: <msg-0@outreach-sbx.test>" in out.getvalue()
    inbound = InboundMessage.objects.get()
    assert inbound.envelope_to == MAILBOX and inbound.envelope_from == "jane@acme.com"
    reply = Reply.objects.get()
    assert reply.classification == "interested" and reply.campaign_id == world.campaign.pk
    world.jane.refresh_from_db()
    assert world.jane.state == "stopped"


def test_sandbox_reply_command_explains_when_nothing_was_sent(listener, world):
    from django.core.management import call_command
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="no campaign message has been sent"):
        call_command("sandbox_reply", "nobody@acme.com", "hi", "--port", str(listener.port))
    assert not InboundMessage.objects.exists()

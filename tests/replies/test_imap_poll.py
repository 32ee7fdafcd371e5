"""The live IMAP poll against a real Dovecot: UIDVALIDITY + UID cursor, nothing read twice or skipped,
processed mail flagged and never deleted, own sent copies ignored, failures recorded."""

from __future__ import annotations

import imaplib
import itertools
import os
import shutil
import socket
import tempfile
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from replies import imap as replies_imap
from replies import services
from replies.models import ImapCursor, InboundMessage, Reply
from tests.replies.conftest import reply_bytes
from tests.replies.dovecot import DOVECOT, Dovecot

pytestmark = [pytest.mark.django_db,
              pytest.mark.skipif(not os.path.exists(DOVECOT), reason="Debian dovecot-imapd is not installed")]

USERS = itertools.count()


@pytest.fixture(scope="module")
def dovecot():
    # not under pytest's tmp dir: that is private to this user, and Dovecot's auth runs as its own user
    root = Path(tempfile.mkdtemp(prefix="replies-dovecot-"))
    root.chmod(0o755)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = Dovecot(host="127.0.0.1", port=port, root=root)
    try:
        yield server.start()
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def account(dovecot):
    return dovecot.user(next(USERS))


@pytest.fixture
def mailbox(workspace, dovecot, account):
    from sending.crypto import encrypt
    from sending.testing import make_active_mailbox

    return make_active_mailbox(workspace, email=account, provider="byo", imap_host=dovecot.host,
                               imap_port=dovecot.port, imap_security="none", imap_username=account,
                               secret_encrypted=encrypt(dovecot.password))


def client(dovecot, account) -> imaplib.IMAP4:
    conn = imaplib.IMAP4(dovecot.host, dovecot.port)
    conn.login(account, dovecot.password)
    return conn


def append(dovecot, account, raw: bytes, folder="INBOX") -> None:
    conn = client(dovecot, account)
    try:
        typ, _ = conn.append(folder, None, None, raw)
        assert typ == "OK"
    finally:
        conn.logout()


def server_state(dovecot, account, folder="INBOX") -> dict[int, bytes]:
    """UID -> FLAGS of every message in the folder (read-only)."""
    conn = client(dovecot, account)
    try:
        conn.select(folder, readonly=True)
        typ, data = conn.uid("FETCH", "1:*", "(UID FLAGS)")
        out = {}
        for item in data or []:
            if item:
                uid = int(item.split(b"UID ")[1].split()[0].rstrip(b")"))
                out[uid] = item.split(b"FLAGS (")[1].split(b")")[0]
        return out
    finally:
        conn.logout()


def msg(n: int, **kw) -> bytes:
    return reply_bytes(frm=f"Lead {n} <lead{n}@acme.com>", message_id=f"<imap-{n}-{os.getpid()}@acme.com>",
                       body=kw.pop("body", f"Reply {n}: sounds good, let's talk."), **kw)


def test_poll_stores_each_new_message_once_flags_it_and_deletes_nothing(dovecot, account, mailbox):
    for n in range(3):
        append(dovecot, account, msg(n))
    assert replies_imap.mailbox_poll(mailbox=mailbox) == 3
    cursor = ImapCursor.objects.get(mailbox=mailbox)
    assert cursor.last_uid == 3 and cursor.uidvalidity and cursor.last_error == ""
    stored = list(InboundMessage.objects.filter(mailbox=mailbox).order_by("imap_uid"))
    assert [m.imap_uid for m in stored] == [1, 2, 3] and all(m.source == "imap" for m in stored)
    assert Reply.objects.filter(mailbox=mailbox, classification__isnull=True).count() == 3
    flags = server_state(dovecot, account)
    assert sorted(flags) == [1, 2, 3]  # never deleted
    assert all(b"$OutboundProcessed" in f and b"\\Seen" not in f for f in flags.values()), flags

    # a second poll reads nothing; a new message is read alone
    assert replies_imap.mailbox_poll(mailbox=mailbox) == 0
    append(dovecot, account, msg(3))
    assert replies_imap.mailbox_poll(mailbox=mailbox) == 1
    assert InboundMessage.objects.filter(mailbox=mailbox).count() == 4
    assert ImapCursor.objects.get(mailbox=mailbox).last_uid == 4

    for inbound in InboundMessage.objects.filter(mailbox=mailbox):
        services.inbound_classify(inbound_id=inbound.pk)
    assert set(Reply.objects.filter(mailbox=mailbox).values_list("classification", flat=True)) == {"interested"}


def test_small_batches_neither_skip_nor_repeat(dovecot, account, mailbox, settings):
    for n in range(10, 15):
        append(dovecot, account, msg(n))
    polled = [replies_imap.mailbox_poll(mailbox=mailbox, batch=2) for _ in range(4)]
    assert polled == [2, 2, 1, 0]
    uids = list(InboundMessage.objects.filter(mailbox=mailbox).order_by("imap_uid").values_list("imap_uid", flat=True))
    assert uids == [1, 2, 3, 4, 5]


def test_new_uidvalidity_restarts_the_cursor_without_duplicates(dovecot, account, mailbox):
    conn = client(dovecot, account)
    conn.create("Replies")
    conn.logout()
    ImapCursor.objects.create(mailbox=mailbox, folder="Replies")
    append(dovecot, account, msg(20), folder="Replies")
    append(dovecot, account, msg(21), folder="Replies")
    assert replies_imap.mailbox_poll(mailbox=mailbox) == 2
    first_validity = ImapCursor.objects.get(mailbox=mailbox).uidvalidity

    # the folder is deleted and re-created: the server renumbers it (new UIDVALIDITY, UIDs from 1 again)
    conn = client(dovecot, account)
    conn.delete("Replies")
    conn.create("Replies")
    conn.logout()
    append(dovecot, account, msg(20), folder="Replies")  # already stored before
    append(dovecot, account, msg(22), folder="Replies")  # new
    assert replies_imap.mailbox_poll(mailbox=mailbox) == 2  # both read under the new numbering...
    cursor = ImapCursor.objects.get(mailbox=mailbox)
    assert cursor.uidvalidity != first_validity and cursor.last_uid == 2
    # ...but the one already stored is not stored twice
    assert InboundMessage.objects.filter(mailbox=mailbox).count() == 3


def test_own_sent_copies_in_the_inbox_are_not_replies(dovecot, account, mailbox):
    append(dovecot, account, reply_bytes(frm=f"Me <{account}>", to="lead@acme.com", message_id="<mine@x>"))
    assert replies_imap.mailbox_poll(mailbox=mailbox) == 1
    assert InboundMessage.objects.get(mailbox=mailbox).state == "ignored"
    assert not Reply.objects.filter(mailbox=mailbox).exists()


def test_a_held_lease_keeps_a_second_poller_out(dovecot, account, mailbox):
    append(dovecot, account, msg(30))
    ImapCursor.objects.create(mailbox=mailbox, lease_until=timezone.now() + timedelta(minutes=5))
    assert replies_imap.mailbox_poll(mailbox=mailbox) == 0
    ImapCursor.objects.filter(mailbox=mailbox).update(lease_until=timezone.now() - timedelta(seconds=1))
    assert replies_imap.mailbox_poll(mailbox=mailbox) == 1  # an expired lease (crashed poller) is taken over


def test_poll_all_dispatches_active_imap_mailboxes_only(dovecot, account, mailbox, workspace, eager):
    from replies import tasks
    from sending.testing import make_active_mailbox

    make_active_mailbox(workspace)  # sandbox: replies come over SMTP
    make_active_mailbox(workspace, provider="byo", status="suspended", imap_host="127.0.0.1")
    append(dovecot, account, msg(40))
    assert tasks.imap_poll_all() == 1
    assert InboundMessage.objects.filter(mailbox=mailbox).count() == 1


def test_a_message_that_cannot_be_stored_is_retried_then_passed_over(dovecot, account, mailbox, monkeypatch):
    real = services.inbound_store

    def store(**kw):
        if b"POISON" in kw["raw"]:
            raise ValueError("cannot store this one")
        return real(**kw)

    monkeypatch.setattr(services, "inbound_store", store)
    append(dovecot, account, msg(50))
    append(dovecot, account, msg(51, body="POISON"))
    append(dovecot, account, msg(52))
    assert replies_imap.mailbox_poll(mailbox=mailbox) == 1  # stops before the poison: nothing behind it skipped
    cursor = ImapCursor.objects.get(mailbox=mailbox)
    assert (cursor.last_uid, cursor.stuck_uid, cursor.stuck_attempts) == (1, 2, 1) and "1/3" in cursor.last_error
    assert replies_imap.mailbox_poll(mailbox=mailbox) == 0
    assert ImapCursor.objects.get(mailbox=mailbox).stuck_attempts == 2
    assert replies_imap.mailbox_poll(mailbox=mailbox) == 1  # third failure: passed over, the next one stored
    cursor = ImapCursor.objects.get(mailbox=mailbox)
    assert (cursor.last_uid, cursor.stuck_uid) == (3, None)
    assert [s["uid"] for s in cursor.skipped_uids] == [2]
    assert sorted(InboundMessage.objects.filter(mailbox=mailbox).values_list("imap_uid", flat=True)) == [1, 3]
    flags = server_state(dovecot, account)
    assert b"$OutboundProcessed" not in flags[2] and b"$OutboundProcessed" in flags[3]


# last in the module: Dovecot delays later logins from this address after a failed one
def test_bad_credentials_are_recorded_not_raised(dovecot, account, mailbox):
    from sending.crypto import encrypt

    mailbox.secret_encrypted = encrypt("wrong")
    mailbox.save()
    assert replies_imap.mailbox_poll(mailbox=mailbox) == 0
    cursor = ImapCursor.objects.get(mailbox=mailbox)
    assert cursor.failures == 1 and cursor.last_error and cursor.lease_until is None


def test_plain_imap_is_refused_to_anything_but_loopback(workspace):
    from sending.testing import make_active_mailbox

    box = make_active_mailbox(workspace, provider="byo", imap_host="192.0.2.10", imap_port=143, imap_security="none")
    assert replies_imap.mailbox_poll(mailbox=box) == 0
    assert "only allowed to a loopback" in ImapCursor.objects.get(mailbox=box).last_error


def test_received_at_is_the_servers_internaldate(dovecot, account, mailbox):
    """CONTRACT 4.8: an IMAP reply's received_at is when the mailbox server received it (INTERNALDATE), and never
    changes; updated_at is when this service stored (and later labelled) it."""
    from datetime import UTC, datetime

    arrived = datetime(2026, 11, 2, 8, 30, 15, tzinfo=UTC)
    conn = client(dovecot, account)
    try:
        typ, _ = conn.append("INBOX", None, imaplib.Time2Internaldate(arrived.timestamp()), msg(901))
        assert typ == "OK"
    finally:
        conn.logout()
    assert replies_imap.mailbox_poll(mailbox=mailbox) == 1
    reply = Reply.objects.get(inbound__mailbox=mailbox)
    assert reply.received_at == arrived
    assert reply.updated_at > arrived
    services.inbound_classify(inbound_id=reply.inbound_id)
    reply.refresh_from_db()
    assert reply.received_at == arrived

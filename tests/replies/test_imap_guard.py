"""The IMAP poller applies the SMTP private-address guard at every connection, to the address it vetted (issue
15.7): a mailbox registered while its name pointed somewhere public is refused once the name points at a private
address (DNS rebinding), without any connection being made; and the connection goes to the address that was
checked, never to a second resolution of the name (against a real Dovecot)."""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
from pathlib import Path

import pytest

from replies import imap as replies_imap
from replies.models import ImapCursor
from tests.replies.dovecot import DOVECOT, Dovecot

pytestmark = pytest.mark.django_db
REAL_GETADDRINFO = socket.getaddrinfo


def _resolver(monkeypatch, name: str, answers: list[str]):
    """`name` resolves to answers[0], then answers[1], ... (the last one repeats); every other name as usual."""
    calls = []

    def fake(host, port, *args, **kwargs):
        if host != name:
            return REAL_GETADDRINFO(host, port, *args, **kwargs)
        addr = answers[min(len(calls), len(answers) - 1)]
        calls.append(addr)
        return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (addr, port or 0))]

    monkeypatch.setattr(socket, "getaddrinfo", fake)
    return calls


@pytest.fixture
def listener():
    """A TCP listener on loopback that accepts nothing: a connection attempt would wait in its backlog."""
    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen(8)
        srv.setblocking(False)
        yield srv


def _nobody_connected(srv) -> bool:
    try:
        conn, _ = srv.accept()
    except BlockingIOError:
        return True
    conn.close()
    return False


@pytest.mark.parametrize("security", ["starttls", "ssl", "none"])
def test_a_name_that_now_resolves_to_a_private_address_is_refused_at_poll(workspace, settings, monkeypatch,
                                                                          listener, security):
    from sending.testing import make_active_mailbox

    settings.SENDING_ALLOW_PRIVATE_NETWORKS = False
    port = listener.getsockname()[1]
    box = make_active_mailbox(workspace, provider="byo", imap_host="imap.rebind.test", imap_port=port,
                              imap_security=security)
    calls = _resolver(monkeypatch, "imap.rebind.test", ["127.0.0.1"])
    assert replies_imap.mailbox_poll(mailbox=box) == 0
    error = ImapCursor.objects.get(mailbox=box).last_error
    assert "non-public address (127.0.0.1)" in error, error
    assert calls == ["127.0.0.1"]  # resolved once, at this connection
    assert _nobody_connected(listener)


def test_private_literal_addresses_are_refused_too(workspace, settings, listener):
    from sending.testing import make_active_mailbox

    settings.SENDING_ALLOW_PRIVATE_NETWORKS = False
    box = make_active_mailbox(workspace, provider="byo", imap_host="127.0.0.1",
                              imap_port=listener.getsockname()[1], imap_security="starttls")
    assert replies_imap.mailbox_poll(mailbox=box) == 0
    assert "non-public address" in ImapCursor.objects.get(mailbox=box).last_error
    assert _nobody_connected(listener)


@pytest.fixture(scope="module")
def dovecot():
    if not os.path.exists(DOVECOT):
        pytest.skip("Debian dovecot-imapd is not installed")
    root = Path(tempfile.mkdtemp(prefix="replies-guard-dovecot-"))
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


def test_the_connection_goes_to_the_vetted_address_not_a_second_resolution(workspace, settings, monkeypatch,
                                                                            dovecot):
    """The name answers 127.0.0.1 (where Dovecot listens) the first time and 127.0.0.2 (nothing) after: a
    client that resolved again would fail; the poll logs in to the address it checked."""
    from sending.crypto import encrypt
    from sending.testing import make_active_mailbox

    settings.SENDING_ALLOW_PRIVATE_NETWORKS = True  # the peer is on loopback
    account = dovecot.user(0)
    box = make_active_mailbox(workspace, email=account, provider="byo", imap_host="imap.rebind.test",
                              imap_port=dovecot.port, imap_security="none", imap_username=account,
                              secret_encrypted=encrypt(dovecot.password))
    calls = _resolver(monkeypatch, "imap.rebind.test", ["127.0.0.1", "127.0.0.2"])
    assert replies_imap.mailbox_poll(mailbox=box) == 0
    cursor = ImapCursor.objects.get(mailbox=box)
    assert cursor.last_error == "" and cursor.failures == 0, cursor.last_error
    assert calls == ["127.0.0.1"]

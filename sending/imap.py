"""IMAP sessions to a mailbox: the connection and its login (a password, or XOAUTH2 through `sending.oauth`),
beside `sending.transport` for SMTP. The replies poller reads INBOX through it; the mailbox connection test
opens one.
"""

from __future__ import annotations

import imaplib
import ipaddress
import socket
import ssl

from django.conf import settings

from sending import oauth
from sending.crypto import decrypt
from sending.transport import BlockedAddress, allowed_address, tls_context


class ImapError(Exception):
    pass


class _PinnedIMAP4(imaplib.IMAP4):
    """IMAP to an address already resolved and vetted (`sending.transport.allowed_address`), not to the name."""

    def __init__(self, host: str, port: int, *, address: str, timeout: float | None):
        self._address = address
        super().__init__(host, port, timeout=timeout)

    def _create_socket(self, timeout):
        return socket.create_connection((self._address, self.port), timeout)


class _PinnedIMAP4_SSL(imaplib.IMAP4_SSL):
    """Implicit TLS to the vetted address; the certificate is still checked against the host name."""

    def __init__(self, host: str, port: int, *, address: str, ssl_context, timeout: float | None):
        self._address = address
        super().__init__(host, port, ssl_context=ssl_context, timeout=timeout)

    def _create_socket(self, timeout):
        sock = socket.create_connection((self._address, self.port), timeout)
        return self.ssl_context.wrap_socket(sock, server_hostname=self.host)


def connect(mailbox, *, timeout: float | None = None) -> imaplib.IMAP4:
    """Log in to the mailbox's IMAP server. Every connection applies the same private-address guard as SMTP
    (`sending.transport.allowed_address`): the name is resolved once, each time, its addresses vetted, and the
    connection made to the vetted address (a name that re-resolves elsewhere, DNS rebinding, cannot slip
    through). Plain IMAP (security none) is allowed to a loopback address only."""
    timeout = timeout or settings.REPLIES_IMAP_TIMEOUT_SECONDS
    host, port = mailbox.imap_host, mailbox.imap_port
    security = mailbox.imap_security
    port = port or (993 if security == "ssl" else 143)
    try:
        address = allowed_address(host, port)
    except BlockedAddress as exc:
        raise ImapError(f"{host}:{port}: {exc}") from exc
    if security == "none" and not ipaddress.ip_address(address.split("%")[0]).is_loopback:
        raise ImapError(f"{host}: plain IMAP (security none) is only allowed to a loopback test server")
    try:
        if security == "ssl":
            conn = _PinnedIMAP4_SSL(host, port, address=address, ssl_context=tls_context(), timeout=timeout)
        else:
            conn = _PinnedIMAP4(host, port, address=address, timeout=timeout)
            if security == "starttls":
                conn.starttls(ssl_context=tls_context())
        if getattr(mailbox, "auth", "password") == "oauth2":
            _login_xoauth2(conn, mailbox)
        else:
            conn.login(mailbox.imap_username or mailbox.email, decrypt(mailbox.secret_encrypted))
    except (TimeoutError, imaplib.IMAP4.error, OSError, ssl.SSLError) as exc:
        raise ImapError(f"{host}:{port}: {exc}") from exc
    return conn


def _login_xoauth2(conn: imaplib.IMAP4, mailbox) -> None:
    """AUTHENTICATE XOAUTH2 with the mailbox's access token (`sending.oauth.access_token`, the one token seam).
    A refused token is dropped and a fresh one tried once; a refused refresh has marked the mailbox
    `needs_reconnect` (it is polled no more) and raises ImapError, like a transient token failure."""
    user = mailbox.imap_username or mailbox.email
    for attempt in (1, 2):
        try:
            token = oauth.access_token(mailbox)
        except (oauth.NeedsReconnect, oauth.TokenUnavailable) as exc:
            raise ImapError(f"{mailbox.email}: no access token: {exc}") from None
        answers = iter([oauth.xoauth2_response(user, token).encode()])
        try:  # after an error challenge the client answers empty and the server sends the final NO
            conn.authenticate("XOAUTH2", lambda challenge, answers=answers: next(answers, b""))
            return
        except imaplib.IMAP4.error:
            if attempt == 2:
                raise
            oauth.token_invalidate(mailbox)

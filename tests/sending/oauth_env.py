"""Fixtures for OAuth mailbox tests (import them into a test module): a Google-style and a Microsoft-style
local authorization server, an aiosmtpd peer and a Dovecot that accept only XOAUTH2 bearer tokens those servers
issued, and the service's settings pointed at all of them."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from tests.sending import peers
from tests.sending.oauth_mail_peers import OAuthDovecot, start_smtp_xoauth2
from tests.sending.oauth_peer import AuthServer

GOOGLE_ACCOUNT = "ann@gmail-style.test"
MICROSOFT_ACCOUNT = "bo@contoso-style.test"
DOVECOT_MISSING = not (shutil.which("dovecot") or os.path.exists("/usr/sbin/dovecot"))


@pytest.fixture(scope="module")
def oauth_certs(tmp_path_factory):
    return peers.self_signed(tmp_path_factory.mktemp("oauth-tls"))


@pytest.fixture(scope="module")
def google_as():
    server = AuthServer(style="google", client_id="google-client", client_secret="google-secret",
                        account=GOOGLE_ACCOUNT, name="Ann Owner").start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def microsoft_as():
    server = AuthServer(style="microsoft", client_id="ms-client", client_secret="ms-secret",
                        account=MICROSOFT_ACCOUNT, name="Bo Sender").start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def xoauth2_smtp(google_as, microsoft_as, oauth_certs):
    controller, handler = start_smtp_xoauth2([f"{google_as.base}/introspect", f"{microsoft_as.base}/introspect"],
                                             *oauth_certs)
    yield controller, handler
    controller.stop()


@pytest.fixture(scope="module")
def xoauth2_imap(google_as, microsoft_as):
    if DOVECOT_MISSING:
        pytest.skip("Debian dovecot-imapd is not installed")
    root = Path(tempfile.mkdtemp(prefix="oauth-dovecot-"))
    root.chmod(0o755)  # Dovecot's auth process runs as its own user
    server = OAuthDovecot(root=root, introspect_urls=[f"{google_as.base}/introspect",
                                                      f"{microsoft_as.base}/introspect"])
    try:
        yield server.start()
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def oauth_settings(settings, google_as, microsoft_as, xoauth2_smtp, xoauth2_imap, oauth_certs):
    settings.SANDBOX = False
    settings.SENDING_TLS_CA_FILE = str(oauth_certs[0])
    settings.SENDING_ALLOW_PRIVATE_NETWORKS = True  # the peers listen on loopback
    smtp_port = xoauth2_smtp[0].port
    for prefix, server in (("GOOGLE", google_as), ("MICROSOFT", microsoft_as)):
        setattr(settings, f"{prefix}_OAUTH_CLIENT_ID", server.client_id)
        setattr(settings, f"{prefix}_OAUTH_CLIENT_SECRET", server.client_secret)
        setattr(settings, f"{prefix}_OAUTH_AUTHORIZE_URL", f"{server.base}/authorize")
        setattr(settings, f"{prefix}_OAUTH_TOKEN_URL", f"{server.base}/token")
        setattr(settings, f"{prefix}_SMTP_HOST", "127.0.0.1")
        setattr(settings, f"{prefix}_SMTP_PORT", smtp_port)
        setattr(settings, f"{prefix}_SMTP_SECURITY", "starttls")
        setattr(settings, f"{prefix}_IMAP_HOST", "127.0.0.1")
        setattr(settings, f"{prefix}_IMAP_PORT", xoauth2_imap.port)
        setattr(settings, f"{prefix}_IMAP_SECURITY", "none")
    return settings


def connect(client, server: AuthServer, provider: str, *, path: str | None = None, deny: bool = False):
    """Click "Connect <provider>" (or a Reconnect button at `path`), consent at the authorization server, follow
    the redirect back to the console. Returns (authorize_url, callback response)."""
    resp = client.post(path or f"/console/mailboxes/connect/{provider}/")
    assert resp.status_code == 302, resp.status_code
    authorize_url = resp["Location"]
    assert authorize_url.startswith(server.base + "/authorize?")
    location = urlparse(server.approve(authorize_url, deny=deny))
    return authorize_url, client.get(f"{location.path}?{location.query}", follow=True)


def query(url: str) -> dict:
    return {k: v[0] for k, v in parse_qs(urlparse(url).query).items()}

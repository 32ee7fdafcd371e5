"""Google- and Microsoft-style mailboxes connected by OAuth 2.0 against a local authorization server (code +
PKCE + state + nonce, refresh, revocation), sending over SMTP and reading over IMAP with XOAUTH2 only (aiosmtpd
and Dovecot's oauth2 passdb validate the bearer tokens by introspection and refuse passwords)."""

from __future__ import annotations

import imaplib
import smtplib
from datetime import timedelta
from email.message import EmailMessage

import pytest
from django.core import mail
from django.db import connection
from django.test import Client
from django.utils import timezone

from accounts.models import Membership
from sending import oauth
from sending.models import Mailbox, MailboxToken
from sending.transport import MailboxAuthUnavailable, MailboxNeedsReconnect, send_message
from tests.sending.oauth_env import GOOGLE_ACCOUNT, MICROSOFT_ACCOUNT, connect, query

pytestmark = pytest.mark.django_db


@pytest.fixture
def console(owner):
    c = Client()
    c.force_login(owner)
    return c


def _message(to="lead@prospect.test", subject="Hello") -> EmailMessage:
    msg = EmailMessage()
    msg["To"] = to
    msg["Subject"] = subject
    msg.set_content("Hi there")
    return msg


def _connected(console, server, provider) -> Mailbox:
    _, page = connect(console, server, provider)
    assert page.status_code == 200
    assert "passed the SMTP and IMAP connection test (XOAUTH2)" in page.content.decode(), page.content.decode()
    return Mailbox.objects.get(email=server.account)


def test_buttons_show_only_configured_providers(console, settings, owner, workspace):
    settings.GOOGLE_OAUTH_CLIENT_ID = ""
    settings.MICROSOFT_OAUTH_CLIENT_ID = ""
    page = console.get("/console/mailboxes/").content.decode()
    assert "Connect Google" not in page and "Connect Microsoft" not in page
    assert console.post("/console/mailboxes/connect/google/").status_code == 404
    settings.MICROSOFT_OAUTH_CLIENT_ID = "ms-client"
    page = console.get("/console/mailboxes/").content.decode()
    assert "Connect Microsoft" in page and "Connect Google" not in page


def test_members_cannot_connect(oauth_settings, workspace, member_client):
    assert member_client.post("/console/mailboxes/connect/google/").status_code == 404


@pytest.fixture
def member_client(workspace):
    from tests.factories import UserFactory

    user = UserFactory()
    Membership.objects.create(user=user, workspace=workspace, role=Membership.Role.MEMBER)
    c = Client()
    c.force_login(user)
    return c


def test_connect_google_code_pkce_state_offline_and_address_from_id_token(oauth_settings, console, google_as,
                                                                          workspace):
    mailbox = _connected(console, google_as, "google")
    authorize = query(console.post("/console/mailboxes/connect/google/")["Location"])
    assert authorize["response_type"] == "code" and authorize["code_challenge_method"] == "S256"
    assert len(authorize["code_challenge"]) == 43 and authorize["state"] and authorize["nonce"]
    assert authorize["access_type"] == "offline" and authorize["prompt"] == "consent"
    assert authorize["scope"].split() == ["openid", "email", "https://mail.google.com/"]
    assert authorize["redirect_uri"].endswith("/console/mailboxes/oauth/callback/")
    exchange = [f for f in google_as.token_requests if f["grant_type"] == ["authorization_code"]][-1]
    assert exchange["code_verifier"][0] and exchange["client_secret"] == ["google-secret"]
    assert (mailbox.workspace, mailbox.auth, mailbox.oauth_provider, mailbox.status) == (
        workspace, "oauth2", "google", "active")
    assert mailbox.provider == "byo" and mailbox.smtp_username == GOOGLE_ACCOUNT and mailbox.secret_encrypted == ""
    assert (mailbox.first_name, mailbox.last_name) == ("Ann", "Owner")
    token = MailboxToken.objects.get(mailbox=mailbox)
    refresh = oauth.crypto.decrypt(token.refresh_token_encrypted)
    assert refresh.startswith("rt-") and refresh in google_as.refresh_tokens
    with connection.cursor() as cursor:  # no token is stored in clear anywhere in the row
        cursor.execute("SELECT * FROM sending_mailboxtoken")
        assert not any(refresh in str(v) or "at-" in str(v)[:3] for row in cursor.fetchall() for v in row)
    page = console.get("/console/mailboxes/").content.decode()
    assert GOOGLE_ACCOUNT in page and "Google, OAuth" in page and refresh not in page


def test_connect_microsoft_uses_preferred_username_and_outlook_scopes(oauth_settings, console, microsoft_as):
    mailbox = _connected(console, microsoft_as, "microsoft")
    authorize = query(console.post("/console/mailboxes/connect/microsoft/")["Location"])
    assert set(authorize["scope"].split()) >= {"offline_access", "openid", "https://outlook.office.com/SMTP.Send",
                                               "https://outlook.office.com/IMAP.AccessAsUser.All"}
    assert mailbox.email == MICROSOFT_ACCOUNT and mailbox.oauth_provider == "microsoft"


def test_wrong_or_replayed_state_stores_nothing(oauth_settings, console, google_as):
    resp = console.post("/console/mailboxes/connect/google/")
    location = google_as.approve(resp["Location"])
    code = query(location)["code"]
    page = console.get(f"/console/mailboxes/oauth/callback/?code={code}&state=forged", follow=True)
    assert "not valid for this session" in page.content.decode()
    assert not Mailbox.objects.exists()
    # a state started by another session is not this session's either
    other = Client()
    other.force_login(Membership.objects.get(role="owner").user)
    page = other.get(f"/console/mailboxes/oauth/callback/?{location.split('?', 1)[1]}", follow=True)
    assert "not valid for this session" in page.content.decode() and not Mailbox.objects.exists()
    # the right one works once; replaying it does nothing
    ok = console.get(f"/console/mailboxes/oauth/callback/?{location.split('?', 1)[1]}", follow=True)
    assert Mailbox.objects.count() == 1, ok.content.decode()
    again = console.get(f"/console/mailboxes/oauth/callback/?{location.split('?', 1)[1]}", follow=True)
    assert "not valid for this session" in again.content.decode()


def test_denied_consent_stores_nothing(oauth_settings, console, google_as):
    _, page = connect(console, google_as, "google", deny=True)
    assert "did not grant access (access_denied)" in page.content.decode()
    assert not Mailbox.objects.exists()


@pytest.mark.parametrize("provider", ["google", "microsoft"])
def test_sends_over_smtp_with_xoauth2_only(oauth_settings, console, google_as, microsoft_as, xoauth2_smtp,
                                           provider):
    server = google_as if provider == "google" else microsoft_as
    mailbox = _connected(console, server, provider)
    controller, handler = xoauth2_smtp
    before = len(handler.messages)
    send_message(mailbox=mailbox, message=_message(subject=f"via {provider}"))
    got = handler.messages[before:]
    assert len(got) == 1 and got[0]["authenticated"] and got[0]["tls"] and got[0]["mail_from"] == server.account
    assert handler.xoauth2_logins[-1] == (server.account, True)
    # the peer refuses a password for the same account
    smtp = smtplib.SMTP("127.0.0.1", controller.port)
    smtp.starttls(context=__import__("sending.transport", fromlist=["x"]).tls_context())
    with pytest.raises(smtplib.SMTPAuthenticationError):
        smtp.login(server.account, "any-password")
    smtp.close()


def test_dovecot_refuses_passwords_and_the_poller_reads_with_xoauth2(oauth_settings, console, google_as,
                                                                     xoauth2_imap):
    from replies.imap import mailbox_poll
    from replies.models import InboundMessage

    mailbox = _connected(console, google_as, "google")
    conn = imaplib.IMAP4(xoauth2_imap.host, xoauth2_imap.port)
    with pytest.raises(imaplib.IMAP4.error):
        conn.login(GOOGLE_ACCOUNT, "any-password")
    conn.logout()
    raw = (b"From: Lead <lead@prospect.test>\r\nTo: " + GOOGLE_ACCOUNT.encode() +
           b"\r\nSubject: Re: Hello\r\nMessage-ID: <r1@prospect.test>\r\n\r\nSounds good, call me.\r\n")
    xoauth2_imap.append(GOOGLE_ACCOUNT, google_as.mint_access_token(GOOGLE_ACCOUNT), raw)
    assert mailbox_poll(mailbox=mailbox) == 1
    stored = InboundMessage.objects.get(mailbox=mailbox)
    assert "r1@prospect.test" in stored.message_id and stored.source == "imap"
    assert mailbox_poll(mailbox=mailbox) == 0  # the same Message-ID / UID is not read twice


def test_access_token_refreshed_before_expiry(oauth_settings, console, microsoft_as, xoauth2_smtp):
    mailbox = _connected(console, microsoft_as, "microsoft")
    token = MailboxToken.objects.get(mailbox=mailbox)
    first_rt = oauth.crypto.decrypt(token.refresh_token_encrypted)
    before = microsoft_as.refreshes()
    send_message(mailbox=mailbox, message=_message())
    assert microsoft_as.refreshes() == before  # still fresh: no refresh
    # inside the refresh margin (not yet expired): refreshed before use, the rotated refresh token kept
    MailboxToken.objects.filter(pk=token.pk).update(access_expires_at=timezone.now() + timedelta(seconds=60))
    send_message(mailbox=mailbox, message=_message())
    assert microsoft_as.refreshes() == before + 1
    token.refresh_from_db()
    assert token.refreshes == 1 and token.access_expires_at > timezone.now() + timedelta(minutes=50)
    second_rt = oauth.crypto.decrypt(token.refresh_token_encrypted)
    assert second_rt != first_rt and microsoft_as.refresh_tokens[first_rt]["revoked"]
    # the server expired every access token early: SMTP refuses it, the service refreshes and retries once
    microsoft_as.expire_access_tokens()
    send_message(mailbox=mailbox, message=_message())
    assert microsoft_as.refreshes() == before + 2


def test_revoked_consent_needs_reconnect_never_sends_owner_emailed_once(oauth_settings, console, google_as,
                                                                       xoauth2_smtp, owner,
                                                                       django_capture_on_commit_callbacks):
    mailbox = _connected(console, google_as, "google")
    _, handler = xoauth2_smtp
    before = len(handler.messages)
    mail.outbox.clear()
    google_as.revoke(GOOGLE_ACCOUNT)  # the access token still looks valid locally: the server refuses it
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(MailboxNeedsReconnect):
        send_message(mailbox=mailbox, message=_message())
    mailbox.refresh_from_db()
    assert mailbox.status == "needs_reconnect" and "invalid_grant" in mailbox.reconnect_reason
    assert "rt-" not in mailbox.reconnect_reason and "at-" not in mailbox.reconnect_reason
    assert len(handler.messages) == before
    assert [m.to for m in mail.outbox] == [[owner.email]] and "needs reconnecting" in mail.outbox[0].subject
    # again: still refused, no second email, and the transport refuses to send from it at all
    with pytest.raises(Exception):  # noqa: B017 - not active: PermanentSendError
        send_message(mailbox=mailbox, message=_message())
    with django_capture_on_commit_callbacks(execute=True):
        oauth.mailbox_mark_needs_reconnect(mailbox_id=mailbox.pk, reason="again")
    assert len(mail.outbox) == 1 and len(handler.messages) == before
    page = console.get("/console/mailboxes/").content.decode()
    assert "Reconnect needed" in page and f"Reconnect {GOOGLE_ACCOUNT}" in page


def test_reconnect_button_restores_the_mailbox(oauth_settings, console, google_as, xoauth2_smtp):
    mailbox = _connected(console, google_as, "google")
    google_as.revoke(GOOGLE_ACCOUNT)
    with pytest.raises(MailboxNeedsReconnect):
        send_message(mailbox=mailbox, message=_message())
    authorize_url, page = connect(console, google_as, "google", path=f"/console/mailboxes/{mailbox.pk}/reconnect/")
    assert query(authorize_url)["login_hint"] == GOOGLE_ACCOUNT
    assert "reconnected with Google" in page.content.decode()
    mailbox.refresh_from_db()
    assert (mailbox.status, mailbox.reconnect_reason, mailbox.reconnect_notified_at) == ("active", "", None)
    send_message(mailbox=mailbox, message=_message())


def test_reconnect_as_another_account_is_refused(oauth_settings, console, google_as):
    mailbox = _connected(console, google_as, "google")
    Mailbox.objects.filter(pk=mailbox.pk).update(status="needs_reconnect")
    google_as.account = "someone-else@gmail-style.test"
    try:
        _, page = connect(console, google_as, "google", path=f"/console/mailboxes/{mailbox.pk}/reconnect/")
    finally:
        google_as.account = GOOGLE_ACCOUNT
    assert "but this mailbox is" in page.content.decode()
    assert Mailbox.objects.get(pk=mailbox.pk).status == "needs_reconnect"
    assert not Mailbox.objects.filter(email="someone-else@gmail-style.test").exists()


def test_transient_token_error_backs_off_and_never_needs_reconnect(oauth_settings, console, google_as,
                                                                  xoauth2_smtp):
    mailbox = _connected(console, google_as, "google")
    MailboxToken.objects.filter(mailbox=mailbox).update(access_expires_at=timezone.now() - timedelta(seconds=1))
    before = google_as.refreshes()
    google_as.fail_next = 1
    with pytest.raises(MailboxAuthUnavailable) as info:
        send_message(mailbox=mailbox, message=_message())
    token = MailboxToken.objects.get(mailbox=mailbox)
    assert token.failures == 1 and info.value.retry_at == token.retry_after > timezone.now()
    assert "503" in token.last_error
    # inside the backoff: not even asked
    with pytest.raises(MailboxAuthUnavailable):
        send_message(mailbox=mailbox, message=_message())
    assert google_as.refreshes() == before + 1
    mailbox.refresh_from_db()
    assert mailbox.status == "active"
    MailboxToken.objects.filter(mailbox=mailbox).update(retry_after=timezone.now() - timedelta(seconds=1))
    send_message(mailbox=mailbox, message=_message())
    token.refresh_from_db()
    assert (token.failures, token.retry_after, token.last_error) == (0, None, "")


def test_token_seam_a_provider_supplies_its_own_tokens(oauth_settings, console, google_as, xoauth2_smtp):
    """The seam for delegated tokens (e.g. Google Workspace JWT bearer): a registered source feeds XOAUTH2."""
    mailbox = _connected(console, google_as, "google")
    calls = []

    def delegated(mb):
        calls.append(mb.pk)
        return oauth.AccessToken(google_as.mint_access_token(mb.email))

    oauth.register_token_source("delegated-test", delegated)
    try:
        Mailbox.objects.filter(pk=mailbox.pk).update(oauth_provider="delegated-test")
        mailbox.refresh_from_db()
        send_message(mailbox=mailbox, message=_message())
        assert calls == [mailbox.pk]
    finally:
        oauth.TOKEN_SOURCES.pop("delegated-test", None)


def test_campaign_waits_on_revoked_consent_without_burning_attempts(oauth_settings, console, google_as,
                                                                    xoauth2_smtp, api, owner):
    """Consent revoked between launch and the send: nothing reaches SMTP, no lead is stopped or charged an
    attempt, the mailbox says needs_reconnect; after reconnecting the same leads are sent exactly once."""
    from campaigns import sender
    from campaigns.models import CampaignLead, SentMessage
    from tests.campaigns.conftest import ALWAYS, run_tick
    from tests.campaigns.helpers import create, launch

    mailbox = _connected(console, google_as, "google")
    assert sender.daily_cap(mailbox, timezone.now()) == sender.WARMUP_START  # a new live mailbox warms up
    _, handler = xoauth2_smtp
    before = len(handler.messages)
    cid = create(api, sending_window=ALWAYS).json()["result"]["campaign_id"]
    assert launch(api, cid, owner).status_code == 200
    google_as.revoke(GOOGLE_ACCOUNT)
    run_tick()
    assert len(handler.messages) == before
    mailbox.refresh_from_db()
    assert mailbox.status == "needs_reconnect"
    leads = list(CampaignLead.objects.filter(campaign_id=cid))
    assert all(lead.state == "active" and lead.attempts == 0 and lead.current_step == 0 for lead in leads)
    assert all(lead.next_send_at >= timezone.now() + sender.MAILBOX_WAIT - timedelta(minutes=1) for lead in leads)
    assert not SentMessage.objects.exclude(state="failed").exists()
    page = console.get("/console/").content.decode()  # every console page says why the campaign stopped
    assert "Sending has stopped from" in page and GOOGLE_ACCOUNT in page and "Q3 outreach" in page
    # reconnect; the leads are due again: each first step goes out once, over XOAUTH2
    connect(console, google_as, "google", path=f"/console/mailboxes/{mailbox.pk}/reconnect/")
    CampaignLead.objects.filter(campaign_id=cid).update(next_send_at=timezone.now())
    run_tick()
    assert len(handler.messages) == before + 2
    assert SentMessage.objects.filter(state="sent").count() == 2
    assert "Sending has stopped from" not in console.get("/console/").content.decode()
    run_tick()
    assert len(handler.messages) == before + 2


def test_poller_marks_needs_reconnect_on_revoked_consent_and_logs_no_token(oauth_settings, console, google_as,
                                                                           xoauth2_imap, caplog):
    import logging

    from replies.imap import mailbox_poll, mailboxes_to_poll
    from replies.models import ImapCursor

    caplog.set_level(logging.DEBUG)
    mailbox = _connected(console, google_as, "google")
    token = MailboxToken.objects.get(mailbox=mailbox)
    secrets = [oauth.crypto.decrypt(token.refresh_token_encrypted), oauth.crypto.decrypt(token.access_token_encrypted)]
    google_as.revoke(GOOGLE_ACCOUNT)  # Dovecot's introspection now says inactive; the refresh is refused
    assert mailbox_poll(mailbox=mailbox) == 0
    mailbox.refresh_from_db()
    assert mailbox.status == "needs_reconnect"
    assert "no access token" in ImapCursor.objects.get(mailbox=mailbox).last_error
    assert mailbox not in mailboxes_to_poll()
    assert not any(secret in caplog.text for secret in secrets)
    for record in MailboxToken.objects.filter(mailbox=mailbox).values():
        assert not any(secret in str(value) for value in record.values() for secret in secrets)


def test_a_bought_mailbox_is_not_taken_over_by_a_connect(oauth_settings, console, google_as, workspace):
    from sending.testing import make_active_mailbox

    make_active_mailbox(workspace, email=GOOGLE_ACCOUNT, provider="vendor")
    _, page = connect(console, google_as, "google")
    assert "remove it first" in page.content.decode()
    assert Mailbox.objects.get(email=GOOGLE_ACCOUNT).auth == "password"
    assert not MailboxToken.objects.exists()


def test_unknown_token_source_marks_needs_reconnect(db, workspace):
    from sending.testing import make_active_mailbox

    mailbox = make_active_mailbox(workspace, email="x@y.test", provider="byo", auth="oauth2", oauth_provider="gone")
    with pytest.raises(oauth.NeedsReconnect):
        oauth.access_token(mailbox)
    assert Mailbox.objects.get(pk=mailbox.pk).status == "needs_reconnect"


def test_xoauth2_initial_response_matches_googles_documented_example():
    import base64

    raw = oauth.xoauth2_response("someuser@example.com", "ya29.vF9dft4qmTc2Nvb3RlckBhdHRhdmlzdGEuY29tCg")
    assert base64.b64encode(raw.encode()).decode() == (
        "dXNlcj1zb21ldXNlckBleGFtcGxlLmNvbQFhdXRoPUJlYXJlciB5YTI5LnZGOWRmdDRxbVRjMk52"
        "YjNSbGNrQmhkSFJoZG1semRHRXVZMjl0Q2cBAQ==")


@pytest.mark.parametrize("change, message", [
    ({"aud": "someone-else"}, "not issued to this service"),
    ({"nonce": "other"}, "nonce"),
    ({"exp": 1}, "expired"),
    ({"email_verified": False}, "not verified"),
    ({"email": "no-at-sign"}, "did not say which mailbox"),
    ({"email": "a@b.test\r\nBcc: x@y.test"}, "did not say which mailbox"),
])
def test_id_token_checks(settings, change, message):
    import time

    import jwt

    settings.GOOGLE_OAUTH_CLIENT_ID = "google-client"
    provider = oauth.provider_get("google")
    claims = {"aud": "google-client", "nonce": "n1", "exp": int(time.time()) + 300, "sub": "s",
              "email": "Ann@Example.test", "email_verified": True, **change}
    with pytest.raises(oauth.OAuthError, match=message):
        oauth._identity(provider, jwt.encode(claims, "k" * 32, algorithm="HS256"), "n1")
    good = {**claims, **{k: v for k, v in {"aud": "google-client", "nonce": "n1", "exp": int(time.time()) + 300,
                                           "email": "Ann@Example.test", "email_verified": True}.items()}}
    assert oauth._identity(provider, jwt.encode(good, "k" * 32, algorithm="HS256"), "n1")[0] == "ann@example.test"


def test_token_endpoint_behind_the_private_address_guard(oauth_settings, console, google_as):
    """Token endpoints go through core.outbound: a loopback token URL is refused unless private networks are
    allowed, and the refusal is transient (the mailbox stays active)."""
    mailbox = _connected(console, google_as, "google")
    MailboxToken.objects.filter(mailbox=mailbox).update(access_expires_at=timezone.now() - timedelta(seconds=1))
    oauth_settings.SENDING_ALLOW_PRIVATE_NETWORKS = False
    before = google_as.refreshes()
    with pytest.raises(oauth.TokenUnavailable, match="refused"):
        oauth.access_token(mailbox)
    assert google_as.refreshes() == before
    assert Mailbox.objects.get(pk=mailbox.pk).status == "active"

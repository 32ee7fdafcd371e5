"""Mailboxes connected by OAuth 2.0 (Google, Microsoft): the connect flow, access tokens, SASL XOAUTH2.

Connect (console, owners and admins): `authorization_start` builds the provider's authorization URL for the
authorization code flow with PKCE (S256), a single-use `state` and an OpenID Connect `nonce`, asking for offline
access (a refresh token): Google `access_type=offline&prompt=consent`, Microsoft the `offline_access` scope.
`authorization_finish` redeems the code at the token endpoint (with the PKCE verifier) and reads the mailbox
address from the ID token the token endpoint returned (Google `email`, which must be verified; Microsoft
`preferred_username`, else `email`): never from a form. The ID token comes straight from the token endpoint over
TLS, so its audience, expiry and nonce are checked and its signature is not (OpenID Connect Core 3.1.3.7).
`mailbox_oauth_connect` stores the mailbox (`auth = oauth2`) with both tokens Fernet-encrypted in its
`MailboxToken`; reconnecting an existing mailbox replaces the tokens and sets it `active` again.

Access tokens, THE SEAM: every XOAUTH2 login (the transport's SMTP, the replies IMAP poller) gets its bearer
token from one function, `access_token(mailbox)`, which calls the token source registered for the mailbox's
`oauth_provider`:

    register_token_source("google_workspace", fn)   # fn(mailbox) -> AccessToken(token, expires_at)

A source raises `NeedsReconnect` when the grant is gone for good (the mailbox is then marked
`needs_reconnect` by `access_token`) and `TokenUnavailable` for anything transient (retried later, with backoff).
`token_invalidate(mailbox)` is called when a server refused a token that looked valid, so that the next
`access_token` fetches a new one. Google and Microsoft use `refreshing_source`: the stored access token while it
is more than OAUTH_REFRESH_MARGIN_SECONDS from expiry, else a refresh-token grant. A provider (for example a
Google Workspace domain-wide delegation that mints tokens with a JWT bearer grant) supplies its own function and
reuses everything else: XOAUTH2, the poller, needs_reconnect, the console state.

One refresh at a time per mailbox, across processes: the refresher first claims `MailboxToken.refresh_lease_until`
with a conditional UPDATE (a database lock that works the same on SQLite and PostgreSQL and is not held while the
token endpoint answers); another process wanting a token meanwhile keeps using the current one while it is still
valid, or waits a bounded time for the refresher's result. A refused refresh (`invalid_grant`: consent revoked,
password changed, token expired; `interaction_required`, `consent_required`, `invalid_scope`) marks the mailbox
`needs_reconnect` and emails its owners and admins once. Anything else (timeouts, 5xx, 429, `temporarily_
unavailable`, a misconfigured client) is transient: `retry_after` backs off exponentially (30 s doubling to
30 min) and never turns into `needs_reconnect`.

Token endpoints are called through `core.outbound` (timeout, no redirects, capped body, the private-address
guard; SENDING_ALLOW_PRIVATE_NETWORKS lets tests reach a local server). Tokens are never logged, never shown,
never put in an exception message.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from urllib.parse import urlencode

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from core import events
from sending import crypto
from sending.models import Mailbox, MailboxToken, Provider
from sending.providers import google_workspace, microsoft365
from sending.selectors import mailbox_render
from sending.signals import mailbox_sendable
from sending.tokens import AccessToken, TokenUnavailable

logger = logging.getLogger("sending.oauth")

REFUSED_ERRORS = {"invalid_grant", "interaction_required", "consent_required", "invalid_scope"}
LEASE = timedelta(seconds=60)
BACKOFF_BASE = timedelta(seconds=30)
BACKOFF_MAX = timedelta(minutes=30)
WAIT_FOR_OTHER_REFRESH_SECONDS = 20.0


class OAuthError(Exception):
    """A connect-flow failure the console shows as is (never contains a token)."""


class NeedsReconnect(Exception):
    """The grant is gone for good (revoked consent, refused refresh): only the owner reconnecting fixes it."""


# --- providers ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class OAuthProvider:
    name: str
    label: str
    client_id: str
    client_secret: str
    authorize_url: str
    token_url: str
    scopes: tuple[str, ...]
    identity_claims: tuple[str, ...]
    smtp: tuple[str, int, str]
    imap: tuple[str, int, str]
    auth_params: dict = field(default_factory=dict)
    scope_on_token_request: bool = False

    @property
    def enabled(self) -> bool:
        return bool(self.client_id)


def providers() -> dict[str, OAuthProvider]:
    s = settings
    return {
        "google": OAuthProvider(
            name="google", label="Google", client_id=s.GOOGLE_OAUTH_CLIENT_ID,
            client_secret=s.GOOGLE_OAUTH_CLIENT_SECRET, authorize_url=s.GOOGLE_OAUTH_AUTHORIZE_URL,
            token_url=s.GOOGLE_OAUTH_TOKEN_URL, scopes=("openid", "email", "https://mail.google.com/"),
            identity_claims=("email",),
            smtp=(s.GOOGLE_SMTP_HOST, s.GOOGLE_SMTP_PORT, s.GOOGLE_SMTP_SECURITY),
            imap=(s.GOOGLE_IMAP_HOST, s.GOOGLE_IMAP_PORT, s.GOOGLE_IMAP_SECURITY),
            auth_params={"access_type": "offline", "prompt": "consent"},
        ),
        "microsoft": OAuthProvider(
            name="microsoft", label="Microsoft", client_id=s.MICROSOFT_OAUTH_CLIENT_ID,
            client_secret=s.MICROSOFT_OAUTH_CLIENT_SECRET, authorize_url=s.MICROSOFT_OAUTH_AUTHORIZE_URL,
            token_url=s.MICROSOFT_OAUTH_TOKEN_URL,
            scopes=("openid", "profile", "email", "offline_access", "https://outlook.office.com/SMTP.Send",
                    "https://outlook.office.com/IMAP.AccessAsUser.All"),
            identity_claims=("preferred_username", "email"),
            smtp=(s.MICROSOFT_SMTP_HOST, s.MICROSOFT_SMTP_PORT, s.MICROSOFT_SMTP_SECURITY),
            imap=(s.MICROSOFT_IMAP_HOST, s.MICROSOFT_IMAP_PORT, s.MICROSOFT_IMAP_SECURITY),
            auth_params={"prompt": "select_account"}, scope_on_token_request=True,
        ),
    }


def provider_get(name: str) -> OAuthProvider:
    found = providers().get(name)
    if found is None or not found.enabled:
        raise OAuthError(f"Connecting {name} mailboxes is not configured on this service.")
    return found


def providers_enabled() -> list[OAuthProvider]:
    return [p for p in providers().values() if p.enabled]


# --- the connect flow ---------------------------------------------------------------------------------------

@dataclass
class Flow:
    """What the console keeps (in the signed-in session) between the redirect and the callback."""
    provider: str
    state: str
    verifier: str
    nonce: str
    redirect_uri: str
    url: str


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def authorization_start(*, provider: OAuthProvider, redirect_uri: str, login_hint: str = "") -> Flow:
    state, verifier, nonce = secrets.token_urlsafe(32), secrets.token_urlsafe(64), secrets.token_urlsafe(16)
    params = {
        "response_type": "code", "client_id": provider.client_id, "redirect_uri": redirect_uri,
        "scope": " ".join(provider.scopes), "state": state, "nonce": nonce,
        "code_challenge": _b64url(hashlib.sha256(verifier.encode()).digest()), "code_challenge_method": "S256",
        **provider.auth_params,
    }
    if login_hint:
        params["login_hint"] = login_hint
    sep = "&" if "?" in provider.authorize_url else "?"
    return Flow(provider=provider.name, state=state, verifier=verifier, nonce=nonce, redirect_uri=redirect_uri,
                url=f"{provider.authorize_url}{sep}{urlencode(params)}")


@dataclass
class Grant:
    email: str
    subject: str
    access_token: str
    refresh_token: str
    expires_at: datetime
    scope: str
    name: str = ""


class _Refused(Exception):
    def __init__(self, error: str, description: str = ""):
        super().__init__(f"{error}: {description}".strip(": "))
        self.error = error


class _Transient(Exception):
    pass


def _token_request(provider: OAuthProvider, form: dict) -> dict:
    """POST to the token endpoint. Returns the JSON body of a 200; raises _Refused for an OAuth error the
    provider means for good, _Transient for everything else. Never puts a token in a message."""
    body = {**form, "client_id": provider.client_id}
    if provider.client_secret:
        body["client_secret"] = provider.client_secret
    if provider.scope_on_token_request:
        body.setdefault("scope", " ".join(provider.scopes))
    from core.outbound import OutboundError, request

    try:  # the one outbound client: timeout, no redirects, capped body, the private-address guard
        resp = request("POST", provider.token_url, timeout=settings.OAUTH_HTTP_TIMEOUT_SECONDS, max_bytes=1_000_000,
                       allow_private=bool(settings.SENDING_ALLOW_PRIVATE_NETWORKS),
                       headers={"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"},
                       content=urlencode(body).encode())
    except OutboundError as exc:
        raise _Transient(f"{provider.label} token endpoint unreachable ({exc.kind})") from None
    try:
        data = resp.json()
    except ValueError:
        data = {}
    if resp.status_code == 200 and isinstance(data, dict) and data.get("access_token"):
        return data
    error = str(data.get("error", "")) if isinstance(data, dict) else ""
    description = str(data.get("error_description", ""))[:200] if isinstance(data, dict) else ""
    if resp.status_code in (400, 401) and error in REFUSED_ERRORS:
        raise _Refused(error, description)
    raise _Transient(f"{provider.label} token endpoint answered HTTP {resp.status_code} {error}".strip())


def _identity(provider: OAuthProvider, id_token: str, nonce: str) -> tuple[str, str, str]:
    """(email, subject, name) from the ID token the token endpoint returned."""
    import jwt

    try:
        claims = jwt.decode(id_token, options={"verify_signature": False, "verify_aud": False, "verify_exp": False})
    except jwt.PyJWTError as exc:
        raise OAuthError(f"{provider.label} returned an unreadable ID token.") from exc
    aud = claims.get("aud")
    if provider.client_id not in (aud if isinstance(aud, list) else [aud]):
        raise OAuthError(f"The {provider.label} ID token was not issued to this service.")
    if not isinstance(claims.get("exp"), int | float) or claims["exp"] < time.time() - 60:
        raise OAuthError(f"The {provider.label} ID token has expired.")
    if claims.get("nonce") != nonce:
        raise OAuthError(f"The {provider.label} ID token does not belong to this sign-in (nonce).")
    if provider.name == "google" and claims.get("email_verified") is False:
        raise OAuthError("Google says this address is not verified.")
    from core.emails import normalize_address

    for claim in provider.identity_claims:
        value = str(claims.get(claim) or "").strip()
        if "@" in value and not any(c in value for c in "\r\n\t <>,;\"\\"):
            return normalize_address(value), str(claims.get("sub") or ""), str(claims.get("name") or "")[:200]
    raise OAuthError(f"{provider.label} did not say which mailbox this is (no address in the ID token).")


def authorization_finish(*, provider: OAuthProvider, code: str, flow: dict) -> Grant:
    """Redeem the authorization code (with the PKCE verifier) for tokens and the mailbox's identity."""
    try:
        data = _token_request(provider, {"grant_type": "authorization_code", "code": code,
                                         "redirect_uri": flow["redirect_uri"], "code_verifier": flow["verifier"]})
    except _Refused as exc:
        raise OAuthError(f"{provider.label} refused the authorization ({exc.error}). Please try again.") from None
    except _Transient as exc:
        raise OAuthError(f"{exc} Please try again in a moment.") from None
    if not data.get("refresh_token"):
        raise OAuthError(f"{provider.label} granted no offline access (no refresh token). Remove this service's "
                         "access in your account settings and connect again.")
    if not data.get("id_token"):
        raise OAuthError(f"{provider.label} returned no ID token: the mailbox address is unknown.")
    email, subject, name = _identity(provider, data["id_token"], flow["nonce"])
    return Grant(email=email, subject=subject, access_token=data["access_token"], refresh_token=data["refresh_token"],
                 expires_at=timezone.now() + timedelta(seconds=int(data.get("expires_in") or 3600)),
                 scope=str(data.get("scope") or ""), name=name)


def mailbox_oauth_connect(*, workspace, provider: OAuthProvider, grant: Grant,
                          expect_mailbox_id: str | None = None) -> Mailbox:
    """Store (or reconnect) the mailbox the grant is for. With `expect_mailbox_id` (the Reconnect button) the
    grant must be for that mailbox's address. Raises OAuthError."""
    now = timezone.now()
    if expect_mailbox_id:
        expected = Mailbox.objects.filter(workspace=workspace, pk=expect_mailbox_id).first()
        if expected is None or expected.status == Mailbox.Status.REMOVED:
            raise OAuthError("That mailbox no longer exists.")
        if expected.email != grant.email:
            raise OAuthError(f"You signed in as {grant.email}, but this mailbox is {expected.email}. "
                             f"Sign in to {provider.label} as {expected.email}.")
    smtp_host, smtp_port, smtp_security = provider.smtp
    imap_host, imap_port, imap_security = provider.imap
    first, _, last = grant.name.partition(" ")
    fields = dict(
        provider=Provider.BYO, auth=Mailbox.Auth.OAUTH2, oauth_provider=provider.name, status=Mailbox.Status.ACTIVE,
        smtp_host=smtp_host, smtp_port=smtp_port, smtp_security=smtp_security, smtp_username=grant.email,
        imap_host=imap_host, imap_port=imap_port, imap_security=imap_security, imap_username=grant.email,
        secret_encrypted="", reconnect_reason="", needs_reconnect_at=None, reconnect_notified_at=None,
    )
    Mailbox.objects.filter(workspace=workspace, email=grant.email, status=Mailbox.Status.REMOVED).delete()
    try:
        with transaction.atomic():
            mailbox = Mailbox.objects.select_for_update().filter(workspace=workspace, email=grant.email).first()
            if mailbox is None:
                mailbox = Mailbox.objects.create(workspace=workspace, email=grant.email, first_name=first[:100],
                                                 last_name=last[:100], activated_at=now, renews_at=None, **fields)
            elif mailbox.provider != Provider.BYO:
                raise OAuthError(f"{grant.email} is already a {mailbox.get_provider_display()} mailbox of this "
                                 "workspace; remove it first.")
            else:
                came_back = mailbox.status != Mailbox.Status.ACTIVE
                for key, value in fields.items():
                    setattr(mailbox, key, value)
                mailbox.activated_at = mailbox.activated_at or now
                mailbox.save()
                if came_back:  # reconnected: whatever waited for it may go at the next tick
                    transaction.on_commit(lambda m=mailbox.pk: mailbox_sendable.send(sender=Mailbox, mailbox_id=m))
            MailboxToken.objects.update_or_create(mailbox=mailbox, defaults=dict(
                provider=provider.name, subject=grant.subject, scope=grant.scope,
                refresh_token_encrypted=crypto.encrypt(grant.refresh_token),
                access_token_encrypted=crypto.encrypt(grant.access_token), access_expires_at=grant.expires_at,
                refresh_lease_until=None, retry_after=None, failures=0, last_error="", refreshed_at=now))
    except IntegrityError:
        raise OAuthError(f"{grant.email} is already connected to another workspace.") from None
    logger.info("mailbox %s connected by OAuth (%s)", mailbox.pk, provider.name)
    return mailbox


# --- access tokens: the seam --------------------------------------------------------------------------------

TokenSource = Callable[[Mailbox], AccessToken]
TOKEN_SOURCES: dict[str, TokenSource] = {}
TOKEN_FORGETTERS: dict[str, Callable[[Mailbox], None]] = {}


def register_token_source(name: str, source: TokenSource, forget: Callable[[Mailbox], None] | None = None) -> None:
    """Let a provider supply the access tokens of mailboxes whose `oauth_provider` is `name`; `forget(mailbox)`
    drops a token the provider keeps itself once a server refused it (`token_invalidate`)."""
    TOKEN_SOURCES[name] = source
    if forget is not None:
        TOKEN_FORGETTERS[name] = forget


def access_token(mailbox: Mailbox) -> str:
    """The bearer token for this mailbox's XOAUTH2 logins. Raises NeedsReconnect (after marking the mailbox
    `needs_reconnect`) or TokenUnavailable."""
    source = TOKEN_SOURCES.get(mailbox.oauth_provider)
    try:
        if source is None:
            raise NeedsReconnect(f"no token source for {mailbox.oauth_provider or 'this mailbox'}")
        return source(mailbox).token
    except NeedsReconnect as exc:
        mailbox_mark_needs_reconnect(mailbox_id=mailbox.pk, reason=str(exc))
        raise


def token_invalidate(mailbox: Mailbox) -> None:
    """A server refused the current access token: forget it so the next access_token() fetches a new one."""
    MailboxToken.objects.filter(mailbox_id=mailbox.pk).update(access_token_encrypted="", access_expires_at=None)
    forget = TOKEN_FORGETTERS.get(mailbox.oauth_provider)
    if forget is not None:
        forget(mailbox)


def _usable(tok: MailboxToken, now: datetime, margin: timedelta) -> str | None:
    if tok.access_token_encrypted and tok.access_expires_at and tok.access_expires_at > now + margin:
        return crypto.decrypt(tok.access_token_encrypted)
    return None


def _sleep(seconds: float) -> None:  # tests replace it to observe a waiter
    time.sleep(seconds)


def refreshing_source(mailbox: Mailbox) -> AccessToken:
    """Google / Microsoft: the stored access token, refreshed with the refresh token shortly before expiry."""
    margin = timedelta(seconds=settings.OAUTH_REFRESH_MARGIN_SECONDS)
    tok = MailboxToken.objects.filter(mailbox_id=mailbox.pk).first()
    if tok is None or not tok.refresh_token_encrypted:
        raise NeedsReconnect("no OAuth grant is stored for this mailbox")
    now = timezone.now()
    token = _usable(tok, now, margin)
    if token:
        return AccessToken(token, tok.access_expires_at)
    if tok.retry_after and tok.retry_after > now:
        still = _usable(tok, now, timedelta(0))
        if still:  # inside the margin but not expired: keep using it while backing off
            return AccessToken(still, tok.access_expires_at)
        raise TokenUnavailable(f"token refresh backing off after: {tok.last_error}", retry_at=tok.retry_after)
    free = Q(refresh_lease_until__isnull=True) | Q(refresh_lease_until__lt=now)
    if not MailboxToken.objects.filter(free, pk=tok.pk).update(refresh_lease_until=now + LEASE):
        return _wait_for_other_refresh(tok)
    try:
        tok.refresh_from_db()
        token = _usable(tok, timezone.now(), margin)  # refreshed by another process just before our claim
        if token:
            return AccessToken(token, tok.access_expires_at)
        return _refresh(mailbox, tok)
    finally:
        MailboxToken.objects.filter(pk=tok.pk).update(refresh_lease_until=None)


def _wait_for_other_refresh(tok: MailboxToken) -> AccessToken:
    """Another process holds the refresh lease: use the current token while it is valid, else wait (bounded)
    for the refresher's result."""
    waited = 0.0
    while True:
        tok.refresh_from_db()
        now = timezone.now()
        token = _usable(tok, now, timedelta(0))
        if token:
            return AccessToken(token, tok.access_expires_at)
        if tok.refresh_lease_until is None or tok.refresh_lease_until < now or waited >= WAIT_FOR_OTHER_REFRESH_SECONDS:
            if tok.last_error and tok.retry_after:
                raise TokenUnavailable(f"token refresh failed: {tok.last_error}", retry_at=tok.retry_after)
            if Mailbox.objects.filter(pk=tok.mailbox_id, status=Mailbox.Status.NEEDS_RECONNECT).exists():
                raise NeedsReconnect(tok.last_error or "refresh refused")
            raise TokenUnavailable("another process is refreshing this mailbox's token",
                                   retry_at=now + BACKOFF_BASE)
        _sleep(0.1)
        waited += 0.1


def _refresh(mailbox: Mailbox, tok: MailboxToken) -> AccessToken:
    provider = providers().get(tok.provider)
    if provider is None:
        raise NeedsReconnect(f"unknown OAuth provider {tok.provider}")
    now = timezone.now()
    try:
        data = _token_request(provider, {"grant_type": "refresh_token",
                                         "refresh_token": crypto.decrypt(tok.refresh_token_encrypted)})
    except _Refused as exc:
        reason = f"{provider.label} refused the token refresh ({exc.error}): consent revoked or expired"
        logger.warning("mailbox %s: %s", mailbox.pk, reason)
        MailboxToken.objects.filter(pk=tok.pk).update(access_token_encrypted="", access_expires_at=None,
                                                      last_error=reason[:500], retry_after=None)
        raise NeedsReconnect(reason) from None
    except _Transient as exc:
        failures = tok.failures + 1
        retry_at = now + min(BACKOFF_MAX, BACKOFF_BASE * (2 ** (failures - 1)))
        logger.warning("mailbox %s: token refresh failed (attempt %s, retry at %s): %s", mailbox.pk, failures,
                       retry_at.isoformat(), exc)
        MailboxToken.objects.filter(pk=tok.pk).update(failures=failures, retry_after=retry_at,
                                                      last_error=str(exc)[:500])
        raise TokenUnavailable(str(exc), retry_at=retry_at) from None
    expires_at = now + timedelta(seconds=int(data.get("expires_in") or 3600))
    update = dict(access_token_encrypted=crypto.encrypt(data["access_token"]), access_expires_at=expires_at,
                  failures=0, retry_after=None, last_error="", refreshed_at=now, refreshes=tok.refreshes + 1)
    if data.get("refresh_token"):  # rotated (Microsoft does, Google usually not)
        update["refresh_token_encrypted"] = crypto.encrypt(data["refresh_token"])
    MailboxToken.objects.filter(pk=tok.pk).update(**update)
    logger.info("mailbox %s: access token refreshed, valid until %s", mailbox.pk, expires_at.isoformat())
    return AccessToken(data["access_token"], expires_at)


register_token_source("google", refreshing_source)
register_token_source("microsoft", refreshing_source)


def _google_workspace_source(mailbox: Mailbox) -> AccessToken:  # mailboxes bought with SENDING_PROVIDER=google_workspace
    return google_workspace.mailbox_token_source(mailbox)


def _google_workspace_forget(mailbox: Mailbox) -> None:
    google_workspace.mailbox_token_forget(mailbox)


register_token_source("google_workspace", _google_workspace_source, _google_workspace_forget)


# --- needs_reconnect ----------------------------------------------------------------------------------------

def mailbox_mark_needs_reconnect(*, mailbox_id: str, reason: str) -> bool:
    """Set the mailbox `needs_reconnect` (safe to repeat) and email its owners and admins once per episode.
    Returns True when this call changed the status."""
    now = timezone.now()
    with transaction.atomic():
        mailbox = Mailbox.objects.select_for_update().filter(pk=mailbox_id).first()
        if mailbox is None or mailbox.status in (Mailbox.Status.REMOVED, Mailbox.Status.FAILED):
            return False
        changed = mailbox.status != Mailbox.Status.NEEDS_RECONNECT
        notify = mailbox.reconnect_notified_at is None
        if changed:
            mailbox.status = Mailbox.Status.NEEDS_RECONNECT
            mailbox.reconnect_reason = reason[:300]
            mailbox.needs_reconnect_at = now
        if notify:
            mailbox.reconnect_notified_at = now
        mailbox.save(update_fields=["status", "reconnect_reason", "needs_reconnect_at", "reconnect_notified_at"])
        if changed:
            events.emit(workspace=mailbox.workspace_id, type="mailbox.needs_reconnect", data=mailbox_render(mailbox))
        if notify:
            transaction.on_commit(lambda: _notify_needs_reconnect(mailbox))
    return changed


def _notify_needs_reconnect(mailbox: Mailbox) -> None:
    from django.core.mail import send_mail

    from accounts.selectors import workspace_approver_emails

    recipients = workspace_approver_emails(workspace_id=mailbox.workspace_id)
    if not recipients:
        return
    send_mail(
        subject=f"Mailbox {mailbox.email} needs reconnecting: sending from it has stopped",
        message=(f"The service can no longer sign in to {mailbox.email}: {mailbox.reconnect_reason}.\n\n"
                 "Nothing is sent from this mailbox and its replies are not read until it is reconnected. Campaign "
                 "leads assigned to it wait; nothing is lost.\n\n"
                 f"Reconnect it on the Mailboxes page: {settings.BASE_URL}/console/mailboxes/"),
        from_email=None, recipient_list=recipients, fail_silently=True,
    )


# --- SASL XOAUTH2 -------------------------------------------------------------------------------------------

def xoauth2_response(user: str, token: str) -> str:
    """The SASL XOAUTH2 initial client response, before base64: user=…^Aauth=Bearer …^A^A."""
    return f"user={user}\x01auth=Bearer {token}\x01\x01"


def _microsoft365_source(mailbox: Mailbox) -> AccessToken:  # mailboxes bought from Microsoft 365
    return microsoft365.mailbox_token_source(mailbox)


def _microsoft365_forget(mailbox: Mailbox) -> None:
    microsoft365.mailbox_token_forget(mailbox)


register_token_source("microsoft365", _microsoft365_source, _microsoft365_forget)

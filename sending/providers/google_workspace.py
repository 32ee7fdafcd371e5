"""Google Workspace mailboxes on freshly registered domains (`SENDING_PROVIDER=google_workspace`).

Written from Google's public REST references: OAuth 2.0 for server-to-server applications (service account,
JWT bearer grant, domain-wide delegation), Admin SDK Directory API (`domains.get` / `domains.insert`,
`users.insert` / `users.get` / `users.list` / `users.update` / `users.delete`) and the Site Verification API
(`webResource.getToken`, `webResource.insert`). Every endpoint is a setting so tests can point it elsewhere;
the defaults are Google's.

The operator's Google side (docs/sending.md walks through it): a Workspace account, a service account with a
JSON key (`GOOGLE_WORKSPACE_SERVICE_ACCOUNT_FILE`) whose client id the Workspace admin authorised for
domain-wide delegation with the scopes in `ADMIN_SCOPES` and `MAIL_SCOPE`, and the admin user it acts as
(`GOOGLE_WORKSPACE_ADMIN_EMAIL`).

How one purchase is delivered (each step is a read followed, when needed, by an idempotent write, so a worker
restart anywhere simply continues, and a lost answer is read back before anything is created again):
1. the domain is registered by the registrar (`GOOGLE_WORKSPACE_REGISTRAR`, Namecheap) exactly as with the
   registrar alone (`domain_register` / `domain_lookup` are the registrar's);
2. `domain_status`, polled by the operation while it is `waiting_external`, walks the domain forward:
   registrar active -> added to the Workspace as a secondary domain (`domains.insert`; 409 = already there)
   -> verification token (`getToken`, DNS_TXT) -> DNS written through the registrar: the verification TXT,
   Google's MX (`smtp.google.com`), SPF `include:_spf.google.com`, DMARC `p=none` with a reporting address
   (records the domain already had are kept; other MX and older SPF/DMARC are replaced) -> verification asked
   (`webResource.insert`; Google answers 400 while it cannot see the record yet: the domain stays pending with
   the reason "not yet verified", re-checked on the operation's backoff) -> `domains.get` says `verified`;
3. each mailbox is a Directory user (`users.insert`) with the sender's name, a random password that is never
   stored (nobody signs in with it: the service sends and reads with delegated tokens) and an external id
   carrying the operation's client reference, so that a lost answer is read back with
   `users.list?query=externalId:<ref>` and never created twice; an address taken by someone else is resolved
   with the next free variant (`ann2@…`), reported in `External.email`; "Domain user limit reached" (no
   licence left) is a permanent refusal of that mailbox, refunded by the operation;
4. a mailbox is active once Google reports `isMailboxSetup`; it sends over SMTP and is read over IMAP with
   XOAUTH2, with an access token from the JWT bearer grant for that user (`sub` = the mailbox,
   scope `https://mail.google.com/`): `mailbox_token_source` is registered with `sending.oauth` as the token
   source of `oauth_provider = google_workspace`, which the transport and the IMAP poller call;
5. upkeep: a suspended mailbox is suspended in Workspace too (`users.update suspended=true`) and resumed on
   renewal; removed capacity is deleted (`users.delete`) after `GOOGLE_WORKSPACE_DELETE_GRACE_DAYS`.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from datetime import timedelta
from urllib.parse import quote

import httpx
import jwt
from django.conf import settings

from core import outbound
from sending.providers.base import (
    ACTIVE,
    FAILED,
    PENDING,
    DnsRecord,
    DnsRegistrar,
    External,
    ProviderError,
    RegistrarHostedProvider,
)
from sending.providers.registry import get_provider
from sending.tokens import AccessToken, TokenUnavailable

ADMIN_SCOPES = (
    "https://www.googleapis.com/auth/admin.directory.domain",
    "https://www.googleapis.com/auth/admin.directory.user",
    "https://www.googleapis.com/auth/siteverification",
)
MAIL_SCOPE = "https://mail.google.com/"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
EXTERNAL_ID_TYPE = "outbound-client-ref"
SPF = "v=spf1 include:_spf.google.com ~all"
TOKEN_LIFETIME = 3600  # the longest a Google JWT assertion may ask for
TOKEN_MARGIN = 120  # a cached access token is renewed this many seconds before it expires

_token_cache: dict[tuple[str, str], tuple[str, float]] = {}
_token_lock = threading.Lock()


def _service_account() -> dict:
    path = settings.GOOGLE_WORKSPACE_SERVICE_ACCOUNT_FILE
    if not path:
        raise ProviderError("Google Workspace is not configured (GOOGLE_WORKSPACE_SERVICE_ACCOUNT_FILE)",
                            permanent=False)
    try:
        with open(path, encoding="utf-8") as fh:
            info = json.load(fh)
    except (OSError, ValueError) as exc:
        raise ProviderError(f"cannot read the service account key file: {exc}", permanent=False) from exc
    if not info.get("client_email") or not info.get("private_key"):
        raise ProviderError("the service account key file lacks client_email or private_key", permanent=False)
    return info


def _google_error(response: httpx.Response) -> tuple[str, str]:
    """(reason, message) of Google's JSON error body `{"error": {"code", "message", "errors": [{"reason"}]}}`
    or of the token endpoint's `{"error", "error_description"}`."""
    try:
        body = response.json()
    except ValueError:
        return "", response.text[:200]
    err = body.get("error")
    if isinstance(err, dict):
        reasons = [e.get("reason", "") for e in err.get("errors") or [] if isinstance(e, dict)]
        return (reasons[0] if reasons else str(err.get("status", ""))), str(err.get("message", ""))
    return str(err or ""), str(body.get("error_description", ""))


def delegated_token(*, subject: str, scopes: tuple[str, ...] | str, transport=None) -> tuple[str, float]:
    """An access token acting as `subject` (domain-wide delegation): the JWT bearer grant of RFC 7523 as Google
    documents it (`iss` the service account, `sub` the user, `scope`, `aud` the token URL, at most one hour).
    Cached per (subject, scopes) in this process until shortly before it expires. Returns (token, expires_at)."""
    scope = scopes if isinstance(scopes, str) else " ".join(scopes)
    key = (subject.lower(), scope)
    now = time.time()
    with _token_lock:
        cached = _token_cache.get(key)
        if cached and cached[1] - TOKEN_MARGIN > now:
            return cached
    info = _service_account()
    token_url = settings.GOOGLE_WORKSPACE_TOKEN_URL
    claims = {"iss": info["client_email"], "sub": subject, "scope": scope, "aud": token_url,
              "iat": int(now), "exp": int(now) + TOKEN_LIFETIME}
    headers = {"kid": info["private_key_id"]} if info.get("private_key_id") else None
    assertion = jwt.encode(claims, info["private_key"], algorithm="RS256", headers=headers)
    try:
        with outbound.client(transport=transport, timeout=settings.GOOGLE_WORKSPACE_TIMEOUT_SECONDS,
                             allow_private=True) as client:
            response = client.post(token_url, data={"grant_type": JWT_BEARER, "assertion": assertion})
    except httpx.HTTPError as exc:
        raise ProviderError(f"Google's token endpoint is unreachable: {exc}", permanent=False) from exc
    if response.status_code != 200:
        reason, message = _google_error(response)
        # unauthorized_client / invalid_grant: delegation not (yet) granted or the user does not exist yet; the
        # operator can fix the first and Google catches up on the second, so neither fails a paid item at once
        raise ProviderError(f"Google refused a token for {subject}: {reason} {message}".strip(), permanent=False)
    body = response.json()
    token = body.get("access_token")
    if not token:
        raise ProviderError("Google's token endpoint answered without an access_token", permanent=False)
    result = (token, now + float(body.get("expires_in") or TOKEN_LIFETIME))
    with _token_lock:
        _token_cache[key] = result
    return result


def mailbox_access_token(mailbox) -> tuple[str, float]:
    """An access token to send and read as a Workspace mailbox with XOAUTH2: (token, expiry as a timestamp)."""
    return delegated_token(subject=mailbox.email, scopes=MAIL_SCOPE, transport=GoogleWorkspaceProvider.transport)


def mailbox_token_source(mailbox):
    """`sending.oauth`'s token source for `oauth_provider = google_workspace` mailboxes. There is no refresh
    token and no consent to revoke: a refused grant (delegation withdrawn, user suspended or deleted) is an
    operator's matter, so it is transient (`TokenUnavailable`, retried with backoff), never `needs_reconnect`."""
    from datetime import UTC, datetime

    try:
        token, expires = mailbox_access_token(mailbox)
    except ProviderError as exc:
        raise TokenUnavailable(f"Google Workspace token for {mailbox.email}: {exc.message}") from exc
    return AccessToken(token=token, expires_at=datetime.fromtimestamp(expires, UTC))


def mailbox_token_forget(mailbox) -> None:
    """A server refused the cached token: the next `mailbox_token_source` call signs a new grant."""
    with _token_lock:
        _token_cache.pop((mailbox.email.lower(), MAIL_SCOPE), None)


def desired_records(*, name: str, verification_token: str) -> list[DnsRecord]:
    """The records Google Workspace mail needs on `name`."""
    rua = settings.GOOGLE_WORKSPACE_DMARC_RUA or settings.GOOGLE_WORKSPACE_ADMIN_EMAIL
    dmarc = "v=DMARC1; p=none" + (f"; rua=mailto:{rua}" if rua else "")
    return [
        DnsRecord(host="@", type="TXT", address=verification_token, ttl=1800),
        DnsRecord(host="@", type="MX", address=settings.GOOGLE_WORKSPACE_MX_HOST, mx_pref=1, ttl=1800),
        DnsRecord(host="@", type="TXT", address=SPF, ttl=1800),
        DnsRecord(host="_dmarc", type="TXT", address=dmarc, ttl=1800),
    ]


def merge_records(existing: list[DnsRecord], wanted: list[DnsRecord]) -> list[DnsRecord]:
    """The complete record set to write: everything the domain has, except MX records and SPF/DMARC policies
    that Google's replace, plus what is wanted. Order is stable so that an unchanged set compares equal."""
    def replaced(r: DnsRecord) -> bool:
        if r.type == "MX":
            return True
        if r.type == "TXT" and r.host == "@" and r.address.lower().startswith("v=spf1"):
            return True
        return r.type == "TXT" and r.host == "_dmarc"

    keep = [r for r in existing if not replaced(r) and r not in wanted]
    return keep + list(wanted)


class GoogleWorkspaceProvider(RegistrarHostedProvider):
    name = "google_workspace"
    ready_estimate = "1 to 3 days (domain registration, DNS propagation and Google's domain verification)"
    transport: httpx.BaseTransport | None = None  # tests inject a local fake (httpx.MockTransport)
    vendor = "Google"
    vendor_passed = (404, 409)
    vendor_transient_reasons = frozenset({"rateLimitExceeded", "userRateLimitExceeded", "backendError"})
    # a 403 for a quota of the account refuses the item; any other 401/403 is delegation or an API not enabled
    vendor_refusal_reasons = frozenset({"limitExceeded"})

    def __init__(self, transport: httpx.BaseTransport | None = None, registrar: DnsRegistrar | None = None):
        self.delete_grace = timedelta(days=settings.GOOGLE_WORKSPACE_DELETE_GRACE_DAYS)
        self._transport = transport or self.transport
        self.registrar = registrar or get_provider(settings.GOOGLE_WORKSPACE_REGISTRAR)
        if not isinstance(self.registrar, DnsRegistrar):
            raise ProviderError(f"registrar {settings.GOOGLE_WORKSPACE_REGISTRAR!r} cannot write DNS records",
                                permanent=True)

    # --- HTTP ---------------------------------------------------------------------------------------
    def vendor_error(self, response: httpx.Response) -> tuple[str, str]:
        return _google_error(response)

    def _request(self, method: str, url: str, *, scope: str, json_body=None, params=None,
                 mutating: bool = False, answered: tuple[int, ...] = ()) -> httpx.Response:
        """One authorised call as the admin (RegistrarHostedProvider.vendor_request maps its answer)."""
        token, _ = delegated_token(subject=settings.GOOGLE_WORKSPACE_ADMIN_EMAIL, scopes=scope,
                                   transport=self._transport)
        return self.vendor_request(method, url, what=url, timeout=settings.GOOGLE_WORKSPACE_TIMEOUT_SECONDS,
                                   headers={"Authorization": f"Bearer {token}"}, json_body=json_body, params=params,
                                   mutating=mutating, answered=answered)

    def _directory(self, path: str) -> str:
        return settings.GOOGLE_WORKSPACE_DIRECTORY_URL.rstrip("/") + path

    def _customer(self) -> str:
        return quote(settings.GOOGLE_WORKSPACE_CUSTOMER_ID, safe="")

    # --- domains (registration, read-back and the DKIM record are the registrar's: RegistrarHostedProvider) --
    def domain_status(self, *, ref):
        name = ref
        reg = self.registrar.domain_status(ref=name)
        if reg.status != ACTIVE:
            return External(ref=name, status=reg.status, detail=reg.detail or "the registrar is registering it")
        scope = " ".join(ADMIN_SCOPES)
        url = self._directory(f"/customer/{self._customer()}/domains/{quote(name, safe='')}")
        got = self._request("GET", url, scope=scope)
        if got.status_code == 404:
            self._request("POST", self._directory(f"/customer/{self._customer()}/domains"), scope=scope,
                          json_body={"domainName": name}, mutating=True)  # 409: added meanwhile, same thing
            got = self._request("GET", url, scope=scope)
            if got.status_code == 404:
                return External(ref=name, status=PENDING, detail="being added to Google Workspace")
        if got.json().get("verified"):
            return External(ref=name, status=ACTIVE, detail="verified by Google Workspace")
        site = {"type": "INET_DOMAIN", "identifier": name}
        sv = settings.GOOGLE_WORKSPACE_SITE_VERIFICATION_URL.rstrip("/")
        token = self._request("POST", f"{sv}/token", scope=scope,
                              json_body={"site": site, "verificationMethod": "DNS_TXT"}).json().get("token")
        if not token:
            raise ProviderError("Site Verification answered without a token", permanent=False)
        existing = self.registrar.dns_hosts_get(name=name)
        wanted = merge_records(existing, desired_records(name=name, verification_token=token))
        if sorted(existing, key=repr) != sorted(wanted, key=repr):
            self.registrar.dns_hosts_set(name=name, records=wanted)
        verify = self._request("POST", f"{sv}/webResource", scope=scope, params={"verificationMethod": "DNS_TXT"},
                               json_body={"site": site}, mutating=True, answered=(400,))
        if verify.status_code >= 300:
            return External(ref=name, status=PENDING, detail="DNS written; not yet verified by Google")
        if self._request("GET", url, scope=scope).json().get("verified"):
            return External(ref=name, status=ACTIVE, detail="verified by Google Workspace")
        return External(ref=name, status=PENDING, detail="DNS written; not yet verified by Google")

    def _user_by_ref(self, client_ref: str) -> dict | None:
        resp = self._request("GET", self._directory("/users"), scope=" ".join(ADMIN_SCOPES),
                             params={"customer": settings.GOOGLE_WORKSPACE_CUSTOMER_ID,
                                     "query": f"externalId:{client_ref}", "maxResults": "10"})
        if resp.status_code == 404:
            return None
        for user in resp.json().get("users") or []:
            for ext in user.get("externalIds") or []:
                if ext.get("customType") == EXTERNAL_ID_TYPE and ext.get("value") == client_ref:
                    return user
        return None

    @staticmethod
    def _external(user: dict, *, asked: str = "") -> External:
        email = user.get("primaryEmail", "").lower()
        return External(ref=user.get("id") or email, status=PENDING, email=email if email != asked.lower() else "")

    def mailbox_create(self, *, domain_ref, email, first_name, last_name, client_ref):
        local, _, domain = email.partition("@")
        scope = " ".join(ADMIN_SCOPES)
        for n in range(1, 10):
            address = email if n == 1 else f"{local}{n}@{domain}"
            body = {"primaryEmail": address,
                    "name": {"givenName": first_name or local, "familyName": last_name or domain.split(".")[0]},
                    "password": secrets.token_urlsafe(24), "changePasswordAtNextLogin": False,
                    "externalIds": [{"type": "custom", "customType": EXTERNAL_ID_TYPE, "value": client_ref}]}
            resp = self._request("POST", self._directory("/users"), scope=scope, json_body=body, mutating=True)
            if resp.status_code != 409:
                return self._external(resp.json(), asked=email)
            mine = self._user_by_ref(client_ref)  # our own earlier insert whose answer was lost?
            if mine is not None:
                return self._external(mine, asked=email)
        raise ProviderError(f"no free address for {email} on {domain}", permanent=True)

    def mailbox_lookup(self, *, email, client_ref):
        user = self._user_by_ref(client_ref)
        return self._external(user, asked=email) if user else None

    def mailbox_status(self, *, ref):
        resp = self._request("GET", self._directory(f"/users/{quote(ref, safe='')}"), scope=" ".join(ADMIN_SCOPES))
        if resp.status_code == 404:
            return External(ref=ref, status=FAILED, detail="the Workspace user no longer exists")
        user = resp.json()
        if not user.get("isMailboxSetup"):
            return External(ref=ref, status=PENDING, detail="Google is setting up the mailbox")
        email = user.get("primaryEmail", "").lower()
        connection = {  # Gmail's servers, the same settings as mailboxes connected with "Connect Google"
            "smtp_host": settings.GOOGLE_SMTP_HOST, "smtp_port": settings.GOOGLE_SMTP_PORT,
            "smtp_security": settings.GOOGLE_SMTP_SECURITY, "smtp_username": email,
            "imap_host": settings.GOOGLE_IMAP_HOST, "imap_port": settings.GOOGLE_IMAP_PORT,
            "imap_security": settings.GOOGLE_IMAP_SECURITY, "imap_username": email,
            "auth": "oauth2", "oauth_provider": self.name,
        }
        return External(ref=ref, status=ACTIVE, connection=connection)

    def _set_suspended(self, ref: str, suspended: bool) -> None:
        resp = self._request("PUT", self._directory(f"/users/{quote(ref, safe='')}"), scope=" ".join(ADMIN_SCOPES),
                             json_body={"suspended": suspended})
        if resp.status_code == 404:
            raise ProviderError("the Workspace user no longer exists", permanent=True)

    def mailbox_suspend(self, *, ref):
        self._set_suspended(ref, True)

    def mailbox_resume(self, *, ref):
        self._set_suspended(ref, False)

    def mailbox_delete(self, *, ref):
        self._request("DELETE", self._directory(f"/users/{quote(ref, safe='')}"), scope=" ".join(ADMIN_SCOPES),
                      mutating=True)  # 404: already gone

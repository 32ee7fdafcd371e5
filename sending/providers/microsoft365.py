"""Microsoft 365 mailboxes on freshly registered domains (`SENDING_PROVIDER=microsoft365`, or
`setup_sending` with `provider: "microsoft"`).

Written from Microsoft's public references: the Microsoft identity platform's OAuth 2.0 client credentials grant
(`POST /{tenant}/oauth2/v2.0/token`, `scope=<resource>/.default`), Microsoft Graph v1.0 `domain` (create, get,
`verificationDnsRecords`, `verify`, update `supportedServices`, `serviceConfigurationRecords`) and `user`
(create, get, list with `$filter`, update, delete, `assignLicense`, `mailboxSettings`), and Exchange Online's
"Authenticate an IMAP, POP or SMTP connection using OAuth" (app-only tokens for `https://outlook.office365.com`,
SASL XOAUTH2 with the mailbox's address as the user). Every endpoint is a setting so tests can point elsewhere;
the defaults are Microsoft's.

The operator's Microsoft side (docs/sending.md lists each step exactly): an app registration in Microsoft Entra
with a client secret, the Graph application permissions `Domain.ReadWrite.All`, `User.ReadWrite.All`,
`LicenseAssignment.ReadWrite.All` and `MailboxSettings.Read`, the Office 365 Exchange Online application
permissions `SMTP.SendAsApp` and `IMAP.AccessAsApp`, admin consent, the app's service principal registered in
Exchange Online, and the licence SKU the mailboxes get (`MICROSOFT365_LICENSE_SKU`).

How one purchase is delivered (each step reads before it writes, so a worker restart anywhere continues, and a
lost answer is read back before anything is created again):
1. the domain is registered by the registrar (`MICROSOFT365_REGISTRAR`, Namecheap);
2. `domain_status`, polled while the operation is `waiting_external`, walks the domain forward: registrar
   active -> added to the tenant (`POST /domains`) -> its verification TXT record
   (`verificationDnsRecords`) written through the registrar -> `POST /domains/{id}/verify` (Graph answers 400
   while it cannot see the record: pending, re-checked on the operation's backoff) -> `supportedServices`
   gains `Email` -> the service records Microsoft lists for it (`serviceConfigurationRecords`: MX, SPF,
   autodiscover) plus DMARC written through the registrar -> active (the service's DKIM key is then published
   the same way, `domain_dns_publish`);
3. each mailbox is a user (`POST /users`) with the sender's name, a usage location, a random password that is
   never stored, and the operation's client reference in `onPremisesExtensionAttributes`
   (`MICROSOFT365_REFERENCE_ATTRIBUTE`), so a lost answer is read back with `$filter` and never created twice;
   an address taken by someone else gets the next free variant (`ann2@…`); then a licence is assigned
   (`assignLicense`); "no licence left" is a permanent refusal of that mailbox (the user is deleted again and
   the operation refunds it);
4. a mailbox is active once Exchange Online answers for it (`GET /users/{id}/mailboxSettings`); it sends over
   SMTP and is read over IMAP with XOAUTH2, with an app-only access token for `https://outlook.office365.com`
   (`mailbox_token_source`, registered with `sending.oauth` for `oauth_provider = microsoft365`);
5. upkeep: a suspended mailbox's user is disabled (`accountEnabled=false`) and enabled again on renewal;
   removed capacity is deleted (`DELETE /users/{id}`) after `MICROSOFT365_DELETE_GRACE_DAYS`.
"""

from __future__ import annotations

import secrets
import threading
import time
from datetime import UTC, datetime, timedelta
from urllib.parse import quote

import httpx
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

GRAPH_SCOPE = "https://graph.microsoft.com/.default"
MAIL_SCOPE = "https://outlook.office365.com/.default"
TOKEN_MARGIN = 120  # a cached access token is renewed this many seconds before it expires
NO_LICENCE = "does not have any available licenses"
TAKEN = "already exists"

_token_cache: dict[str, tuple[str, float]] = {}
_token_lock = threading.Lock()


def configured() -> bool:
    return bool(settings.MICROSOFT365_TENANT_ID and settings.MICROSOFT365_CLIENT_ID
                and settings.MICROSOFT365_CLIENT_SECRET and settings.MICROSOFT365_LICENSE_SKU)


def token_url() -> str:
    return settings.MICROSOFT365_TOKEN_URL or (
        f"https://login.microsoftonline.com/{quote(settings.MICROSOFT365_TENANT_ID, safe='')}/oauth2/v2.0/token")


def _graph_error(response: httpx.Response) -> tuple[str, str]:
    """(code, message) of Graph's `{"error": {"code", "message"}}` or the token endpoint's
    `{"error", "error_description"}`."""
    try:
        body = response.json()
    except ValueError:
        return "", response.text[:200]
    err = body.get("error") if isinstance(body, dict) else None
    if isinstance(err, dict):
        return str(err.get("code", "")), str(err.get("message", ""))
    return str(err or ""), str((body or {}).get("error_description", ""))[:300]


def app_token(*, scope: str, transport=None) -> tuple[str, float]:
    """An app-only access token (client credentials grant) for `scope`, cached in this process until shortly
    before it expires. Returns (token, expires_at)."""
    now = time.time()
    with _token_lock:
        cached = _token_cache.get(scope)
        if cached and cached[1] - TOKEN_MARGIN > now:
            return cached
    if not configured():
        raise ProviderError("Microsoft 365 is not configured (MICROSOFT365_TENANT_ID, MICROSOFT365_CLIENT_ID, "
                            "MICROSOFT365_CLIENT_SECRET, MICROSOFT365_LICENSE_SKU)", permanent=False)
    form = {"client_id": settings.MICROSOFT365_CLIENT_ID, "client_secret": settings.MICROSOFT365_CLIENT_SECRET,
            "grant_type": "client_credentials", "scope": scope}
    try:
        with outbound.client(transport=transport, timeout=float(settings.MICROSOFT365_TIMEOUT_SECONDS),
                             allow_private=True) as client:
            response = client.post(token_url(), data=form)
    except httpx.HTTPError as exc:
        raise ProviderError(f"Microsoft's token endpoint is unreachable: {exc}", permanent=False) from exc
    if response.status_code != 200:
        code, message = _graph_error(response)
        # invalid_client / unauthorized_client / invalid_scope: the operator's app registration needs a fix;
        # no paid item fails for that on its own
        raise ProviderError(f"Microsoft refused an app token: {code} {message}".strip(), permanent=False)
    body = response.json()
    token = body.get("access_token")
    if not token:
        raise ProviderError("Microsoft's token endpoint answered without an access_token", permanent=False)
    result = (token, now + float(body.get("expires_in") or 3599))
    with _token_lock:
        _token_cache[scope] = result
    return result


def mailbox_token_source(mailbox):
    """`sending.oauth`'s token source for `oauth_provider = microsoft365` mailboxes: the app-only Exchange Online
    token (the XOAUTH2 user is the mailbox's address). A refused grant is the operator's matter (app secret,
    consent, service principal): transient (`TokenUnavailable`, retried with backoff), never `needs_reconnect`."""
    try:
        token, expires = app_token(scope=MAIL_SCOPE, transport=Microsoft365Provider.transport)
    except ProviderError as exc:
        raise TokenUnavailable(f"Microsoft 365 token for {mailbox.email}: {exc.message}") from exc
    return AccessToken(token=token, expires_at=datetime.fromtimestamp(expires, UTC))


def mailbox_token_forget(mailbox) -> None:
    """A server refused the cached token: the next `mailbox_token_source` call asks for a new one."""
    with _token_lock:
        _token_cache.pop(MAIL_SCOPE, None)


def _relative(label: str, name: str) -> str:
    label = label.rstrip(".").lower()
    if label in ("", name, "@"):
        return "@"
    return label[: -len(name) - 1] if label.endswith("." + name) else label


def graph_records(records: list[dict], *, name: str) -> list[DnsRecord]:
    """Graph `domainDnsRecord`s (Txt, Mx, CName) as registrar host records; other kinds (Srv) are not mail's."""
    out = []
    for r in records:
        kind = str(r.get("recordType", "")).lower()
        host = _relative(str(r.get("label", "")), name)
        ttl = int(r.get("ttl") or 3600)
        if kind == "txt" and r.get("text"):
            out.append(DnsRecord(host=host, type="TXT", address=r["text"], ttl=ttl))
        elif kind == "mx" and r.get("mailExchange"):
            out.append(DnsRecord(host=host, type="MX", address=r["mailExchange"], mx_pref=int(r.get("preference") or 0),
                                 ttl=ttl))
        elif kind == "cname" and r.get("canonicalName"):
            out.append(DnsRecord(host=host, type="CNAME", address=r["canonicalName"], ttl=ttl))
    return out


def merge_records(existing: list[DnsRecord], wanted: list[DnsRecord]) -> list[DnsRecord]:
    """Everything the domain has, except MX records, SPF/DMARC policies and records at a host Microsoft's
    CNAMEs claim (a CNAME cannot share its name), plus what is wanted; stable order."""
    cname_hosts = {w.host for w in wanted if w.type == "CNAME"}

    def replaced(r: DnsRecord) -> bool:
        if r.type == "MX" and any(w.type == "MX" for w in wanted):
            return True
        if r.host in cname_hosts:
            return True
        if r.type == "TXT" and r.host == "@" and r.address.lower().startswith("v=spf1"):
            return any(w.type == "TXT" and w.address.lower().startswith("v=spf1") for w in wanted)
        return r.type == "TXT" and r.host == "_dmarc" and any(w.host == "_dmarc" for w in wanted)

    keep = [r for r in existing if not replaced(r) and r not in wanted]
    return keep + list(wanted)


def dmarc_record() -> DnsRecord:
    rua = settings.MICROSOFT365_DMARC_RUA
    return DnsRecord(host="_dmarc", type="TXT", address="v=DMARC1; p=none" + (f"; rua=mailto:{rua}" if rua else ""))


class Microsoft365Provider(RegistrarHostedProvider):
    name = "microsoft365"
    ready_estimate = "1 to 3 days (domain registration, DNS propagation and Microsoft's domain verification)"
    transport: httpx.BaseTransport | None = None  # tests inject a local fake (httpx.MockTransport)
    vendor = "Microsoft Graph"  # any 401/403 is consent or a permission missing: an operator fix

    def __init__(self, transport: httpx.BaseTransport | None = None, registrar: DnsRegistrar | None = None):
        self.delete_grace = timedelta(days=settings.MICROSOFT365_DELETE_GRACE_DAYS)
        self._transport = transport or self.transport
        self.registrar = registrar or get_provider(settings.MICROSOFT365_REGISTRAR)
        if not isinstance(self.registrar, DnsRegistrar):
            raise ProviderError(f"registrar {settings.MICROSOFT365_REGISTRAR!r} cannot write DNS records",
                                permanent=True)

    # --- HTTP ---------------------------------------------------------------------------------------
    def vendor_error(self, response: httpx.Response) -> tuple[str, str]:
        return _graph_error(response)

    def _request(self, method: str, path: str, *, json_body=None, params=None, headers=None, mutating=False,
                 answered: tuple[int, ...] = ()) -> httpx.Response:
        """One Graph call with the app's token (RegistrarHostedProvider.vendor_request maps its answer)."""
        token, _ = app_token(scope=GRAPH_SCOPE, transport=self._transport)
        url = settings.MICROSOFT365_GRAPH_URL.rstrip("/") + path
        return self.vendor_request(method, url, what=path, timeout=float(settings.MICROSOFT365_TIMEOUT_SECONDS),
                                   headers={"Authorization": f"Bearer {token}", **(headers or {})},
                                   json_body=json_body, params=params, mutating=mutating, answered=answered)

    # --- domains (registration, read-back and the DKIM record are the registrar's: RegistrarHostedProvider) --
    def _write_dns(self, name: str, wanted: list[DnsRecord]) -> None:
        existing = self.registrar.dns_hosts_get(name=name)
        merged = merge_records(existing, wanted)
        if sorted(existing, key=repr) != sorted(merged, key=repr):
            self.registrar.dns_hosts_set(name=name, records=merged)

    def domain_status(self, *, ref):
        name = ref
        reg = self.registrar.domain_status(ref=name)
        if reg.status != ACTIVE:
            return External(ref=name, status=reg.status, detail=reg.detail or "the registrar is registering it")
        path = f"/domains/{quote(name, safe='')}"
        got = self._request("GET", path)
        if got.status_code == 404:
            # 400 "already exists": added meanwhile (a lost answer), read back below
            self._request("POST", "/domains", json_body={"id": name}, mutating=True, answered=(400, 409))
            got = self._request("GET", path)
            if got.status_code == 404:
                return External(ref=name, status=PENDING, detail="being added to Microsoft 365")
        domain = got.json()
        if not domain.get("isVerified"):
            records = self._request("GET", f"{path}/verificationDnsRecords").json().get("value") or []
            txt = [r for r in graph_records(records, name=name) if r.type == "TXT"]
            if not txt:
                raise ProviderError("Microsoft listed no TXT verification record", permanent=False)
            self._write_dns(name, txt[:1])
            verify = self._request("POST", f"{path}/verify", mutating=True, answered=(400,))
            if verify.status_code >= 300 or not verify.json().get("isVerified"):
                return External(ref=name, status=PENDING, detail="DNS written; not yet verified by Microsoft")
            domain = verify.json()
        if "Email" not in (domain.get("supportedServices") or []):
            services = sorted({*(domain.get("supportedServices") or []), "Email"})
            self._request("PATCH", path, json_body={"supportedServices": services}, mutating=True)
        records = self._request("GET", f"{path}/serviceConfigurationRecords").json().get("value") or []
        mail = [r for r in records if str(r.get("supportedService", "Email")).lower() == "email"]
        wanted = graph_records(mail, name=name)
        if not any(r.type == "MX" for r in wanted):
            return External(ref=name, status=PENDING, detail="Microsoft has not listed the mail records yet")
        self._write_dns(name, [*wanted, dmarc_record()])
        return External(ref=name, status=ACTIVE, detail="verified by Microsoft 365; mail records written")

    def _attribute(self) -> str:
        return settings.MICROSOFT365_REFERENCE_ATTRIBUTE

    def _user_by_ref(self, client_ref: str) -> dict | None:
        attribute = self._attribute()
        escaped = client_ref.replace("'", "''")
        resp = self._request("GET", "/users", headers={"ConsistencyLevel": "eventual"}, params={
            "$filter": f"onPremisesExtensionAttributes/{attribute} eq '{escaped}'", "$count": "true",
            "$select": "id,userPrincipalName,assignedLicenses,accountEnabled,onPremisesExtensionAttributes"})
        if resp.status_code == 404:
            return None
        for user in resp.json().get("value") or []:
            if (user.get("onPremisesExtensionAttributes") or {}).get(attribute) == client_ref:
                return user
        return None

    @staticmethod
    def _external(user: dict, *, asked: str = "") -> External:
        email = str(user.get("userPrincipalName", "")).lower()
        return External(ref=user.get("id") or email, status=PENDING, email=email if email != asked.lower() else "")

    def _licence(self, user_id: str) -> None:
        """Give the user the operator's SKU unless it has it. ProviderError(permanent) when none is left."""
        sku = settings.MICROSOFT365_LICENSE_SKU.lower()
        user = self._request("GET", f"/users/{quote(user_id, safe='')}", params={"$select": "id,assignedLicenses"})
        if user.status_code == 404:
            raise ProviderError("the Microsoft 365 user no longer exists", permanent=True)
        if any(str(lic.get("skuId", "")).lower() == sku for lic in user.json().get("assignedLicenses") or []):
            return
        resp = self._request("POST", f"/users/{quote(user_id, safe='')}/assignLicense", mutating=True,
                             answered=(400,), json_body={"addLicenses": [{"disabledPlans": [], "skuId": sku}],
                                                         "removeLicenses": []})
        if resp.status_code >= 300:
            code, message = _graph_error(resp)
            raise ProviderError(f"licence not assigned ({code}): {message}", permanent=True)

    def _licence_or_delete(self, user_id: str) -> None:
        try:
            self._licence(user_id)
        except ProviderError as exc:
            if exc.permanent:  # an unlicensed user is of no use and would hold the address: removed again
                self._request("DELETE", f"/users/{quote(user_id, safe='')}", mutating=True)
            raise

    def mailbox_create(self, *, domain_ref, email, first_name, last_name, client_ref):
        local, _, domain = email.partition("@")
        for n in range(1, 10):
            address = email if n == 1 else f"{local}{n}@{domain}"
            nickname = address.partition("@")[0]
            body = {"accountEnabled": True, "displayName": " ".join(p for p in (first_name, last_name) if p) or nickname,
                    "givenName": first_name or nickname, "surname": last_name or domain.split(".")[0],
                    "mailNickname": nickname, "userPrincipalName": address,
                    "usageLocation": settings.MICROSOFT365_USAGE_LOCATION,
                    "passwordProfile": {"forceChangePasswordNextSignIn": False,
                                        "password": secrets.token_urlsafe(24) + "!aA1"},
                    "onPremisesExtensionAttributes": {self._attribute(): client_ref}}
            resp = self._request("POST", "/users", json_body=body, mutating=True, answered=(400,))
            if resp.status_code < 300:
                user = resp.json()
                self._licence_or_delete(user["id"])
                return self._external(user, asked=email)
            code, message = _graph_error(resp)
            if TAKEN not in message.lower():
                raise ProviderError(f"Microsoft Graph refused the user ({code}): {message}", permanent=True)
            mine = self._user_by_ref(client_ref)  # our own earlier create whose answer was lost?
            if mine is not None:
                self._licence_or_delete(mine["id"])
                return self._external(mine, asked=email)
        raise ProviderError(f"no free address for {email} on {domain}", permanent=True)

    def mailbox_lookup(self, *, email, client_ref):
        user = self._user_by_ref(client_ref)
        return self._external(user, asked=email) if user else None

    def mailbox_status(self, *, ref):
        path = f"/users/{quote(ref, safe='')}"
        resp = self._request("GET", path, params={"$select": "id,userPrincipalName,assignedLicenses,accountEnabled"})
        if resp.status_code == 404:
            return External(ref=ref, status=FAILED, detail="the Microsoft 365 user no longer exists")
        try:
            self._licence_or_delete(ref)  # a create whose answer was lost before its licence was assigned
        except ProviderError as exc:
            if exc.permanent:
                return External(ref=ref, status=FAILED, detail=exc.message)
            raise
        if self._request("GET", f"{path}/mailboxSettings").status_code == 404:
            return External(ref=ref, status=PENDING, detail="Exchange Online is creating the mailbox")
        email = str(resp.json().get("userPrincipalName", "")).lower()
        connection = {  # Exchange Online's servers, the same as mailboxes connected with "Connect Microsoft"
            "smtp_host": settings.MICROSOFT_SMTP_HOST, "smtp_port": settings.MICROSOFT_SMTP_PORT,
            "smtp_security": settings.MICROSOFT_SMTP_SECURITY, "smtp_username": email,
            "imap_host": settings.MICROSOFT_IMAP_HOST, "imap_port": settings.MICROSOFT_IMAP_PORT,
            "imap_security": settings.MICROSOFT_IMAP_SECURITY, "imap_username": email,
            "auth": "oauth2", "oauth_provider": self.name,
        }
        return External(ref=ref, status=ACTIVE, connection=connection)

    def _set_enabled(self, ref: str, enabled: bool) -> None:
        resp = self._request("PATCH", f"/users/{quote(ref, safe='')}", json_body={"accountEnabled": enabled})
        if resp.status_code == 404:
            raise ProviderError("the Microsoft 365 user no longer exists", permanent=True)

    def mailbox_suspend(self, *, ref):
        self._set_enabled(ref, False)

    def mailbox_resume(self, *, ref):
        self._set_enabled(ref, True)

    def mailbox_delete(self, *, ref):
        self._request("DELETE", f"/users/{quote(ref, safe='')}", mutating=True)  # 404: already gone

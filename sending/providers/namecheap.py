"""Namecheap adapter (domains), written from Namecheap's public XML API documentation
(https://www.namecheap.com/support/api/methods/): `namecheap.domains.check`, `namecheap.domains.create`,
`namecheap.domains.getInfo` and `namecheap.domains.getList`.

Every call is `GET {NAMECHEAP_BASE_URL}?ApiUser=…&ApiKey=…&UserName=…&ClientIp=…&Command=…` answering
`<ApiResponse Status="OK|ERROR">` with `<Errors><Error Number="…">text</Error></Errors>` on failure.
Use `https://api.sandbox.namecheap.com/xml.response` against Namecheap's own sandbox.

Mapping to the provider contract (`sending.providers.base`):
- check: `Available="true"` and not `IsPremiumName="true"` (premium prices are never bought automatically);
- create: `Registered="true"` -> pending (active once getInfo reports `Status="Ok"`), an API error -> permanent
  failure, HTTP 5xx or a connection error before sending -> transient; a read timeout after the request was
  sent -> `OutcomeUnknown`, after which the domain is looked up with getList before anything is retried;
- DNS (`DnsRegistrar`, used by mailbox-hosting providers such as Google Workspace): getHosts reads the host
  records (the live API writes `<host>`, the documentation `<Host>`: both are read); setHosts REPLACES every
  record of the domain, so the caller passes the complete set; it is sent as a form POST (Namecheap recommends
  POST above ten hosts) with `EmailType=MX` when the set has MX records. A domain not on Namecheap's DNS
  (`IsUsingOurDNS="false"`) is a permanent error: its records cannot be written here;
- Namecheap's public API has no mailbox hosting: this adapter only registers domains, and its mailbox methods
  fail permanently (refunded by the operation). Pair it with a mailbox-hosting adapter, or add mailboxes on
  those domains through the console as bring-your-own.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

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
    OutcomeUnknown,
    ProviderError,
    SendingProvider,
)

NS = {"nc": "http://api.namecheap.com/xml.response"}
CONTACT_ROLES = ("Registrant", "Tech", "Admin", "AuxBilling")
CONTACT_FIELDS = ("FirstName", "LastName", "Address1", "City", "StateProvince", "PostalCode", "Country", "Phone",
                  "EmailAddress")


class NamecheapProvider(SendingProvider, DnsRegistrar):
    name = "namecheap"
    ready_estimate = "24 to 48 hours"
    transport: httpx.BaseTransport | None = None  # tests inject httpx.MockTransport

    def __init__(self, transport: httpx.BaseTransport | None = None):
        self._transport = transport or self.transport

    # --- HTTP ---------------------------------------------------------------------------------------
    def _global(self) -> dict:
        return {"ApiUser": settings.NAMECHEAP_API_USER, "ApiKey": settings.NAMECHEAP_API_KEY,
                "UserName": settings.NAMECHEAP_USERNAME or settings.NAMECHEAP_API_USER,
                "ClientIp": settings.NAMECHEAP_CLIENT_IP}

    def _call(self, command: str, params: dict, *, mutating: bool = False, post: bool = False) -> ET.Element:
        if not settings.NAMECHEAP_API_KEY:
            raise ProviderError("Namecheap is not configured (NAMECHEAP_API_KEY)", permanent=False)
        query = {**self._global(), "Command": command, **params}
        try:  # core.outbound's client: NAMECHEAP_TIMEOUT_SECONDS for the whole call
            with outbound.client(transport=self._transport, timeout=float(settings.NAMECHEAP_TIMEOUT_SECONDS),
                                 allow_private=True) as client:
                if post:
                    response = client.post(settings.NAMECHEAP_BASE_URL, data=query)
                else:
                    response = client.get(settings.NAMECHEAP_BASE_URL, params=query)
        except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout) as exc:
            raise ProviderError(f"Namecheap unreachable: {exc}", permanent=False) from exc
        except (httpx.ReadTimeout, httpx.WriteTimeout, httpx.RemoteProtocolError, httpx.ReadError) as exc:
            if mutating:  # the request may have been processed
                raise OutcomeUnknown(f"{command}: {exc}") from exc
            raise ProviderError(f"Namecheap read failed: {exc}", permanent=False) from exc
        if response.status_code >= 500:
            if mutating:
                raise OutcomeUnknown(f"{command}: HTTP {response.status_code}")
            raise ProviderError(f"Namecheap HTTP {response.status_code}", permanent=False)
        try:
            root = ET.fromstring(response.content)
        except ET.ParseError as exc:
            if mutating:
                raise OutcomeUnknown(f"{command}: unreadable answer") from exc
            raise ProviderError("Namecheap answered something that is not XML", permanent=False) from exc
        if root.get("Status") != "OK":
            errors = [f"{e.get('Number')}: {(e.text or '').strip()}" for e in root.findall("nc:Errors/nc:Error", NS)]
            raise ProviderError("; ".join(errors) or "Namecheap error", permanent=True)
        command_response = root.find("nc:CommandResponse", NS)
        if command_response is None:
            raise ProviderError("Namecheap answer without CommandResponse", permanent=False)
        return command_response

    # --- domains ------------------------------------------------------------------------------------
    def domains_available(self, names):
        resp = self._call("namecheap.domains.check", {"DomainList": ",".join(names)})
        free = {r.get("Domain", "").lower() for r in resp.findall("nc:DomainCheckResult", NS)
                if r.get("Available") == "true" and r.get("IsPremiumName") != "true"}
        return [n for n in names if n in free]

    def _contacts(self) -> dict:
        contact = settings.NAMECHEAP_REGISTRANT
        missing = [f for f in CONTACT_FIELDS if not contact.get(f)]
        if missing:
            raise ProviderError(f"NAMECHEAP_REGISTRANT lacks {', '.join(missing)}", permanent=True)
        return {f"{role}{field}": contact[field] for role in CONTACT_ROLES for field in CONTACT_FIELDS}

    def domain_register(self, *, name, client_ref):
        params = {"DomainName": name, "Years": "1", "AddFreeWhoisguard": "yes", "WGEnabled": "yes", **self._contacts()}
        resp = self._call("namecheap.domains.create", params, mutating=True)
        result = resp.find("nc:DomainCreateResult", NS)
        if result is None or result.get("Registered") != "true":
            return External(ref=name, status=FAILED, detail="Namecheap did not register the domain")
        return External(ref=result.get("Domain", name).lower(), status=PENDING,
                        detail=f"order {result.get('OrderID')} domain id {result.get('DomainID')}")

    def domain_lookup(self, *, name, client_ref):
        resp = self._call("namecheap.domains.getList", {"ListType": "ALL", "SearchTerm": name, "PageSize": "20"})
        for d in resp.findall("nc:DomainGetListResult/nc:Domain", NS):
            if d.get("Name", "").lower() == name:
                return External(ref=name, status=PENDING)
        return None

    def domain_status(self, *, ref):
        try:
            resp = self._call("namecheap.domains.getInfo", {"DomainName": ref})
        except ProviderError as exc:
            if exc.permanent:  # e.g. "domain not found" while the registry is still processing: ask again
                return External(ref=ref, status=PENDING, detail=exc.message)
            raise
        info = resp.find("nc:DomainGetInfoResult", NS)
        status = (info.get("Status") or "").lower() if info is not None else ""
        if status == "ok":
            return External(ref=ref, status=ACTIVE)
        if status in ("expired", "locked", "deleted"):
            return External(ref=ref, status=FAILED, detail=f"Namecheap status {status}")
        return External(ref=ref, status=PENDING, detail=status)

    # --- DNS host records ------------------------------------------------------------------------------
    @staticmethod
    def _split(name: str) -> dict:
        sld, _, tld = name.partition(".")
        return {"SLD": sld, "TLD": tld}

    def dns_hosts_get(self, *, name):
        resp = self._call("namecheap.domains.dns.getHosts", self._split(name))
        result = resp.find("nc:DomainDNSGetHostsResult", NS)
        if result is None:
            raise ProviderError("Namecheap getHosts answer without a result", permanent=False)
        if result.get("IsUsingOurDNS", "true").lower() != "true":
            raise ProviderError(f"{name} does not use Namecheap's DNS; its records cannot be written", permanent=True)
        records = []
        for host in result.findall("nc:host", NS) + result.findall("nc:Host", NS):
            pref = host.get("MXPref")
            records.append(DnsRecord(host=host.get("Name", "@"), type=host.get("Type", "").upper(),
                                     address=host.get("Address", ""),
                                     mx_pref=int(pref) if pref and host.get("Type", "").upper() == "MX" else None,
                                     ttl=int(host.get("TTL") or 1800)))
        return records

    def dns_hosts_set(self, *, name, records):
        params = self._split(name)
        for i, r in enumerate(records, start=1):
            params[f"HostName{i}"] = r.host
            params[f"RecordType{i}"] = r.type
            params[f"Address{i}"] = r.address
            params[f"TTL{i}"] = str(r.ttl)
            if r.type == "MX":
                params[f"MXPref{i}"] = str(r.mx_pref if r.mx_pref is not None else 10)
        if any(r.type == "MX" for r in records):
            params["EmailType"] = "MX"
        resp = self._call("namecheap.domains.dns.setHosts", params, mutating=True, post=True)
        result = resp.find("nc:DomainDNSSetHostsResult", NS)
        if result is None or result.get("IsSuccess", "").lower() != "true":
            raise ProviderError(f"Namecheap did not store the DNS records of {name}", permanent=False)

    # --- mailboxes: not offered by Namecheap's public API ----------------------------------------------
    def mailbox_create(self, *, domain_ref, email, first_name, last_name, client_ref):
        raise ProviderError("Namecheap's API does not create mailboxes; add them as bring-your-own", permanent=True)

    def mailbox_lookup(self, *, email, client_ref):
        return None

    def mailbox_status(self, *, ref):
        return External(ref=ref, status=FAILED, detail="no mailbox hosting")

"""Local fakes of the endpoints a live Microsoft 365 purchase talks to, written from the public references
(request and response shapes as documented), served through httpx.MockTransport at the real default URLs, and
sharing the Namecheap registrar's state with tests/sending/google_fake.py:

- the Microsoft identity platform's token endpoint, client credentials grant (`client_id`, `client_secret`,
  `scope=<resource>/.default`; `invalid_client` for a wrong secret, `invalid_scope` for anything but the two
  resources the app was granted);
- Microsoft Graph v1.0 `domains` (create, get, `verificationDnsRecords`, `verify` — which succeeds only once the
  `MS=ms…` TXT record is in the registrar's DNS and `visible_after` attempts have passed —, update
  `supportedServices`, `serviceConfigurationRecords`) and `users` (create, get, list with `$filter` on
  `onPremisesExtensionAttributes` as an advanced query, update, delete, `assignLicense`, `mailboxSettings`),
  with Graph's `{"error": {"code", "message"}}` bodies.

Knobs: `license_limit` (licences of the SKU), `lose_next` (a request of that kind is carried out but its answer
is lost), `never_verify`, `mailbox_ready_reads` (reads of `mailboxSettings` before Exchange Online has the
mailbox).
"""

from __future__ import annotations

import json
import secrets
import time
import uuid
from urllib.parse import parse_qs, unquote

import httpx

from tests.sending.google_fake import FakeVendors

TENANT = "8d6b7c1e-0a4f-4c1a-9a57-3d0c4f1e2b7a"
CLIENT_ID = "3f1a2b4c-5d6e-4f70-8a9b-0c1d2e3f4a5b"
CLIENT_SECRET = "fake~secret.value_123"
SKU = "f245ecc8-75af-4f8e-b61f-27d8114de5f3"  # the Business Standard SKU id, as Microsoft lists it
TOKEN_URL = f"https://login.microsoftonline.com/{TENANT}/oauth2/v2.0/token"
GRAPH = "https://graph.microsoft.com/v1.0"
GRAPH_SCOPE = "https://graph.microsoft.com/.default"
MAIL_SCOPE = "https://outlook.office365.com/.default"


def _error(status: int, code: str, message: str) -> httpx.Response:
    return httpx.Response(status, json={"error": {"code": code, "message": message, "innerError": {
        "date": "2026-11-28T12:00:00", "request-id": str(uuid.uuid4()), "client-request-id": str(uuid.uuid4())}}})


class FakeMicrosoft(FakeVendors):
    def __init__(self):
        super().__init__()
        self.ms_tokens: dict[str, dict] = {}  # access token -> {"scope", "exp"}
        self.ms_domains: dict[str, dict] = {}
        self.ms_users: dict[str, dict] = {}  # id -> user
        self.license_limit: int | None = None
        self.mailbox_ready_reads = 1
        self.ms_verify_attempts: dict[str, int] = {}

    def __call__(self, request: httpx.Request) -> httpx.Response:
        url = str(request.url).split("?")[0]
        if url == TOKEN_URL:
            return self._ms_token(request)
        if url.startswith(GRAPH):
            token = self.ms_tokens.get(request.headers.get("Authorization", "").removeprefix("Bearer "))
            if token is None or token["exp"] < time.time() or token["scope"] != GRAPH_SCOPE:
                return _error(401, "InvalidAuthenticationToken", "Access token validation failure. Invalid audience.")
            return self._graph(request, unquote(url[len(GRAPH):]))
        return super().__call__(request)  # Namecheap (and Google, unused here)

    # --- token endpoint, client credentials ------------------------------------------------------------
    def _ms_token(self, request: httpx.Request) -> httpx.Response:
        form = {k: v[0] for k, v in parse_qs(request.content.decode()).items()}
        if form.get("grant_type") != "client_credentials":
            return httpx.Response(400, json={"error": "unsupported_grant_type",
                                             "error_description": "AADSTS70003: The app requested an unsupported grant type."})
        if form.get("client_id") != CLIENT_ID or form.get("client_secret") != CLIENT_SECRET:
            return httpx.Response(401, json={"error": "invalid_client", "error_codes": [7000215],
                                             "error_description": "AADSTS7000215: Invalid client secret provided."})
        scope = form.get("scope", "")
        if scope not in (GRAPH_SCOPE, MAIL_SCOPE):
            return httpx.Response(400, json={"error": "invalid_scope", "error_description":
                                             f"AADSTS1002012: The provided value for scope {scope} is not valid. "
                                             "Client credential flows must have a scope value with /.default "
                                             "suffixed to the resource identifier."})
        token = "eyJ0eXAiOiJKV1Qi." + secrets.token_urlsafe(24)
        self.ms_tokens[token] = {"scope": scope, "exp": time.time() + self.token_lifetime}
        return httpx.Response(200, json={"token_type": "Bearer", "expires_in": self.token_lifetime,
                                         "ext_expires_in": self.token_lifetime, "access_token": token})

    def valid_mail_token(self, email: str, token: str) -> bool:
        """What Exchange Online asks of an app-only XOAUTH2 login: a live token for its resource, and a mailbox of
        that address that exists, is enabled and licensed."""
        grant = self.ms_tokens.get(token)
        user = next((u for u in self.ms_users.values() if u["userPrincipalName"] == email.lower()), None)
        return bool(grant and grant["scope"] == MAIL_SCOPE and grant["exp"] > time.time() and user
                    and user["accountEnabled"] and user["assignedLicenses"])

    # --- Graph ------------------------------------------------------------------------------------------
    def _graph(self, request: httpx.Request, path: str) -> httpx.Response:
        method = request.method
        body = json.loads(request.content) if request.content else {}
        if path == "/domains" and method == "POST":
            self.calls.append(("graph.domains.create", body.get("id", "")))
            name = str(body.get("id", "")).lower()
            if name in self.ms_domains:
                return _error(400, "Request_BadRequest", "Domain already exists.")
            self.ms_domains[name] = {"id": name, "authenticationType": "Managed", "isAdminManaged": True,
                                     "isDefault": False, "isInitial": False, "isRoot": True, "isVerified": False,
                                     "supportedServices": [], "passwordValidityPeriodInDays": 2147483647,
                                     "_code": f"ms{40000000 + len(self.ms_domains)}"}
            self._lose("graph.domains.create", request)
            return httpx.Response(201, json=self._public(self.ms_domains[name]))
        if path.startswith("/domains/"):
            return self._domain(request, path.removeprefix("/domains/"), body)
        if path == "/users" and method == "POST":
            return self._user_create(request, body)
        if path == "/users" and method == "GET":
            return self._user_list(request)
        if path.startswith("/users/"):
            return self._user(request, path.removeprefix("/users/"), body)
        return _error(400, "BadRequest", f"Resource not found for the segment '{path.strip('/').split('/')[0]}'.")

    def _domain(self, request: httpx.Request, rest: str, body: dict) -> httpx.Response:
        name, _, action = rest.partition("/")
        domain = self.ms_domains.get(name.lower())
        if domain is None:
            return _error(404, "Request_ResourceNotFound",
                          f"Resource '{name}' does not exist or one of its queried reference-property objects are "
                          "not present.")
        code = domain["_code"]
        if action == "" and request.method == "GET":
            return httpx.Response(200, json=self._public(domain))
        if action == "" and request.method == "PATCH":
            self.calls.append(("graph.domains.update", json.dumps(body, sort_keys=True)))
            if not domain["isVerified"]:
                return _error(400, "Request_BadRequest", "Unable to update an unverified domain.")
            domain["supportedServices"] = list(body.get("supportedServices", domain["supportedServices"]))
            return httpx.Response(204)
        if action == "verificationDnsRecords":
            return httpx.Response(200, json={"value": [
                {"@odata.type": "#microsoft.graph.domainDnsTxtRecord", "isOptional": False, "label": name,
                 "recordType": "Txt", "supportedService": "None", "ttl": 3600, "text": f"MS={code}"},
                {"@odata.type": "#microsoft.graph.domainDnsMxRecord", "isOptional": False, "label": name,
                 "recordType": "Mx", "supportedService": "None", "ttl": 3600,
                 "mailExchange": f"{code}.msv1.invalid", "preference": 32767}]})
        if action == "verify" and request.method == "POST":
            self.calls.append(("graph.domains.verify", name))
            attempts = self.ms_verify_attempts[name] = self.ms_verify_attempts.get(name, 0) + 1
            hosts = self.registered.get(name, {}).get("hosts", [])
            seen = any(h["Type"] == "TXT" and h["Address"] == f"MS={code}" for h in hosts)
            if self.never_verify or not seen or attempts <= self.visible_after:
                return _error(400, "Request_BadRequest",
                              "Domain verification failed. The DNS record for the domain could not be found.")
            domain["isVerified"] = True
            return httpx.Response(200, json=self._public(domain))
        if action == "serviceConfigurationRecords":
            records = []
            if "Email" in domain["supportedServices"]:
                records = [
                    {"@odata.type": "#microsoft.graph.domainDnsMxRecord", "isOptional": False, "label": name,
                     "recordType": "Mx", "supportedService": "Email", "ttl": 3600,
                     "mailExchange": f"{name.replace('.', '-')}.mail.protection.outlook.com", "preference": 0},
                    {"@odata.type": "#microsoft.graph.domainDnsTxtRecord", "isOptional": False, "label": name,
                     "recordType": "Txt", "supportedService": "Email", "ttl": 3600,
                     "text": "v=spf1 include:spf.protection.outlook.com -all"},
                    {"@odata.type": "#microsoft.graph.domainDnsCnameRecord", "isOptional": False,
                     "label": f"autodiscover.{name}", "recordType": "CName", "supportedService": "Email",
                     "ttl": 3600, "canonicalName": "autodiscover.outlook.com"}]
            return httpx.Response(200, json={"value": records})
        return _error(405, "Request_BadRequest", "Method not allowed.")

    def _user_create(self, request: httpx.Request, body: dict) -> httpx.Response:
        self.calls.append(("graph.users.create", body.get("userPrincipalName", "")))
        for field in ("accountEnabled", "displayName", "mailNickname", "userPrincipalName", "passwordProfile"):
            if field not in body:
                return _error(400, "Request_BadRequest", f"Invalid value specified for property '{field}' of "
                                                         "resource 'User'.")
        upn = body["userPrincipalName"].lower()
        domain = upn.partition("@")[2]
        if not self.ms_domains.get(domain, {}).get("isVerified"):
            return _error(400, "Request_BadRequest", "The domain portion of the userPrincipalName property is "
                                                     "invalid. You must use one of the verified domain names in "
                                                     "your organization.")
        if any(u["userPrincipalName"] == upn for u in self.ms_users.values()):
            return _error(400, "Request_BadRequest",
                          "Another object with the same value for property userPrincipalName already exists.")
        if len(body["passwordProfile"].get("password", "")) < 8:
            return _error(400, "Request_BadRequest", "The specified password does not comply with password "
                                                     "complexity requirements.")
        attrs = {f"extensionAttribute{i}": None for i in range(1, 16)}
        attrs.update(body.get("onPremisesExtensionAttributes") or {})
        user = {"id": str(uuid.uuid4()), "userPrincipalName": upn, "mail": None, "displayName": body["displayName"],
                "givenName": body.get("givenName"), "surname": body.get("surname"),
                "mailNickname": body["mailNickname"], "accountEnabled": bool(body["accountEnabled"]),
                "usageLocation": body.get("usageLocation"), "onPremisesExtensionAttributes": attrs,
                "assignedLicenses": [], "_reads": 0}
        self.ms_users[user["id"]] = user
        self._lose("graph.users.create", request)
        return httpx.Response(201, json=self._public(user))

    def _user_list(self, request: httpx.Request) -> httpx.Response:
        flt = request.url.params.get("$filter", "")
        prefix = "onPremisesExtensionAttributes/"
        if flt.startswith(prefix):  # an advanced query: Graph refuses it without these two
            if request.headers.get("ConsistencyLevel") != "eventual" or request.url.params.get("$count") != "true":
                return _error(400, "Request_UnsupportedQuery", "Unsupported or invalid query filter clause "
                                                               "specified for property 'extensionAttribute15'.")
            attribute, _, value = flt[len(prefix):].partition(" eq ")
            value = value.strip("'").replace("''", "'")
            found = [self._public(u) for u in self.ms_users.values()
                     if u["onPremisesExtensionAttributes"].get(attribute) == value]
            return httpx.Response(200, json={"@odata.count": len(found), "value": found})
        return httpx.Response(200, json={"value": [self._public(u) for u in self.ms_users.values()]})

    def _user(self, request: httpx.Request, rest: str, body: dict) -> httpx.Response:
        key, _, action = rest.partition("/")
        user = self.ms_users.get(key) or next((u for u in self.ms_users.values()
                                               if u["userPrincipalName"] == key.lower()), None)
        if user is None:
            return _error(404, "Request_ResourceNotFound",
                          f"Resource '{key}' does not exist or one of its queried reference-property objects are "
                          "not present.")
        method = request.method
        if action == "assignLicense" and method == "POST":
            self.calls.append(("graph.users.assignLicense", user["userPrincipalName"]))
            if not user.get("usageLocation"):
                return _error(400, "Request_BadRequest",
                              "License assignment cannot be done for user with invalid usage location.")
            for lic in body.get("addLicenses", []):
                if lic.get("skuId") != SKU:
                    return _error(400, "Request_BadRequest", f"License {lic.get('skuId')} does not correspond to "
                                                             "a valid company License.")
                used = sum(1 for u in self.ms_users.values() if any(a["skuId"] == SKU for a in u["assignedLicenses"]))
                if not any(a["skuId"] == SKU for a in user["assignedLicenses"]):
                    if self.license_limit is not None and used >= self.license_limit:
                        return _error(400, "Request_BadRequest",
                                      f"Subscription with SKU {SKU} does not have any available licenses.")
                    user["assignedLicenses"].append({"disabledPlans": [], "skuId": SKU})
            return httpx.Response(200, json=self._public(user))
        if action == "mailboxSettings" and method == "GET":
            user["_reads"] += 1
            if not user["assignedLicenses"] or user["_reads"] < self.mailbox_ready_reads:
                return _error(404, "MailboxNotEnabledForRESTAPI",
                              "The mailbox is either inactive, soft-deleted, or is hosted on-premise.")
            return httpx.Response(200, json={"timeZone": "UTC", "language": {"locale": "en-US"},
                                             "userPurpose": "user"})
        if action:
            return _error(400, "BadRequest", f"Resource not found for the segment '{action}'.")
        if method == "GET":
            return httpx.Response(200, json=self._public(user))
        if method == "PATCH":
            self.calls.append(("graph.users.update", json.dumps(body, sort_keys=True)))
            user.update({k: v for k, v in body.items() if k in ("accountEnabled", "displayName")})
            return httpx.Response(204)
        if method == "DELETE":
            self.calls.append(("graph.users.delete", user["userPrincipalName"]))
            del self.ms_users[user["id"]]
            return httpx.Response(204)
        return _error(405, "Request_BadRequest", "Method not allowed.")

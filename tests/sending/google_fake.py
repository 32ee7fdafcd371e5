"""Local fakes of the vendor endpoints a live Google Workspace purchase talks to, written from the public
references (request and response shapes as documented), served through httpx.MockTransport at the real default
URLs:

- Google's OAuth 2.0 token endpoint, JWT bearer grant (RFC 7523): the assertion's RS256 signature is checked with
  the service account's public key, `aud` must be the token URL, `iss` the service account, the lifetime at most
  one hour, and the scopes must be among those the "Workspace admin" delegated;
- Admin SDK Directory API: `customer/{customer}/domains` (get, insert), `users` (insert, get, list with
  `query=externalId:…`, update, delete), Google's JSON error body;
- Site Verification API: `token` (DNS_TXT) and `webResource` insert, which succeeds only once the verification
  TXT record is in the fake registrar's DNS (and `visible_after` polls have passed, as DNS propagation would);
- Namecheap's XML API, stateful: domains.check/create/getInfo/getList and domains.dns.getHosts/setHosts.

Knobs on the instance script failures: `user_limit` (licences), `lose_next` (a request of that kind is carried out
but its answer is lost), `never_verify`, `mailbox_setup_reads` (reads of a new user before `isMailboxSetup`).
"""

from __future__ import annotations

import json
import secrets
import time
from urllib.parse import parse_qs

import httpx
import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

TOKEN_URL = "https://oauth2.googleapis.com/token"
DIRECTORY = "https://admin.googleapis.com/admin/directory/v1"
SITE_VERIFICATION = "https://www.googleapis.com/siteVerification/v1"
NAMECHEAP = "https://api.sandbox.namecheap.com/xml.response"
ADMIN = "admin@operator.example"
DELEGATED = {"https://www.googleapis.com/auth/admin.directory.domain",
             "https://www.googleapis.com/auth/admin.directory.user",
             "https://www.googleapis.com/auth/siteverification", "https://mail.google.com/"}

_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
PRIVATE_PEM = _KEY.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                 serialization.NoEncryption()).decode()
PUBLIC_PEM = _KEY.public_key().public_bytes(serialization.Encoding.PEM,
                                            serialization.PublicFormat.SubjectPublicKeyInfo).decode()
SERVICE_ACCOUNT = {"type": "service_account", "project_id": "outbound-test", "private_key_id": "k1",
                   "private_key": PRIVATE_PEM, "client_email": "provisioner@outbound-test.iam.gserviceaccount.com",
                   "client_id": "1234567890", "token_uri": TOKEN_URL}


def _error(status: int, message: str, reason: str) -> httpx.Response:
    return httpx.Response(status, json={"error": {"code": status, "message": message,
                                                  "errors": [{"domain": "global", "reason": reason,
                                                              "message": message}]}})


def _xml(command: str, inner: str, status: str = "OK", errors: str = "") -> httpx.Response:
    body = (f'<?xml version="1.0" encoding="utf-8"?>\n<ApiResponse xmlns="http://api.namecheap.com/xml.response" '
            f'Status="{status}"><Errors>{errors}</Errors><Warnings /><RequestedCommand>{command}</RequestedCommand>'
            f'<CommandResponse Type="{command}">{inner}</CommandResponse><Server>FAKE</Server>'
            f'<GMTTimeDifference>--5:00</GMTTimeDifference><ExecutionTime>0.01</ExecutionTime></ApiResponse>')
    return httpx.Response(200, content=body.encode(), headers={"Content-Type": "text/xml"})


class FakeVendors:
    def __init__(self):
        self.tokens: dict[str, dict] = {}  # access token -> {"sub", "scopes", "exp"}
        self.domains: dict[str, dict] = {}  # Workspace domains
        self.users: dict[str, dict] = {}  # id -> user
        self.registered: dict[str, dict] = {}  # Namecheap: name -> {"hosts": [...]}
        self.calls: list[tuple[str, str]] = []
        self.user_limit: int | None = None
        self.lose_next: set[str] = set()  # e.g. {"users.insert"}: done, answer lost (ReadTimeout)
        self.never_verify = False
        self.visible_after = 1  # webResource.insert attempts that fail before the TXT record is "visible"
        self.mailbox_setup_reads = 1
        self.verify_attempts: dict[str, int] = {}
        self.token_lifetime = 3599

    # --- routing ----------------------------------------------------------------------------------------
    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        url = str(request.url).split("?")[0]
        if url == TOKEN_URL:
            return self._token(request)
        if url.startswith(NAMECHEAP):
            return self._namecheap(request)
        grant = self._auth(request)
        if isinstance(grant, httpx.Response):
            return grant
        if url.startswith(DIRECTORY):
            return self._directory(request, url[len(DIRECTORY):], grant)
        if url.startswith(SITE_VERIFICATION):
            return self._site_verification(request, url[len(SITE_VERIFICATION):], grant)
        return httpx.Response(404, json={"error": {"code": 404, "message": "Not Found"}})

    def _lose(self, kind: str, request: httpx.Request):
        if kind in self.lose_next:
            self.lose_next.discard(kind)
            raise httpx.ReadTimeout("answer lost", request=request)

    # --- OAuth 2.0 token endpoint (JWT bearer) ------------------------------------------------------------
    def _token(self, request: httpx.Request) -> httpx.Response:
        form = {k: v[0] for k, v in parse_qs(request.content.decode()).items()}
        if form.get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer":
            return httpx.Response(400, json={"error": "unsupported_grant_type"})
        try:
            claims = jwt.decode(form.get("assertion", ""), PUBLIC_PEM, algorithms=["RS256"], audience=TOKEN_URL)
        except jwt.PyJWTError as exc:
            return httpx.Response(400, json={"error": "invalid_grant", "error_description": str(exc)})
        if claims.get("iss") != SERVICE_ACCOUNT["client_email"] or claims["exp"] - claims["iat"] > 3600:
            return httpx.Response(400, json={"error": "invalid_grant", "error_description": "Invalid JWT"})
        scopes = set(claims.get("scope", "").split())
        if not scopes or not scopes <= DELEGATED:
            return httpx.Response(401, json={"error": "unauthorized_client",
                                             "error_description": "Client is unauthorized to retrieve access "
                                                                  "tokens using this method, or client not "
                                                                  "authorized for any of the scopes requested."})
        sub = claims.get("sub", "")
        if sub != ADMIN and not any(u["primaryEmail"] == sub and not u["suspended"] for u in self.users.values()):
            return httpx.Response(400, json={"error": "invalid_grant", "error_description": "Invalid email or User ID"})
        token = "ya29." + secrets.token_urlsafe(24)
        self.tokens[token] = {"sub": sub, "scopes": scopes, "exp": time.time() + self.token_lifetime}
        return httpx.Response(200, json={"access_token": token, "expires_in": self.token_lifetime,
                                         "token_type": "Bearer"})

    def _auth(self, request: httpx.Request):
        header = request.headers.get("Authorization", "")
        grant = self.tokens.get(header.removeprefix("Bearer "))
        if grant is None or grant["exp"] < time.time():
            return _error(401, "Request had invalid authentication credentials.", "authError")
        if grant["sub"] != ADMIN:
            return _error(403, "Not Authorized to access this resource/api", "forbidden")
        return grant

    def valid_mail_token(self, email: str, token: str) -> bool:
        """What an XOAUTH2 SMTP/IMAP peer asks: is this a live token for that mailbox with the mail scope?"""
        grant = self.tokens.get(token)
        return bool(grant and grant["sub"] == email and "https://mail.google.com/" in grant["scopes"]
                    and grant["exp"] > time.time())

    # --- Directory API ----------------------------------------------------------------------------------
    def _need(self, grant, scope):
        if scope not in grant["scopes"]:
            return _error(403, "Request had insufficient authentication scopes.", "insufficientPermissions")
        return None

    def _directory(self, request: httpx.Request, path: str, grant) -> httpx.Response:
        method = request.method
        if path.startswith("/customer/my_customer/domains"):
            if (denied := self._need(grant, "https://www.googleapis.com/auth/admin.directory.domain")):
                return denied
            name = path.removeprefix("/customer/my_customer/domains").strip("/")
            if method == "POST":
                self.calls.append(("domains.insert", ""))
                body = json.loads(request.content)
                domain = body["domainName"].lower()
                if domain in self.domains:
                    return _error(409, "Entity already exists.", "duplicate")
                self.domains[domain] = {"kind": "admin#directory#domain", "domainName": domain, "verified": False,
                                        "isPrimary": False, "creationTime": str(int(time.time() * 1000))}
                self._lose("domains.insert", request)
                return httpx.Response(200, json=self.domains[domain])
            if name in self.domains:
                return httpx.Response(200, json=self.domains[name])
            return _error(404, "Domain not found.", "notFound")
        if (denied := self._need(grant, "https://www.googleapis.com/auth/admin.directory.user")):
            return denied
        if path == "/users" and method == "POST":
            self.calls.append(("users.insert", ""))
            body = json.loads(request.content)
            email = body["primaryEmail"].lower()
            domain = email.partition("@")[2]
            if domain not in self.domains or not self.domains[domain]["verified"]:
                return _error(400, "Invalid Input: primary_user_email", "invalid")
            if any(u["primaryEmail"] == email for u in self.users.values()):
                return _error(409, "Entity already exists.", "duplicate")
            if self.user_limit is not None and len(self.users) >= self.user_limit:
                return _error(412, "Domain user limit reached.", "conditionNotMet")
            if not body.get("password") or len(body["password"]) < 8:
                return _error(400, "Invalid Password", "invalid")
            user = {"kind": "admin#directory#user", "id": str(10**20 + len(self.users) + 1), "primaryEmail": email,
                    "name": {**body.get("name", {}), "fullName": " ".join(body.get("name", {}).values())},
                    "suspended": False, "isMailboxSetup": False, "externalIds": body.get("externalIds", []),
                    "_reads": 0}
            self.users[user["id"]] = user
            self._lose("users.insert", request)
            return httpx.Response(200, json=self._public(user))
        if path == "/users" and method == "GET":
            query = request.url.params.get("query", "")
            found = [self._public(u) for u in self.users.values()
                     if query.startswith("externalId:")
                     and any(e.get("value") == query.removeprefix("externalId:") for e in u["externalIds"])]
            return httpx.Response(200, json={"kind": "admin#directory#users", "users": found} if found
                                  else {"kind": "admin#directory#users"})
        key = path.removeprefix("/users/")
        user = self.users.get(key) or next((u for u in self.users.values() if u["primaryEmail"] == key), None)
        if user is None:
            return _error(404, "Resource Not Found: userKey", "notFound")
        if method == "GET":
            user["_reads"] += 1
            if user["_reads"] >= self.mailbox_setup_reads:
                user["isMailboxSetup"] = True
            return httpx.Response(200, json=self._public(user))
        if method in ("PUT", "PATCH"):
            self.calls.append(("users.update", json.dumps(json.loads(request.content), sort_keys=True)))
            user.update({k: v for k, v in json.loads(request.content).items() if k in ("suspended", "name")})
            return httpx.Response(200, json=self._public(user))
        if method == "DELETE":
            self.calls.append(("users.delete", user["primaryEmail"]))
            del self.users[user["id"]]
            return httpx.Response(204)
        return _error(405, "Method not allowed", "badRequest")

    @staticmethod
    def _public(user: dict) -> dict:
        return {k: v for k, v in user.items() if not k.startswith("_")}

    # --- Site Verification API --------------------------------------------------------------------------
    def _site_verification(self, request: httpx.Request, path: str, grant) -> httpx.Response:
        if (denied := self._need(grant, "https://www.googleapis.com/auth/siteverification")):
            return denied
        body = json.loads(request.content or b"{}")
        site = body.get("site", {})
        name = site.get("identifier", "").lower()
        expected = "google-site-verification=" + name.replace(".", "-") + "-fake"
        if path == "/token":
            if body.get("verificationMethod") != "DNS_TXT" or site.get("type") != "INET_DOMAIN":
                return _error(400, "Invalid verification method", "invalid")
            return httpx.Response(200, json={"method": "DNS_TXT", "token": expected})
        if path == "/webResource" and request.method == "POST":
            self.calls.append(("webResource.insert", name))
            if request.url.params.get("verificationMethod") != "DNS_TXT":
                return _error(400, "verificationMethod is required", "required")
            attempts = self.verify_attempts[name] = self.verify_attempts.get(name, 0) + 1
            hosts = self.registered.get(name, {}).get("hosts", [])
            seen = any(h["Type"] == "TXT" and h["Address"] == expected for h in hosts)
            if self.never_verify or not seen or attempts <= self.visible_after:
                return _error(400, "The necessary verification token could not be found on your site.", "badRequest")
            if name in self.domains:
                self.domains[name]["verified"] = True
            return httpx.Response(200, json={"id": f"dns%3A%2F%2F{name}", "site": site, "owners": [ADMIN]})
        return _error(404, "Not Found", "notFound")

    # --- Namecheap (XML API) ------------------------------------------------------------------------------
    def _namecheap(self, request: httpx.Request) -> httpx.Response:
        params = dict(request.url.params)
        if request.method == "POST":
            params.update({k: v[0] for k, v in parse_qs(request.content.decode()).items()})
        command = params.get("Command", "")
        self.calls.append((command, params.get("DomainName") or f"{params.get('SLD')}.{params.get('TLD')}"))
        if command == "namecheap.domains.check":
            names = params["DomainList"].split(",")
            inner = "".join(f'<DomainCheckResult Domain="{n}" Available="{str(n not in self.registered).lower()}" '
                            f'IsPremiumName="false" />' for n in names)
            return _xml(command, inner)
        if command == "namecheap.domains.create":
            name = params["DomainName"].lower()
            self.registered[name] = {"hosts": [
                {"Name": "@", "Type": "URL", "Address": "http://www.example.com/?from=parking", "MXPref": "10",
                 "TTL": "1800"},
                {"Name": "www", "Type": "CNAME", "Address": "parkingpage.namecheap.com.", "MXPref": "10",
                 "TTL": "1800"}]}
            return _xml(command, f'<DomainCreateResult Domain="{name}" Registered="true" ChargedAmount="9.06" '
                                 f'DomainID="{len(self.registered)}" OrderID="77" TransactionID="88" '
                                 'WhoisguardEnable="true" NonRealTimeDomain="false" />')
        if command == "namecheap.domains.getInfo":
            name = params["DomainName"].lower()
            if name not in self.registered:
                return _xml(command, "", status="ERROR", errors='<Error Number="2019166">Domain not found</Error>')
            return _xml(command, f'<DomainGetInfoResult Status="Ok" DomainName="{name}" IsOwner="true" />')
        if command == "namecheap.domains.getList":
            term = params.get("SearchTerm", "")
            inner = "".join(f'<Domain Name="{n}" IsExpired="false" />' for n in self.registered if term in n)
            return _xml(command, f"<DomainGetListResult>{inner}</DomainGetListResult>")
        name = f"{params.get('SLD')}.{params.get('TLD')}".lower()
        if name not in self.registered:
            return _xml(command, "", status="ERROR", errors='<Error Number="2019166">Domain not found</Error>')
        if command == "namecheap.domains.dns.getHosts":
            hosts = "".join(f'<host HostId="{i}" Name="{h["Name"]}" Type="{h["Type"]}" Address="{h["Address"]}" '
                            f'MXPref="{h["MXPref"]}" TTL="{h["TTL"]}" IsActive="true" IsDDNSEnabled="false" />'
                            for i, h in enumerate(self.registered[name]["hosts"], start=1))
            return _xml(command, f'<DomainDNSGetHostsResult Domain="{name}" EmailType="FWD" IsUsingOurDNS="true">'
                                 f"{hosts}</DomainDNSGetHostsResult>")
        if command == "namecheap.domains.dns.setHosts":
            assert request.method == "POST", "setHosts is sent as a form POST"
            hosts, i = [], 1
            while f"HostName{i}" in params:
                hosts.append({"Name": params[f"HostName{i}"], "Type": params[f"RecordType{i}"],
                              "Address": params[f"Address{i}"], "MXPref": params.get(f"MXPref{i}", "10"),
                              "TTL": params.get(f"TTL{i}", "1800")})
                i += 1
            if any(h["Type"] == "MX" for h in hosts) and params.get("EmailType") != "MX":
                return _xml(command, "", status="ERROR",
                            errors='<Error Number="2050900">EmailType must be MX for MX records</Error>')
            self.registered[name]["hosts"] = hosts
            return _xml(command, f'<DomainDNSSetHostsResult Domain="{name}" IsSuccess="true" />')
        return _xml(command, "", status="ERROR", errors='<Error Number="1011102">Unknown command</Error>')

"""A local OAuth 2.0 / OpenID Connect authorization server for the OAuth mailbox tests, speaking the documented
shapes of Google's and Microsoft's endpoints over real HTTP on loopback:

- GET /authorize (authorization code + PKCE S256 + state + nonce): a consent page naming the signed-in account,
  whose "Allow" button (POST /authorize) redirects to the client's redirect_uri with `code` and `state`;
  "Deny" redirects with `error=access_denied`.
- POST /token: `authorization_code` (client secret, redirect_uri and the PKCE verifier checked) and
  `refresh_token` grants; an ID token (HS256) with `email`/`email_verified` (google style) or
  `preferred_username` (microsoft style, which also rotates refresh tokens); `invalid_grant` for a revoked,
  unknown or used code or refresh token; `fail_next` makes the next token calls answer 503 (transient).
- POST /introspect (RFC 7662, form `token=`): `{"active": true, "email", "sub", "exp", "scope"}` or
  `{"active": false}`: what the SMTP peer and Dovecot's oauth2 passdb validate bearer tokens with.

`revoke(email)` withdraws consent: every refresh and access token of that account stops working at once.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlparse

import jwt


class AuthServer:
    def __init__(self, *, style: str, client_id: str, client_secret: str, account: str, name: str = "Ann Owner",
                 access_ttl: int = 3600):
        self.style, self.client_id, self.client_secret = style, client_id, client_secret
        self.account, self.name, self.access_ttl = account, name, access_ttl
        self.codes: dict[str, dict] = {}
        self.refresh_tokens: dict[str, dict] = {}  # token -> {"email", "revoked"}
        self.access_tokens: dict[str, dict] = {}  # token -> {"email", "exp", "revoked"}
        self.token_requests: list[dict] = []  # form bodies (grant types) in order
        self.introspections = 0
        self.fail_next = 0
        self.hold_refresh: threading.Event | None = None  # set: refresh answers wait for it
        self.refresh_arrived = threading.Event()
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}"

    def start(self) -> AuthServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        if self.hold_refresh is not None:
            self.hold_refresh.set()
        self.server.shutdown()
        self.server.server_close()

    # test controls ---------------------------------------------------------------------------------------
    def revoke(self, email: str) -> None:
        with self.lock:
            for table in (self.refresh_tokens, self.access_tokens):
                for record in table.values():
                    if record["email"] == email:
                        record["revoked"] = True

    def expire_access_tokens(self) -> None:
        with self.lock:
            for record in self.access_tokens.values():
                record["exp"] = 0

    def mint_access_token(self, email: str) -> str:
        """An access token issued out of band (a test delivering mail into the IMAP peer as the mailbox)."""
        with self.lock:
            return self._issue(email, None, refresh=False)["access_token"]

    def refreshes(self) -> int:
        return sum(1 for f in self.token_requests if f.get("grant_type") == ["refresh_token"])

    def approve(self, authorize_url: str, *, deny: bool = False) -> str:
        """What a person clicking Allow (or Deny) on the consent page does: returns the redirect Location."""
        import httpx

        query = urlparse(authorize_url).query
        resp = httpx.post(f"{self.base}/authorize", data={"query": query, "decision": "deny" if deny else "allow"})
        assert resp.status_code == 302, resp.text
        return resp.headers["Location"]

    # token issuing ---------------------------------------------------------------------------------------
    def _issue(self, email: str, nonce: str | None, refresh: bool) -> dict:
        now = int(time.time())
        access = "at-" + secrets.token_urlsafe(24)
        self.access_tokens[access] = {"email": email, "exp": now + self.access_ttl, "revoked": False}
        body = {"access_token": access, "token_type": "Bearer", "expires_in": self.access_ttl,
                "scope": "https://mail.google.com/" if self.style == "google" else
                "https://outlook.office.com/SMTP.Send https://outlook.office.com/IMAP.AccessAsUser.All"}
        if refresh:
            rt = "rt-" + secrets.token_urlsafe(24)
            self.refresh_tokens[rt] = {"email": email, "revoked": False}
            body["refresh_token"] = rt
        if nonce is not None:
            claims = {"iss": self.base, "aud": self.client_id, "sub": "sub-" + email, "iat": now, "exp": now + 3600,
                      "nonce": nonce, "name": self.name}
            if self.style == "google":
                claims.update(email=email, email_verified=True)
            else:
                claims.update(preferred_username=email, tid="tenant-1")
            body["id_token"] = jwt.encode(claims, "k" * 32, algorithm="HS256")
        return body


def _handler(auth: AuthServer):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _send(self, status: int, body, content_type="application/json", headers=None):
            data = (json.dumps(body) if content_type == "application/json" else body).encode()
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        def _form(self) -> dict:
            length = int(self.headers.get("Content-Length") or 0)
            return parse_qs(self.rfile.read(length).decode(), keep_blank_values=True)

        def do_GET(self):
            url = urlparse(self.path)
            if url.path != "/authorize":
                return self._send(404, {"error": "not_found"})
            q = parse_qs(url.query)
            if q.get("client_id") != [auth.client_id] or q.get("code_challenge_method") != ["S256"]:
                return self._send(400, "<p>invalid_request</p>", "text/html")
            page = (f"<html><body><h1>Sign in with {auth.style.title()}</h1>"
                    f"<p id='account'>{html.escape(auth.account)}</p>"
                    f"<p>wants: {html.escape(q.get('scope', [''])[0])}</p>"
                    "<form method='post' action='/authorize'>"
                    f"<input type='hidden' name='query' value='{html.escape(url.query, quote=True)}'>"
                    "<button name='decision' value='allow'>Allow</button>"
                    "<button name='decision' value='deny'>Deny</button></form></body></html>")
            return self._send(200, page, "text/html")

        def do_POST(self):
            path = urlparse(self.path).path
            form = self._form()
            if path == "/authorize":
                q = parse_qs(form["query"][0])
                target = q["redirect_uri"][0]
                if form.get("decision") == ["deny"]:
                    params = {"error": "access_denied", "state": q["state"][0]}
                else:
                    code = "code-" + secrets.token_urlsafe(16)
                    with auth.lock:
                        auth.codes[code] = {"challenge": q["code_challenge"][0], "redirect_uri": target,
                                            "nonce": q.get("nonce", [None])[0], "email": auth.account}
                    params = {"code": code, "state": q["state"][0]}
                return self._send(302, "", "text/plain", {"Location": f"{target}?{urlencode(params)}"})
            if path == "/token":
                return self._token(form)
            if path == "/introspect":
                token = form.get("token", [""])[0]
                with auth.lock:
                    auth.introspections += 1
                    rec = auth.access_tokens.get(token)
                    active = bool(rec) and not rec["revoked"] and rec["exp"] > time.time()
                if not active:
                    return self._send(200, {"active": False})
                return self._send(200, {"active": True, "email": rec["email"], "sub": "sub-" + rec["email"],
                                        "exp": rec["exp"], "client_id": auth.client_id})
            return self._send(404, {"error": "not_found"})

        def _token(self, form: dict):
            grant = form.get("grant_type", [""])[0]
            with auth.lock:
                auth.token_requests.append(form)
                failing = auth.fail_next > 0
                if failing:
                    auth.fail_next -= 1
            if grant == "refresh_token":
                auth.refresh_arrived.set()
                if auth.hold_refresh is not None:
                    auth.hold_refresh.wait(30)
            if failing:
                return self._send(503, {"error": "temporarily_unavailable"})
            if form.get("client_id") != [auth.client_id] or form.get("client_secret") != [auth.client_secret]:
                return self._send(401, {"error": "invalid_client"})
            with auth.lock:
                if grant == "authorization_code":
                    record = auth.codes.pop(form.get("code", [""])[0], None)
                    if record is None or form.get("redirect_uri") != [record["redirect_uri"]]:
                        return self._send(400, {"error": "invalid_grant", "error_description": "bad code"})
                    verifier = form.get("code_verifier", [""])[0]
                    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=")
                    if challenge.decode() != record["challenge"]:
                        return self._send(400, {"error": "invalid_grant", "error_description": "PKCE mismatch"})
                    return self._send(200, auth._issue(record["email"], record["nonce"], refresh=True))
                if grant == "refresh_token":
                    rt = form.get("refresh_token", [""])[0]
                    record = auth.refresh_tokens.get(rt)
                    if record is None or record["revoked"]:
                        return self._send(400, {"error": "invalid_grant",
                                                "error_description": "Token has been expired or revoked."})
                    rotate = auth.style == "microsoft"
                    if rotate:
                        record["revoked"] = True  # a rotated refresh token is used up
                    return self._send(200, auth._issue(record["email"], None, refresh=rotate))
            return self._send(400, {"error": "unsupported_grant_type"})

    return Handler

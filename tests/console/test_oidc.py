"""OpenID Connect sign-in configured from the environment's settings, against a real local OIDC peer
(discovery, token and userinfo endpoints over HTTP on loopback). A first sign-in is a sign-up: it creates
the user and a workspace with 300 free credits."""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import jwt
import pytest
from django.test import Client

from accounts.models import Membership, User
from billing.models import CreditAccount

pytestmark = pytest.mark.django_db


class _OIDC(BaseHTTPRequestHandler):
    issued: list = []

    def log_message(self, *args):
        pass

    def _json(self, body):
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        base = f"http://127.0.0.1:{self.server.server_port}"
        if self.path == "/.well-known/openid-configuration":
            return self._json({
                "issuer": base, "authorization_endpoint": f"{base}/authorize", "token_endpoint": f"{base}/token",
                "userinfo_endpoint": f"{base}/userinfo", "jwks_uri": f"{base}/jwks",
                "token_endpoint_auth_methods_supported": ["client_secret_post"],
            })
        if self.path == "/userinfo":
            assert self.headers["Authorization"] == "Bearer at-123"
            return self._json({"sub": "u-42", "email": "sso.user@corp.example", "email_verified": True, "name": "Sso User"})
        self.send_response(404)
        self.end_headers()

    def do_POST(self):
        base = f"http://127.0.0.1:{self.server.server_port}"
        form = parse_qs(self.rfile.read(int(self.headers["Content-Length"])).decode())
        _OIDC.issued.append(form)
        assert form["code"] == ["code-abc"] and form["client_secret"] == ["s3cret"]
        now = int(time.time())
        id_token = jwt.encode({"iss": base, "aud": "console-client", "sub": "u-42", "iat": now, "exp": now + 300,
                               "email": "sso.user@corp.example", "email_verified": True}, "k" * 32, algorithm="HS256")
        return self._json({"access_token": "at-123", "token_type": "Bearer", "expires_in": 300, "id_token": id_token})


@pytest.fixture
def oidc_server(settings):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _OIDC)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_port}"
    settings.SOCIALACCOUNT_PROVIDERS = {"openid_connect": {"APPS": [{
        "provider_id": "corp", "name": "Corp SSO", "client_id": "console-client", "secret": "s3cret",
        "settings": {"server_url": url},
    }]}}
    yield url
    server.shutdown()


def test_oidc_sign_up_creates_workspace(oidc_server):
    c = Client()
    page = c.get("/console/auth/login/").content.decode()
    assert "Continue with Corp SSO" in page
    resp = c.post("/console/auth/oidc/corp/login/")
    assert resp.status_code == 302
    target = urlparse(resp["Location"])
    assert f"{target.scheme}://{target.netloc}{target.path}" == f"{oidc_server}/authorize"
    query = parse_qs(target.query)
    assert query["client_id"] == ["console-client"] and "openid" in query["scope"][0]
    resp = c.get("/console/auth/oidc/corp/login/callback/", {"code": "code-abc", "state": query["state"][0]})
    assert resp.status_code == 302, resp.content[:500]
    user = User.objects.get(email="sso.user@corp.example")
    m = Membership.objects.get(user=user)
    assert m.role == "owner" and CreditAccount.objects.get(pk=m.workspace_id).balance_micros == 300_000_000
    assert c.get("/console/").status_code == 200


def test_oidc_login_needs_post(oidc_server):
    # A GET on the provider login URL shows a confirmation page rather than redirecting away.
    resp = Client().get("/console/auth/oidc/corp/login/")
    assert resp.status_code == 200


def test_no_provider_button_without_configuration(settings):
    settings.SOCIALACCOUNT_PROVIDERS = {}
    assert "Continue with" not in Client().get("/console/auth/login/").content.decode()

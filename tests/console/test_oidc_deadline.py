"""Single sign-on's HTTP calls keep core.outbound's total deadline: an identity provider that trickles its answer
(a real socket peer sending one byte at a time, each far within any per-read timeout) costs the console one
SOCIALACCOUNT_REQUESTS_TIMEOUT, not one timeout per byte."""

import pytest
import requests
from allauth.socialaccount.adapter import get_adapter
from django.test import Client

from tests.slowloris import Trickler


@pytest.mark.parametrize("trickle_headers", [False, True])
def test_the_sso_session_keeps_a_total_deadline(settings, trickle_headers):
    settings.SOCIALACCOUNT_REQUESTS_TIMEOUT = 1
    with Trickler(trickle_headers=trickle_headers) as peer:
        with get_adapter().get_requests_session() as sess:
            with pytest.raises(requests.Timeout):
                sess.get(peer.url + "/.well-known/openid-configuration")
        assert peer.requests == 1 and not peer.finished.is_set()


@pytest.mark.django_db
def test_a_trickling_identity_provider_holds_a_sign_in_for_one_deadline(settings):
    settings.SOCIALACCOUNT_REQUESTS_TIMEOUT = 1
    with Trickler() as peer:
        settings.SOCIALACCOUNT_PROVIDERS = {"openid_connect": {"APPS": [{
            "provider_id": "corp", "name": "Corp SSO", "client_id": "console-client", "secret": "s3cret",
            "settings": {"server_url": peer.url},
        }]}}
        with pytest.raises(requests.RequestException):  # what allauth's views catch
            Client().post("/console/auth/oidc/corp/login/")
        assert peer.requests == 1 and not peer.finished.is_set()


def test_the_sso_session_speaks_requests(settings):
    """Form bodies, query parameters, headers, basic auth and JSON answers reach the peer and come back as
    requests has them (what allauth's OAuth 2.0 client sends to a token endpoint)."""
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    seen = {}

    class Echo(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):  # noqa: N802
            body = self.rfile.read(int(self.headers["Content-Length"]))
            seen.update(path=self.path, body=body.decode(), auth=self.headers["Authorization"],
                        agent=self.headers["User-Agent"], extra=self.headers["X-Extra"])
            data = json.dumps({"access_token": "at"}).encode()
            self.send_response(201)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with get_adapter().get_requests_session() as sess:
            resp = sess.request("POST", f"http://127.0.0.1:{server.server_port}/token", params={"a": "1"},
                                data={"code": "c 1", "grant_type": "authorization_code"}, headers={"X-Extra": "y"},
                                auth=requests.auth.HTTPBasicAuth("id", "secret"))
    finally:
        server.shutdown()
    assert resp.status_code == 201 and resp.headers["content-type"].startswith("application/json")
    assert resp.json() == {"access_token": "at"} and resp.encoding == "utf-8"
    resp.raise_for_status()
    assert seen["path"] == "/token?a=1" and seen["body"] == "code=c+1&grant_type=authorization_code"
    assert seen["auth"] == "Basic aWQ6c2VjcmV0" and seen["extra"] == "y" and seen["agent"].startswith("outbound-service/")

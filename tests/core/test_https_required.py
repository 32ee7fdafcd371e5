"""With an https BASE_URL, `/v1/*` and `/mcp` over plain http answer 403 `https_required` in the error envelope
(never a redirect: the key was already sent), on every door (Django, the fast verb door, the LLM door, MCP); the
console redirects to the BASE_URL host; behind a TLS-terminating proxy (X-Forwarded-Proto: https, read through
SECURE_PROXY_SSL_HEADER or the ASGI server's own proxy headers) everything keeps working."""

from __future__ import annotations

import httpx
import pytest
from django.test import Client


@pytest.fixture
def https_settings(settings):
    settings.BASE_URL = "https://app.example.com"
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "app.example.com", "internal-lb"]
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_SSL_HOST = "app.example.com"
    settings.SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^v1(/|$)", r"^mcp(/|$)"]
    return settings


def _is_https_required(resp, status_of=lambda r: r.status_code):
    assert status_of(resp) == 403, getattr(resp, "content", resp)
    body = resp.json()
    assert body["error"]["code"] == "https_required" and "https" in body["error"]["message"]
    assert "location" not in {k.lower() for k in resp.headers}
    assert body["error"]["request_id"] == resp.headers["X-Request-Id"]


def test_api_over_plain_http_is_403_never_a_redirect(api, https_settings):
    auth = {"HTTP_AUTHORIZATION": f"Bearer {api.key}"}
    for path in ("/v1/usage", "/v1/webhooks"):
        _is_https_required(Client().get(path, **auth))
    assert Client().get("/v1/usage", HTTP_X_FORWARDED_PROTO="https", **auth).status_code == 200


def test_https_base_url_sets_the_redirect_host_and_exempts_the_api():
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    code = ("import json, re, config.settings as s; print(json.dumps({'host': s.SECURE_SSL_HOST, 'exempt': "
            "[p for p in ('v1/usage', 'mcp', 'console/') if any(re.search(e, p) for e in s.SECURE_REDIRECT_EXEMPT)]}))")
    env = {k: v for k, v in os.environ.items() if k not in ("BASE_URL", "SECURE_SSL_REDIRECT")}
    out = subprocess.run([sys.executable, "-c", code], env={**env, "BASE_URL": "https://app.example.com"},
                         capture_output=True, text=True, check=True, cwd=Path(__file__).resolve().parents[2])
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {"host": "app.example.com", "exempt": ["v1/usage", "mcp"]}


def test_console_redirects_to_the_base_url_host_not_the_request_host(db, https_settings):
    plain = Client().get("/console/auth/login/?next=/console/", HTTP_HOST="internal-lb")
    assert plain.status_code == 301
    assert plain["Location"] == "https://app.example.com/console/auth/login/?next=/console/"
    assert Client().get("/healthz").status_code == 200  # probes stay on plain http


def test_plain_http_base_url_accepts_plain_http(api, settings):
    settings.BASE_URL = "http://127.0.0.1:8000"
    assert Client().get("/v1/usage", HTTP_AUTHORIZATION=f"Bearer {api.key}").status_code == 200


@pytest.mark.parametrize("proxy_setting", [("HTTP_X_FORWARDED_PROTO", "https"), None])
def test_every_door_refuses_plain_http_and_serves_behind_a_tls_proxy(transactional_db, api_key, https_settings,
                                                                     proxy_setting):
    """Live uvicorn serving config.asgi. With SECURE_PROXY_SSL_HEADER the header decides; without it the ASGI
    scope's scheme does (uvicorn --proxy-headers takes it from X-Forwarded-Proto of a trusted proxy)."""
    from config.asgi import application
    from llmproxy.views import close_db_threads
    from tests.llmproxy.fake_upstream import serve_in_thread, stop_server

    https_settings.SECURE_PROXY_SSL_HEADER = proxy_setting
    server, thread, port = serve_in_thread(application, lifespan="on", proxy_headers=True,
                                           forwarded_allow_ips="127.0.0.1")
    base = f"http://127.0.0.1:{port}"
    auth = {"Authorization": f"Bearer {api_key}"}
    mcp = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    mcp_headers = {**auth, "Accept": "application/json, text/event-stream"}
    try:
        with httpx.Client(timeout=20, follow_redirects=False) as c:
            for resp in (c.get(base + "/v1/usage", headers=auth),  # the fast verb door
                         c.get(base + "/v1/llm/models", headers=auth),  # the LLM door
                         c.post(base + "/v1/webhooks/wh_x/test", headers=auth, json={}),  # Django
                         c.post(base + "/mcp", headers=mcp_headers, json=mcp)):  # MCP
                _is_https_required(resp)
            secure = {**auth, "X-Forwarded-Proto": "https"}
            assert c.get(base + "/v1/usage", headers=secure).status_code == 200
            assert c.get(base + "/v1/llm/models", headers=secure).status_code == 200
            r = c.post(base + "/mcp", headers={**mcp_headers, "X-Forwarded-Proto": "https"}, json=mcp)
            assert r.status_code != 403, r.text
            assert c.get(base + "/healthz").status_code == 200
    finally:
        stop_server(server, thread)
        close_db_threads()


def test_openapi_documents_https_required_on_every_verb(client):
    import json

    spec = json.loads(client.get("/openapi.json").content)
    for path, item in spec["paths"].items():
        if path.startswith("/v1/") and not path.startswith("/v1/llm"):
            for op in item.values():
                assert "https_required" in op["responses"]["403"]["description"], path

"""Security headers (issue 15.6): a Content-Security-Policy without inline scripts on console pages, HSTS and
the https redirect when BASE_URL is https, X-Request-Id and the security headers on the LLM entry, and
`Allow` on every 405 (the MCP app's own are in tests/mcpserver/test_guard.py)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import httpx
import pytest
from django.test import Client

from tests.factories import make_workspace

CONSOLE_PAGES = ["/console/", "/console/keys/", "/console/approvals/", "/console/ledger/", "/console/topups/",
                 "/console/members/", "/console/mailboxes/"]


@pytest.fixture
def console(db):
    ws, user, key = make_workspace()
    c = Client()
    c.force_login(user)
    return c


def _script_src(policy: str) -> str:
    return next(d for d in policy.split(";") if d.strip().startswith("script-src")).strip()


@pytest.mark.parametrize("path", CONSOLE_PAGES)
def test_console_pages_have_a_csp_without_inline_scripts(console, path):
    resp = console.get(path)
    assert resp.status_code == 200, path
    policy = resp["Content-Security-Policy"]
    assert _script_src(policy) == "script-src 'self'"
    assert "frame-ancestors 'none'" in policy and "object-src 'none'" in policy
    html = resp.content.decode()
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html), "inline <script> on the page"
    assert not re.search(r"\son[a-z]+\s*=", html), "inline event handler on the page"


@pytest.mark.parametrize("path", ["/console/auth/login/", "/console/auth/signup/", "/admin/login/"])
def test_public_html_pages_have_the_csp_too(db, path):
    resp = Client().get(path)
    assert resp["Content-Security-Policy"].startswith("default-src 'self'")


def test_the_console_script_is_served_from_this_origin(db):
    resp = Client().get("/static/console/console.js")
    assert resp.status_code == 200
    assert b"data-confirm" in b"".join(resp.streaming_content if resp.streaming else [resp.content])


def test_json_answers_carry_no_csp(api):
    assert "Content-Security-Policy" not in api.get("/v1/usage")


# --- 405 -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("method, path, allow", [
    ("put", "/u/some-token", "GET, HEAD, POST"),
    ("get", "/v1/llm/chat", "POST"),
    ("get", "/v1/llm/chat/completions", "POST"),
    ("post", "/v1/llm/models", "GET"),
    ("get", "/v1/enrich", "POST, OPTIONS"),
    ("post", "/v1/usage", "GET, OPTIONS"),
])
def test_every_405_says_what_is_allowed(api, method, path, allow):
    resp = getattr(api.client, method)(path, headers={"Authorization": f"Bearer {api.key}"})
    assert resp.status_code == 405
    assert resp.json()["error"]["code"] == "method_not_allowed"
    assert resp["Allow"] == allow
    assert resp["X-Request-Id"] == resp.json()["error"]["request_id"]


# --- https ---------------------------------------------------------------------------------------------
def _settings_with(env: dict) -> dict:
    code = ("import json, config.settings as s; print(json.dumps({'redirect': getattr(s, 'SECURE_SSL_REDIRECT', False),"
            " 'hsts': getattr(s, 'SECURE_HSTS_SECONDS', 0), 'proxy': getattr(s, 'SECURE_PROXY_SSL_HEADER', None)}))")
    clean = {k: v for k, v in os.environ.items() if k not in ("BASE_URL", "SECURE_HSTS_SECONDS", "SECURE_SSL_REDIRECT")}
    out = subprocess.run([sys.executable, "-c", code], env={**clean, **env}, capture_output=True, text=True, check=True,
                         cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_https_base_url_turns_on_the_redirect_and_hsts():
    assert _settings_with({"BASE_URL": "https://app.example.com"}) == {
        "redirect": True, "hsts": 31_536_000, "proxy": ["HTTP_X_FORWARDED_PROTO", "https"]}
    assert _settings_with({"BASE_URL": "http://127.0.0.1:8000"}) == {"redirect": False, "hsts": 0, "proxy": None}
    assert _settings_with({"BASE_URL": "https://app.example.com", "SECURE_HSTS_SECONDS": "0"})["hsts"] == 0


@pytest.fixture
def https_settings(settings):
    settings.BASE_URL = "https://testserver"
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$"]
    settings.SECURE_HSTS_SECONDS = 31_536_000
    return settings


def test_plain_http_is_redirected_and_https_gets_hsts(db, https_settings):
    plain = Client().get("/console/auth/login/")
    assert plain.status_code == 301 and plain["Location"] == "https://testserver/console/auth/login/"
    secure = Client().get("/console/auth/login/", HTTP_X_FORWARDED_PROTO="https")
    assert secure.status_code == 200 and secure["Strict-Transport-Security"] == "max-age=31536000"
    assert Client().get("/healthz").status_code == 200  # probes stay on plain http


# --- the LLM entry (its own ASGI path, no Django middleware) -------------------------------------------
def test_llm_entry_sends_request_id_and_the_security_headers(transactional_db, api_key, settings):
    from api import door as llm_asgi
    from config.asgi import application
    from llmproxy.views import close_db_threads
    from tests.llmproxy.fake_upstream import serve_in_thread, stop_server

    settings.SECURE_HSTS_SECONDS = 31_536_000
    llm_asgi._extra_headers = None  # built once per process from the settings
    server, thread, port = serve_in_thread(application, lifespan="on")
    try:
        base = f"http://127.0.0.1:{port}"
        auth = {"Authorization": f"Bearer {api_key}"}
        for resp in (httpx.get(base + "/v1/llm/models", headers=auth, timeout=10),
                     httpx.get(base + "/v1/llm/chat", headers=auth, timeout=10),
                     httpx.post(base + "/v1/llm/chat", headers=auth, timeout=10, json={"model": "nope"})):
            assert resp.headers["x-request-id"].startswith("req_")
            assert resp.headers["x-content-type-options"] == "nosniff"
            assert resp.headers["x-frame-options"] == "DENY"
            assert resp.headers["strict-transport-security"] == "max-age=31536000"
        assert resp.status_code == 400
        refused = httpx.get(base + "/v1/llm/chat", headers=auth, timeout=10)
        assert refused.status_code == 405 and refused.headers["allow"] == "POST"
    finally:
        stop_server(server, thread)
        close_db_threads()
        llm_asgi._extra_headers = None

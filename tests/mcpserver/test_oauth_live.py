"""OAuth 2.1 for the MCP server, end to end: the `mcp` SDK client's own OAuth flow against a live server
(discovery, dynamic registration, authorization code + PKCE, token exchange), with the consent step done by
Debian's chromium (Playwright) on the console's consent page; then refresh, revocation and scopes.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import secrets
import shutil
import socket
import threading
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)

from accounts.models import ApiKey, OAuthGrant
from accounts.models import OAuthToken as TokenRow
from billing.models import RequestRecord
from tests.factories import make_workspace
from tests.mcpserver.conftest import LiveServer
from tests.screens import shot

playwright_api = pytest.importorskip("playwright.sync_api")
CHROMIUM = "/usr/bin/chromium"
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not shutil.which(CHROMIUM), reason="Debian chromium is not installed"),
]
REDIRECT = "http://127.0.0.1:33418/callback"


@pytest.fixture
def oauth_live(settings, transactional_db):
    """A live server whose BASE_URL is its own address (the metadata, the issuer and the resource agree)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    settings.BASE_URL = f"http://127.0.0.1:{sock.getsockname()[1]}"
    settings.MCP_INCLUDE_TEST_VERBS = True
    with LiveServer(sock=sock) as server:
        yield server
    sock.close()


class MemoryStorage:
    def __init__(self):
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, client_info):
        self.client = client_info


def consent_in_chromium(authorize_url: str, user, *, scopes: list[str], workspace_name: str, shots=None) -> str:
    """Open the authorization URL in chromium as the signed-in `user`, check what the consent page shows,
    tick `scopes`, allow; returns the URL the browser was sent back to (the client's redirect URI)."""
    from django.test import Client as DjangoClient

    django_client = DjangoClient()
    django_client.force_login(user)
    session = django_client.cookies["sessionid"].value
    base = "{0.scheme}://{0.netloc}".format(urlsplit(authorize_url))
    landed: list[str] = []
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        try:
            context = browser.new_context()
            context.add_cookies([{"name": "sessionid", "value": session, "url": base}])

            def callback(route):
                landed.append(route.request.url)
                route.fulfill(status=200, content_type="text/plain", body="You can close this window.")

            context.route(REDIRECT + "*", callback)
            page = context.new_page()
            page.goto(authorize_url)
            expect = playwright_api.expect
            expect(page.get_by_role("heading", name="Connect “Test agent”")).to_be_visible()
            expect(page.get_by_test_id("redirect-uri")).to_have_text(REDIRECT)
            for box in page.get_by_role("checkbox").all():
                assert not box.is_checked()  # opt-in: nothing ticked by default
            page.get_by_label("Workspace").select_option(label=workspace_name)
            for scope in scopes:
                page.get_by_label(scope).check()
            if shots:
                shot(page, str(shots), full_page=True)
            page.get_by_role("button", name="Allow").click()
            page.wait_for_url(REDIRECT + "*")
        finally:
            browser.close()
    assert len(landed) == 1
    return landed[0]


class Agent:
    """The SDK client with its OAuth provider; the consent is given in chromium when the SDK asks."""

    def __init__(self, live, user, *, scopes: list[str], workspace_name: str):
        self.live = live
        self.storage = MemoryStorage()
        self.consents = 0
        self.redirected: str | None = None

        async def on_redirect(url: str):
            self.consents += 1
            shots = os.environ.get("CONSOLE_SCREENSHOTS_DIR")  # docs/screenshots refreshes the docs' picture
            self.redirected = await anyio.to_thread.run_sync(
                lambda: consent_in_chromium(url, user, scopes=scopes, workspace_name=workspace_name,
                                            shots=os.path.join(shots, "oauth-consent.png") if shots else None))

        async def on_callback():
            query = parse_qs(urlsplit(self.redirected).query)
            return AuthorizationCodeResult(code=query["code"][0], state=query.get("state", [None])[0],
                                           iss=query.get("iss", [None])[0])

        self.provider = OAuthClientProvider(
            server_url=live.url,
            client_metadata=OAuthClientMetadata(client_name="Test agent", redirect_uris=[REDIRECT],
                                                grant_types=["authorization_code", "refresh_token"],
                                                response_types=["code"]),
            storage=self.storage, redirect_handler=on_redirect, callback_handler=on_callback)

    def run(self, fn):
        async def main():
            async with create_mcp_http_client(auth=self.provider) as http:
                async with Client(streamable_http_client(self.live.url, http_client=http)) as client:
                    return await fn(client)

        return anyio.run(main)

    def call(self, name, args=None):
        return self.run(lambda c: c.call_tool(name, args or {}))


def bearer_post(url, token, body):
    return httpx2.post(url, json=body, timeout=30, headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream"})


TOOL_CALL = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "test_echo", "arguments": {}}}
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


def test_sdk_client_connects_by_url_alone_through_oauth(oauth_live, settings):
    workspace, owner, _ = make_workspace(email="ada@example.com", name="Acme outbound")
    agent = Agent(oauth_live, owner, scopes=["campaign:write"], workspace_name="Acme outbound")

    result = agent.call("test_echo", {"payload": {"hello": "oauth"}, "charge": "2"})
    assert not result.is_error, result
    assert result.structured_content["result"]["echo"] == {"hello": "oauth"}
    assert result.structured_content["service"]["credits_charged"] == "2"
    assert agent.consents == 1

    # The SDK registered itself (RFC 7591) and got tokens; only hashes are stored.
    tokens = agent.storage.tokens
    assert tokens.access_token.startswith("service_at_") and tokens.refresh_token.startswith("service_rt_")
    assert tokens.scope == "campaign:write"
    assert not TokenRow.objects.filter(token_hash__in=[tokens.access_token, tokens.refresh_token]).exists()
    assert all(len(h) == 64 for h in TokenRow.objects.values_list("token_hash", flat=True))
    assert "iss=" in agent.redirected  # RFC 9207 issuer in the authorization response

    # The grant is a connection of the workspace whose key is the principal: same request records.
    grant = OAuthGrant.objects.get()
    assert (grant.workspace_id, grant.user_id, grant.client_name) == (workspace.pk, owner.pk, "Test agent")
    assert grant.redirect_uri == REDIRECT and grant.api_key.scopes == ["campaign:write"]
    record = RequestRecord.objects.get(verb="test_echo")
    assert record.api_key_id == grant.api_key_id and record.channel == "mcp"
    assert grant.api_key.last_used_at is not None

    # The same stored tokens work in a new session without a new consent.
    assert not agent.call("test_echo", {"payload": 1}).is_error
    assert agent.consents == 1

    # No campaign:launch granted: the launch tool is refused with insufficient_scope, like a key without it.
    launch = agent.call("launch_campaign", {"campaign_id": "cmp_nope"})
    assert launch.is_error and launch.structured_content["error"]["code"] == "insufficient_scope"
    assert launch.structured_content["error"]["details"]["required_scope"] == "campaign:launch"
    assert launch.structured_content["error"]["message"].startswith(
        "The OAuth connection \u201cTest agent\u201d lacks the scope campaign:launch")
    denied = agent.call("test_confirm", {"amount": 1})
    assert denied.structured_content["error"]["code"] == "insufficient_scope"

    # Revocation (RFC 7009) by the client: the next tool call with the access token is 401.
    access = agent.storage.tokens.access_token
    assert bearer_post(oauth_live.url, access, INIT).status_code == 200
    before = bearer_post(oauth_live.url, access, TOOL_CALL)
    assert before.status_code == 200 and "error" not in before.json()
    revoke = httpx2.post(settings.BASE_URL + "/oauth/revoke", timeout=10, data={
        "token": agent.storage.tokens.refresh_token, "client_id": agent.storage.client.client_id,
        "client_secret": agent.storage.client.client_secret or ""})
    assert revoke.status_code == 200
    resp = bearer_post(oauth_live.url, access, INIT)
    assert resp.status_code == 401 and resp.headers["www-authenticate"].startswith("Bearer ")
    assert bearer_post(oauth_live.url, access, TOOL_CALL).status_code == 401  # the next tool call
    grant.refresh_from_db()
    assert grant.revoked_at is not None and ApiKey.objects.get(pk=grant.api_key_id).revoked_at is not None


def test_refresh_rotates_and_the_sdk_refreshes_expired_tokens(oauth_live, settings):
    import time_machine
    from django.utils import timezone

    _, owner, _ = make_workspace(email="bo@example.com", name="Bo's")
    agent = Agent(oauth_live, owner, scopes=[], workspace_name="Bo's")
    assert not agent.call("test_echo").is_error
    first = agent.storage.tokens

    # An hour and a bit later the access token has expired: the SDK refreshes it (no new consent).
    with time_machine.travel(timezone.now() + timedelta(seconds=settings.OAUTH_ACCESS_TOKEN_SECONDS + 60)):
        assert bearer_post(oauth_live.url, first.access_token, INIT).status_code == 401  # expired
        assert not agent.call("test_echo").is_error
    second = agent.storage.tokens
    assert agent.consents == 1
    assert second.access_token != first.access_token and second.refresh_token != first.refresh_token
    assert bearer_post(oauth_live.url, second.access_token, INIT).status_code == 200

    # Rotation: the old refresh token was used up. Presenting it again is taken as theft: the grant ends.
    client = agent.storage.client
    reuse = httpx2.post(settings.BASE_URL + "/oauth/token", timeout=10, data={
        "grant_type": "refresh_token", "refresh_token": first.refresh_token, "client_id": client.client_id,
        "client_secret": client.client_secret or ""})
    assert reuse.status_code == 400 and reuse.json()["error"] == "invalid_grant"
    assert bearer_post(oauth_live.url, second.access_token, INIT).status_code == 401
    assert OAuthGrant.objects.get().revoked_at is not None


def _pkce():
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    return verifier, challenge


def test_metadata_documents_agree_with_each_other_and_base_url(oauth_live, settings):
    base = settings.BASE_URL
    prm = httpx2.get(base + "/.well-known/oauth-protected-resource/mcp", timeout=10).json()
    assert prm == httpx2.get(base + "/.well-known/oauth-protected-resource", timeout=10).json()
    assert prm["resource"] == base + "/mcp" and prm["authorization_servers"] == [base]
    assert prm["scopes_supported"] == ["assets:purchase", "campaign:write", "campaign:launch", "replies:send"]
    asm = httpx2.get(base + "/.well-known/oauth-authorization-server", timeout=10).json()
    assert asm["issuer"] == base
    for name, path in [("authorization_endpoint", "/oauth/authorize"), ("token_endpoint", "/oauth/token"),
                       ("registration_endpoint", "/oauth/register"), ("revocation_endpoint", "/oauth/revoke")]:
        assert asm[name] == base + path
    assert asm["code_challenge_methods_supported"] == ["S256"]
    assert asm["grant_types_supported"] == ["authorization_code", "refresh_token"]
    assert asm["response_types_supported"] == ["code"]
    assert asm["scopes_supported"] == prm["scopes_supported"]
    assert "none" in asm["token_endpoint_auth_methods_supported"]
    assert asm["client_id_metadata_document_supported"] is True
    assert asm["authorization_response_iss_parameter_supported"] is True
    www = httpx2.post(base + "/mcp", json=INIT, timeout=10).headers["www-authenticate"]
    assert f'resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"' in www


def test_authorize_refuses_plain_pkce_and_foreign_resources(oauth_live, settings):
    base = settings.BASE_URL
    reg = httpx2.post(base + "/oauth/register", timeout=10, json={
        "client_name": "raw", "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"})
    assert reg.status_code == 201, reg.text
    client_id = reg.json()["client_id"]
    assert "client_secret" not in reg.json()
    _, challenge = _pkce()
    common = {"client_id": client_id, "redirect_uri": REDIRECT, "response_type": "code", "state": "s1"}
    plain = httpx2.get(base + "/oauth/authorize", timeout=10,
                       params={**common, "code_challenge": challenge, "code_challenge_method": "plain"})
    assert plain.status_code == 302 and "error=invalid_request" in plain.headers["location"]
    missing = httpx2.get(base + "/oauth/authorize", timeout=10, params=common)
    assert missing.status_code == 302 and "error=invalid_request" in missing.headers["location"]
    foreign = httpx2.get(base + "/oauth/authorize", timeout=10,
                         params={**common, "code_challenge": challenge, "resource": "https://evil.example/mcp"})
    assert foreign.status_code == 302 and "error=invalid_target" in foreign.headers["location"]
    ok = httpx2.get(base + "/oauth/authorize", timeout=10,
                    params={**common, "code_challenge": challenge, "resource": base + "/mcp"})
    assert ok.status_code == 302 and ok.headers["location"].startswith(base + "/console/oauth/authorize/")
    unknown_redirect = httpx2.get(base + "/oauth/authorize", timeout=10, params={
        **common, "redirect_uri": "https://evil.example/cb", "code_challenge": challenge})
    assert unknown_redirect.status_code == 400  # never redirected to an unregistered URI
    bad_reg = httpx2.post(base + "/oauth/register", timeout=10, json={
        "client_name": "x", "redirect_uris": ["http://evil.example/cb"], "token_endpoint_auth_method": "none"})
    assert bad_reg.status_code == 400 and bad_reg.json()["error"] == "invalid_redirect_uri"


def test_code_is_single_use_and_needs_the_verifier(oauth_live, settings):
    """The whole flow over plain HTTP with a confidential client (client_secret_post), the consent given
    through the console view; a replayed code revokes what it issued."""
    from django.test import Client as DjangoClient

    base = settings.BASE_URL
    workspace, owner, _ = make_workspace(email="cy@example.com", name="Cy")
    reg = httpx2.post(base + "/oauth/register", timeout=10, json={
        "client_name": "confidential", "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "client_secret_post"})
    info = reg.json()
    assert info["client_secret"]
    verifier, challenge = _pkce()
    start = httpx2.get(base + "/oauth/authorize", timeout=10, params={
        "client_id": info["client_id"], "redirect_uri": REDIRECT, "response_type": "code", "state": "xyz",
        "code_challenge": challenge, "code_challenge_method": "S256", "scope": "campaign:launch"})
    consent_path = urlsplit(start.headers["location"]).path
    browser = DjangoClient()
    assert browser.get(consent_path).status_code == 302  # not signed in: to the sign-in page
    browser.force_login(owner)
    page = browser.get(consent_path)
    assert b"confidential" in page.content and REDIRECT.encode() in page.content
    answer = browser.post(consent_path, {"workspace": str(workspace.pk), "scopes": ["campaign:launch"],
                                         "decision": "allow"})
    back = parse_qs(urlsplit(answer["Location"]).query)
    assert back["state"] == ["xyz"] and back["iss"] == [base]
    assert browser.post(consent_path, {"decision": "allow", "workspace": str(workspace.pk)}).status_code == 400

    token_url = base + "/oauth/token"
    form = {"grant_type": "authorization_code", "code": back["code"][0], "redirect_uri": REDIRECT,
            "client_id": info["client_id"], "client_secret": info["client_secret"]}
    wrong_secret = httpx2.post(token_url, timeout=10, data={**form, "code_verifier": verifier, "client_secret": "x"})
    assert wrong_secret.status_code == 401
    wrong = httpx2.post(token_url, timeout=10, data={**form, "code_verifier": secrets.token_urlsafe(48)})
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"
    good = httpx2.post(token_url, timeout=10, data={**form, "code_verifier": verifier})
    assert good.status_code == 200, good.text
    tokens = good.json()
    assert tokens["scope"] == "campaign:launch" and tokens["token_type"] == "Bearer"
    assert bearer_post(oauth_live.url, tokens["access_token"], INIT).status_code == 200
    replay = httpx2.post(token_url, timeout=10, data={**form, "code_verifier": verifier})
    assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"
    assert bearer_post(oauth_live.url, tokens["access_token"], INIT).status_code == 401
    # Access tokens are for /mcp only: the REST API does not take them.
    rest = httpx2.get(base + "/v1/usage", timeout=10, headers={"Authorization": f"Bearer {tokens['access_token']}"})
    assert rest.status_code == 401


def test_denied_consent_and_console_revocation(oauth_live, settings):
    from django.test import Client as DjangoClient

    base = settings.BASE_URL
    workspace, owner, _ = make_workspace(email="di@example.com", name="Di")
    client_id = httpx2.post(base + "/oauth/register", timeout=10, json={
        "client_name": "Denied", "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"}).json()["client_id"]
    browser = DjangoClient()
    browser.force_login(owner)

    def start(state):
        verifier, challenge = _pkce()
        loc = httpx2.get(base + "/oauth/authorize", timeout=10, params={
            "client_id": client_id, "redirect_uri": REDIRECT, "response_type": "code", "state": state,
            "code_challenge": challenge}).headers["location"]
        return urlsplit(loc).path, verifier

    path, _ = start("d1")
    denied = parse_qs(urlsplit(browser.post(path, {"decision": "deny"})["Location"]).query)
    assert denied["error"] == ["access_denied"] and denied["state"] == ["d1"]

    path, verifier = start("d2")
    code = parse_qs(urlsplit(browser.post(path, {"decision": "allow", "workspace": str(workspace.pk)})[
        "Location"]).query)["code"][0]
    tokens = httpx2.post(base + "/oauth/token", timeout=10, data={
        "grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, "client_id": client_id,
        "code_verifier": verifier}).json()
    assert bearer_post(oauth_live.url, tokens["access_token"], INIT).status_code == 200
    keys_page = browser.get("/console/keys/").content.decode()
    assert "Denied" in keys_page and 'data-testid="connection"' in keys_page
    grant = OAuthGrant.objects.get()
    assert browser.post(f"/console/connections/{grant.pk}/revoke/").status_code == 302
    assert bearer_post(oauth_live.url, tokens["access_token"], INIT).status_code == 401
    refreshed = httpx2.post(base + "/oauth/token", timeout=10, data={
        "grant_type": "refresh_token", "refresh_token": tokens["refresh_token"], "client_id": client_id})
    assert refreshed.status_code == 400 and refreshed.json()["error"] == "invalid_grant"


def test_client_id_metadata_document(oauth_live, settings):
    """A client identified by its metadata document URL (no registration): fetched through the guarded
    outbound client, which refuses loopback unless OAUTH_ALLOW_PRIVATE_NETWORKS is on."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    base = settings.BASE_URL
    served = {}

    class Doc(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            body = json.dumps(served["doc"]).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Doc)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/client.json"
        served["doc"] = {"client_id": url, "client_name": "Doc client", "redirect_uris": [REDIRECT],
                         "token_endpoint_auth_method": "none"}
        _, challenge = _pkce()
        params = {"client_id": url, "redirect_uri": REDIRECT, "response_type": "code", "code_challenge": challenge}
        refused = httpx2.get(base + "/oauth/authorize", timeout=10, params=params)
        assert refused.status_code == 400  # loopback document: refused by the address guard

        settings.OAUTH_ALLOW_PRIVATE_NETWORKS = True
        ok = httpx2.get(base + "/oauth/authorize", timeout=10, params=params)
        assert ok.status_code == 302 and "/console/oauth/authorize/" in ok.headers["location"]
        from accounts.models import OAuthClient

        assert OAuthClient.objects.get(client_id=url).client_name == "Doc client"

        other = url.replace("client.json", "other.json")
        served["doc"] = {**served["doc"]}  # the document names another client_id than its URL
        bad = httpx2.get(base + "/oauth/authorize", timeout=10, params={**params, "client_id": other})
        assert bad.status_code == 400
    finally:
        server.shutdown()


def test_registration_is_throttled_per_address(oauth_live, settings):
    settings.OAUTH_REGISTRATIONS_PER_MINUTE = 2
    body = {"client_name": "spam", "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"}
    codes = [httpx2.post(settings.BASE_URL + "/oauth/register", json=body, timeout=10).status_code for _ in range(3)]
    assert codes == [201, 201, 429]


def test_purge_forgets_what_can_no_longer_be_used(oauth_live, settings):
    import time_machine
    from django.utils import timezone

    from accounts.models import OAuthAuthorization, OAuthClient
    from accounts.oauth import oauth_purge

    reg = httpx2.post(settings.BASE_URL + "/oauth/register", timeout=10, json={
        "client_name": "old", "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"}).json()
    _, challenge = _pkce()
    httpx2.get(settings.BASE_URL + "/oauth/authorize", timeout=10, params={
        "client_id": reg["client_id"], "redirect_uri": REDIRECT, "response_type": "code", "code_challenge": challenge})
    assert OAuthAuthorization.objects.count() == 1
    assert oauth_purge() == {"authorizations": 0, "tokens": 0, "clients": 0}
    with time_machine.travel(timezone.now() + timedelta(days=31)):
        purged = oauth_purge()
    assert purged["authorizations"] == 1 and purged["clients"] >= 1
    assert not OAuthClient.objects.filter(client_id=reg["client_id"]).exists()


# --- nothing one unauthenticated caller does holds the others --------------------------------------------------
def test_a_trickling_metadata_document_holds_no_other_oauth_request(oauth_live, settings):
    """A client ID metadata document served one byte at a time: while its fetch is in flight (the deadline set
    far beyond the trickle, so only the threading is under test), registration, token and revocation
    requests and another authorization are answered."""
    from tests.slowloris import Trickler

    settings.OAUTH_ALLOW_PRIVATE_NETWORKS = True
    settings.OAUTH_CLIENT_METADATA_TIMEOUT_SECONDS = 120
    base = settings.BASE_URL
    with Trickler(pause=0.2) as peer:  # 212 bytes: 40 s or more
        url = peer.url + "/slow.json"
        _, challenge = _pkce()
        slow: dict = {}

        def authorize_slow():
            slow["status"] = httpx2.get(base + "/oauth/authorize", timeout=180, params={
                "client_id": url, "redirect_uri": REDIRECT, "response_type": "code",
                "code_challenge": challenge}).status_code

        thread = threading.Thread(target=authorize_slow, daemon=True)
        thread.start()
        assert peer.wait_requests(1)  # the fetch is in flight
        reg = httpx2.post(base + "/oauth/register", timeout=60, json={
            "client_name": "other", "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"})
        assert reg.status_code == 201
        other = httpx2.get(base + "/oauth/authorize", timeout=60, params={
            "client_id": reg.json()["client_id"], "redirect_uri": REDIRECT, "response_type": "code",
            "code_challenge": challenge})
        assert other.status_code == 302
        token = httpx2.post(base + "/oauth/token", timeout=60, data={
            "grant_type": "authorization_code", "code": "nope", "client_id": reg.json()["client_id"],
            "redirect_uri": REDIRECT, "code_verifier": "x" * 50})
        assert token.status_code == 400
        assert thread.is_alive() and not peer.finished.is_set()  # all of that while the document still trickled
    thread.join(60)


def test_registration_and_state_are_bounded(oauth_live, settings):
    from accounts.models import OAuthAuthorization, OAuthClient
    from accounts.oauth import MAX_REDIRECT_URIS, MAX_STATE_LENGTH

    base = settings.BASE_URL
    many = [f"https://app.example.com/cb/{i}" for i in range(MAX_REDIRECT_URIS + 1)]
    refused = httpx2.post(base + "/oauth/register", timeout=30, json={
        "client_name": "many", "redirect_uris": many, "token_endpoint_auth_method": "none"})
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_redirect_uri"
    huge = httpx2.post(base + "/oauth/register", timeout=30, json={
        "client_name": "big", "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none", "x": "y" * 100_000})
    assert huge.status_code == 413
    assert not OAuthClient.objects.exists()

    reg = httpx2.post(base + "/oauth/register", timeout=30, json={
        "client_name": "ok", "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"}).json()
    _, challenge = _pkce()
    params = {"client_id": reg["client_id"], "redirect_uri": REDIRECT, "response_type": "code",
              "code_challenge": challenge}
    long_state = httpx2.post(base + "/oauth/authorize", timeout=30, data={**params, "state": "s" * (MAX_STATE_LENGTH + 1)})
    assert long_state.status_code == 400 and long_state.json()["error"] == "invalid_request"
    assert not OAuthAuthorization.objects.exists()
    ok = httpx2.get(base + "/oauth/authorize", timeout=30, params={**params, "state": "s" * MAX_STATE_LENGTH})
    assert ok.status_code == 302


def test_authorize_is_rate_limited_per_address(oauth_live, settings):
    settings.OAUTH_REQUESTS_PER_MINUTE = 3
    reg = httpx2.post(settings.BASE_URL + "/oauth/register", timeout=30, json={
        "client_name": "ok", "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"}).json()
    _, challenge = _pkce()
    params = {"client_id": reg["client_id"], "redirect_uri": REDIRECT, "response_type": "code",
              "code_challenge": challenge}
    codes = [httpx2.get(settings.BASE_URL + "/oauth/authorize", timeout=30, params=params).status_code
             for _ in range(4)]
    assert codes == [302, 302, 302, 429]


@pytest.mark.parametrize("client_id", ["http://0177.0.0.1:9443/client.json", "http://a..b/client.json",
                                       "https://a..b/client.json"])
def test_an_invalid_host_as_client_id_is_a_400_json_error(oauth_live, settings, client_id):
    settings.OAUTH_ALLOW_PRIVATE_NETWORKS = True  # http allowed: only the host is wrong
    _, challenge = _pkce()
    r = httpx2.get(settings.BASE_URL + "/oauth/authorize", timeout=30, params={
        "client_id": client_id, "redirect_uri": REDIRECT, "response_type": "code", "code_challenge": challenge})
    assert r.status_code == 400 and r.json()["error"] in ("invalid_request", "invalid_client"), r.text


def _public_client_tokens(base, owner, workspace, client_id):
    from django.test import Client as DjangoClient

    verifier, challenge = _pkce()
    start = httpx2.get(base + "/oauth/authorize", timeout=10, params={
        "client_id": client_id, "redirect_uri": REDIRECT, "response_type": "code", "code_challenge": challenge,
        "code_challenge_method": "S256"})
    browser = DjangoClient()
    browser.force_login(owner)
    answer = browser.post(urlsplit(start.headers["location"]).path, {
        "workspace": str(workspace.pk), "scopes": ["campaign:launch"], "decision": "allow"})
    code = parse_qs(urlsplit(answer["Location"]).query)["code"][0]
    good = httpx2.post(base + "/oauth/token", timeout=10, data={
        "grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, "client_id": client_id,
        "code_verifier": verifier})
    assert good.status_code == 200, good.text
    return good.json()


def test_a_public_client_revokes_without_a_secret_and_by_basic_alone(oauth_live, settings):
    base = settings.BASE_URL
    workspace, owner, _ = make_workspace(email="pub@example.com", name="Pub")
    client_id = httpx2.post(base + "/oauth/register", timeout=10, json={
        "client_name": "public", "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"}).json()["client_id"]

    tokens = _public_client_tokens(base, owner, workspace, client_id)
    r = httpx2.post(base + "/oauth/revoke", timeout=10, data={"token": tokens["refresh_token"], "client_id": client_id})
    assert r.status_code == 200, r.text
    assert bearer_post(oauth_live.url, tokens["access_token"], INIT).status_code == 401

    tokens = _public_client_tokens(base, owner, workspace, client_id)
    basic = base64.b64encode(f"{client_id}:".encode()).decode()
    r = httpx2.post(base + "/oauth/revoke", timeout=10, data={"token": tokens["access_token"]},
                    headers={"Authorization": f"Basic {basic}"})
    assert r.status_code == 200, r.text
    assert bearer_post(oauth_live.url, tokens["access_token"], INIT).status_code == 401
    assert OAuthGrant.objects.filter(revoked_at__isnull=True).count() == 0

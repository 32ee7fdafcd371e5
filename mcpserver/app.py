"""The MCP server at /mcp: streamable HTTP, stateless, bearer API keys, tools from the verb registry.

`config.asgi` routes `/mcp` and `/.well-known/oauth-protected-resource*` here and hands this app the ASGI
lifespan. Each lifespan startup builds a fresh SDK server and session manager (the SDK's manager runs
only once per instance), so one process can start and stop the app repeatedly (tests do).
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from typing import Any
from urllib.parse import urlparse

import anyio
import mcp_types as types
from django.conf import settings
from mcp.server.auth.handlers.metadata import ProtectedResourceMetadataHandler
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.routes import cors_middleware
from mcp.server.auth.settings import AuthSettings
from mcp.server.lowlevel.server import Server
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.auth import ProtectedResourceMetadata
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

from accounts.models import ALL_SCOPES
from accounts.services import key_authenticate
from core import errors
from mcpserver import guard, oauth, tools

logger = logging.getLogger("mcpserver")
# Stateless mode ends a "session" after every request and the SDK logs each one at INFO; keep the logs useful.
logging.getLogger("mcp.server.streamable_http").setLevel(logging.WARNING)

MCP_PATH = "/mcp"
INSTRUCTIONS = (
    "Outbound sales tools on one prepaid credit balance: find_leads, find_intent, enrich, verify_email, "
    "setup_sending, create_campaign, launch_campaign, get_replies, llm_chat, and the free state reads "
    "get_usage, get_request, get_operation, list_mailboxes (a mailbox in needs_reconnect sends nothing until "
    "a human reconnects it in the console). Every paid result discloses its exact charge in "
    "service.credits_charged. Purchases and launches need a human: when a tool returns an approval_url, show it "
    "to your human and call again with the confirmation_token once they approve. Pass an idempotency_key and "
    "reuse it when retrying anything that spends credits or sends email."
)


def _sync(fn):
    """Sync Django code (ORM) for this HTTP request, on the API's worker threads (api.door): as for the REST
    verbs, no thread is started and no database connection opened per request (SQLite keeps one per thread;
    PostgreSQL's goes back to the pool after each call)."""
    from api.door import run_in_api_thread

    async def call(*args, **kwargs):
        return await run_in_api_thread(fn, *args, **kwargs)
    return call


_LIMITERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _call_limiter() -> anyio.CapacityLimiter:
    """At most MCP_WORKER_THREADS tool calls execute at once per process (per event loop); others queue."""
    loop = asyncio.get_running_loop()
    limiter = _LIMITERS.get(loop)
    if limiter is None:
        limiter = _LIMITERS[loop] = anyio.CapacityLimiter(settings.MCP_WORKER_THREADS)
    return limiter


class ApiKeyVerifier:
    """`Authorization: Bearer service_sk_live_…` (an API key) or `service_at_…` (an OAuth access token, see
    mcpserver.oauth) -> the key's scopes; unknown, malformed, expired or revoked -> None (401)."""

    async def verify_token(self, token: str) -> AccessToken | None:
        state = guard.current.get()
        try:  # the guard resolved this request's key already (for its rate limit): no second lookup
            key = state.key if state is not None and state.key is not None and state.token == token else (
                await _sync(_authenticate)(token))
        except errors.Unauthenticated:
            return None
        return AccessToken(
            token=token,
            client_id=key.prefix,
            scopes=list(key.scopes or []),
            subject=str(key.workspace_id),
            resource=resource_url(),
            claims={"api_key": key},  # this request's resolved key (workspace preloaded): no second lookup
        )


def _authenticate(token: str):
    return key_authenticate(authorization=f"Bearer {token}", oauth=True, cache_seconds=settings.API_KEY_CACHE_SECONDS)


def resource_url() -> str:
    return settings.BASE_URL + MCP_PATH


def transport_security() -> TransportSecuritySettings:
    """DNS-rebinding protection that admits the BASE_URL host (else every request through it is 421)."""
    base = urlparse(settings.BASE_URL)
    hosts = {base.netloc, f"{base.hostname}:*", "127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost"}
    origins = {f"{base.scheme}://{base.netloc}", f"{base.scheme}://{base.hostname}:*",
               "http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"}
    hosts.update(settings.MCP_ALLOWED_HOSTS or [])
    origins.update(settings.MCP_ALLOWED_ORIGINS or [])
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=sorted(hosts),
                                     allowed_origins=sorted(origins))


def _access_token(ctx) -> AccessToken | None:
    token = get_access_token()
    if token is None:
        user = getattr(getattr(ctx, "request", None), "user", None)
        token = getattr(user, "access_token", None)
    return token


async def _on_list_tools(ctx, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    return types.ListToolsResult(tools=await _sync(tools.list_tools)())


async def _on_call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
    token = _access_token(ctx)
    async with _call_limiter():
        resp = await _sync(tools.call_verb_sync)(
            params.name, params.arguments,
            api_key=(token.claims or {}).get("api_key") if token else None,
            bearer=token.token if token else None,
        )
    return tools.to_tool_result(resp)


def _input_schema(name: str) -> dict[str, Any] | None:
    verb = tools.verb_for_tool(name)
    return None if verb is None else tools.tool_for(verb).input_schema


def build_server() -> Server:
    return Server(
        "outbound-service",
        version="1.0",
        title="Outbound sales API",
        instructions=INSTRUCTIONS,
        website_url=settings.BASE_URL,
        get_tool_input_schema=_input_schema,
        on_list_tools=_on_list_tools,
        on_call_tool=_on_call_tool,
    )


def build_starlette_app() -> Starlette:
    """The SDK's streamable-HTTP app with bearer auth and RFC 9728 protected-resource metadata."""
    server = build_server()
    auth = AuthSettings(
        # The service is its own OAuth 2.1 authorization server (mcpserver.oauth, consent in the console);
        # API keys made in the console are accepted as bearer tokens too.
        issuer_url=settings.BASE_URL,
        resource_server_url=resource_url(),
        # API keys are not audience-bound; access tokens are issued for resource_url() only (accounts.oauth)
        validate_token_resource=False,
    )
    # RFC 9728 metadata at /.well-known/oauth-protected-resource/mcp (section 3.1) and, for clients that ask
    # there, at the bare well-known path: one document (with the scopes), ahead of the SDK's own route.
    metadata = ProtectedResourceMetadata(
        resource=resource_url(), authorization_servers=[settings.BASE_URL], scopes_supported=list(ALL_SCOPES),
        resource_name="Outbound sales API (MCP)", resource_documentation=settings.BASE_URL + "/docs",
    )
    metadata_routes = [
        Route(path, endpoint=cors_middleware(ProtectedResourceMetadataHandler(metadata).handle, ["GET", "OPTIONS"]),
              methods=["GET", "OPTIONS"])
        for path in ("/.well-known/oauth-protected-resource" + MCP_PATH, "/.well-known/oauth-protected-resource")
    ]
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        stateless_http=True,
        json_response=True,
        transport_security=transport_security(),
        max_request_body_size=settings.MAX_BODY_BYTES,
        auth=auth,
        token_verifier=ApiKeyVerifier(),
        custom_starlette_routes=oauth.routes(),
    )
    app.router.routes[0:0] = metadata_routes
    return app


class McpAsgiApp:
    """ASGI entry point: builds a fresh SDK app on every lifespan startup and routes requests to the live one."""

    def __init__(self):
        self._apps: list[Starlette] = []

    async def __call__(self, scope, receive, send):
        if scope["type"] == "lifespan":
            app = build_starlette_app()
            self._apps.append(app)
            try:
                await app(scope, receive, send)
            finally:
                self._apps.remove(app)
            return
        if not self._apps:
            response = JSONResponse(
                errors.error_body(errors.Internal("The MCP server is not started (no ASGI lifespan)."), None),
                status_code=503,
            )
            await response(scope, receive, send)
            return
        await guard.handle(scope, receive, send, self._apps[-1])


def build_asgi_app() -> McpAsgiApp:
    return McpAsgiApp()

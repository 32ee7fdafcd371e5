"""The OAuth 2.1 authorization server's HTTP side, built from the `mcp` SDK's handlers.

Routes (served by the MCP Starlette app; config.asgi sends these paths to it):
  GET  /.well-known/oauth-authorization-server   RFC 8414 metadata (issuer = BASE_URL)
  GET  /oauth/authorize                          code + PKCE S256; redirects to the console's consent page
  POST /oauth/token                              authorization_code and refresh_token (rotating) grants
  POST /oauth/register                           RFC 7591 dynamic client registration
  POST /oauth/revoke                             RFC 7009 revocation (ends the connection)
Clients may also identify themselves by a client ID metadata document (an HTTPS `client_id`), which the
current MCP authorization specification prefers to registration. The SDK's handlers do the parsing, PKCE
and error shapes; `Provider` stores everything through accounts.oauth (hashed codes and tokens).

Nothing one caller does holds the others: the database work runs on the process's one sync thread, but the
fetch of a metadata document (a URL any unauthenticated caller names) runs on threads of its own with a total
deadline, so a document server trickling bytes delays only the request that named it. Every endpoint is
rate-limited per client address (OAUTH_REQUESTS_PER_MINUTE; registration OAUTH_REGISTRATIONS_PER_MINUTE), a
registration body is at most REGISTRATION_MAX_BYTES, and a `state` longer than accounts.oauth.MAX_STATE_LENGTH
is refused before anything is stored.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import concurrent.futures
import threading
from functools import partial
from typing import Any
from urllib.parse import unquote

from asgiref.sync import sync_to_async
from mcp.server.auth.handlers.authorize import AuthorizationHandler
from mcp.server.auth.handlers.metadata import MetadataHandler
from mcp.server.auth.handlers.register import RegistrationHandler
from mcp.server.auth.handlers.revoke import RevocationHandler
from mcp.server.auth.handlers.token import TokenHandler
from mcp.server.auth.middleware.client_auth import AuthenticationError, ClientAuthenticator
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    RefreshToken,
    RegistrationError,
    TokenError,
)
from mcp.server.auth.routes import cors_middleware
from mcp.server.auth.settings import ClientRegistrationOptions
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE, RequestBodyLimitMiddleware
from mcp.shared.auth import OAuthClientInformationFull, OAuthMetadata, OAuthToken
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.routing import Route, request_response

from accounts import oauth
from accounts.models import ALL_SCOPES, OAuthClient
from accounts.models import OAuthToken as TokenRow

AUTHORIZE_PATH = "/oauth/authorize"
TOKEN_PATH = "/oauth/token"
REGISTER_PATH = "/oauth/register"
REVOKE_PATH = "/oauth/revoke"
METADATA_PATH = "/.well-known/oauth-authorization-server"
PATHS = frozenset({AUTHORIZE_PATH, TOKEN_PATH, REGISTER_PATH, REVOKE_PATH, METADATA_PATH})
AUTH_METHODS = ["none", "client_secret_post", "client_secret_basic"]
REGISTRATION_MAX_BYTES = 64 * 1024  # ten redirect URIs and the usual metadata fit many times over


def _sync(fn):
    return sync_to_async(fn, thread_sensitive=True)


_fetch_pool: concurrent.futures.ThreadPoolExecutor | None = None
_fetch_pool_lock = threading.Lock()


def _fetches() -> concurrent.futures.ThreadPoolExecutor:
    """The threads that fetch client ID metadata documents (OAUTH_METADATA_FETCH_THREADS), apart from the
    database thread every other OAuth call uses."""
    global _fetch_pool
    if _fetch_pool is None:
        from django.conf import settings

        with _fetch_pool_lock:
            if _fetch_pool is None:
                _fetch_pool = concurrent.futures.ThreadPoolExecutor(
                    max_workers=int(settings.OAUTH_METADATA_FETCH_THREADS),
                    thread_name_prefix="oauth-metadata")
    return _fetch_pool


async def client_row(client_id: str) -> OAuthClient | None:
    """The client (fetching its metadata document when needed, off the database thread), or None."""
    row, fetch = await _sync(oauth.client_cached)(client_id=client_id)
    if not fetch:
        return row
    try:
        doc = await asyncio.get_running_loop().run_in_executor(_fetches(), oauth.metadata_document_fetch, client_id)
    except oauth.OAuthInvalid:
        return None
    return await _sync(oauth.client_store_document)(client_id=client_id, doc=doc)


def client_info(row: OAuthClient) -> OAuthClientInformationFull:
    return OAuthClientInformationFull(
        client_id=row.client_id, client_name=row.client_name or None, redirect_uris=row.redirect_uris,
        token_endpoint_auth_method=row.token_endpoint_auth_method, response_types=["code"],
        grant_types=["authorization_code", "refresh_token"],
        scope=" ".join(ALL_SCOPES),  # a client may ask for any of them; the member picks on the consent page
    )


class Code(AuthorizationCode):
    authorization_id: str


class Refresh(RefreshToken):
    row_id: int
    grant_id: str


class Access(AccessToken):
    grant_id: str


class Provider:
    """`OAuthAuthorizationServerProvider` over accounts.oauth."""

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        row = await client_row(client_id)
        return client_info(row) if row else None

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        try:
            await _sync(oauth.client_register)(
                metadata=client_info.model_dump(mode="json", exclude_none=True),
                client_id=client_info.client_id, client_secret=client_info.client_secret)
        except oauth.OAuthInvalid as exc:
            raise RegistrationError(exc.error, exc.description) from exc  # type: ignore[arg-type]

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        def start():
            row = OAuthClient.objects.get(client_id=client.client_id)
            auth = oauth.authorization_start(
                client=row, redirect_uri=str(params.redirect_uri),
                redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
                code_challenge=params.code_challenge, state=params.state, scopes=params.scopes,
                resource_indicator=params.resource)
            return oauth.consent_url(auth)

        try:
            return await _sync(start)()
        except oauth.OAuthInvalid as exc:
            raise AuthorizeError(exc.error, exc.description) from exc  # type: ignore[arg-type]

    async def load_authorization_code(self, client: OAuthClientInformationFull, authorization_code: str) -> Code | None:
        def load():
            auth = oauth.code_load(code=authorization_code)
            if auth is None:
                oauth.code_replayed(code=authorization_code)
                return None
            if auth.client.client_id != client.client_id:
                return None
            return Code(code=authorization_code, scopes=list(auth.grant.api_key.scopes or []),
                        expires_at=auth.code_expires_at.timestamp(), client_id=auth.client.client_id,
                        code_challenge=auth.code_challenge, redirect_uri=auth.redirect_uri,
                        redirect_uri_provided_explicitly=auth.redirect_uri_provided_explicitly,
                        resource=auth.resource, subject=str(auth.grant_id), authorization_id=str(auth.pk))

        return await _sync(load)()

    async def exchange_authorization_code(self, client: OAuthClientInformationFull, authorization_code: Code) -> OAuthToken:
        def exchange():
            from accounts.models import OAuthAuthorization

            return oauth.code_exchange(auth=OAuthAuthorization.objects.get(pk=authorization_code.authorization_id))

        try:
            return OAuthToken(**await _sync(exchange)())
        except oauth.OAuthInvalid as exc:
            raise TokenError(exc.error, exc.description) from exc  # type: ignore[arg-type]

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> Refresh | None:
        row = await _sync(oauth.refresh_load)(token=refresh_token)
        if row is None or row.grant.client.client_id != client.client_id:
            return None
        return Refresh(token=refresh_token, client_id=row.grant.client.client_id, scopes=list(row.scopes),
                       expires_at=int(row.expires_at.timestamp()), resource=row.resource or None,
                       subject=str(row.grant_id), row_id=row.pk, grant_id=str(row.grant_id))

    async def exchange_refresh_token(self, client: OAuthClientInformationFull, refresh_token: Refresh,
                                     scopes: list[str]) -> OAuthToken:
        def exchange():
            row = TokenRow.objects.select_related("grant").get(pk=refresh_token.row_id)
            return oauth.refresh_exchange(row=row, scopes=scopes)

        try:
            return OAuthToken(**await _sync(exchange)())
        except oauth.OAuthInvalid as exc:
            raise TokenError(exc.error, exc.description) from exc  # type: ignore[arg-type]

    async def load_access_token(self, token: str) -> Access | None:
        row = await _sync(oauth.access_load)(token=token)
        if row is None:
            return None
        return Access(token=token, client_id=row.grant.client.client_id, scopes=list(row.scopes),
                      expires_at=int(row.expires_at.timestamp()), resource=row.resource or None,
                      grant_id=str(row.grant_id))

    async def revoke_token(self, token: Access | Refresh) -> None:
        def revoke():
            from accounts.models import OAuthGrant

            grant = OAuthGrant.objects.select_related("api_key").filter(pk=token.grant_id).first()
            if grant is not None:
                oauth.grant_revoke(grant=grant)

        await _sync(revoke)()

    async def exchange_identity_assertion(self, client, params) -> OAuthToken:
        raise TokenError("unsupported_grant_type", "The JWT bearer grant is not supported")


class HashedSecretAuthenticator(ClientAuthenticator):
    """The SDK's token-endpoint client authentication, against the stored hash of the client secret."""

    async def authenticate_request(self, request: Request) -> OAuthClientInformationFull:
        form = await request.form()
        client_id = form.get("client_id")
        header = request.headers.get("Authorization", "")
        basic_id = basic_secret = None
        if header.startswith("Basic "):
            try:
                basic_id, _, basic_secret = base64.b64decode(header[6:]).decode().partition(":")
            except (ValueError, UnicodeDecodeError, binascii.Error) as exc:
                raise AuthenticationError("Invalid Basic authentication header") from exc
            basic_id, basic_secret = unquote(basic_id), unquote(basic_secret)
            if client_id and basic_id != client_id:
                raise AuthenticationError("Client ID mismatch in Basic auth")
            client_id = client_id or basic_id  # RFC 6749 2.3.1: the client may authenticate by Basic alone
        if not isinstance(client_id, str) or not client_id:
            raise AuthenticationError("Missing client_id")
        row = await client_row(client_id)
        if row is None:
            raise AuthenticationError("Invalid client_id")
        method = row.token_endpoint_auth_method
        secret = None
        if method == "client_secret_basic":
            if basic_id is None:
                raise AuthenticationError("Missing or invalid Basic authentication in Authorization header")
            secret = basic_secret
        elif method == "client_secret_post":
            value = form.get("client_secret")
            secret = value if isinstance(value, str) else None
        if method != "none" and not row.secret_hash:
            raise AuthenticationError("Client is registered for secret-based authentication but has no stored secret")
        if not oauth.client_secret_ok(client=row, secret=secret):
            raise AuthenticationError("Invalid client_secret")
        return client_info(row)


class Revocation(RevocationHandler):
    """RFC 7009 revocation. The SDK's handler requires a `client_secret` field in the form, so a public client
    (no secret) or one authenticating by Basic alone was refused; here the form needs only `token` (and
    `token_type_hint`, optional; an unknown hint is ignored, as section 2.1 allows)."""

    async def handle(self, request: Request):
        from starlette.responses import JSONResponse, Response

        try:
            client = await self.client_authenticator.authenticate_request(request)
        except AuthenticationError as exc:
            return JSONResponse({"error": "unauthorized_client", "error_description": exc.message}, status_code=401)
        form = await request.form()
        token = form.get("token")
        if not isinstance(token, str) or not token:
            return JSONResponse({"error": "invalid_request", "error_description": "token is required"},
                                status_code=400)
        loaders = [self.provider.load_access_token, partial(self.provider.load_refresh_token, client)]
        if form.get("token_type_hint") == "refresh_token":
            loaders.reverse()
        found = None
        for loader in loaders:
            found = await loader(token)
            if found is not None:
                break
        if found is not None and found.client_id == client.client_id:
            await self.provider.revoke_token(found)
        return Response(status_code=200, headers={"Cache-Control": "no-store", "Pragma": "no-cache"})


class Throttle:
    """The endpoints are open to anyone: each client address (the peer, or the forwarded address when the peer
    is a trusted proxy) makes at most `setting` (per minute) requests to `bucket`; more are 429."""

    def __init__(self, handler, *, bucket: str, setting: str, what: str):
        self.handler, self.bucket, self.setting, self.what = handler, bucket, setting, what

    async def handle(self, request: Request):
        from django.conf import settings
        from starlette.responses import JSONResponse

        from core.ratelimit import hit

        ip = request.client.host if request.client else "unknown"
        rate = await _sync(hit)(f"oauth-{self.bucket}:{ip}", limit=int(getattr(settings, self.setting)))
        if not rate.allowed:
            return JSONResponse({"error": "temporarily_unavailable",
                                 "error_description": f"Too many {self.what} from this address; retry later."},
                                status_code=429, headers={"Retry-After": str(max(rate.reset, 1))})
        refused = await self.refuse(request)
        if refused is not None:
            return refused
        return await self.handler.handle(request)

    async def refuse(self, request: Request):
        return None


class AuthorizeThrottle(Throttle):
    """Also: a `state` the service would store (and echo) is bounded, refused before the client is looked up."""

    async def refuse(self, request: Request):
        from starlette.responses import JSONResponse

        params = request.query_params if request.method == "GET" else await request.form()
        state = params.get("state")
        if isinstance(state, str) and len(state) > oauth.MAX_STATE_LENGTH:
            return JSONResponse({"error": "invalid_request",
                                 "error_description": f"state is longer than {oauth.MAX_STATE_LENGTH} characters"},
                                status_code=400, headers={"Cache-Control": "no-store"})
        return None


def metadata() -> OAuthMetadata:
    base = oauth.issuer()
    return OAuthMetadata(
        issuer=base,
        authorization_endpoint=base + AUTHORIZE_PATH,
        token_endpoint=base + TOKEN_PATH,
        registration_endpoint=base + REGISTER_PATH,
        revocation_endpoint=base + REVOKE_PATH,
        scopes_supported=list(ALL_SCOPES),
        response_types_supported=["code"],
        grant_types_supported=["authorization_code", "refresh_token"],
        token_endpoint_auth_methods_supported=AUTH_METHODS,
        revocation_endpoint_auth_methods_supported=AUTH_METHODS,
        code_challenge_methods_supported=["S256"],
        client_id_metadata_document_supported=True,
        authorization_response_iss_parameter_supported=True,
        service_documentation=base + "/docs",
    )


def _cors(app, methods):
    return CORSMiddleware(app=app, allow_origins="*", allow_methods=methods,
                          allow_headers=["mcp-protocol-version", "authorization", "content-type"])


def _limited(app, max_bytes: int = DEFAULT_MAX_REQUEST_BODY_SIZE):
    return RequestBodyLimitMiddleware(app, max_bytes)


def _throttled(handler, bucket: str, what: str, cls=Throttle):
    return cls(handler, bucket=bucket, setting="OAUTH_REQUESTS_PER_MINUTE", what=what).handle


def routes() -> list[Route]:
    provider: Any = Provider()
    authenticator = HashedSecretAuthenticator(provider)
    registration = RegistrationHandler(provider, ClientRegistrationOptions(enabled=True, valid_scopes=list(ALL_SCOPES)))
    return [
        Route(METADATA_PATH, endpoint=cors_middleware(MetadataHandler(metadata()).handle, ["GET", "OPTIONS"]),
              methods=["GET", "OPTIONS"]),
        Route(AUTHORIZE_PATH, endpoint=_limited(request_response(_throttled(
            AuthorizationHandler(provider), "authorize", "authorization requests", AuthorizeThrottle))),
              methods=["GET", "POST"]),
        Route(TOKEN_PATH, endpoint=_cors(_limited(request_response(_throttled(
            TokenHandler(provider, authenticator), "token", "token requests"))), ["POST", "OPTIONS"]),
              methods=["POST", "OPTIONS"]),
        Route(REGISTER_PATH, endpoint=_cors(_limited(request_response(Throttle(
            registration, bucket="register", setting="OAUTH_REGISTRATIONS_PER_MINUTE",
            what="client registrations").handle), REGISTRATION_MAX_BYTES), ["POST", "OPTIONS"]),
              methods=["POST", "OPTIONS"]),
        Route(REVOKE_PATH, endpoint=_cors(_limited(request_response(_throttled(
            Revocation(provider, authenticator), "revoke", "revocation requests"))), ["POST", "OPTIONS"]),
              methods=["POST", "OPTIONS"]),
    ]

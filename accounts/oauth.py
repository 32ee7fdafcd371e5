"""OAuth 2.1 authorization server services for the MCP server: clients, consent, codes, tokens, grants.

The protocol endpoints (mcpserver.oauth) parse and render with the `mcp` SDK's handlers and call these;
the console's consent page calls `authorization_approve` / `authorization_deny`. Every grant owns an
`ApiKey` row without a secret: an access token resolves (`access_token_principal`, called by
`accounts.services.key_authenticate`) to that key, so the verb pipeline checks scopes, rate-limits,
records and charges a token exactly as it does a key. Codes and tokens are stored as keyed hashes.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from datetime import timedelta
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from accounts.models import (
    ALL_SCOPES,
    ApiKey,
    Membership,
    OAuthAuthorization,
    OAuthClient,
    OAuthGrant,
    OAuthToken,
    User,
    Workspace,
)
from core import errors
from core.outbound import host_valid

ACCESS_PREFIX = "service_at_"
REFRESH_PREFIX = "service_rt_"
CODE_TTL = timedelta(minutes=5)
CONSENT_TTL = timedelta(minutes=30)
METADATA_DOCUMENT_MAX_BYTES = 16 * 1024
# What an unauthenticated caller can make the service store: a client's redirect URIs (registered or in a
# metadata document) and the `state` an authorization request carries are bounded.
MAX_REDIRECT_URIS = 10
MAX_REDIRECT_URI_LENGTH = 2000
MAX_STATE_LENGTH = 1000


def metadata_document_timeout() -> float:
    """The whole fetch of a client ID metadata document (connect to last byte)."""
    return float(settings.OAUTH_CLIENT_METADATA_TIMEOUT_SECONDS)


class OAuthInvalid(Exception):
    """A protocol-level refusal; `error` is the OAuth error code."""

    def __init__(self, error: str, description: str):
        super().__init__(description)
        self.error = error
        self.description = description


def _hash(secret: str) -> str:
    pepper = hashlib.sha256(("oauth:" + settings.SECRET_KEY).encode()).digest()
    return hmac.new(pepper, secret.encode(), hashlib.sha256).hexdigest()


def issuer() -> str:
    return settings.BASE_URL


def resource() -> str:
    return settings.BASE_URL + "/mcp"


def access_token_seconds() -> int:
    return int(settings.OAUTH_ACCESS_TOKEN_SECONDS)


def refresh_token_ttl() -> timedelta:
    return timedelta(days=int(settings.OAUTH_REFRESH_TOKEN_DAYS))


# --- clients ----------------------------------------------------------------------------------------
def _redirect_uri_ok(uri: str) -> bool:
    """https anywhere; http only to a loopback host (native apps, RFC 8252); a private-use scheme (app)."""
    try:
        parts = urlsplit(uri)
    except ValueError:
        return False
    if parts.fragment or not parts.scheme:
        return False
    if parts.scheme == "https":
        return bool(parts.hostname)
    if parts.scheme == "http":
        return parts.hostname in ("127.0.0.1", "localhost", "::1")
    return "." in parts.scheme  # RFC 8252 7.1: reverse domain name private-use schemes only


def redirect_uris_ok(uris) -> bool:
    """At most MAX_REDIRECT_URIS strings of at most MAX_REDIRECT_URI_LENGTH characters, each acceptable."""
    return (isinstance(uris, list) and 0 < len(uris) <= MAX_REDIRECT_URIS
            and all(isinstance(u, str) and len(u) <= MAX_REDIRECT_URI_LENGTH and _redirect_uri_ok(u) for u in uris))


def client_register(*, metadata: dict, client_id: str, client_secret: str | None) -> OAuthClient:
    """RFC 7591 registration. Raises OAuthInvalid("invalid_redirect_uri" | "invalid_client_metadata")."""
    uris = [str(u) for u in metadata.get("redirect_uris") or []]
    if len(uris) > MAX_REDIRECT_URIS:
        raise OAuthInvalid("invalid_redirect_uri", f"at most {MAX_REDIRECT_URIS} redirect_uris per client")
    if not redirect_uris_ok(uris):
        raise OAuthInvalid("invalid_redirect_uri",
                           "redirect_uris must be https, http on a loopback host, or a private-use app scheme")
    method = metadata.get("token_endpoint_auth_method") or "none"
    if method not in ("none", "client_secret_post", "client_secret_basic"):
        raise OAuthInvalid("invalid_client_metadata", f"token_endpoint_auth_method {method!r} is not supported")
    clean = {k: v for k, v in metadata.items() if k not in ("client_secret", "client_id")}
    return OAuthClient.objects.create(
        client_id=client_id, kind=OAuthClient.Kind.REGISTERED,
        client_name=str(metadata.get("client_name") or "")[:200], redirect_uris=uris,
        token_endpoint_auth_method=method, secret_hash=_hash(client_secret) if client_secret else "",
        metadata=json.loads(json.dumps(clean, default=str)),
    )


def is_metadata_document_url(client_id: str) -> bool:
    return client_id.startswith(("https://", "http://"))


def _metadata_document_url_ok(url: str, allow_private: bool) -> bool:
    """draft-ietf-oauth-client-id-metadata-document section 3: https, a path, no fragment, no credentials,
    no dot segments. (http is accepted only where the address guard is off: local tests.)"""
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    if parts.scheme != "https" and not (allow_private and parts.scheme == "http"):
        return False
    segments = parts.path.split("/")
    return host_valid(parts.hostname) and parts.path not in ("", "/") and not parts.fragment \
        and parts.username is None and parts.password is None and "." not in segments and ".." not in segments


def metadata_document_fetch(url: str) -> dict:
    """The client ID metadata document at `url`, checked (OAuthInvalid otherwise). Network only, no database:
    the caller runs it where a slow document server holds nothing else (mcpserver.oauth's fetch threads)."""
    from core import outbound

    allow_private = bool(settings.OAUTH_ALLOW_PRIVATE_NETWORKS)
    if not _metadata_document_url_ok(url, allow_private):
        raise OAuthInvalid("invalid_client", "client_id is not a valid client ID metadata document URL")
    try:
        resp = outbound.request("GET", url, timeout=metadata_document_timeout(), max_bytes=METADATA_DOCUMENT_MAX_BYTES,
                                allow_private=allow_private, headers={"Accept": "application/json"})
    except outbound.OutboundError as exc:
        raise OAuthInvalid("invalid_client", f"client metadata document could not be fetched: {exc}") from exc
    if resp.status_code != 200:
        raise OAuthInvalid("invalid_client", f"client metadata document answered HTTP {resp.status_code}")
    try:
        doc = resp.json()
    except ValueError as exc:
        raise OAuthInvalid("invalid_client", "client metadata document is not JSON") from exc
    if not isinstance(doc, dict) or doc.get("client_id") != url:
        raise OAuthInvalid("invalid_client", "client metadata document's client_id differs from its URL")
    method = doc.get("token_endpoint_auth_method") or "none"
    if method != "none" or "client_secret" in doc:
        raise OAuthInvalid("invalid_client", "a client metadata document client authenticates with 'none' only")
    if not redirect_uris_ok(doc.get("redirect_uris")):
        raise OAuthInvalid("invalid_client", f"client metadata document has no acceptable redirect_uris (at most "
                                             f"{MAX_REDIRECT_URIS}, each an acceptable URI)")
    return doc


def client_cached(*, client_id: str) -> tuple[OAuthClient | None, bool]:
    """(the stored client or None, whether its metadata document must be fetched first). A URL client_id is a
    client ID metadata document, fetched when unknown or older than OAUTH_CLIENT_METADATA_CACHE_SECONDS."""
    if not client_id or len(client_id) > 500:
        return None, False
    client = OAuthClient.objects.filter(client_id=client_id).first()
    if client is not None and len(client.redirect_uris or []) > MAX_REDIRECT_URIS:
        client = None  # stored before the limit: refused rather than validated URI by URI on every call
    if not is_metadata_document_url(client_id):
        return (client if client and client.kind == OAuthClient.Kind.REGISTERED else None), False
    ttl = timedelta(seconds=int(settings.OAUTH_CLIENT_METADATA_CACHE_SECONDS))
    if client is not None and client.fetched_at and timezone.now() - client.fetched_at < ttl:
        return client, False
    return None, True


def client_get(*, client_id: str) -> OAuthClient | None:
    """The client, or None, fetching its metadata document here when needed (callers that may wait on the
    network; the protocol endpoints split the steps: client_cached, metadata_document_fetch, client_store)."""
    client, fetch = client_cached(client_id=client_id)
    if not fetch:
        return client
    try:
        doc = metadata_document_fetch(client_id)
    except OAuthInvalid:
        return None
    return client_store_document(client_id=client_id, doc=doc)


def client_store_document(*, client_id: str, doc: dict) -> OAuthClient:
    """Cache a fetched (and checked) client ID metadata document as the client's row."""
    values = {
        "kind": OAuthClient.Kind.METADATA_DOCUMENT, "client_name": str(doc.get("client_name") or "")[:200],
        "redirect_uris": doc["redirect_uris"], "token_endpoint_auth_method": "none", "secret_hash": "",
        "metadata": doc, "fetched_at": timezone.now(),
    }
    client, _ = OAuthClient.objects.update_or_create(client_id=client_id, defaults=values)
    return client


def client_secret_ok(*, client: OAuthClient, secret: str | None) -> bool:
    if not client.secret_hash:
        return True
    return bool(secret) and hmac.compare_digest(client.secret_hash, _hash(secret))


# --- consent ----------------------------------------------------------------------------------------
def authorization_start(*, client: OAuthClient, redirect_uri: str, redirect_uri_provided_explicitly: bool,
                        code_challenge: str, state: str | None, scopes: list[str] | None,
                        resource_indicator: str | None) -> OAuthAuthorization:
    if state and len(state) > MAX_STATE_LENGTH:
        raise OAuthInvalid("invalid_request", f"state is longer than {MAX_STATE_LENGTH} characters")
    if resource_indicator and resource_indicator.rstrip("/") not in (resource(), issuer()):
        raise OAuthInvalid("invalid_target", f"this server issues tokens for {resource()} only")
    return OAuthAuthorization.objects.create(
        client=client, redirect_uri=redirect_uri, redirect_uri_provided_explicitly=redirect_uri_provided_explicitly,
        code_challenge=code_challenge, state=state or "", scopes_requested=[s for s in scopes or [] if s in ALL_SCOPES],
        resource=resource_indicator or resource(), expires_at=timezone.now() + CONSENT_TTL,
    )


def consent_url(auth: OAuthAuthorization) -> str:
    return f"{settings.BASE_URL}/console/oauth/authorize/{auth.id}/"


def authorization_pending(*, authorization_id) -> OAuthAuthorization | None:
    auth = OAuthAuthorization.objects.select_related("client").filter(pk=authorization_id).first()
    if auth is None or auth.decided_at is not None or auth.expires_at <= timezone.now():
        return None
    return auth


def consent_workspaces(*, user: User) -> list[Membership]:
    """Workspaces the member may connect a client to: where they may create keys (owner or admin)."""
    return [m for m in Membership.objects.filter(user=user).select_related("workspace").order_by("created_at")
            if m.can_approve]


def redirect_with(uri: str, **params) -> str:
    parts = urlsplit(uri)
    query = parse_qsl(parts.query, keep_blank_values=True) + [(k, v) for k, v in params.items() if v]
    return urlunsplit(parts._replace(query=urlencode(query)))


def _decide(auth: OAuthAuthorization) -> OAuthAuthorization:
    updated = OAuthAuthorization.objects.filter(pk=auth.pk, decided_at__isnull=True).update(decided_at=timezone.now())
    if updated != 1:
        raise errors.InvalidRequest("This authorization request was already answered.")
    return auth


@transaction.atomic
def authorization_approve(*, auth: OAuthAuthorization, user: User, workspace: Workspace, scopes) -> str:
    """The member allows the client: a grant (and its key) with the chosen scopes, and a single-use code.
    Returns the URL to send the browser to (the client's redirect URI with code, state and iss)."""
    if not any(m.workspace_id == workspace.pk for m in consent_workspaces(user=user)):
        raise errors.NotFound()
    from accounts.keys import normalize_scopes

    chosen = normalize_scopes(list(scopes or []))
    _decide(auth)
    client = auth.client
    name = client.client_name or urlsplit(client.client_id).hostname or "MCP client"
    key = ApiKey.objects.create(
        workspace=workspace, name=f"MCP: {name}"[:100], prefix="oauth_" + secrets.token_hex(10),
        hashed_secret="-", last4="", scopes=chosen, created_by=user,
    )
    grant = OAuthGrant.objects.create(workspace=workspace, user=user, client=client, client_name=name[:200],
                                      redirect_uri=auth.redirect_uri, api_key=key)
    code = secrets.token_urlsafe(32)
    OAuthAuthorization.objects.filter(pk=auth.pk).update(
        grant=grant, code_hash=_hash(code), code_expires_at=timezone.now() + CODE_TTL)
    return redirect_with(auth.redirect_uri, code=code, state=auth.state, iss=issuer())


def authorization_deny(*, auth: OAuthAuthorization) -> str:
    _decide(auth)
    return redirect_with(auth.redirect_uri, error="access_denied",
                         error_description="The member did not allow access.", state=auth.state, iss=issuer())


# --- codes and tokens -------------------------------------------------------------------------------
def code_load(*, code: str) -> OAuthAuthorization | None:
    if not code:
        return None
    return (OAuthAuthorization.objects.select_related("client", "grant")
            .filter(code_hash=_hash(code), code_used_at__isnull=True, grant__revoked_at__isnull=True).first())


def _issue(grant: OAuthGrant, scopes: list[str], resource_indicator: str) -> dict:
    now = timezone.now()
    access = ACCESS_PREFIX + secrets.token_urlsafe(32)
    refresh = REFRESH_PREFIX + secrets.token_urlsafe(32)
    seconds = access_token_seconds()
    OAuthToken.objects.bulk_create([
        OAuthToken(grant=grant, kind=OAuthToken.Kind.ACCESS, token_hash=_hash(access), scopes=scopes,
                   resource=resource_indicator, expires_at=now + timedelta(seconds=seconds)),
        OAuthToken(grant=grant, kind=OAuthToken.Kind.REFRESH, token_hash=_hash(refresh), scopes=scopes,
                   resource=resource_indicator, expires_at=now + refresh_token_ttl()),
    ])
    return {"access_token": access, "token_type": "Bearer", "expires_in": seconds,
            "scope": " ".join(scopes), "refresh_token": refresh}


@transaction.atomic
def code_exchange(*, auth: OAuthAuthorization) -> dict:
    """Spend the code once. A second attempt (a replayed code) finds it spent and revokes the grant."""
    used = OAuthAuthorization.objects.filter(pk=auth.pk, code_used_at__isnull=True).update(code_used_at=timezone.now())
    if used != 1:
        raise OAuthInvalid("invalid_grant", "authorization code already used")
    grant = OAuthGrant.objects.select_related("api_key").get(pk=auth.grant_id)
    return _issue(grant, list(grant.api_key.scopes or []), auth.resource)


def code_replayed(*, code: str) -> None:
    """RFC 9700 / OAuth 2.1 4.1.3: a code presented after use revokes what it issued."""
    auth = OAuthAuthorization.objects.filter(code_hash=_hash(code), code_used_at__isnull=False).first()
    if auth is not None and auth.grant_id:
        grant_revoke(grant=OAuthGrant.objects.get(pk=auth.grant_id))


def _live_token(token: str, kind: str) -> OAuthToken | None:
    if not token:
        return None
    row = (OAuthToken.objects.select_related("grant__api_key__workspace", "grant__client")
           .filter(token_hash=_hash(token), kind=kind).first())
    if row is None or row.revoked_at or row.grant.revoked_at or row.grant.api_key.revoked_at:
        return None
    if row.expires_at <= timezone.now():
        return None
    return row


def refresh_load(*, token: str) -> OAuthToken | None:
    """A usable refresh token, or None. Presenting a refresh token that was already rotated away is taken
    as theft (OAuth 2.1 4.3.1): the whole grant is revoked."""
    row = _live_token(token, OAuthToken.Kind.REFRESH)
    if row is not None and row.used_at is not None:
        grant_revoke(grant=row.grant)
        return None
    return row


@transaction.atomic
def refresh_exchange(*, row: OAuthToken, scopes: list[str]) -> dict:
    used = OAuthToken.objects.filter(pk=row.pk, used_at__isnull=True, revoked_at__isnull=True).update(
        used_at=timezone.now())
    if used != 1:
        raise OAuthInvalid("invalid_grant", "refresh token already used")
    return _issue(row.grant, [s for s in scopes if s in row.scopes], row.resource)


def access_load(*, token: str) -> OAuthToken | None:
    return _live_token(token, OAuthToken.Kind.ACCESS)


def access_token_principal(*, token: str) -> ApiKey:
    """The grant's key for a live access token, its scopes narrowed to the token's; else Unauthenticated."""
    row = access_load(token=token)
    if row is None:
        raise errors.Unauthenticated()
    key = row.grant.api_key
    key.scopes = [s for s in key.scopes or [] if s in row.scopes]
    key.oauth_token = row
    return key


def grant_revoke(*, grant: OAuthGrant) -> OAuthGrant:
    """End a connection: the grant, its key and every token. The next call with its access token is 401."""
    from accounts.keys import key_revoke

    now = timezone.now()
    with transaction.atomic():
        OAuthGrant.objects.filter(pk=grant.pk, revoked_at__isnull=True).update(revoked_at=now)
        OAuthToken.objects.filter(grant=grant, revoked_at__isnull=True).update(revoked_at=now)
        key_revoke(key=grant.api_key)
    grant.refresh_from_db()
    return grant


def grants_for(*, workspace: Workspace):
    return (OAuthGrant.objects.filter(workspace=workspace).select_related("api_key", "user", "client")
            .order_by("revoked_at", "-created_at"))


def oauth_purge() -> dict:
    """Periodic: forget what can no longer be used. Authorization requests after a day; tokens a day after
    they expired (a spent refresh token is kept until then, so its reuse is still detected); clients
    (registered or fetched) unused for 30 days that have no grant."""
    from django.db.models import Q

    now = timezone.now()
    requests = OAuthAuthorization.objects.filter(created_at__lt=now - timedelta(days=1)).delete()[0]
    tokens = OAuthToken.objects.filter(expires_at__lt=now - timedelta(days=1)).delete()[0]
    stale = now - timedelta(days=30)
    clients = (OAuthClient.objects.filter(grants__isnull=True, created_at__lt=stale)
               .filter(Q(fetched_at__isnull=True) | Q(fetched_at__lt=stale)).delete()[0])
    return {"authorizations": requests, "tokens": tokens, "clients": clients}

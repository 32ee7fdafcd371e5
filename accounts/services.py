"""Accounts services: workspaces, API keys, confirmation tokens. Services write; selectors read."""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import secrets
import time
from datetime import timedelta

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction
from django.utils import timezone

# key_revoke and normalize_scopes live in accounts.keys (accounts.oauth needs them too) and are part of this API
from accounts.keys import _KEY_CACHE_MAX, _cached, _key_cache, _key_cache_drop, normalize_scopes
from accounts.keys import key_revoke as key_revoke
from accounts.models import ApiKey, ConfirmationToken, Membership, User, Workspace
from accounts.signals import approval_requested, workspace_created
from core import errors, events

KEY_PREFIX = "service_sk_live_"
_LOOKUP_LEN = 12


# --- workspaces -------------------------------------------------------------------------------------
def user_get_or_create(*, email: str) -> User:
    email = User.objects.normalize_email(email).strip().lower()
    user = User.objects.filter(email__iexact=email).first()
    return user or User.objects.create_user(email=email)


@transaction.atomic
def workspace_create(*, owner: User, name: str | None = None) -> Workspace:
    """A workspace owned by `owner`, with its credit account and the signup grant (SPEC 1: 300 credits): billing
    opens the account on `workspace_created`, sent inside this transaction."""
    workspace = Workspace.objects.create(name=name or f"{owner.email}'s workspace")
    Membership.objects.create(user=owner, workspace=workspace, role=Membership.Role.OWNER)
    workspace_created.send(sender=Workspace, workspace=workspace)
    return workspace


# --- API keys ---------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=4)
def _pepper(secret_key: str) -> bytes:
    return hashlib.sha256(("api-key:" + secret_key).encode()).digest()


def _key_hash(secret: str) -> str:
    # Keyed hash (HMAC-SHA256 under a key derived from SECRET_KEY): a leaked table cannot be brute-forced
    # offline without the server's secret. Keys are 256-bit random, so no slow hash is needed.
    return hmac.new(_pepper(settings.SECRET_KEY), secret.encode(), hashlib.sha256).hexdigest()


def key_create(*, workspace: Workspace, name: str = "default", scopes=(), created_by: User | None = None) -> tuple[ApiKey, str]:
    """Create a key; returns (key, plaintext). The plaintext is shown once and never stored."""
    body = secrets.token_urlsafe(32)  # 43 URL-safe characters
    while not body[:_LOOKUP_LEN].isalnum():
        body = secrets.token_urlsafe(32)
    plaintext = KEY_PREFIX + body
    key = ApiKey.objects.create(
        workspace=workspace,
        name=(name or "default")[:100],
        prefix=KEY_PREFIX + body[:_LOOKUP_LEN],
        hashed_secret=_key_hash(plaintext),
        last4=body[-4:],
        scopes=normalize_scopes(scopes),
        created_by=created_by,
    )
    return key, plaintext


def key_authenticate(*, authorization: str | None, cache_seconds: float = 0.0, oauth: bool = False) -> ApiKey:
    """`Authorization: Bearer service_sk_live_…` -> the active key, or raise Unauthenticated.

    `cache_seconds` > 0: a key found valid in this process within that many seconds is returned without a query.
    `oauth=True` (the MCP door, the resource OAuth access tokens are issued for): a live access token
    `service_at_…` resolves to its grant's key (accounts.oauth), the same principal an API key is."""
    token = _bearer_token(authorization)
    if oauth and token is not None and token.startswith("service_at_"):
        from accounts.oauth import access_token_principal

        key = access_token_principal(token=token)
        _touch(key)
        return key
    if not _is_key_secret(token):
        raise errors.Unauthenticated()
    digest = _key_hash(token)
    if cache_seconds > 0:
        cached = _cached(digest)
        if cached is not None:
            return cached
    key = ApiKey.objects.select_related("workspace").filter(prefix=token[: len(KEY_PREFIX) + _LOOKUP_LEN]).first()
    if key is None or not hmac.compare_digest(key.hashed_secret, digest) or not key.is_active:
        _key_cache.pop(digest, None)
        raise errors.Unauthenticated()
    _touch(key)
    if cache_seconds > 0:
        if len(_key_cache) >= _KEY_CACHE_MAX:
            _key_cache.clear()
        _key_cache[digest] = (time.monotonic() + cache_seconds, key)
    return key


def _bearer_token(authorization: str | None) -> str | None:
    """The credential of an `Authorization: Bearer …` header, or None for any other (or no) header."""
    scheme, _, token = (authorization or "").strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" else None


def _is_key_secret(token: str | None) -> bool:
    return token is not None and token.startswith(KEY_PREFIX) and len(token) >= len(KEY_PREFIX) + 32


def key_cached(*, authorization: str | None) -> ApiKey | None:
    """The key `authorization` names if this process found it valid within its cache time (key_authenticate with
    `cache_seconds`), else None: no query, so it may run on an event loop (the LLM door's admission)."""
    token = _bearer_token(authorization)
    return _cached(_key_hash(token)) if _is_key_secret(token) else None


def _touch(key: ApiKey) -> None:
    now = timezone.now()
    if key.last_used_at is None or now - key.last_used_at > timedelta(seconds=60):
        ApiKey.objects.filter(pk=key.pk).update(last_used_at=now)  # coarse, to keep hot paths write-light
        key.last_used_at = now


# --- confirmation tokens (CONTRACT section 3) -------------------------------------------------------
TOKEN_PREFIX = "ct_"
QUOTE_TTL = timedelta(minutes=15)
LAUNCH_TTL = timedelta(hours=24)


def params_canonical_hash(params: dict) -> str:
    clean = {k: v for k, v in params.items() if k not in ("confirmation_token",)}
    blob = json.dumps(clean, sort_keys=True, separators=(",", ":"), cls=DjangoJSONEncoder, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()


def _token_hash(plaintext: str) -> str:
    return hashlib.sha256(plaintext.encode()).hexdigest()


def approval_url(token: ConfirmationToken) -> str:
    return f"{settings.BASE_URL}/console/approvals/{token.id}/"


def approval_render(token: ConfirmationToken) -> dict:
    """An approval (confirmation token) as the console and the approval.* events describe it."""
    return {"approval_id": str(token.pk), "verb": token.verb, "status": token.effective_status,
            "summary": token.summary, "params": token.params, "approval_url": approval_url(token),
            "expires_at": token.expires_at, "decided_at": token.decided_at,
            "decided_by": token.decided_by.email if token.decided_by_id else None}


def token_issue(*, workspace: Workspace, verb: str, params: dict, ttl: timedelta, summary: dict | None = None,
                request_id: str = "") -> tuple[ConfirmationToken, str]:
    plaintext = TOKEN_PREFIX + secrets.token_urlsafe(24)
    clean = json.loads(json.dumps({k: v for k, v in params.items() if k != "confirmation_token"}, cls=DjangoJSONEncoder))
    token = ConfirmationToken.objects.create(
        workspace=workspace,
        token_hash=_token_hash(plaintext),
        token_hint=plaintext[:8],
        verb=verb,
        params_hash=params_canonical_hash(clean),
        params=clean,
        summary=json.loads(json.dumps(summary or {}, cls=DjangoJSONEncoder)),
        expires_at=timezone.now() + ttl,
        issued_request_id=request_id,
    )
    transaction.on_commit(lambda: approval_requested.send(sender=ConfirmationToken, token=token))
    return token, plaintext


def token_fields(token: ConfirmationToken, plaintext: str) -> dict:
    """What an issuing response carries (CONTRACT section 3)."""
    return {
        "confirmation_token": plaintext,
        "confirmation_expires_at": token.expires_at,
        "approval_url": approval_url(token),
    }


def _decide(token: ConfirmationToken, *, user: User | None, status: str) -> ConfirmationToken:
    expired = False
    with transaction.atomic():
        locked = ConfirmationToken.objects.select_for_update().get(pk=token.pk)
        if locked.is_expired:
            # Record the expiry, then raise outside the transaction so the status change is kept.
            locked.status = ConfirmationToken.Status.EXPIRED
            locked.save(update_fields=["status"])
            expired = True
    if expired:
        raise errors.ConfirmationExpired()
    with transaction.atomic():
        locked = ConfirmationToken.objects.select_for_update().get(pk=token.pk)
        if locked.status == status:
            return locked  # repeating a decision is harmless
        if locked.status != ConfirmationToken.Status.PENDING:
            raise errors.InvalidRequest(f"This token is already {locked.status}.")
        locked.status = status
        locked.decided_by = user
        locked.decided_at = timezone.now()
        locked.save(update_fields=["status", "decided_by", "decided_at"])
        events.emit(workspace=locked.workspace_id, type="approval.decided", data=approval_render(locked))
        return locked


def token_approve(*, token: ConfirmationToken, user: User | None) -> ConfirmationToken:
    return _decide(token, user=user, status=ConfirmationToken.Status.APPROVED)


def token_deny(*, token: ConfirmationToken, user: User | None) -> ConfirmationToken:
    return _decide(token, user=user, status=ConfirmationToken.Status.DENIED)


def token_lookup(*, plaintext: str) -> ConfirmationToken | None:
    if not isinstance(plaintext, str) or not plaintext.startswith(TOKEN_PREFIX):
        return None
    return ConfirmationToken.objects.filter(token_hash=_token_hash(plaintext)).first()


def token_consume(*, workspace: Workspace, verb: str, params: dict, plaintext: str, request_id: str = "") -> ConfirmationToken:
    """Use an approved token exactly once. Call inside the transaction that performs the action, so a
    failure of the action gives the token back. Raises the confirmation_* errors of CONTRACT section 2."""
    token = token_lookup(plaintext=plaintext)
    if token is None or token.workspace_id != workspace.pk:
        raise errors.ConfirmationInvalid("Unknown confirmation token.")
    if token.verb != verb or token.params_hash != params_canonical_hash(params):
        raise errors.ConfirmationInvalid(
            "The call's parameters differ from those approved; request a new token.",
            details={"approved_params": token.params},
        )
    locked = ConfirmationToken.objects.select_for_update().get(pk=token.pk)
    if locked.status == ConfirmationToken.Status.DENIED:
        raise errors.ConfirmationDenied()
    if locked.status == ConfirmationToken.Status.USED:
        raise errors.ConfirmationUsed()
    if locked.status == ConfirmationToken.Status.EXPIRED or locked.is_expired:
        raise errors.ConfirmationExpired()
    if locked.status == ConfirmationToken.Status.PENDING:
        raise errors.ConfirmationPending(details={"approval_url": approval_url(locked)})
    updated = ConfirmationToken.objects.filter(pk=locked.pk, status=ConfirmationToken.Status.APPROVED).update(
        status=ConfirmationToken.Status.USED, used_at=timezone.now(), used_request_id=request_id
    )
    if updated != 1:  # lost a race with another consumer
        raise errors.ConfirmationUsed()
    locked.refresh_from_db()
    return locked


def tokens_expire() -> int:
    """Mark pending/approved tokens past their expiry as expired (periodic)."""
    return ConfirmationToken.objects.filter(
        status__in=[ConfirmationToken.Status.PENDING, ConfirmationToken.Status.APPROVED], expires_at__lte=timezone.now()
    ).update(status=ConfirmationToken.Status.EXPIRED)


MAX_ANSWERS_PER_DAY = 10_000


def key_answers_per_day_set(*, key: ApiKey, answers_per_day: int | None) -> ApiKey:
    """How many replies a UTC day this key (or OAuth connection) may send without a human's approval (CONTRACT
    4.8c); None: every answer needs an approval. Takes effect on the key's next call."""
    if answers_per_day is not None and not (0 <= int(answers_per_day) <= MAX_ANSWERS_PER_DAY):
        raise errors.InvalidRequest(f"answers_per_day must be between 0 and {MAX_ANSWERS_PER_DAY} or none.")
    ApiKey.objects.filter(pk=key.pk).update(answers_per_day=answers_per_day)
    key.answers_per_day = answers_per_day
    _key_cache_drop(key.pk)
    return key


def key_settings(*, key: ApiKey) -> dict:
    """An API key's or OAuth connection's settings as `manage.py key_limits` prints them."""
    grant = getattr(key, "oauth_grant", None)
    return {"key_id": str(key.pk), "name": grant.client_name if grant is not None else key.name,
            "kind": "oauth_connection" if grant is not None else "api_key", "workspace_id": str(key.workspace_id),
            "scopes": list(key.scopes or []), "revoked": key.revoked_at is not None,
            "answers_per_day": key.answers_per_day}

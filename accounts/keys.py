"""API keys below the services that use them: scope names, the per-process cache of key lookups, revocation.

accounts.services (authentication, creation) and accounts.oauth (a connection's key) both build on these.
"""

from __future__ import annotations

import time

from django.utils import timezone

from accounts.models import ALL_SCOPES, ApiKey
from core import errors


def normalize_scopes(scopes) -> list[str]:
    if scopes in ("all", ["all"]):
        return list(ALL_SCOPES)
    out = sorted({s.strip() for s in scopes or [] if s and s.strip()})
    unknown = [s for s in out if s not in ALL_SCOPES]
    if unknown:
        raise errors.InvalidRequest(f"Unknown scopes: {', '.join(unknown)}", details={"fields": {"scopes": [f"unknown scope {s}" for s in unknown]}})
    return out


# Per-process cache of successful key lookups, used only by callers that ask for it (`cache_seconds`, the
# LLM passthrough's hot path): keyed by the keyed hash of the full secret, so only the exact secret hits it.
# A revocation made in this process drops the entry at once; one made in another process is honoured once the
# entry expires (at most `cache_seconds`, default LLM_KEY_CACHE_SECONDS = 5).
_key_cache: dict[str, tuple[float, ApiKey]] = {}
_KEY_CACHE_MAX = 10_000


def _cached(digest: str) -> ApiKey | None:
    cached = _key_cache.get(digest)
    if cached is not None and cached[0] > time.monotonic() and cached[1].is_active:
        return cached[1]
    return None


def _key_cache_drop(pk) -> None:
    for digest, (_, cached) in list(_key_cache.items()):
        if cached.pk == pk:
            _key_cache.pop(digest, None)


def key_revoke(*, key: ApiKey) -> ApiKey:
    _key_cache_drop(key.pk)
    if key.revoked_at is None:
        ApiKey.objects.filter(pk=key.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
        key.refresh_from_db()
    return key

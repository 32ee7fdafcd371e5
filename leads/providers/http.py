"""Outbound HTTP for vendor adapters: core.outbound's client (LEADS_PROVIDER_TIMEOUT_SECONDS is the whole call's
deadline), vendor errors mapped to ProviderError.

Tests swap `TRANSPORT` for an `httpx.MockTransport` serving recorded responses."""

from __future__ import annotations

import httpx
from django.conf import settings

from core import outbound
from leads.providers.base import ProviderError

TRANSPORT: httpx.BaseTransport | None = None


def client(**kwargs) -> httpx.Client:
    return outbound.client(timeout=settings.LEADS_PROVIDER_TIMEOUT_SECONDS, allow_private=True, transport=TRANSPORT,
                           headers={"Accept": "application/json"}, **kwargs)


def call(provider: str, method: str, url: str, *, not_found_ok: bool = False, **kwargs) -> dict | None:
    """JSON body of a 2xx answer; None for a 404 when `not_found_ok`; ProviderError otherwise
    (permanent for 400/401/403/422, transient for timeouts, 429 and 5xx)."""
    try:
        with client() as http:
            resp = http.request(method, url, **kwargs)
    except httpx.HTTPError as exc:
        raise ProviderError(f"{provider}: {type(exc).__name__}", provider=provider) from exc
    if resp.status_code == 404 and not_found_ok:
        return None
    if resp.status_code >= 400:
        permanent = resp.status_code in (400, 401, 402, 403, 422)
        raise ProviderError(f"{provider}: HTTP {resp.status_code}", permanent=permanent, provider=provider)
    try:
        return resp.json()
    except ValueError as exc:
        raise ProviderError(f"{provider}: answer is not JSON", provider=provider) from exc

"""Gmail Postmaster Tools API v2, as a source of the `postmaster` signal for sending domains set up in Google
Workspace (bought through the `google_workspace` provider, whose service account it reuses).

`domains.domainStats.query` (`POST {POSTMASTER_TOOLS_URL}/v2/domains/{domain}/domainStats:query`) with one
metric definition `{"name": "spam_rate", "baseMetric": {"standardMetric": "SPAM_RATE"}}`, a `timeQuery` of the
last 7 days (`dateRanges.dateRanges[{start, end}]`, dates as `{year, month, day}`) and `DAILY` granularity; the
answer's `domainStats[]` carry `metric` (the name given), `date` and `value.doubleValue` (the share of mail
users reported as spam, 0 to 1). Google publishes statistics only for domains that send to at least a few
dozen Gmail users a day: no statistics is no signal. The token is the service account's, acting as
GOOGLE_WORKSPACE_ADMIN_EMAIL, with the read-only scope `postmaster.traffic.readonly`.

Off unless POSTMASTER_TOOLS_ENABLED (the domain must be verified in Postmaster Tools by that user first).
"""

from __future__ import annotations

import logging
from datetime import date, timedelta

import httpx
from django.conf import settings

from core import outbound
from sending.providers.base import ProviderError
from sending.providers.google_workspace import delegated_token

logger = logging.getLogger("deliverability.postmaster")

SCOPE = "https://www.googleapis.com/auth/postmaster.traffic.readonly"
METRIC = "spam_rate"


class PostmasterUnavailable(Exception):
    """No definite answer (not configured, refused, unreachable): the domain's last result stands."""


class Postmaster:
    transport: httpx.BaseTransport | None = None  # tests inject a local fake (httpx.MockTransport)


def enabled() -> bool:
    return bool(settings.POSTMASTER_TOOLS_ENABLED and settings.GOOGLE_WORKSPACE_SERVICE_ACCOUNT_FILE
                and settings.GOOGLE_WORKSPACE_ADMIN_EMAIL)


def _day(d: date) -> dict:
    return {"year": d.year, "month": d.month, "day": d.day}


def spam_rate(domain: str, *, today: date | None = None, days: int = 7) -> float | None:
    """The highest daily spam rate Gmail reports for `domain` over the last `days` days, or None when Google has
    no statistics for it. Raises PostmasterUnavailable without a definite answer."""
    today = today or date.today()
    try:
        token, _ = delegated_token(subject=settings.GOOGLE_WORKSPACE_ADMIN_EMAIL, scopes=SCOPE,
                                   transport=Postmaster.transport)
    except ProviderError as exc:
        raise PostmasterUnavailable(str(exc)) from exc
    body = {
        "metricDefinitions": [{"name": METRIC, "baseMetric": {"standardMetric": "SPAM_RATE"}}],
        "timeQuery": {"dateRanges": {"dateRanges": [{"start": _day(today - timedelta(days=days)),
                                                     "end": _day(today)}]}},
        "aggregationGranularity": "DAILY",
        "pageSize": 200,
    }
    url = f"{settings.POSTMASTER_TOOLS_URL.rstrip('/')}/v2/domains/{domain}/domainStats:query"
    values: list[float] = []
    try:
        with outbound.client(transport=Postmaster.transport, timeout=float(settings.GOOGLE_WORKSPACE_TIMEOUT_SECONDS),
                             allow_private=True) as c:  # each request within the timeout, whole call
            page = None
            for _ in range(20):  # bounded paging
                response = c.post(url, json={**body, **({"pageToken": page} if page else {})},
                                  headers={"Authorization": f"Bearer {token}"})
                if response.status_code == 404:
                    return None  # the domain is not registered in Postmaster Tools: no signal
                if response.status_code != 200:
                    raise PostmasterUnavailable(f"Postmaster Tools answered {response.status_code} for {domain}")
                data = response.json()
                for stat in data.get("domainStats") or []:
                    value = (stat.get("value") or {}).get("doubleValue")
                    if stat.get("metric") == METRIC and isinstance(value, int | float):
                        values.append(float(value))
                page = data.get("nextPageToken")
                if not page:
                    break
    except httpx.HTTPError as exc:
        raise PostmasterUnavailable(f"Postmaster Tools is unreachable: {exc}") from exc
    except ValueError as exc:
        raise PostmasterUnavailable(f"Postmaster Tools answered a body that is not JSON: {exc}") from exc
    return max(values) if values else None

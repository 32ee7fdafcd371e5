"""Gmail Postmaster Tools API v2, as a source of the `postmaster` signal for sending domains set up in Google
Workspace (bought through the `google_workspace` provider, whose service account it reuses).

`domains.domainStats.query` (`POST {POSTMASTER_TOOLS_URL}/v2/domains/{domain}/domainStats:query`) with one
metric definition `{"name": "spam_rate", "baseMetric": {"standardMetric": "SPAM_RATE"}}`, a `timeQuery` of the
last 7 days (`dateRanges.dateRanges[{start, end}]`, dates as `{year, month, day}`) and `DAILY` granularity; the
answer's `domainStats[]` carry `metric` (the name given), `date` and `value.doubleValue` (the share of mail
users reported as spam, 0 to 1). Google publishes statistics only for domains that send to at least a few
dozen Gmail users a day: no statistics is no signal. The token is the service account's, acting as
GOOGLE_WORKSPACE_ADMIN_EMAIL, with the read-only scope `postmaster.traffic.readonly`.

`domains.getComplianceStatus` (`GET {POSTMASTER_TOOLS_URL}/v2/domains/{domain}/complianceStatus`, empty body, the
same scope) answers Gmail's own verdict on the bulk-sender requirements: `{"name", "complianceData":
DomainComplianceData, "subdomainComplianceData"?: DomainComplianceData}`, where DomainComplianceData is
`{"domainId", "rowData": [{"requirement", "status": {"status"}}], "oneClickUnsubscribeVerdict": {"status":
{"status"}, "reason"}, "honorUnsubscribeVerdict": {"status": {"status"}, "reason"}}`. A requirement is one of
`SPF`, `DKIM`, `SPF_AND_DKIM`, `DMARC_POLICY`, `DMARC_ALIGNMENT`, `MESSAGE_FORMATTING`, `DNS_RECORDS`,
`ENCRYPTION`, `USER_REPORTED_SPAM_RATE`, `ONE_CLICK_UNSUBSCRIBE`, `HONOR_UNSUBSCRIBE`; a status is `COMPLIANT`,
`NEEDS_WORK` or `STATE_UNSPECIFIED`. `subdomainComplianceData` is present only for a subdomain Google has figures
for, and then it is the verdict on the domain itself. A domain the caller may not read is PERMISSION_DENIED (403).

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


# A compliance status that says the requirement is not met (STATE_UNSPECIFIED says nothing).
NEEDS_WORK = "NEEDS_WORK"


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


def _status(value) -> str:
    """A ComplianceStatus object's `status` (`{"status": "NEEDS_WORK"}`); a bare string is read the same way."""
    if isinstance(value, dict):
        value = value.get("status")
    return value if isinstance(value, str) else ""


def compliance_needs_work(domain: str) -> dict[str, str] | None:
    """Gmail's bulk-sender requirements the domain does not meet, as {requirement: reason or ""}, from
    `domains.getComplianceStatus` (empty when all are met), or None when Google has no compliance data for it.
    The unsubscribe verdicts count as the ONE_CLICK_UNSUBSCRIBE and HONOR_UNSUBSCRIBE requirements, with their
    reason. Raises PostmasterUnavailable without a definite answer (refused, unreachable, not JSON)."""
    try:
        token, _ = delegated_token(subject=settings.GOOGLE_WORKSPACE_ADMIN_EMAIL, scopes=SCOPE,
                                   transport=Postmaster.transport)
    except ProviderError as exc:
        raise PostmasterUnavailable(str(exc)) from exc
    url = f"{settings.POSTMASTER_TOOLS_URL.rstrip('/')}/v2/domains/{domain}/complianceStatus"
    try:
        with outbound.client(transport=Postmaster.transport, timeout=float(settings.GOOGLE_WORKSPACE_TIMEOUT_SECONDS),
                             allow_private=True) as c:
            response = c.get(url, headers={"Authorization": f"Bearer {token}"})
            if response.status_code == 404:
                return None  # the domain is not registered in Postmaster Tools: no signal
            if response.status_code != 200:
                raise PostmasterUnavailable(f"Postmaster Tools answered {response.status_code} for the compliance "
                                            f"status of {domain}")
            data = response.json()
    except httpx.HTTPError as exc:
        raise PostmasterUnavailable(f"Postmaster Tools is unreachable: {exc}") from exc
    except ValueError as exc:
        raise PostmasterUnavailable(f"Postmaster Tools answered a body that is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise PostmasterUnavailable("Postmaster Tools answered a compliance status that is not an object")
    # the subdomain's own figures when Google has them, else the registrable domain's
    verdict = data.get("subdomainComplianceData") or data.get("complianceData")
    if not isinstance(verdict, dict):
        return None
    failing: dict[str, str] = {}
    for row in verdict.get("rowData") or []:
        if isinstance(row, dict) and row.get("requirement") and _status(row.get("status")) == NEEDS_WORK:
            failing[str(row["requirement"])] = ""
    for key, requirement in (("oneClickUnsubscribeVerdict", "ONE_CLICK_UNSUBSCRIBE"),
                             ("honorUnsubscribeVerdict", "HONOR_UNSUBSCRIBE")):
        item = verdict.get(key)
        if isinstance(item, dict) and _status(item.get("status")) == NEEDS_WORK:
            reason = item.get("reason")
            failing[requirement] = reason if isinstance(reason, str) and reason != "REASON_UNSPECIFIED" else ""
    return failing

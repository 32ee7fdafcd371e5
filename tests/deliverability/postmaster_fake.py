"""A local fake of the Gmail Postmaster Tools API v2, written from its public reference, served through
httpx.MockTransport at the real default URLs:

- Google's OAuth 2.0 token endpoint, JWT bearer grant: the assertion's RS256 signature is checked with the test
  service account's public key (tests/sending/google_fake.py), `aud` the token URL, `sub` the Workspace admin,
  and the scope must be `postmaster.traffic.readonly` (or `postmaster`);
- `POST /v2/domains/{domain}/domainStats:query`: the request must carry `metricDefinitions[]` (`name`,
  `baseMetric.standardMetric` among the documented StandardMetric values) and a `timeQuery` (`dateRanges.
  dateRanges[{start, end}]` or `dateList.dates[]`, dates as `{year, month, day}`); the answer is
  `{"domainStats": [{"name", "metric", "date", "value": {"doubleValue"}}], "nextPageToken"}`, one entry per
  day with data (days without statistics are left out), `pageSize` honoured (default 10, at most 200);
  a domain not registered for the caller is 404 in Google's JSON error shape, a bad token 401;
- `GET /v2/domains/{domain}/complianceStatus` (`domains.getComplianceStatus`, empty body): `{"name":
  "domains/{domain}/complianceStatus", "complianceData": DomainComplianceData, "subdomainComplianceData"?}`, where
  DomainComplianceData is `{"domainId", "rowData": [{"requirement", "status": {"status"}}],
  "oneClickUnsubscribeVerdict": {"status": {"status"}, "reason"?}, "honorUnsubscribeVerdict": {...}}`, status
  `COMPLIANT` or `NEEDS_WORK`, a verdict's `reason` only when it needs work; a domain without compliance data is
  404, one the caller may not read 403 PERMISSION_DENIED.
"""

from __future__ import annotations

import json
import secrets
from datetime import date, timedelta
from urllib.parse import parse_qs

import httpx
import jwt

from tests.sending.google_fake import ADMIN, PUBLIC_PEM, SERVICE_ACCOUNT, TOKEN_URL

BASE = "https://gmailpostmastertools.googleapis.com"
SCOPES = {"https://www.googleapis.com/auth/postmaster.traffic.readonly", "https://www.googleapis.com/auth/postmaster"}
STANDARD_METRICS = {"FEEDBACK_LOOP_ID", "FEEDBACK_LOOP_SPAM_RATE", "SPAM_RATE", "AUTH_SUCCESS_RATE",
                    "TLS_ENCRYPTION_MESSAGE_COUNT", "TLS_ENCRYPTION_RATE", "DELIVERY_ERROR_COUNT",
                    "DELIVERY_ERROR_RATE"}
REQUIREMENTS = ("SPF", "DKIM", "SPF_AND_DKIM", "DMARC_POLICY", "DMARC_ALIGNMENT", "MESSAGE_FORMATTING", "DNS_RECORDS",
                "ENCRYPTION", "USER_REPORTED_SPAM_RATE", "ONE_CLICK_UNSUBSCRIBE", "HONOR_UNSUBSCRIBE")
VERDICT_REASONS = {"ONE_CLICK_UNSUBSCRIBE": {"NO_UNSUB_GENERAL", "NO_UNSUB_SPAM_REPORTS", "NO_UNSUB_PROMO_SPAM_REPORTS"},
                   "HONOR_UNSUBSCRIBE": {"NOT_HONORING", "NOT_HONORING_TOO_FEW_CAMPAIGNS",
                                         "NOT_HONORING_TOO_MANY_CAMPAIGNS"}}


def _error(status: int, message: str, state: str) -> httpx.Response:
    return httpx.Response(status, json={"error": {"code": status, "message": message, "status": state}})


def _date(d: dict) -> date:
    return date(int(d["year"]), int(d["month"]), int(d["day"]))


class FakePostmaster:
    def __init__(self):
        self.rates: dict[str, dict[date, float]] = {}  # domain -> day -> spam rate (0..1)
        self.tokens: set[str] = set()
        self.queries: list[dict] = []
        # domain -> {requirement: reason} of the requirements that need work (every other one is COMPLIANT);
        # a domain missing here has no compliance data (404)
        self.compliance: dict[str, dict[str, str]] = {}
        self.subdomain_compliance: dict[str, dict[str, str]] = {}  # a subdomain's own figures, when present
        self.forbidden: set[str] = set()  # domains the caller may not read (403 PERMISSION_DENIED)
        self.compliance_reads: list[str] = []

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        url = str(request.url)
        if url == TOKEN_URL:
            return self._token(request)
        prefix = f"{BASE}/v2/domains/"
        if request.method == "POST" and url.startswith(prefix) and url.endswith("/domainStats:query"):
            if request.headers.get("Authorization", "").removeprefix("Bearer ") not in self.tokens:
                return _error(401, "Request had invalid authentication credentials.", "UNAUTHENTICATED")
            return self._query(url[len(prefix):-len("/domainStats:query")], json.loads(request.content))
        if request.method == "GET" and url.startswith(prefix) and url.endswith("/complianceStatus"):
            if request.headers.get("Authorization", "").removeprefix("Bearer ") not in self.tokens:
                return _error(401, "Request had invalid authentication credentials.", "UNAUTHENTICATED")
            if request.content:
                return _error(400, "The request body must be empty.", "INVALID_ARGUMENT")
            return self._compliance(url[len(prefix):-len("/complianceStatus")])
        return _error(404, "Not found", "NOT_FOUND")

    def _token(self, request: httpx.Request) -> httpx.Response:
        form = {k: v[0] for k, v in parse_qs(request.content.decode()).items()}
        try:
            claims = jwt.decode(form.get("assertion", ""), PUBLIC_PEM, algorithms=["RS256"], audience=TOKEN_URL)
        except jwt.PyJWTError as exc:
            return httpx.Response(400, json={"error": "invalid_grant", "error_description": str(exc)})
        scopes = set(claims.get("scope", "").split())
        if (claims.get("iss") != SERVICE_ACCOUNT["client_email"] or claims.get("sub") != ADMIN or not scopes
                or not scopes <= SCOPES):
            return httpx.Response(401, json={"error": "unauthorized_client"})
        token = "ya29." + secrets.token_urlsafe(16)
        self.tokens.add(token)
        return httpx.Response(200, json={"access_token": token, "expires_in": 3600, "token_type": "Bearer"})

    def _query(self, domain: str, body: dict) -> httpx.Response:
        self.queries.append({"domain": domain, **body})
        if domain not in self.rates:
            return _error(404, f"Requested entity was not found: domains/{domain}", "NOT_FOUND")
        definitions = body.get("metricDefinitions") or []
        if not definitions or any(not d.get("name") or (d.get("baseMetric") or {}).get("standardMetric")
                                  not in STANDARD_METRICS for d in definitions):
            return _error(400, "metricDefinitions: each needs a name and a baseMetric.standardMetric",
                          "INVALID_ARGUMENT")
        query = body.get("timeQuery") or {}
        days: list[date] = []
        if "dateRanges" in query:
            for r in query["dateRanges"].get("dateRanges") or []:
                d, end = _date(r["start"]), _date(r["end"])
                while d <= end:
                    days.append(d)
                    d += timedelta(days=1)
        elif "dateList" in query:
            days = [_date(d) for d in query["dateList"].get("dates") or []]
        else:
            return _error(400, "timeQuery is required", "INVALID_ARGUMENT")
        stats = []
        for definition in definitions:
            for day in sorted(set(days)):
                rate = self.rates[domain].get(day)
                if rate is None or definition["baseMetric"]["standardMetric"] != "SPAM_RATE":
                    continue
                stats.append({"name": f"domains/{domain}/domainStats/{secrets.token_hex(4)}",
                              "metric": definition["name"], "date": {"year": day.year, "month": day.month,
                                                                     "day": day.day},
                              "value": {"doubleValue": rate}})
        size = min(int(body.get("pageSize") or 10), 200)
        start = int(body.get("pageToken") or 0)
        page = {"domainStats": stats[start:start + size]}
        if start + size < len(stats):
            page["nextPageToken"] = str(start + size)
        return httpx.Response(200, json=page)

    def _compliance(self, domain: str) -> httpx.Response:
        self.compliance_reads.append(domain)
        if domain in self.forbidden:
            return _error(403, "The caller does not have permission", "PERMISSION_DENIED")
        if domain not in self.compliance:
            return _error(404, f"Requested entity was not found: domains/{domain}/complianceStatus", "NOT_FOUND")
        body = {"name": f"domains/{domain}/complianceStatus",
                "complianceData": self._data(domain.split(".", 1)[-1] if domain in self.subdomain_compliance
                                             else domain, self.compliance[domain])}
        if domain in self.subdomain_compliance:
            body["subdomainComplianceData"] = self._data(domain, self.subdomain_compliance[domain])
        return httpx.Response(200, json=body)

    @staticmethod
    def _data(domain: str, needs_work: dict[str, str]) -> dict:
        assert set(needs_work) <= set(REQUIREMENTS), needs_work

        def status(requirement):
            return {"status": "NEEDS_WORK" if requirement in needs_work else "COMPLIANT"}

        data = {"domainId": domain, "rowData": [{"requirement": r, "status": status(r)} for r in REQUIREMENTS]}
        for key, requirement in (("oneClickUnsubscribeVerdict", "ONE_CLICK_UNSUBSCRIBE"),
                                 ("honorUnsubscribeVerdict", "HONOR_UNSUBSCRIBE")):
            verdict = {"status": status(requirement)}
            if requirement in needs_work:
                reason = needs_work[requirement] or sorted(VERDICT_REASONS[requirement])[0]
                assert reason in VERDICT_REASONS[requirement], reason
                verdict["reason"] = reason
            data[key] = verdict
        return data

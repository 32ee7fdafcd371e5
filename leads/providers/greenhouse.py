"""Greenhouse Job Board API as a `hiring` intent provider. Enabled by GREENHOUSE_BOARDS_URL
(normally https://boards-api.greenhouse.io/v1/boards).

API: `GET {GREENHOUSE_BOARDS_URL}/{board_token}/jobs` (public, no key), documented at
https://developers.greenhouse.io/job-board.html: `jobs[]` with `title`, `updated_at`, `location.name`,
`absolute_url`; an unknown board is 404. The board token of a company is taken to be the first label of its
domain (`stripe.com` -> `stripe`). A company with open roles updated inside the window gets one `hiring` signal."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

from django.conf import settings

from leads.providers import register_provider
from leads.providers.base import CompanyIntentProvider, IntentQuery, ProviderError, Signal
from leads.providers.http import call

WORKERS = 8


def board_token(domain: str) -> str:
    return domain.split(".", 1)[0]


@register_provider("intent")
class GreenhouseHiring(CompanyIntentProvider):
    name = "greenhouse"
    signal_types = ("hiring",)

    @classmethod
    def enabled(cls) -> bool:
        return bool(settings.LEADS_GREENHOUSE_BASE_URL)

    def _board(self, domain: str):
        token = board_token(domain)
        url = f"{settings.LEADS_GREENHOUSE_BASE_URL.rstrip('/')}/{token}/jobs"
        try:
            return domain, token, call(self.name, "GET", url, not_found_ok=True), None
        except ProviderError as exc:
            return domain, token, None, exc

    def find(self, query: IntentQuery) -> list[Signal]:
        with ThreadPoolExecutor(max_workers=WORKERS) as pool:
            answers = list(pool.map(self._board, query.company_domains))
        failures = [a for a in answers if a[3] is not None]
        if answers and len(failures) == len(answers):
            raise failures[0][3]
        out = []
        for domain, token, body, _err in answers:
            jobs = (body or {}).get("jobs") or []
            recent = []
            for job in jobs:
                try:
                    updated = datetime.fromisoformat((job.get("updated_at") or "").replace("Z", "+00:00")).date()
                except ValueError:
                    continue
                if updated >= query.since:
                    recent.append((updated, job))
            if not recent:
                continue
            recent.sort(key=lambda x: x[0], reverse=True)
            titles = [j.get("title") for _, j in recent if j.get("title")][:3]
            summary = f"{len(recent)} open role{'s' if len(recent) != 1 else ''}"
            if titles:
                summary += ": " + ", ".join(titles)
            out.append(Signal(company_domain=domain, signal="hiring", summary=summary, observed_at=recent[0][0],
                              evidence_url=f"https://boards.greenhouse.io/{token}", source=self.name))
        return out

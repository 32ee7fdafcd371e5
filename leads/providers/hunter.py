"""Hunter (hunter.io) Email Finder as a person-enrichment provider. Enabled by HUNTER_API_KEY.

API: `GET {HUNTER_BASE_URL}/email-finder?domain=…&first_name=…&last_name=…&api_key=…` (or `full_name=…`, or
`linkedin_handle=…`), documented at https://hunter.io/api-documentation/v2#email-finder. The answer's
`data.verification` carries the date and status of Hunter's last verification; `accept_all` marks catch-all
domains. No email found is a miss."""

from __future__ import annotations

import re
from datetime import date

from django.conf import settings

from leads.identity import fingerprint, full_name_of
from leads.providers import register_provider
from leads.providers.base import Contact, PersonEnrichmentProvider, PersonQuery
from leads.providers.http import call

LINKEDIN_HANDLE = re.compile(r"linkedin\.[a-z.]+/in/([^/?#]+)", re.I)
STATUS = {"valid": "valid", "accept_all": "catch_all", "unknown": "unknown", "invalid": "invalid",
          "webmail": "valid", "disposable": "invalid"}


@register_provider("enrich")
class HunterEnrich(PersonEnrichmentProvider):
    name = "hunter"

    @classmethod
    def enabled(cls) -> bool:
        return bool(settings.LEADS_HUNTER_API_KEY)

    def can_answer(self, query: PersonQuery) -> bool:
        if not ({"work_email", "profile"} & set(query.want)):
            return False  # Hunter has no mobile numbers
        return bool((query.name and query.company_domain) or LINKEDIN_HANDLE.search(query.social_url or ""))

    def enrich(self, query: PersonQuery) -> Contact | None:
        params = {"api_key": settings.LEADS_HUNTER_API_KEY}
        if query.name and query.company_domain:
            params["domain"] = query.company_domain
            if query.first_name and query.last_name:
                params.update(first_name=query.first_name, last_name=query.last_name)
            else:
                params["full_name"] = query.name
        else:
            params["linkedin_handle"] = LINKEDIN_HANDLE.search(query.social_url).group(1)
        body = call(self.name, "GET", f"{settings.LEADS_HUNTER_BASE_URL.rstrip('/')}/email-finder", params=params,
                    not_found_ok=True)
        data = (body or {}).get("data") or {}
        if not data.get("email"):
            return None
        verification = data.get("verification") or {}
        status = STATUS.get(verification.get("status") or "", "catch_all" if data.get("accept_all") else "unknown")
        try:
            verified = date.fromisoformat(verification["date"][:10]) if verification.get("date") else None
        except ValueError:
            verified = None
        full = full_name_of("", data.get("first_name"), data.get("last_name")) or query.name
        domain = (data.get("domain") or query.company_domain or "").lower()
        social = data.get("linkedin_url") or query.social_url or ""
        return Contact(
            fingerprint=fingerprint(social_url=social, full_name=full, company_domain=domain),
            full_name=full, first_name=data.get("first_name") or "", last_name=data.get("last_name") or "",
            title=data.get("position") or "", company_name=data.get("company") or "", company_domain=domain,
            social_url=social, work_email=data["email"], work_email_status=status, work_email_verified_at=verified,
            mobile_phone="", source=self.name,
        )

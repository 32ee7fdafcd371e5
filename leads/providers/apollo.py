"""Apollo (apollo.io) People Search as a people-search provider. Enabled by APOLLO_API_KEY.

API: `POST {APOLLO_BASE_URL}/mixed_people/search` with header `X-Api-Key`, body `person_titles[]`,
`person_locations[]`, `organization_num_employees_ranges[]` ("min,max"), `page`, `per_page` (at most 100),
documented at https://docs.apollo.io/reference/people-search. Answers `people[]` and
`pagination.total_entries`. Apollo filters industries by its own tag ids, so queries with `industries` are
left to other providers; its title matching is Apollo's own (not strict substring)."""

from __future__ import annotations

from django.conf import settings

from leads.identity import fingerprint, norm_domain
from leads.providers import register_provider
from leads.providers.base import Lead, PeopleSearchProvider, ProviderError, SearchPage, SearchQuery
from leads.providers.http import call

PER_PAGE = 100


@register_provider("search")
class ApolloSearch(PeopleSearchProvider):
    name = "apollo"

    @classmethod
    def enabled(cls) -> bool:
        return bool(settings.LEADS_APOLLO_API_KEY)

    def can_answer(self, query: SearchQuery) -> bool:
        return not query.industries

    def _page(self, query: SearchQuery, page: int) -> dict:
        body: dict = {"page": page, "per_page": PER_PAGE}
        if query.titles:
            body["person_titles"] = query.titles
        if query.locations:
            body["person_locations"] = query.locations
        if query.headcount_min is not None or query.headcount_max is not None:
            lo = query.headcount_min if query.headcount_min is not None else 1
            hi = query.headcount_max if query.headcount_max is not None else 10_000_000
            body["organization_num_employees_ranges"] = [f"{lo},{hi}"]
        return call(self.name, "POST", f"{settings.LEADS_APOLLO_BASE_URL.rstrip('/')}/mixed_people/search",
                    json=body, headers={"X-Api-Key": settings.LEADS_APOLLO_API_KEY, "Cache-Control": "no-cache"}) or {}

    def search(self, query: SearchQuery) -> SearchPage:
        try:
            offset = int(query.after or 0)
        except ValueError as exc:
            raise ProviderError("apollo: bad cursor", permanent=True, provider=self.name) from exc
        leads: list[Lead] = []
        total = 0
        page = offset // PER_PAGE + 1
        skip = offset % PER_PAGE
        while len(leads) < query.limit:
            data = self._page(query, page)
            total = int((data.get("pagination") or {}).get("total_entries") or 0)
            people = data.get("people") or []
            for p in people[skip:]:
                org = p.get("organization") or {}
                domain = norm_domain(org.get("primary_domain") or org.get("website_url") or "")
                name = p.get("name") or " ".join(x for x in (p.get("first_name"), p.get("last_name")) if x)
                leads.append(Lead(
                    fingerprint=fingerprint(social_url=p.get("linkedin_url") or "", full_name=name, company_domain=domain),
                    full_name=name, title=p.get("title") or "", company_name=org.get("name") or "",
                    company_domain=domain, social_url=p.get("linkedin_url") or "", city=p.get("city") or "",
                    region=p.get("state") or "", country=p.get("country") or "",
                ))
            skip = 0
            if len(people) < PER_PAGE:
                break
            page += 1
        leads = leads[: query.limit]
        end = offset + len(leads)
        return SearchPage(leads=leads, total_found=total, next_after=str(end) if end < total and leads else None)

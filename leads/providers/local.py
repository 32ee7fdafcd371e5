"""The `local` provider: the dataset loaded with `import_leads` / `import_signals` (or `seed_demo`)."""

from __future__ import annotations

from leads.identity import full_name_of, norm_domain, norm_email, norm_social, norm_text
from leads.models import IntentSignal, Person
from leads.providers import register_provider
from leads.providers.base import (
    CompanyIntentProvider,
    Contact,
    IntentQuery,
    Lead,
    PeopleSearchProvider,
    PersonEnrichmentProvider,
    PersonQuery,
    ProviderError,
    SearchPage,
    SearchQuery,
    Signal,
)
from leads.search_index import location_condition, title_condition


def people_filter(query: SearchQuery):
    qs = Person.objects.all()
    if query.titles:
        qs = qs.filter(title_condition(query.titles))
    if query.industries:
        qs = qs.filter(industry_key__in=query.industries)
    if query.locations:
        qs = qs.filter(location_condition(query.locations))
    if query.headcount_min is not None:
        qs = qs.filter(headcount__gte=query.headcount_min)
    if query.headcount_max is not None:
        qs = qs.filter(headcount__lte=query.headcount_max)
    return qs


@register_provider("search")
class LocalSearch(PeopleSearchProvider):
    name = "local"

    def search(self, query: SearchQuery) -> SearchPage:
        base = people_filter(query)
        page_qs = base
        if query.after:
            try:
                after = int(query.after)
            except ValueError as exc:
                raise ProviderError("bad cursor", permanent=True, provider=self.name) from exc
            page_qs = base.filter(id__gt=after)
        rows = list(page_qs.order_by("id").values(
            "id", "fingerprint", "full_name", "title", "company_name", "company_domain", "social_url",
            "city", "region", "country",
        )[: query.limit + 1])
        more = len(rows) > query.limit
        rows = rows[: query.limit]
        leads = [Lead(**{k: v for k, v in r.items() if k != "id"}) for r in rows]
        return SearchPage(leads=leads, total_found=base.count(),
                          next_after=str(rows[-1]["id"]) if more and rows else None)


def person_lookup(query: PersonQuery) -> Person | None:
    qs = Person.objects.all()
    if query.fingerprint:
        return qs.filter(fingerprint=query.fingerprint).first()
    if query.social_url:
        return qs.filter(social_key=norm_social(query.social_url)).order_by("id").first()
    if query.email:
        return qs.filter(email_key=norm_email(query.email)).order_by("id").first()
    name = norm_text(full_name_of(query.full_name, query.first_name, query.last_name))
    if name and query.company_domain:
        return qs.filter(company_domain=norm_domain(query.company_domain), name_key=name).order_by("id").first()
    return None


def contact_of(p: Person, source: str = "local") -> Contact:
    return Contact(
        fingerprint=p.fingerprint, full_name=p.full_name, first_name=p.first_name, last_name=p.last_name,
        title=p.title, company_name=p.company_name, company_domain=p.company_domain, social_url=p.social_url,
        city=p.city, region=p.region, country=p.country, work_email=p.work_email,
        work_email_status=p.work_email_status, work_email_verified_at=p.work_email_verified_at,
        mobile_phone=p.mobile_phone, source=source,
    )


@register_provider("enrich")
class LocalEnrich(PersonEnrichmentProvider):
    name = "local"

    def enrich(self, query: PersonQuery) -> Contact | None:
        person = person_lookup(query)
        return contact_of(person) if person else None


@register_provider("intent")
class LocalIntent(CompanyIntentProvider):
    name = "local"

    def find(self, query: IntentQuery) -> list[Signal]:
        rows = IntentSignal.objects.filter(
            company_domain__in=query.company_domains, signal__in=query.signals, observed_at__gte=query.since,
        ).order_by("company_domain", "-observed_at", "signal", "id")
        return [Signal(company_domain=r.company_domain, signal=r.signal, summary=r.summary,
                       observed_at=r.observed_at, evidence_url=r.evidence_url, source=self.name) for r in rows]

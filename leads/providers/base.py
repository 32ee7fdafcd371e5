"""The provider contract: one base class per capability, normalized dataclasses in and out.

A provider is a small module (healthchecks-style `TRANSPORTS`): it subclasses one of the base classes below,
gives itself a `name`, and is registered with `leads.providers.register_provider`. The waterfall order of
each capability is configuration (`LEADS_SEARCH_PROVIDERS`, `LEADS_ENRICH_PROVIDERS`, `LEADS_INTENT_PROVIDERS`).

Rules every provider follows:

- Return normalized dataclasses (`Lead`, `Contact`, `Signal`, `SearchPage`), never vendor payloads.
- A lookup that finds nothing is a normal answer (`None`, an empty page, an empty list), never an error.
- Anything that stops the provider from answering (network error, timeout, 5xx, quota, bad credentials) is
  raised as `ProviderError`; `permanent=True` when retrying cannot help (bad credentials, a request the vendor
  rejects), `permanent=False` otherwise. The waterfall then asks the next provider. When every provider able to
  answer raised, the verb fails with 502 `provider_unavailable` and nothing is charged.
- `can_answer(query)` says whether the provider is able to answer this query at all (for instance a vendor that
  needs a name and a domain cannot answer a lookup by profile URL). Providers that cannot answer are not asked
  and do not count as failed.
- `enabled()` is False when the provider is not configured (no API key / URL); disabled providers are skipped.
- Providers never touch billing: the verb computes the charge from what they return.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

SIGNAL_TYPES = ("hiring", "funding", "news", "job_change", "technology")
EMAIL_STATUSES = ("valid", "catch_all", "unknown", "invalid")


class ProviderError(Exception):
    """A provider could not answer. `permanent=True` when a retry cannot help."""

    def __init__(self, message: str, *, permanent: bool = False, provider: str = ""):
        super().__init__(message)
        self.permanent = permanent
        self.provider = provider


# --- normalized data ------------------------------------------------------------------------------
@dataclass
class Lead:
    """A person as find_leads shows it (the email is never part of a search answer)."""

    fingerprint: str
    full_name: str
    title: str = ""
    company_name: str = ""
    company_domain: str = ""
    social_url: str = ""
    city: str = ""
    region: str = ""
    country: str = ""

    @property
    def location(self) -> str:
        return ", ".join(p for p in (self.city, self.region, self.country) if p)


@dataclass
class SearchQuery:
    """find_leads filters, already validated. Lists are lower-cased and stripped; empty means no filter.

    titles: any item is a case-insensitive substring of the title. industries: case-insensitive equality.
    locations: case-insensitive equality with city, region or country. headcount bounds are inclusive.
    `after` is the provider's own opaque cursor from a previous page (or None for the first page)."""

    titles: list[str] = field(default_factory=list)
    industries: list[str] = field(default_factory=list)
    locations: list[str] = field(default_factory=list)
    headcount_min: int | None = None
    headcount_max: int | None = None
    limit: int = 25
    after: str | None = None
    audience: str = ""


@dataclass
class SearchPage:
    """One page of a deterministic order. `next_after` is None on the last page."""

    leads: list[Lead]
    total_found: int
    next_after: str | None = None


@dataclass
class PersonQuery:
    """One identifiable combination, normalized: fingerprint; social_url; email; or a name with company_domain."""

    fingerprint: str = ""
    full_name: str = ""
    first_name: str = ""
    last_name: str = ""
    company_domain: str = ""
    social_url: str = ""
    email: str = ""
    want: tuple[str, ...] = ("work_email",)

    @property
    def name(self) -> str:
        return self.full_name or " ".join(p for p in (self.first_name, self.last_name) if p)


@dataclass
class Contact:
    """What an enrichment provider knows about a person. `work_email_status` is the source's own status
    (`valid`, `catch_all`, `unknown`, `invalid`) and `work_email_verified_at` the date it was last verified; the
    verb degrades stale or unverified statuses to `unknown` (CONTRACT 4.2)."""

    fingerprint: str = ""
    full_name: str = ""
    first_name: str = ""
    last_name: str = ""
    title: str = ""
    company_name: str = ""
    company_domain: str = ""
    social_url: str = ""
    city: str = ""
    region: str = ""
    country: str = ""
    work_email: str = ""
    work_email_status: str = ""
    work_email_verified_at: date | None = None
    mobile_phone: str = ""
    source: str = ""


@dataclass
class IntentQuery:
    """Lower-cased, de-duplicated domains; requested signal types; only signals observed on or after `since`."""

    company_domains: list[str]
    signals: list[str]
    since: date


@dataclass
class Signal:
    company_domain: str
    signal: str
    summary: str
    observed_at: date
    evidence_url: str = ""
    source: str = ""


# --- capabilities ---------------------------------------------------------------------------------
class Provider:
    name: str = ""

    @classmethod
    def enabled(cls) -> bool:
        """False when not configured; a disabled provider is skipped by the waterfall."""
        return True


class PeopleSearchProvider(Provider):
    """Finds people matching find_leads filters.

    `search(query)` returns a `SearchPage` in a deterministic order (the same query and cursor always give the
    same page), at most `query.limit` leads, with `total_found` counting every match, and `next_after` an opaque
    string that `query.after` accepts to continue. Raise `ProviderError` when the source cannot answer."""

    def can_answer(self, query: SearchQuery) -> bool:
        return True

    def search(self, query: SearchQuery) -> SearchPage:
        raise NotImplementedError


class PersonEnrichmentProvider(Provider):
    """Resolves one person to contact data.

    `enrich(query)` returns a `Contact` for the person the query identifies, or None when the provider does not
    know them (a miss, never an error). It may return a contact without the items asked for in `query.want`;
    the waterfall then asks the next provider. Raise `ProviderError` when the source cannot answer."""

    def can_answer(self, query: PersonQuery) -> bool:
        return True

    def enrich(self, query: PersonQuery) -> Contact | None:
        raise NotImplementedError


class CompanyIntentProvider(Provider):
    """Reports buying-intent signals for companies.

    `signal_types` lists the signal types this provider can report (a subset of `SIGNAL_TYPES`); it is asked only
    when the query requests one of them, and only for those types. `find(query)` returns every `Signal` it knows
    for `query.company_domains` with `signal` in `query.signals` observed on or after `query.since` (possibly
    none). Every provider able to answer is asked and the answers are merged. Raise `ProviderError` when the
    source cannot answer."""

    signal_types: tuple[str, ...] = SIGNAL_TYPES

    def can_answer(self, query: IntentQuery) -> bool:
        return bool(set(query.signals) & set(self.signal_types))

    def find(self, query: IntentQuery) -> list[Signal]:
        raise NotImplementedError

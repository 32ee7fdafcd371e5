"""The `dns_technology` intent provider: `technology` signals from changes of a company's DNS-visible stack.

Registered with the leads provider registry under the name `dns_technology` (enabled in the default
`LEADS_INTENT_PROVIDERS`). Each `find` scans the asked domains (at most once per DNS_TECHNOLOGY_RESCAN_SECONDS)
and reports the stack changes seen within the query window; a first scan is a baseline and reports nothing.
"""

from __future__ import annotations

from django.conf import settings

from leads.providers import CompanyIntentProvider, IntentQuery, ProviderError, Signal, register_provider
from leads.verification import technology


def technology_signals(*, domains: list[str], since) -> list[Signal]:
    """The adapter used by the provider (callable on its own): scan, then report changes since `since`.
    Raises ProviderError when no domain could be scanned because the DNS failed."""
    report = technology.technology_scan(domains=domains)
    if report.scans and len(report.failed) == len(report.scans):
        # every lookup failed (an NXDOMAIN is an answer: no stack); a partial failure still answers the rest
        raise ProviderError(f"DNS unavailable for {', '.join(report.failed[:3])}", provider=DnsTechnology.name)
    return [
        Signal(company_domain=change.domain, signal="technology", summary=change.summary,
               observed_at=change.observed_at.date(), source=DnsTechnology.name)
        for change in technology.technology_changes(domains=domains, since=since)
    ]


@register_provider("intent")
class DnsTechnology(CompanyIntentProvider):
    name = "dns_technology"
    signal_types = ("technology",)

    @classmethod
    def enabled(cls) -> bool:
        return bool(settings.DNS_TECHNOLOGY_ENABLED)

    def find(self, query: IntentQuery) -> list[Signal]:
        if "technology" not in query.signals:
            return []
        return technology_signals(domains=query.company_domains, since=query.since)

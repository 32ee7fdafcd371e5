"""Provider registry: capability -> name -> provider class, and the configured waterfall of each capability.

Register from any module:

    from leads.providers import register_provider, CompanyIntentProvider

    @register_provider("intent")
    class DnsTechnology(CompanyIntentProvider):
        name = "dns_technology"
        signal_types = ("technology",)
        ...

The waterfall order is the settings list for the capability (`LEADS_SEARCH_PROVIDERS`,
`LEADS_ENRICH_PROVIDERS`, `LEADS_INTENT_PROVIDERS`); an entry is a registered name or a dotted path to a
provider class (imported on first use). `LEADS_PROVIDER_MODULES` lists modules imported before the first lookup
so that their `register_provider` calls have run.
"""

from __future__ import annotations

import importlib

from django.conf import settings
from django.utils.module_loading import import_string

from leads.providers.base import (
    SIGNAL_TYPES,
    CompanyIntentProvider,
    Contact,
    IntentQuery,
    Lead,
    PeopleSearchProvider,
    PersonEnrichmentProvider,
    PersonQuery,
    Provider,
    ProviderError,
    SearchPage,
    SearchQuery,
    Signal,
)

__all__ = [
    "SIGNAL_TYPES", "CompanyIntentProvider", "Contact", "IntentQuery", "Lead", "PeopleSearchProvider",
    "PersonEnrichmentProvider", "PersonQuery", "Provider", "ProviderError", "SearchPage", "SearchQuery", "Signal",
    "register_provider", "registered", "waterfall",
]

CAPABILITIES = {
    "search": (PeopleSearchProvider, "LEADS_SEARCH_PROVIDERS"),
    "enrich": (PersonEnrichmentProvider, "LEADS_ENRICH_PROVIDERS"),
    "intent": (CompanyIntentProvider, "LEADS_INTENT_PROVIDERS"),
}

_REGISTRY: dict[str, dict[str, type[Provider]]] = {cap: {} for cap in CAPABILITIES}
_modules_loaded = False


def register_provider(capability: str, cls: type[Provider] | None = None, *, name: str | None = None):
    """Register a provider class for a capability (`search`, `enrich`, `intent`). Usable as a decorator."""
    if capability not in CAPABILITIES:
        raise ValueError(f"unknown capability {capability!r}; one of {sorted(CAPABILITIES)}")

    def _do(klass: type[Provider]) -> type[Provider]:
        base = CAPABILITIES[capability][0]
        if not issubclass(klass, base):
            raise TypeError(f"{klass.__name__} must subclass {base.__name__}")
        key = name or klass.name
        if not key:
            raise ValueError(f"{klass.__name__} has no name")
        _REGISTRY[capability][key] = klass
        return klass

    return _do(cls) if cls is not None else _do


def unregister_provider(capability: str, name: str) -> None:
    _REGISTRY[capability].pop(name, None)


def _load_modules() -> None:
    global _modules_loaded
    if _modules_loaded:
        return
    for module in settings.LEADS_PROVIDER_MODULES:
        importlib.import_module(module)
    _modules_loaded = True


def registered(capability: str) -> dict[str, type[Provider]]:
    _load_modules()
    return dict(_REGISTRY[capability])


def _resolve(capability: str, entry: str) -> type[Provider] | None:
    found = _REGISTRY[capability].get(entry)
    if found is None and "." in entry:
        found = import_string(entry)
    return found


def waterfall(capability: str) -> list[Provider]:
    """Instances of the enabled providers of a capability, in the configured order. Unknown names are skipped
    (a provider module that is not installed must not take the API down)."""
    _load_modules()
    base, setting = CAPABILITIES[capability]
    out: list[Provider] = []
    for entry in getattr(settings, setting):  # the capability's setting, e.g. LEADS_SEARCH_PROVIDERS
        klass = _resolve(capability, entry)
        if klass is None or not issubclass(klass, base) or not klass.enabled():
            continue
        out.append(klass())
    return out

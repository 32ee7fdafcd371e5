import pytest

from core.money import parse_credits
from leads import importer
from leads.providers import registered, unregister_provider


def load_leads(*rows):
    report = importer.import_leads((i, dict(r), None) for i, r in enumerate(rows, start=1))
    assert report.rejected == 0, report.errors
    return report


def load_signals(*rows):
    report = importer.import_signals((i, dict(r), None) for i, r in enumerate(rows, start=1))
    assert report.rejected == 0, report.errors
    return report


def available(api) -> int:
    """The workspace's available balance in micro-credits, read through the API."""
    return parse_credits(api.get("/v1/usage").json()["credits_available"])


def fields(resp):
    """The field errors of a 400 invalid_request envelope."""
    assert resp.status_code == 400, resp.content
    assert resp.json()["error"]["code"] == "invalid_request"
    return resp.json()["error"]["details"]["fields"]


def person(**kw):
    base = {"first_name": "Ada", "last_name": "Lovelace", "title": "VP Sales", "company_name": "Acme",
            "company_domain": "acme.com", "industry": "Computer Software", "headcount": "120", "city": "London",
            "region": "England", "country": "United Kingdom", "social_url": "", "work_email": "",
            "work_email_status": "", "work_email_verified_at": "", "mobile_phone": ""}
    base.update(kw)
    return base


@pytest.fixture
def providers(settings):
    """Set the waterfalls for a test: providers(search=[...], enrich=[...], intent=[...]); removes test providers
    registered through it afterwards."""
    added = []

    def _set(*, search=None, enrich=None, intent=None, register=()):
        for capability, cls in register:
            from leads.providers import register_provider
            register_provider(capability, cls)
            added.append((capability, cls.name))
        if search is not None:
            settings.LEADS_SEARCH_PROVIDERS = search
        if enrich is not None:
            settings.LEADS_ENRICH_PROVIDERS = enrich
        if intent is not None:
            settings.LEADS_INTENT_PROVIDERS = intent

    registered("search")
    yield _set
    for capability, name in added:
        unregister_provider(capability, name)

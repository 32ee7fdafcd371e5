"""Vendor adapters against recorded responses written from each vendor's public API documentation
(httpx.MockTransport; nothing leaves the machine)."""

import json
from datetime import date

import httpx
import pytest
import time_machine

from leads.providers import http as provider_http
from tests.leads.conftest import load_leads, person

# https://hunter.io/api-documentation/v2#email-finder (response example)
HUNTER_FOUND = {
    "data": {
        "first_name": "Alexis", "last_name": "Ohanian", "email": "alexis@reddit.com", "score": 97,
        "domain": "reddit.com", "accept_all": False, "position": "Cofounder", "twitter": None,
        "linkedin_url": None, "phone_number": None, "company": "Reddit",
        "sources": [{"domain": "redditblog.com", "uri": "http://redditblog.com/2009/07/01/", "extracted_on": "2015-12-26",
                     "last_seen_on": "2017-08-26", "still_on_page": True}],
        "verification": {"date": "2026-06-01", "status": "valid"},
    },
    "meta": {"params": {"first_name": "Alexis", "last_name": "Ohanian", "full_name": None, "domain": "reddit.com",
                        "company": None, "max_duration": None}},
}
HUNTER_NOT_FOUND = {"data": {"first_name": "Alexis", "last_name": "Ohanian", "email": None, "score": None,
                             "domain": "reddit.com", "accept_all": False, "verification": {"date": None, "status": None}},
                    "meta": {"params": {"domain": "reddit.com"}}}
HUNTER_UNAUTHORIZED = {"errors": [{"id": "authentication_failed", "code": 401,
                                   "details": "No user found for the API key supplied"}]}

# https://docs.apollo.io/reference/people-search (response example, trimmed)
APOLLO_PAGE = {
    "breadcrumbs": [{"label": "Titles", "signal_field_name": "person_titles", "value": "sales", "display_name": "sales"}],
    "partial_results_only": False,
    "pagination": {"page": 1, "per_page": 100, "total_entries": 2, "total_pages": 1},
    "contacts": [],
    "people": [
        {"id": "5e66b6381e05b4008c8331b8", "first_name": "Tim", "last_name": "Zheng", "name": "Tim Zheng",
         "linkedin_url": "http://www.linkedin.com/in/tim-zheng-677ba010", "title": "Founder & CEO",
         "email_status": None, "photo_url": None, "headline": "Founder & CEO at Apollo", "email": None,
         "city": "San Francisco", "state": "California", "country": "United States",
         "organization": {"id": "5e66b6381e05b4008c8331b8", "name": "Apollo.io", "website_url": "http://www.apollo.io",
                          "primary_domain": "apollo.io", "estimated_num_employees": 850}},
        {"id": "60d2", "first_name": "Jane", "last_name": "Roe", "name": "Jane Roe", "linkedin_url": None,
         "title": "VP Sales", "city": "Austin", "state": "Texas", "country": "United States",
         "organization": {"name": "Globex", "website_url": "https://globex.example", "primary_domain": None}},
    ],
}

# https://developers.greenhouse.io/job-board.html#list-jobs (response example)
GREENHOUSE_JOBS = {
    "jobs": [
        {"id": 127817, "internal_job_id": 144381, "title": "Vault Designer", "updated_at": "2026-06-10T10:55:28-05:00",
         "requisition_id": "50", "location": {"name": "NYC"}, "absolute_url": "https://boards.greenhouse.io/vaulttec/jobs/127817",
         "language": "en", "metadata": None},
        {"id": 127818, "internal_job_id": 144382, "title": "Account Executive", "updated_at": "2026-05-02T09:00:00-05:00",
         "location": {"name": "Remote"}, "absolute_url": "https://boards.greenhouse.io/vaulttec/jobs/127818"},
        {"id": 1, "title": "Old role", "updated_at": "2025-01-01T00:00:00Z", "location": {"name": "NYC"},
         "absolute_url": "https://boards.greenhouse.io/vaulttec/jobs/1"},
    ],
    "meta": {"total": 3},
}


@pytest.fixture(autouse=True)
def _frozen_today():
    with time_machine.travel("2026-06-15T12:00:00Z", tick=False):
        yield


@pytest.fixture
def vendor(monkeypatch):
    """vendor(handler): route every provider HTTP call to handler(request) -> httpx.Response; returns the log."""
    seen = []

    def _install(handler):
        def _h(request):
            seen.append(request)
            return handler(request)
        monkeypatch.setattr(provider_http, "TRANSPORT", httpx.MockTransport(_h))
        return seen

    return _install


# --- Hunter -----------------------------------------------------------------------------------------
def test_hunter_enrich_hit(api, db, settings, providers, vendor):
    settings.LEADS_HUNTER_API_KEY = "hk_test"
    providers(enrich=["local", "hunter"])
    log = vendor(lambda r: httpx.Response(200, json=HUNTER_FOUND))
    r = api.post("/v1/enrich", {"person": {"first_name": "Alexis", "last_name": "Ohanian", "company_domain": "reddit.com"}})
    assert r.status_code == 200, r.content
    body = r.json()
    assert body["result"]["outcome"] == "hit"
    assert body["result"]["contact"]["work_email"] == "alexis@reddit.com"
    assert body["result"]["contact"]["work_email_status"] == "valid"
    assert body["result"]["contact"]["title"] == "Cofounder"
    assert body["result"]["contact"]["fingerprint"].startswith("fp1:")
    assert body["service"]["credits_charged"] == "5"
    (req,) = log
    assert req.url.path == "/v2/email-finder"
    assert dict(req.url.params) == {"api_key": "hk_test", "domain": "reddit.com", "first_name": "Alexis",
                                    "last_name": "Ohanian"}


def test_hunter_stale_verification_and_accept_all(api, db, settings, providers, vendor):
    settings.LEADS_HUNTER_API_KEY = "hk_test"
    providers(enrich=["hunter"])
    stale = json.loads(json.dumps(HUNTER_FOUND))
    stale["data"]["verification"] = {"date": "2026-04-01", "status": "valid"}
    vendor(lambda r: httpx.Response(200, json=stale))
    r = api.post("/v1/enrich", {"person": {"full_name": "Alexis Ohanian", "company_domain": "reddit.com"}})
    assert r.json()["result"]["contact"]["work_email_status"] == "unknown"
    catch_all = json.loads(json.dumps(HUNTER_FOUND))
    catch_all["data"]["verification"] = {"date": "2026-06-10", "status": "accept_all"}
    vendor(lambda r: httpx.Response(200, json=catch_all))
    r = api.post("/v1/enrich", {"person": {"full_name": "Alexis Ohanian", "company_domain": "reddit.com"},
                                "want": ["work_email", "profile"]})
    assert r.json()["result"]["contact"]["work_email_status"] == "catch_all"


def test_hunter_not_found_is_a_free_miss(api, db, settings, providers, vendor):
    settings.LEADS_HUNTER_API_KEY = "hk_test"
    providers(enrich=["local", "hunter"])
    vendor(lambda r: httpx.Response(200, json=HUNTER_NOT_FOUND))
    r = api.post("/v1/enrich", {"person": {"full_name": "Alexis Ohanian", "company_domain": "reddit.com"}})
    assert r.json()["result"]["outcome"] == "miss" and r.json()["service"]["credits_charged"] == "0"


@pytest.mark.parametrize("status", [401, 429, 500, 503])
def test_hunter_errors_fall_through_or_502(api, db, settings, providers, vendor, status):
    settings.LEADS_HUNTER_API_KEY = "hk_test"
    load_leads(person(first_name="Alexis", last_name="Ohanian", company_domain="reddit.com", work_email="a@reddit.com",
                      work_email_status="valid", work_email_verified_at="2026-06-01"))
    vendor(lambda r: httpx.Response(status, json=HUNTER_UNAUTHORIZED))
    providers(enrich=["hunter", "local"])
    r = api.post("/v1/enrich", {"person": {"full_name": "Alexis Ohanian", "company_domain": "reddit.com"}})
    assert r.json()["result"]["contact"]["work_email"] == "a@reddit.com"
    providers(enrich=["hunter"])
    r = api.post("/v1/enrich", {"person": {"full_name": "Somebody Else", "company_domain": "reddit.com"}})
    assert r.status_code == 502 and r.json()["error"]["code"] == "provider_unavailable"


def test_hunter_network_error_is_502(api, db, settings, providers, vendor):
    settings.LEADS_HUNTER_API_KEY = "hk_test"
    providers(enrich=["hunter"])

    def boom(request):
        raise httpx.ConnectTimeout("timed out", request=request)
    vendor(boom)
    r = api.post("/v1/enrich", {"person": {"full_name": "Alexis Ohanian", "company_domain": "reddit.com"}})
    assert r.status_code == 502


def test_hunter_by_linkedin_handle_and_cannot_answer_email_lookups(api, db, settings, providers, vendor):
    settings.LEADS_HUNTER_API_KEY = "hk_test"
    providers(enrich=["hunter"])
    log = vendor(lambda r: httpx.Response(200, json=HUNTER_FOUND))
    r = api.post("/v1/enrich", {"person": {"social_url": "https://www.linkedin.com/in/alexisohanian/"}})
    assert r.json()["result"]["outcome"] == "hit"
    assert log[-1].url.params["linkedin_handle"] == "alexisohanian"
    r = api.post("/v1/enrich", {"person": {"email": "x@reddit.com"}})  # no able provider
    assert r.status_code == 502


def test_hunter_disabled_without_key(settings):
    from leads.providers import waterfall

    settings.LEADS_HUNTER_API_KEY = None
    settings.LEADS_ENRICH_PROVIDERS = ["local", "hunter"]
    assert [p.name for p in waterfall("enrich")] == ["local"]


# --- Apollo -----------------------------------------------------------------------------------------
def test_apollo_search(api, db, settings, providers, vendor):
    settings.LEADS_APOLLO_API_KEY = "ak_test"
    providers(search=["local", "apollo"])  # local has nothing: falls to apollo
    log = vendor(lambda r: httpx.Response(200, json=APOLLO_PAGE))
    r = api.post("/v1/find_leads", {"audience": "founders", "titles": ["CEO"], "locations": ["united states"],
                                    "company_headcount": {"min": 100}, "limit": 1})
    assert r.status_code == 200, r.content
    res = r.json()["result"]
    assert res["total_found"] == 2
    assert res["leads"][0]["full_name"] == "Tim Zheng"
    assert res["leads"][0]["company_domain"] == "apollo.io"
    assert res["leads"][0]["location"] == "San Francisco, California, United States"
    assert res["leads"][0]["work_email"] is None
    assert r.json()["service"]["credits_charged"] == "0.2"
    sent = json.loads(log[0].content)
    assert log[0].headers["x-api-key"] == "ak_test"
    assert sent == {"page": 1, "per_page": 100, "person_titles": ["ceo"], "person_locations": ["united states"],
                    "organization_num_employees_ranges": ["100,10000000"]}
    r2 = api.post("/v1/find_leads", {"audience": "founders", "titles": ["CEO"], "locations": ["united states"],
                                     "company_headcount": {"min": 100}, "limit": 1, "cursor": res["next_cursor"]})
    assert r2.json()["result"]["leads"][0]["full_name"] == "Jane Roe"
    assert r2.json()["result"]["leads"][0]["company_domain"] == "globex.example"
    assert r2.json()["result"]["next_cursor"] is None


def test_apollo_not_asked_for_industries(api, db, settings, providers, vendor):
    settings.LEADS_APOLLO_API_KEY = "ak_test"
    providers(search=["apollo"])
    vendor(lambda r: httpx.Response(200, json=APOLLO_PAGE))
    r = api.post("/v1/find_leads", {"audience": "founders", "industries": ["Internet"]})
    assert r.status_code == 502


# --- Greenhouse -------------------------------------------------------------------------------------
def test_greenhouse_hiring_signal(api, db, settings, providers, vendor):
    settings.LEADS_GREENHOUSE_BASE_URL = "https://boards-api.greenhouse.io/v1/boards"
    providers(intent=["greenhouse"])

    def handler(request):
        if request.url.path == "/v1/boards/vaulttec/jobs":
            return httpx.Response(200, json=GREENHOUSE_JOBS)
        return httpx.Response(404, json={"status": 404, "error": "Job not found"})
    vendor(handler)
    r = api.post("/v1/find_intent", {"company_domains": ["vaulttec.com", "nojobs.com"]})
    assert r.status_code == 200, r.content
    assert r.json()["result"]["signals"] == [{
        "company_domain": "vaulttec.com", "signal": "hiring",
        "summary": "2 open roles: Vault Designer, Account Executive", "observed_at": "2026-06-10",
        "evidence_url": "https://boards.greenhouse.io/vaulttec",
    }]
    assert r.json()["service"]["credits_charged"] == "10.5"


def test_greenhouse_all_failing_is_502(api, db, settings, providers, vendor):
    settings.LEADS_GREENHOUSE_BASE_URL = "https://boards-api.greenhouse.io/v1/boards"
    providers(intent=["greenhouse"])
    vendor(lambda r: httpx.Response(503))
    r = api.post("/v1/find_intent", {"company_domains": ["vaulttec.com"], "signals": ["hiring"]})
    assert r.status_code == 502
    assert date.today().isoformat() == "2026-06-15"

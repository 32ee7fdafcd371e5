"""find_leads through the HTTP API: every filter and limit, masking, order, cursor, exact charges."""

import pytest

from core.money import format_credits, parse_credits
from leads.providers import PeopleSearchProvider, ProviderError
from tests.leads.conftest import available, fields, load_leads, person

URL = "/v1/find_leads"


@pytest.fixture
def dataset(db):
    load_leads(
        person(first_name="Ada", last_name="One", title="VP Sales", company_domain="acme.com", industry="Computer Software",
               headcount="120", city="London", region="England", country="United Kingdom",
               work_email="ada@acme.com", work_email_status="valid", work_email_verified_at="2026-01-01"),
        person(first_name="Ben", last_name="Two", title="Head of Sales EMEA", company_domain="beta.io",
               industry="Financial Services", headcount="50", city="Berlin", region="Berlin", country="Germany"),
        person(first_name="Cy", last_name="Three", title="CTO", company_domain="gamma.dev", industry="computer software",
               headcount="10", city="Austin", region="Texas", country="United States"),
        person(first_name="Di", last_name="Four", title="Software Engineer", company_domain="delta.org",
               industry="Internet", headcount="5000", city="Paris", region="Ile-de-France", country="France"),
        person(first_name="Ed", last_name="Five", title="Sales Director", company_domain="eps.co",
               industry="Internet", headcount="", city="Toronto", region="Ontario", country="Canada",
               social_url="https://www.linkedin.com/in/ed-five/"),
    )


def names(resp):
    return [lead["full_name"] for lead in resp.json()["result"]["leads"]]


def test_all_leads_masked_and_charged_per_lead(api, dataset):
    before = available(api)
    r = api.post(URL, {"audience": "everyone"})
    assert r.status_code == 200, r.content
    body = r.json()
    assert names(r) == ["Ada One", "Ben Two", "Cy Three", "Di Four", "Ed Five"]
    assert body["result"]["total_found"] == 5
    assert body["result"]["next_cursor"] is None
    assert all(lead["work_email"] is None for lead in body["result"]["leads"])
    lead = body["result"]["leads"][0]
    assert set(lead) == {"fingerprint", "full_name", "title", "company_name", "company_domain", "work_email",
                         "social_url", "location"}
    assert lead["fingerprint"].startswith("fp1:")
    assert lead["location"] == "London, England, United Kingdom"
    assert body["service"]["credits_charged"] == "1"
    assert set(body["service"]) == {"request_id", "credits_charged", "credits_available"}
    assert available(api) == before - parse_credits("1")
    assert body["service"]["credits_available"] == format_credits(before - parse_credits("1"))


def test_fingerprint_stable_across_calls_and_workspaces(api, make_api, dataset):
    other, _, _ = make_api()
    a = api.post(URL, {"audience": "everyone"}).json()["result"]["leads"]
    b = other.post(URL, {"audience": "everyone"}).json()["result"]["leads"]
    assert [x["fingerprint"] for x in a] == [x["fingerprint"] for x in b]
    load_leads(person(first_name="Ada", last_name="One", title="VP Sales", company_domain="acme.com"))  # re-import
    c = api.post(URL, {"audience": "everyone"}).json()["result"]["leads"]
    assert [x["fingerprint"] for x in c] == [x["fingerprint"] for x in a]


@pytest.mark.parametrize("body, expected", [
    ({"titles": ["sales"]}, ["Ada One", "Ben Two", "Ed Five"]),
    ({"titles": ["SALES EMEA", "cto"]}, ["Ben Two", "Cy Three", "Ed Five"]),  # "Sales Dire*cto*r": substring
    ({"industries": ["COMPUTER SOFTWARE"]}, ["Ada One", "Cy Three"]),
    ({"industries": ["Internet", "Financial Services"]}, ["Ben Two", "Di Four", "Ed Five"]),
    ({"industries": ["Software"]}, []),  # equality, not substring
    ({"locations": ["germany"]}, ["Ben Two"]),
    ({"locations": ["TEXAS", "paris"]}, ["Cy Three", "Di Four"]),
    ({"locations": ["Lond"]}, []),
    ({"locations": ["berlin", "canada"]}, ["Ben Two", "Ed Five"]),  # a city and region, and a country
    ({"locations": ["atlantis"]}, []),
    ({"company_headcount": {"min": 50}}, ["Ada One", "Ben Two", "Di Four"]),
    ({"company_headcount": {"max": 50}}, ["Ben Two", "Cy Three"]),
    ({"company_headcount": {"min": 50, "max": 50}}, ["Ben Two"]),
    ({"company_headcount": {"min": 11, "max": 49}}, []),
    ({"company_headcount": {}}, ["Ada One", "Ben Two", "Cy Three", "Di Four", "Ed Five"]),
    ({"titles": ["sales"], "locations": ["canada", "germany"], "industries": ["internet"]}, ["Ed Five"]),
])
def test_filters(api, dataset, body, expected):
    r = api.post(URL, {"audience": "people", **body})
    assert r.status_code == 200, r.content
    assert names(r) == expected
    assert r.json()["result"]["total_found"] == len(expected)
    assert r.json()["service"]["credits_charged"] == format_credits(200_000 * len(expected))


def test_zero_results_is_a_free_miss(api, dataset):
    before = available(api)
    r = api.post(URL, {"audience": "nobody", "titles": ["astronaut"]})
    assert r.status_code == 200
    assert r.json()["result"] == {"leads": [], "total_found": 0, "next_cursor": None}
    assert r.json()["service"]["credits_charged"] == "0"
    assert available(api) == before


def test_cursor_pages_through_in_order(api, dataset):
    seen, cursor, charged = [], None, 0
    while True:
        body = {"audience": "people", "limit": 2, **({"cursor": cursor} if cursor else {})}
        r = api.post(URL, body)
        assert r.status_code == 200, r.content
        res = r.json()["result"]
        assert res["total_found"] == 5
        seen += [x["full_name"] for x in res["leads"]]
        charged += parse_credits(r.json()["service"]["credits_charged"])
        cursor = res["next_cursor"]
        if not cursor:
            break
    assert seen == ["Ada One", "Ben Two", "Cy Three", "Di Four", "Ed Five"]
    assert charged == parse_credits("1")


def test_cursor_with_other_filters_or_garbage_is_400(api, dataset):
    cursor = api.post(URL, {"audience": "people", "limit": 1}).json()["result"]["next_cursor"]
    assert "cursor" in fields(api.post(URL, {"audience": "people", "limit": 1, "titles": ["x"], "cursor": cursor}))
    assert "cursor" in fields(api.post(URL, {"audience": "people", "cursor": "not-a-cursor"}))


def test_exact_page_size_has_no_next_cursor(api, dataset):
    r = api.post(URL, {"audience": "people", "limit": 5})
    assert len(r.json()["result"]["leads"]) == 5
    assert r.json()["result"]["next_cursor"] is None


@pytest.mark.parametrize("n, ok", [(2, False), (3, True), (2000, True), (2001, False)])
def test_audience_length(api, dataset, n, ok):
    r = api.post(URL, {"audience": "a" * n, "limit": 1})
    if ok:
        assert r.status_code == 200, r.content
    else:
        assert "audience" in fields(r)


def test_audience_required_and_typed(api, dataset):
    assert "audience" in fields(api.post(URL, {}))
    assert "audience" in fields(api.post(URL, {"audience": 123456}))


@pytest.mark.parametrize("name", ["titles", "industries", "locations"])
@pytest.mark.parametrize("n, ok", [(0, True), (1, True), (25, True), (26, False)])
def test_list_limits(api, dataset, name, n, ok):
    r = api.post(URL, {"audience": "people", name: [f"x{i}" for i in range(n)]})
    if ok:
        assert r.status_code == 200, r.content
    else:
        assert name in fields(r)


@pytest.mark.parametrize("limit, ok", [(0, False), (1, True), (200, True), (201, False), ("5", False), (2.5, False), (True, False), (5.0, True)])
def test_limit_bounds(api, dataset, limit, ok):
    r = api.post(URL, {"audience": "people", "limit": limit})
    if ok:
        assert r.status_code == 200, r.content
    else:
        assert "limit" in fields(r)


def test_limit_caps_the_page_and_default_is_25(api, db):
    load_leads(*[person(first_name=f"P{i:03d}", last_name="X", title="Sales") for i in range(30)])
    r = api.post(URL, {"audience": "people"})
    assert len(r.json()["result"]["leads"]) == 25
    assert r.json()["result"]["total_found"] == 30
    assert r.json()["service"]["credits_charged"] == "5"
    r = api.post(URL, {"audience": "people", "limit": 1})
    assert len(r.json()["result"]["leads"]) == 1
    assert r.json()["service"]["credits_charged"] == "0.2"


def test_headcount_rules(api, dataset):
    assert "company_headcount.min" in fields(api.post(URL, {"audience": "ppl", "company_headcount": {"min": 10, "max": 5}}))
    assert "company_headcount.min" in fields(api.post(URL, {"audience": "ppl", "company_headcount": {"min": -1}}))
    assert "company_headcount.size" in fields(api.post(URL, {"audience": "ppl", "company_headcount": {"size": 5}}))


def test_unknown_field_rejected(api, dataset):
    assert "emails" in fields(api.post(URL, {"audience": "people", "emails": True}))


def test_hold_is_limit_times_price(make_api, dataset):
    from django.db.models import F

    from billing.models import CreditAccount

    api, ws, _ = make_api()
    CreditAccount.objects.filter(pk=ws.pk).update(balance_micros=F("balance_micros") - parse_credits("299"))
    r = api.post(URL, {"audience": "people", "limit": 6})  # holds 1.2 > 1 available
    assert r.status_code == 402 and r.json()["error"]["code"] == "insufficient_credits"
    r = api.post(URL, {"audience": "people", "limit": 5})  # holds exactly 1
    assert r.status_code == 200 and r.json()["service"]["credits_charged"] == "1"
    assert r.json()["service"]["credits_available"] == "0"


class Broken(PeopleSearchProvider):
    name = "broken_search"

    def search(self, query):
        raise ProviderError("vendor down")


def test_failing_provider_falls_through_to_the_next(api, dataset, providers):
    providers(search=["broken_search", "local"], register=[("search", Broken)])
    r = api.post(URL, {"audience": "people", "limit": 1})
    assert r.status_code == 200
    assert names(r) == ["Ada One"]


def test_every_provider_failing_is_502_and_free(api, dataset, providers):
    providers(search=["broken_search"], register=[("search", Broken)])
    before = available(api)
    r = api.post(URL, {"audience": "people"})
    assert r.status_code == 502
    assert r.json()["error"]["code"] == "provider_unavailable"
    assert available(api) == before


def test_title_index_follows_updates_and_short_terms(api, db):
    load_leads(person(first_name="Zed", last_name="Q", title='VP Sales "EMEA"'))
    assert names(api.post(URL, {"audience": "ppl", "titles": ["sales"]})) == ["Zed Q"]
    assert names(api.post(URL, {"audience": "ppl", "titles": ["vp"]})) == ["Zed Q"]  # shorter than a trigram
    assert names(api.post(URL, {"audience": "ppl", "titles": ['"emea"']})) == ["Zed Q"]
    assert names(api.post(URL, {"audience": "ppl", "titles": ["s OR x", "*"]})) == []
    load_leads(person(first_name="Zed", last_name="Q", title="CTO"))  # re-import: same person, new title
    assert names(api.post(URL, {"audience": "ppl", "titles": ["sales"]})) == []
    assert names(api.post(URL, {"audience": "ppl", "titles": ["ct", "cto"]})) == ["Zed Q"]

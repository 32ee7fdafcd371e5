"""find_intent through the HTTP API: pricing exactly as CONTRACT 4.4, window, defaults, de-duplication."""

from datetime import date, timedelta

import pytest
import time_machine

from core.money import parse_credits
from leads.providers import CompanyIntentProvider, ProviderError, Signal
from tests.leads.conftest import available, fields, load_signals

URL = "/v1/find_intent"
TODAY = date(2026, 6, 15)


@pytest.fixture(autouse=True)
def _frozen_today():
    with time_machine.travel("2026-06-15T12:00:00Z", tick=False):
        yield


def sig(domain, kind="hiring", days_ago=1, summary="Hiring 5 sales roles", url="https://jobs.example/1"):
    return {"company_domain": domain, "signal": kind, "summary": summary,
            "observed_at": (TODAY - timedelta(days=days_ago)).isoformat(), "evidence_url": url}


def test_worked_figure_100_scanned_8_with_signals_is_126(api, db):
    load_signals(*[sig(f"c{i}.com") for i in range(8)])
    load_signals(sig("c0.com", "funding", 3, "Series B"))  # a second signal does not count twice
    before = available(api)
    r = api.post(URL, {"company_domains": [f"c{i}.com" for i in range(100)]})
    assert r.status_code == 200, r.content
    body = r.json()
    assert body["service"]["credits_charged"] == "126"
    assert available(api) == before - parse_credits("126")
    assert body["result"]["companies_scanned"] == 100
    assert body["result"]["companies_with_signals"] == 8
    assert len(body["result"]["signals"]) == 9
    first = body["result"]["signals"][0]
    assert first == {"company_domain": "c0.com", "signal": "hiring", "summary": "Hiring 5 sales roles",
                     "observed_at": "2026-06-14", "evidence_url": "https://jobs.example/1"}


def test_no_signal_at_all_is_free(api, db):
    load_signals(sig("other.com"))
    before = available(api)
    r = api.post(URL, {"company_domains": [f"c{i}.com" for i in range(100)]})
    assert r.json()["result"]["signals"] == []
    assert r.json()["service"]["credits_charged"] == "0"
    assert available(api) == before


@pytest.mark.parametrize("scanned, with_signals, price", [(1, 1, "10"), (2, 1, "10.5"), (3, 2, "20.5"), (100, 100, "1000")])
def test_price_table(make_api, db, scanned, with_signals, price):
    api, _, _ = make_api(extra_credits=parse_credits("1000"))
    load_signals(*[sig(f"d{i}.com") for i in range(with_signals)])
    r = api.post(URL, {"company_domains": [f"d{i}.com" for i in range(scanned)]})
    assert r.json()["service"]["credits_charged"] == price


def test_domains_lowercased_and_deduplicated_before_counting(api, db):
    load_signals(sig("acme.com"))
    r = api.post(URL, {"company_domains": ["ACME.com", "acme.com", "https://www.acme.com/", "beta.com", "Beta.COM"]})
    assert r.json()["result"]["companies_scanned"] == 2
    assert r.json()["service"]["credits_charged"] == "10.5"
    assert r.json()["result"]["signals"][0]["company_domain"] == "acme.com"


def test_default_signals_are_hiring_and_funding(api, db):
    load_signals(sig("a.com", "hiring"), sig("b.com", "funding"), sig("c.com", "news"), sig("d.com", "job_change"),
                 sig("e.com", "technology"))
    r = api.post(URL, {"company_domains": ["a.com", "b.com", "c.com", "d.com", "e.com"]})
    assert {s["company_domain"] for s in r.json()["result"]["signals"]} == {"a.com", "b.com"}
    assert r.json()["service"]["credits_charged"] == "21.5"
    r = api.post(URL, {"company_domains": ["a.com", "b.com", "c.com", "d.com", "e.com"],
                       "signals": ["news", "job_change", "news"]})
    assert {s["signal"] for s in r.json()["result"]["signals"]} == {"news", "job_change"}


def test_only_the_last_90_days_count(api, db):
    load_signals(sig("old.com", days_ago=91), sig("edge.com", days_ago=90), sig("future.com", days_ago=0))
    r = api.post(URL, {"company_domains": ["old.com", "edge.com", "future.com"]})
    assert [s["company_domain"] for s in r.json()["result"]["signals"]] == ["edge.com", "future.com"]
    assert r.json()["service"]["credits_charged"] == "20.5"


def test_signal_without_evidence_url_omits_it(api, db):
    load_signals(sig("a.com", url=""))
    s = api.post(URL, {"company_domains": ["a.com"]}).json()["result"]["signals"][0]
    assert "evidence_url" not in s


@pytest.mark.parametrize("n, ok", [(0, False), (1, True), (100, True), (101, False)])
def test_company_domains_limits(api, db, n, ok):
    r = api.post(URL, {"company_domains": [f"x{i}.com" for i in range(n)]})
    if ok:
        assert r.status_code == 200, r.content
    else:
        assert "company_domains" in fields(r)


@pytest.mark.parametrize("body, field", [
    ({}, "company_domains"),
    ({"company_domains": "acme.com"}, "company_domains"),
    ({"company_domains": ["not a domain"]}, "company_domains"),
    ({"company_domains": [5]}, "company_domains.0"),
    ({"company_domains": ["a.com"], "signals": ["gossip"]}, "signals.0"),
    ({"company_domains": ["a.com"], "signals": []}, "signals"),
])
def test_bad_bodies(api, db, body, field):
    assert field in fields(api.post(URL, body))


def test_insufficient_credits_when_the_price_exceeds_the_balance(api, db):
    load_signals(*[sig(f"c{i}.com") for i in range(31)])  # 310 > 300
    before = available(api)
    r = api.post(URL, {"company_domains": [f"c{i}.com" for i in range(31)]})
    assert r.status_code == 402 and r.json()["error"]["code"] == "insufficient_credits"
    assert available(api) == before


class Down(CompanyIntentProvider):
    name = "intent_down"

    def find(self, query):
        raise ProviderError("503")


class Tech(CompanyIntentProvider):
    name = "tech_test"
    signal_types = ("technology",)
    seen = None

    def find(self, query):
        Tech.seen = list(query.signals)
        return [Signal(company_domain=d.upper(), signal="technology", summary="Uses a CRM", observed_at=TODAY)
                for d in query.company_domains] + [
            Signal(company_domain="stranger.com", signal="technology", summary="not asked", observed_at=TODAY),
            Signal(company_domain="a.com", signal="technology", summary="too old", observed_at=TODAY - timedelta(days=200)),
        ]


def test_providers_are_merged_and_asked_only_for_their_types(api, db, providers):
    providers(intent=["local", "tech_test"], register=[("intent", Tech)])
    load_signals(sig("a.com"))
    r = api.post(URL, {"company_domains": ["a.com", "b.com"], "signals": ["hiring", "technology"]})
    signals = r.json()["result"]["signals"]
    assert [(s["company_domain"], s["signal"]) for s in signals] == [("a.com", "technology"), ("a.com", "hiring"),
                                                                      ("b.com", "technology")]
    assert Tech.seen == ["technology"]
    assert r.json()["service"]["credits_charged"] == "20"
    Tech.seen = None
    api.post(URL, {"company_domains": ["a.com"]})  # default signals: the technology provider is not asked
    assert Tech.seen is None


def test_failing_provider_skipped(api, db, providers):
    providers(intent=["intent_down", "local"], register=[("intent", Down)])
    load_signals(sig("a.com"))
    r = api.post(URL, {"company_domains": ["a.com"]})
    assert r.status_code == 200 and r.json()["service"]["credits_charged"] == "10"


def test_every_able_provider_failing_is_502_and_free(api, db, providers):
    providers(intent=["intent_down", "tech_test"], register=[("intent", Down), ("intent", Tech)])
    before = available(api)
    r = api.post(URL, {"company_domains": ["a.com"]})  # tech_test cannot answer hiring/funding
    assert r.status_code == 502 and r.json()["error"]["code"] == "provider_unavailable"
    assert available(api) == before

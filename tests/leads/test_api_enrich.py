"""enrich through the HTTP API: identity combinations, want, hit/miss, cache, staleness, max_credits, waterfall."""

from datetime import date, timedelta

import pytest
import time_machine

from core.money import parse_credits
from leads.providers import Contact, PersonEnrichmentProvider, ProviderError
from tests.leads.conftest import available, fields, load_leads, person

URL = "/v1/enrich"
TODAY = date(2026, 6, 15)


@pytest.fixture(autouse=True)
def _frozen_today():
    with time_machine.travel("2026-06-15T12:00:00Z", tick=False):
        yield


@pytest.fixture
def people(db):
    load_leads(
        person(first_name="Ada", last_name="Lovelace", title="VP Sales", company_domain="acme.com",
               social_url="https://www.linkedin.com/in/ada-lovelace/", work_email="ada@acme.com",
               work_email_status="valid", work_email_verified_at=(TODAY - timedelta(days=30)).isoformat(),
               mobile_phone="+15551234567"),
        person(first_name="Stale", last_name="Person", company_domain="acme.com", work_email="stale@acme.com",
               work_email_status="valid", work_email_verified_at=(TODAY - timedelta(days=31)).isoformat()),
        person(first_name="Never", last_name="Checked", company_domain="acme.com", work_email="never@acme.com",
               work_email_status="catch_all"),
        person(first_name="Catch", last_name="All", company_domain="acme.com", work_email="catch@acme.com",
               work_email_status="catch_all", work_email_verified_at=TODAY.isoformat()),
        person(first_name="Bad", last_name="Mail", company_domain="acme.com", work_email="bad@acme.com",
               work_email_status="invalid", work_email_verified_at=TODAY.isoformat(), mobile_phone="+15550000000"),
        person(first_name="No", last_name="Mail", company_domain="acme.com"),
    )


def ada_fp(api):
    r = api.post("/v1/find_leads", {"audience": "ada", "titles": ["vp sales"]})
    return r.json()["result"]["leads"][0]["fingerprint"]


@pytest.mark.parametrize("ident", [
    {"full_name": "Ada Lovelace", "company_domain": "acme.com"},
    {"full_name": "  ada   LOVELACE ", "company_domain": "https://www.ACME.com/"},
    {"first_name": "Ada", "last_name": "Lovelace", "company_domain": "acme.com"},
    {"social_url": "linkedin.com/in/ada-lovelace"},
    {"social_url": "https://www.linkedin.com/in/Ada-Lovelace/?trk=x"},
    {"email": "ADA@acme.com"},
])
def test_hit_by_every_identity_combination(api, people, ident):
    before = available(api)
    r = api.post(URL, {"person": ident})
    assert r.status_code == 200, r.content
    body = r.json()
    assert body["result"]["outcome"] == "hit"
    assert body["result"]["from_cache"] is False
    assert body["result"]["contact"]["work_email"] == "ada@acme.com"
    assert body["result"]["contact"]["work_email_status"] == "valid"  # verified exactly 30 days ago: fresh
    assert body["result"]["contact"]["title"] == "VP Sales"
    assert "mobile_phone" not in body["result"]["contact"]
    assert body["service"]["credits_charged"] == "5"
    assert available(api) == before - parse_credits("5")


def test_hit_by_fingerprint_from_find_leads(api, people):
    fp = ada_fp(api)
    r = api.post(URL, {"person": {"fingerprint": fp}})
    assert r.json()["result"]["outcome"] == "hit"
    assert r.json()["result"]["contact"]["fingerprint"] == fp


@pytest.mark.parametrize("ident", [
    {},
    {"full_name": "Ada Lovelace"},
    {"company_domain": "acme.com"},
    {"first_name": "Ada", "company_domain": "acme.com"},
    {"last_name": "Lovelace", "company_domain": "acme.com"},
    {"full_name": "Ada Lovelace", "company_domain": "not a domain"},
    {"email": "not-an-email"},
    {"fingerprint": "abc"},
    {"fingerprint": "fp1:"},
    {"nickname": "ada"},
])
def test_incomplete_or_bad_identity_is_400(api, people, ident):
    assert any(k.startswith("person") for k in fields(api.post(URL, {"person": ident})))


def test_person_required(api, people):
    assert "person" in fields(api.post(URL, {"want": ["work_email"]}))


@pytest.mark.parametrize("want", [[], ["email"], ["work_email", "fax"], "work_email"])
def test_bad_want_is_400(api, people, want):
    assert any(k.startswith("want") for k in fields(api.post(URL, {"person": {"email": "ada@acme.com"}, "want": want})))


def test_want_mobile_and_profile(api, people):
    r = api.post(URL, {"person": {"email": "ada@acme.com"}, "want": ["work_email", "mobile_phone", "profile"]})
    c = r.json()["result"]["contact"]
    assert c["mobile_phone"] == "+15551234567"
    assert c["full_name"] == "Ada Lovelace"
    assert c["company_domain"] == "acme.com"
    assert c["location"] == "London, England, United Kingdom"
    assert c["social_url"] == "https://www.linkedin.com/in/ada-lovelace/"
    assert r.json()["service"]["credits_charged"] == "5"


def test_mobile_only_hit_and_miss(api, people):
    r = api.post(URL, {"person": {"email": "ada@acme.com"}, "want": ["mobile_phone"]})
    assert r.json()["result"]["outcome"] == "hit"
    assert "work_email" not in r.json()["result"]["contact"]
    before = available(api)
    r = api.post(URL, {"person": {"full_name": "No Mail", "company_domain": "acme.com"}, "want": ["mobile_phone"]})
    assert r.json()["result"] == {"outcome": "miss", "contact": None, "from_cache": False}
    assert r.json()["service"]["credits_charged"] == "0"
    assert available(api) == before


@pytest.mark.parametrize("name, status", [
    ("Stale Person", "unknown"),  # verified 31 days ago
    ("Never Checked", "unknown"),  # never verified
    ("Catch All", "catch_all"),
])
def test_email_status_freshness(api, people, name, status):
    r = api.post(URL, {"person": {"full_name": name, "company_domain": "acme.com"}})
    assert r.json()["result"]["outcome"] == "hit"
    assert r.json()["result"]["contact"]["work_email_status"] == status
    assert r.json()["service"]["credits_charged"] == "5"


@pytest.mark.parametrize("ident", [
    {"full_name": "Bad Mail", "company_domain": "acme.com"},  # only an invalid email
    {"full_name": "No Mail", "company_domain": "acme.com"},  # no email at all
    {"full_name": "Nobody Here", "company_domain": "acme.com"},  # unknown person
    {"fingerprint": "fp1:000000000000000000000000"},
])
def test_misses_are_free(api, people, ident):
    before = available(api)
    r = api.post(URL, {"person": ident})
    assert r.status_code == 200
    assert r.json()["result"] == {"outcome": "miss", "contact": None, "from_cache": False}
    assert r.json()["service"]["credits_charged"] == "0"
    assert available(api) == before


def test_cache_repeat_is_free_and_flagged(api, people):
    first = api.post(URL, {"person": {"email": "ada@acme.com"}}).json()
    before = available(api)
    again = api.post(URL, {"person": {"email": "ada@acme.com"}}).json()
    assert again["result"]["from_cache"] is True
    assert again["result"]["contact"] == first["result"]["contact"]
    assert again["service"]["credits_charged"] == "0"
    assert available(api) == before
    # the same person by another identity is the same cache entry
    fp = first["result"]["contact"]["fingerprint"]
    for ident in ({"fingerprint": fp}, {"social_url": "linkedin.com/in/ada-lovelace"},
                  {"first_name": "Ada", "last_name": "Lovelace", "company_domain": "acme.com"}):
        r = api.post(URL, {"person": ident}).json()
        assert r["result"]["from_cache"] is True, ident
        assert r["service"]["credits_charged"] == "0"
    # a different want is a new lookup
    r = api.post(URL, {"person": {"email": "ada@acme.com"}, "want": ["work_email", "mobile_phone"]}).json()
    assert r["result"]["from_cache"] is False and r["service"]["credits_charged"] == "5"


def test_cache_is_per_workspace(api, make_api, people):
    api.post(URL, {"person": {"email": "ada@acme.com"}})
    other, _, _ = make_api()
    r = other.post(URL, {"person": {"email": "ada@acme.com"}}).json()
    assert r["result"]["from_cache"] is False and r["service"]["credits_charged"] == "5"


def test_cache_expires_after_90_days(api, people):
    api.post(URL, {"person": {"email": "ada@acme.com"}})
    with time_machine.travel("2026-09-12T11:59:00Z", tick=False):  # 89 days 1 minute later... still cached
        r = api.post(URL, {"person": {"email": "ada@acme.com"}}).json()
        assert r["result"]["from_cache"] is True
    with time_machine.travel("2026-09-13T12:00:01Z", tick=False):  # 90 days and a second
        r = api.post(URL, {"person": {"email": "ada@acme.com"}}).json()
        assert r["result"]["from_cache"] is False and r["service"]["credits_charged"] == "5"
        # the email was verified 30 days before the first call: now stale
        assert r["result"]["contact"]["work_email_status"] == "unknown"


@pytest.mark.parametrize("ceiling, status", [("4.999999", 402), ("0", 402), ("5", 200), ("5.000000", 200), ("100", 200)])
def test_max_credits(api, people, ceiling, status):
    before = available(api)
    r = api.post(URL, {"person": {"email": "ada@acme.com"}, "max_credits": ceiling})
    assert r.status_code == status, r.content
    if status == 402:
        assert r.json()["error"]["code"] == "spend_ceiling_exceeded"
        assert available(api) == before


@pytest.mark.parametrize("ceiling", ["-1", "5.0000001", "1e3", "abc", 5, "", "\u0665", "\uff15", "1\u0660"])
def test_max_credits_format(api, people, ceiling):
    assert "max_credits" in fields(api.post(URL, {"person": {"email": "ada@acme.com"}, "max_credits": ceiling}))


class Counting(PersonEnrichmentProvider):
    name = "counting"
    calls = 0

    def enrich(self, query):
        Counting.calls += 1
        return None


def test_max_credits_refused_before_any_provider(api, people, providers):
    Counting.calls = 0
    providers(enrich=["counting", "local"], register=[("enrich", Counting)])
    r = api.post(URL, {"person": {"email": "ada@acme.com"}, "max_credits": "1"})
    assert r.status_code == 402
    assert Counting.calls == 0
    r = api.post(URL, {"person": {"email": "ada@acme.com"}})
    assert r.json()["result"]["outcome"] == "hit" and Counting.calls == 1  # a miss falls through to the next


def test_cached_repeat_does_not_trip_the_ceiling(api, people):
    api.post(URL, {"person": {"email": "ada@acme.com"}})
    r = api.post(URL, {"person": {"email": "ada@acme.com"}, "max_credits": "0"})
    assert r.status_code == 200
    assert r.json()["result"]["from_cache"] is True and r.json()["service"]["credits_charged"] == "0"


def test_insufficient_credits_is_402_before_lookup(make_api, people):
    from django.db.models import F

    from billing.models import CreditAccount

    api, ws, _ = make_api()
    CreditAccount.objects.filter(pk=ws.pk).update(balance_micros=F("balance_micros") - parse_credits("295.5"))
    r = api.post(URL, {"person": {"email": "ada@acme.com"}})
    assert r.status_code == 402 and r.json()["error"]["code"] == "insufficient_credits"


class Down(PersonEnrichmentProvider):
    name = "down"

    def enrich(self, query):
        raise ProviderError("timeout")


class Vendor(PersonEnrichmentProvider):
    name = "vendor"

    def can_answer(self, query):
        return bool(query.email)

    def enrich(self, query):
        return Contact(full_name="Vendor Person", title="CEO", work_email=query.email, work_email_status="valid",
                       work_email_verified_at=TODAY)


def test_waterfall_skips_a_failing_provider(api, people, providers):
    providers(enrich=["down", "vendor"], register=[("enrich", Down), ("enrich", Vendor)])
    r = api.post(URL, {"person": {"email": "zed@elsewhere.com"}})
    assert r.json()["result"]["outcome"] == "hit"
    assert r.json()["result"]["contact"]["title"] == "CEO"
    assert r.json()["service"]["credits_charged"] == "5"


def test_all_able_providers_failing_is_502_and_free(api, people, providers):
    providers(enrich=["down", "vendor"], register=[("enrich", Down), ("enrich", Vendor)])
    before = available(api)
    # the vendor cannot answer a name lookup, the only able provider is down
    r = api.post(URL, {"person": {"full_name": "Ada Lovelace", "company_domain": "acme.com"}})
    assert r.status_code == 502 and r.json()["error"]["code"] == "provider_unavailable"
    assert available(api) == before
    # a retry with the same Idempotency-Key runs again (502 is not stored)
    h = {"Idempotency-Key": "retry-1"}
    assert api.post(URL, {"person": {"full_name": "Ada Lovelace", "company_domain": "acme.com"}}, headers=h).status_code == 502
    providers(enrich=["down", "local"])
    r = api.post(URL, {"person": {"full_name": "Ada Lovelace", "company_domain": "acme.com"}}, headers=h)
    assert r.status_code == 200 and r.json()["result"]["outcome"] == "hit"


def test_a_miss_from_one_provider_and_a_failure_from_another_is_a_free_miss(api, people, providers):
    providers(enrich=["local", "down"], register=[("enrich", Down)])
    r = api.post(URL, {"person": {"full_name": "Nobody Here", "company_domain": "acme.com"}})
    assert r.status_code == 200 and r.json()["result"]["outcome"] == "miss"


def _our_verification(email, status, days_ago):
    from django.utils import timezone

    from leads.verification.models import Verification

    Verification.objects.create(email=email, domain=email.split("@")[1], status=status, reason="test",
                                checked_at=timezone.now() - timedelta(days=days_ago))


@pytest.mark.parametrize("ours,expected", [
    ("valid", "valid"), ("catch_all_valid", "catch_all"), ("catch_all_unknown", "catch_all"), ("risky", "unknown"),
])
def test_a_fresh_verification_by_this_service_refreshes_a_stale_source(api, ours, expected):
    load_leads(person(social_url="https://www.linkedin.example/in/ada-v", work_email="ada@acme.com",
                      work_email_status="valid", work_email_verified_at=(TODAY - timedelta(days=90)).isoformat()))
    _our_verification("ada@acme.com", ours, days_ago=3)
    r = api.post(URL, {"person": {"social_url": "https://www.linkedin.example/in/ada-v"}})
    assert r.status_code == 200, r.content
    assert r.json()["result"]["contact"]["work_email_status"] == expected
    assert r.json()["service"]["credits_charged"] == "5"


def test_a_newer_invalid_verification_hides_the_email_and_is_a_free_miss(api):
    load_leads(person(social_url="https://www.linkedin.example/in/ada-i", work_email="ada@acme.com",
                      work_email_status="valid", work_email_verified_at=(TODAY - timedelta(days=10)).isoformat()))
    _our_verification("ada@acme.com", "invalid", days_ago=1)
    r = api.post(URL, {"person": {"social_url": "https://www.linkedin.example/in/ada-i"}})
    assert r.json()["result"]["outcome"] == "miss" and r.json()["service"]["credits_charged"] == "0"


def test_an_older_or_stale_verification_by_this_service_does_not_override(api):
    load_leads(person(social_url="https://www.linkedin.example/in/ada-o", work_email="ada@acme.com",
                      work_email_status="valid", work_email_verified_at=(TODAY - timedelta(days=2)).isoformat()))
    _our_verification("ada@acme.com", "invalid", days_ago=5)   # older than the source's own check
    _our_verification("ada@acme.com", "invalid", days_ago=45)  # stale
    r = api.post(URL, {"person": {"social_url": "https://www.linkedin.example/in/ada-o"}})
    assert r.json()["result"]["contact"]["work_email_status"] == "valid"

"""POST /v1/verify_email through the HTTP API: exact charges, balance movement, the result store."""

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from billing.services import account_get, credits_debit
from core.money import credits, format_credits
from leads.verification import selectors, services
from leads.verification.models import DeliveryEvidence, Verification
from tests.verification.peers import tarpit

RESULT_KEYS = {"email", "status", "is_catch_all_domain", "checked_at", "reason", "mx_host", "is_disposable",
               "is_role_account", "is_free_provider"}


def available(workspace) -> str:
    return format_credits(account_get(workspace=workspace).available_micros)


def test_valid_costs_exactly_one_credit(api, workspace, net):
    net.simple("acme.com", users=["jane@acme.com"])
    before = account_get(workspace=workspace).available_micros
    r = api.post("/v1/verify_email", {"email": "jane@acme.com"})
    assert r.status_code == 200, r.content
    body = r.json()
    assert set(body["result"]) == RESULT_KEYS
    assert body["result"]["email"] == "jane@acme.com"
    assert body["result"]["status"] == "valid"
    assert body["result"]["reason"] == "accepted"
    assert body["result"]["mx_host"] == "mx1.acme.com"
    assert body["result"]["is_catch_all_domain"] is False
    assert body["result"]["checked_at"].endswith("Z")
    assert body["service"]["credits_charged"] == "1"
    assert account_get(workspace=workspace).available_micros == before - credits("1")
    assert body["service"]["credits_available"] == available(workspace) == "299"


@pytest.mark.parametrize("email,status,reason", [
    ("not an email", "invalid", "invalid_syntax"),
    ("", "invalid", "invalid_syntax"),
    ("x@mailinator.com", "invalid", "disposable"),
    ("jane@nxdomain-for-sure.com", "invalid", "no_domain"),
    ("john@acme.com", "invalid", "user_unknown"),
    ("info@acme.com", "risky", "role_account"),
    ("jane@catchall.com", "catch_all_unknown", "catch_all"),
])
def test_every_non_unknown_status_costs_one(api, workspace, net, email, status, reason):
    net.simple("acme.com", users=["jane@acme.com", "info@acme.com"])
    net.simple("catchall.com", catch_all=True)
    r = api.post("/v1/verify_email", {"email": email})
    assert r.status_code == 200, r.content
    assert (r.json()["result"]["status"], r.json()["result"]["reason"]) == (status, reason)
    assert r.json()["service"]["credits_charged"] == "1"
    assert available(workspace) == "299"


def test_catch_all_valid_with_reply_evidence_costs_one(api, workspace, net):
    net.simple("catchall.com", catch_all=True)
    services.record_delivery_evidence(email="Jane@CatchAll.com", source="reply")
    r = api.post("/v1/verify_email", {"email": "jane@catchall.com"})
    assert r.json()["result"]["status"] == "catch_all_valid"
    assert r.json()["result"]["is_catch_all_domain"] is True
    assert r.json()["service"]["credits_charged"] == "1"


@pytest.mark.parametrize("scenario", ["timeout", "blocked", "greylisted", "blocked_address", "unreachable"])
def test_unknown_is_a_free_miss(api, workspace, net, settings, scenario):
    if scenario == "timeout":
        settings.VERIFIER_TIMEOUT_SECONDS = 0.2
        ip = net.ip()
        net.smtp.raw(ip, tarpit)
        net.domain("acme.com", ip)
    elif scenario == "blocked":
        net.simple("acme.com", rcpt=lambda a, s: "550 5.7.1 Client host blocked using zen.spamhaus.org")
    elif scenario == "greylisted":
        net.simple("acme.com", rcpt=lambda a, s: "451 4.7.1 Greylisted, try again later")
    elif scenario == "blocked_address":
        settings.VERIFIER_ALLOW_PRIVATE_NETWORKS = False
        net.simple("acme.com", users=["jane@acme.com"])
    else:
        net.domain("acme.com", net.ip())
    r = api.post("/v1/verify_email", {"email": "jane@acme.com"})
    assert r.status_code == 200, r.content
    assert (r.json()["result"]["status"], r.json()["result"]["reason"]) == ("unknown", scenario)
    assert r.json()["service"]["credits_charged"] == "0"
    assert available(workspace) == "300"


@pytest.mark.parametrize("body", [{}, {"email": 42}, {"email": None}, {"email": ["a@b.com"]},
                                  {"email": "jane@acme.com", "extra": 1}, {"address": "jane@acme.com"}])
def test_body_without_a_string_email_is_400_and_free(api, workspace, body):
    r = api.post("/v1/verify_email", body)
    assert r.status_code == 400
    assert r.json()["error"]["code"] == "invalid_request"
    assert available(workspace) == "300"


def test_insufficient_credits_is_402_at_the_edge(api, workspace, net):
    net.simple("acme.com", users=["jane@acme.com"])
    credits_debit(workspace=workspace, amount=credits("299.000001"), kind="adjustment", memo="drain")
    r = api.post("/v1/verify_email", {"email": "jane@acme.com"})
    assert r.status_code == 402 and r.json()["error"]["code"] == "insufficient_credits"
    assert available(workspace) == "0.999999"


def test_exactly_one_credit_left_is_enough(api, workspace, net):
    net.simple("acme.com", users=["jane@acme.com"])
    credits_debit(workspace=workspace, amount=credits("299"), kind="adjustment", memo="drain")
    r = api.post("/v1/verify_email", {"email": "jane@acme.com"})
    assert r.status_code == 200 and r.json()["service"]["credits_charged"] == "1"
    assert available(workspace) == "0"


def test_recent_result_is_reused_but_billed_again(api, workspace, net):
    script = net.simple("acme.com", users=["jane@acme.com"])
    first = api.post("/v1/verify_email", {"email": "jane@acme.com"}).json()
    second = api.post("/v1/verify_email", {"email": "JANE@acme.com"}).json()
    assert script.connections == 1
    assert second["result"]["email"] == "JANE@acme.com"
    assert second["result"]["checked_at"] == first["result"]["checked_at"]
    assert second["service"]["credits_charged"] == "1"
    assert available(workspace) == "298"


def test_reuse_expires(api, workspace, net, settings):
    settings.VERIFIER_REUSE_SECONDS = 60
    script = net.simple("acme.com", users=["jane@acme.com"])
    api.post("/v1/verify_email", {"email": "jane@acme.com"})
    with time_machine.travel(timezone.now() + timedelta(seconds=61)):
        api.post("/v1/verify_email", {"email": "jane@acme.com"})
    assert script.connections == 2


def test_unknown_is_not_reused(api, workspace, net):
    script = net.simple("acme.com", rcpt=lambda a, s: "451 4.7.1 Greylisted")
    api.post("/v1/verify_email", {"email": "jane@acme.com"})
    api.post("/v1/verify_email", {"email": "jane@acme.com"})
    assert script.connections == 4  # two calls, each with its one greylisting retry


def test_catch_all_result_is_upgraded_when_evidence_arrives(api, workspace, net):
    net.simple("catchall.com", catch_all=True)
    assert api.post("/v1/verify_email", {"email": "jane@catchall.com"}).json()["result"]["status"] == \
        "catch_all_unknown"
    services.record_delivery_evidence(email="jane@catchall.com", source="reply", workspace=workspace)
    assert api.post("/v1/verify_email", {"email": "jane@catchall.com"}).json()["result"]["status"] == \
        "catch_all_valid"


def test_results_are_stored_with_the_caller(api, workspace, net):
    net.simple("acme.com", users=["jane@acme.com"])
    r = api.post("/v1/verify_email", {"email": "jane@acme.com"})
    row = Verification.objects.get()
    assert (row.email, row.status, row.workspace, row.request_id) == (
        "jane@acme.com", "valid", workspace, r.json()["service"]["request_id"])


def test_latest_verification_selector(db):
    Verification.objects.create(email="a@b.com", domain="b.com", status="valid", reason="accepted",
                                checked_at=timezone.now() - timedelta(days=10))
    Verification.objects.create(email="a@b.com", domain="b.com", status="unknown", reason="timeout")
    assert selectors.latest_verification(email="A@B.com", max_age=timedelta(days=30)).status == "valid"
    assert selectors.latest_verification(email="a@b.com", max_age=timedelta(days=30),
                                         conclusive_only=False).status == "unknown"
    assert selectors.latest_verification(email="a@b.com", max_age=timedelta(days=9)) is None


def test_delivery_evidence_is_idempotent_and_ages_out(db, settings, workspace):
    settings.VERIFIER_EVIDENCE_MAX_AGE_DAYS = 30
    old = timezone.now() - timedelta(days=40)
    services.record_delivery_evidence(email="a@b.com", source="reply", workspace=workspace, observed_at=old)
    assert not selectors.delivery_evidence_exists(email="a@b.com")
    services.record_delivery_evidence(email="A@b.com", source="reply", workspace=workspace)
    assert DeliveryEvidence.objects.count() == 1
    assert selectors.delivery_evidence_exists(email="a@b.com")


def test_catch_all_memory_expires(db, settings):
    settings.VERIFIER_CATCH_ALL_TTL_SECONDS = 86400
    services.DatabaseMemory().remember_catch_all("x.com", True, "mx.x.com")
    assert selectors.domain_catch_all(domain="X.com") is True
    with time_machine.travel(timezone.now() + timedelta(seconds=86401)):
        assert selectors.domain_catch_all(domain="x.com") is None


def test_idempotent_replay_does_not_probe_or_charge_again(api, workspace, net, settings):
    settings.VERIFIER_REUSE_SECONDS = 0
    script = net.simple("acme.com", users=["jane@acme.com"])
    h = {"Idempotency-Key": "verify-1"}
    a = api.post("/v1/verify_email", {"email": "jane@acme.com"}, headers=h)
    b = api.post("/v1/verify_email", {"email": "jane@acme.com"}, headers=h)
    assert a.content == b.content and b.headers["Idempotent-Replayed"] == "true"
    assert script.connections == 1
    assert available(workspace) == "299"


def test_prune_deletes_old_results_and_expired_catch_all_memory(db, settings):
    from leads.verification import tasks
    from leads.verification.models import DomainProbe

    settings.VERIFIER_RESULT_RETENTION_DAYS = 180
    Verification.objects.create(email="a@b.com", domain="b.com", status="valid", reason="accepted",
                                checked_at=timezone.now() - timedelta(days=181))
    Verification.objects.create(email="a@b.com", domain="b.com", status="valid", reason="accepted",
                                checked_at=timezone.now() - timedelta(days=179))
    DomainProbe.objects.create(domain="b.com", is_catch_all=True, checked_at=timezone.now() - timedelta(days=2))
    assert tasks.verification_prune() == 1
    assert Verification.objects.count() == 1 and not DomainProbe.objects.exists()

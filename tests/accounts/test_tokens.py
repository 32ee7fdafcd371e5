"""Confirmation tokens (CONTRACT section 3) through the test_confirm verb and the services."""

import time_machine
from django.core.management import call_command
from django.utils import timezone

from accounts import services
from accounts.models import ConfirmationToken
from billing.models import CreditAccount
from tests.factories import UserFactory

H = {"Idempotency-Key": "buy-1"}


def issue(api, amount=10):
    r = api.post("/v1/test_confirm", {"amount": amount})
    assert r.status_code == 200, r.content
    return r.json()["result"]


def test_issue_returns_token_fields(api):
    res = issue(api)
    assert res["status"] == "quote"
    assert res["confirmation_token"].startswith("ct_")
    assert res["approval_url"].startswith("http") and "/console/approvals/" in res["approval_url"]
    token = ConfirmationToken.objects.get()
    assert token.status == "pending" and token.params == {"amount": 10}
    assert res["confirmation_token"] not in str(token.__dict__)  # only a hash is stored


def test_pending_then_approved_then_used(api, owner, workspace):
    res = issue(api)
    body = {"amount": 10, "confirmation_token": res["confirmation_token"]}
    pending = api.post("/v1/test_confirm", body, headers=H)
    assert pending.status_code == 409 and pending.json()["error"]["code"] == "confirmation_pending"
    assert pending.json()["error"]["details"]["approval_url"] == res["approval_url"]
    services.token_approve(token=ConfirmationToken.objects.get(), user=owner)
    done = api.post("/v1/test_confirm", body, headers={"Idempotency-Key": "buy-2"})
    assert done.status_code == 200 and done.json()["result"]["status"] == "purchased"
    assert done.json()["service"]["credits_charged"] == "0.00001"
    replay = api.post("/v1/test_confirm", body, headers={"Idempotency-Key": "buy-2"})
    assert replay["Idempotent-Replayed"] == "true" and replay.content == done.content
    again = api.post("/v1/test_confirm", body, headers={"Idempotency-Key": "buy-3"})
    assert again.status_code == 409 and again.json()["error"]["code"] == "confirmation_used"
    assert CreditAccount.objects.get(pk=workspace.pk).balance_micros == 300_000_000 - 10
    token = ConfirmationToken.objects.get()
    assert token.status == "used" and token.decided_by == owner and token.used_request_id == done["X-Request-Id"]


def test_denied(api, owner):
    res = issue(api)
    services.token_deny(token=ConfirmationToken.objects.get(), user=owner)
    r = api.post("/v1/test_confirm", {"amount": 10, "confirmation_token": res["confirmation_token"]}, headers=H)
    assert r.status_code == 403 and r.json()["error"]["code"] == "confirmation_denied"


def test_expired_after_15_minutes(api, owner):
    res = issue(api)
    services.token_approve(token=ConfirmationToken.objects.get(), user=owner)
    body = {"amount": 10, "confirmation_token": res["confirmation_token"]}
    with time_machine.travel(timezone.now() + timezone.timedelta(minutes=15, seconds=1)):
        r = api.post("/v1/test_confirm", body, headers=H)
    assert r.status_code == 410 and r.json()["error"]["code"] == "confirmation_expired"


def test_still_valid_just_before_expiry(api, owner):
    res = issue(api)
    services.token_approve(token=ConfirmationToken.objects.get(), user=owner)
    body = {"amount": 10, "confirmation_token": res["confirmation_token"]}
    with time_machine.travel(timezone.now() + timezone.timedelta(minutes=14, seconds=50)):
        assert api.post("/v1/test_confirm", body, headers=H).status_code == 200


def test_parameter_mismatch_is_invalid(api, owner):
    res = issue(api, amount=10)
    services.token_approve(token=ConfirmationToken.objects.get(), user=owner)
    r = api.post("/v1/test_confirm", {"amount": 11, "confirmation_token": res["confirmation_token"]}, headers=H)
    assert r.status_code == 400 and r.json()["error"]["code"] == "confirmation_invalid"
    assert ConfirmationToken.objects.get().status == "approved"  # still usable with the approved parameters


def test_unknown_and_foreign_tokens_are_invalid(api, make_api):
    other, _, _ = make_api()
    foreign = issue(other)["confirmation_token"]
    for tok in ("ct_nope", "garbage", foreign):
        r = api.post("/v1/test_confirm", {"amount": 10, "confirmation_token": tok}, headers={"Idempotency-Key": tok})
        assert r.status_code == 400 and r.json()["error"]["code"] == "confirmation_invalid"


def test_failed_action_gives_the_token_back(api, owner, workspace):
    """The token is consumed inside the action's transaction: if the hold cannot be placed nothing is used."""
    res = issue(api, amount=301_000_000)
    services.token_approve(token=ConfirmationToken.objects.get(), user=owner)
    r = api.post("/v1/test_confirm", {"amount": 301_000_000, "confirmation_token": res["confirmation_token"]}, headers=H)
    assert r.status_code == 402
    assert ConfirmationToken.objects.get().status == "approved"


def test_expire_task_marks_tokens(api):
    issue(api)
    with time_machine.travel(timezone.now() + timezone.timedelta(minutes=16)):
        assert services.tokens_expire() == 1
    assert ConfirmationToken.objects.get().status == "expired"


def test_approve_command(api, owner, capsys):
    res = issue(api)
    call_command("approve", res["confirmation_token"], "--by", owner.email)
    assert ConfirmationToken.objects.get().status == "approved"
    assert "approved" in capsys.readouterr().out


def test_approve_command_refuses_non_admins(api, workspace):
    import pytest
    from django.core.management.base import CommandError

    from accounts.models import Membership

    res = issue(api)
    member = UserFactory()
    Membership.objects.create(user=member, workspace=workspace, role="member")
    stranger = UserFactory()
    for user in (member, stranger):
        with pytest.raises(CommandError):
            call_command("approve", res["confirmation_token"], "--by", user.email)
    assert ConfirmationToken.objects.get().status == "pending"


def test_decisions_are_final(api, owner):
    import pytest

    from core import errors

    issue(api)
    token = ConfirmationToken.objects.get()
    services.token_deny(token=token, user=owner)
    with pytest.raises(errors.InvalidRequest):
        services.token_approve(token=token, user=owner)


def test_deciding_an_expired_token_records_the_expiry(api, owner):
    import pytest

    from core import errors

    issue(api)
    token = ConfirmationToken.objects.get()
    with time_machine.travel(timezone.now() + timezone.timedelta(minutes=16)):
        with pytest.raises(errors.ConfirmationExpired):
            services.token_approve(token=token, user=owner)
    assert ConfirmationToken.objects.get().status == "expired"

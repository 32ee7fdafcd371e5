"""Operator admin: credit grant action with a memo, keys never show secrets, the ledger is read-only."""

import pytest
from django.test import Client

from accounts.models import ApiKey, User
from billing.models import CreditAccount, LedgerEntry

pytestmark = pytest.mark.django_db


@pytest.fixture
def operator():
    user = User.objects.create_superuser(email="ops@example.com")
    c = Client()
    c.force_login(user)
    return user, c


def test_grant_action_asks_for_amount_and_memo_then_grants(operator, workspace):
    user, c = operator
    url = "/admin/accounts/workspace/"
    page = c.post(url, {"action": "grant_credits", "_selected_action": [str(workspace.pk)]})
    assert page.status_code == 200 and b'name="memo"' in page.content
    bad = c.post(url, {"action": "grant_credits", "_selected_action": [str(workspace.pk)], "apply": "1",
                       "amount": "1.0000001", "memo": "x"})
    assert bad.status_code == 200 and CreditAccount.objects.get(pk=workspace.pk).balance_micros == 300_000_000
    done = c.post(url, {"action": "grant_credits", "_selected_action": [str(workspace.pk)], "apply": "1",
                        "amount": "1500.5", "memo": "Goodwill for the outage"})
    assert done.status_code == 302
    entry = LedgerEntry.objects.filter(account_id=workspace.pk).first()
    assert entry.kind == "grant" and entry.amount_micros == 1_500_500_000
    assert entry.memo == "Goodwill for the outage" and entry.created_by == user
    assert CreditAccount.objects.get(pk=workspace.pk).balance_micros == 1_800_500_000


def test_key_admin_never_shows_the_hash(operator, workspace):
    _, c = operator
    key = ApiKey.objects.get(workspace=workspace)
    for path in ("/admin/accounts/apikey/", f"/admin/accounts/apikey/{key.pk}/change/"):
        html = c.get(path).content.decode()
        assert key.hashed_secret not in html and key.last4 in html


def test_ledger_is_read_only(operator, workspace):
    _, c = operator
    entry = LedgerEntry.objects.filter(account_id=workspace.pk).first()
    assert c.get("/admin/billing/ledgerentry/").status_code == 200
    assert c.get("/admin/billing/ledgerentry/add/").status_code == 403
    assert c.post(f"/admin/billing/ledgerentry/{entry.pk}/delete/", {"post": "yes"}).status_code == 403
    assert c.get("/admin/billing/requestrecord/").status_code == 200
    assert c.get("/admin/accounts/confirmationtoken/").status_code == 200


def test_non_staff_cannot_use_admin(owner):
    c = Client()
    c.force_login(owner)
    assert c.get("/admin/accounts/workspace/").status_code == 302


def test_admin_as_a_signed_in_member_who_is_not_staff_is_an_html_403(workspace, owner, settings, caplog):
    """Issue 14.6: a browser gets a page, not the API's JSON; /v1 keeps the envelope."""
    import logging

    settings.ROOT_URLCONF = "config.urls"
    caplog.set_level(logging.ERROR, logger="core.errors")
    c = Client()
    c.force_login(owner)
    resp = c.get("/admin/", follow=True)
    assert resp.status_code == 403
    assert resp["Content-Type"].startswith("text/html")
    html = resp.content.decode()
    assert "403 Forbidden" in html and "staff" in html and "/console/" in html
    assert not caplog.records  # an intended refusal is not logged as a fault
    api = c.get("/v1/usage")  # the API door keeps its envelope
    assert api["Content-Type"].startswith("application/json") and "error" in api.json()


def test_admin_index_has_one_accounts_section_and_proper_plurals(operator):
    # Issue 14: two ACCOUNTS sections (ours and allauth's) and "Ledger entrys", "Replys".
    import re

    _, c = operator
    html = c.get("/admin/").content.decode()
    captions = [re.sub(r"<[^>]+>", "", m).strip().lower() for m in re.findall(r"<caption>(.*?)</caption>", html, re.S)]
    assert len(captions) == len(set(captions)), captions
    assert "Ledger entries" in html and ">Replies<" in html
    assert "entrys" not in html.lower() and "replys" not in html.lower() and "deliverys" not in html.lower()

"""Console pages for sending: the approval page shows the purchase; the Mailboxes page renews a suspended one."""

from datetime import UTC, datetime

import time_machine
from django.test import Client

from accounts import services as accounts
from billing.services import credits_grant
from core.money import credits
from sending import services
from sending.models import Mailbox
from sending.testing import make_active_mailbox


def test_approval_page_shows_what_will_be_bought(api, owner):
    data = api.post("/v1/setup_sending", {"emails_per_week": 500, "brand_hint": "Acme",
                                          "sender": {"first_name": "Ann", "last_name": "Lee"}}).json()["result"]
    c = Client()
    c.force_login(owner)
    page = c.get(data["approval_url"].split("127.0.0.1:8000", 1)[-1].replace("http://testserver", ""))
    assert page.status_code == 200
    html = page.content.decode()
    for text in ("setup_sending", "Mailboxes", "4500", "3000", "Acme", "Ann Lee", "Approve", "Deny"):
        assert text in html, text


def test_suspended_mailbox_renews_from_the_console_after_top_up(workspace, owner):
    t0 = datetime(2027, 1, 10, 9, tzinfo=UTC)
    mbx = make_active_mailbox(workspace, activated_at=t0, renews_at=services.add_months(t0, 1))
    c = Client()
    with time_machine.travel(datetime(2027, 2, 10, 9, 30, tzinfo=UTC), tick=False):
        c.force_login(owner)  # inside the travel: the session must not be expired
        assert services.mailbox_renew(mailbox_id=mbx.id) == "suspended"  # 300 credits < 750
        listing = c.get("/console/mailboxes/").content.decode()
        assert "suspended" in listing and f"Renew {mbx.email}" in listing
        r = c.post(f"/console/mailboxes/{mbx.pk}/renew/", follow=True)
        assert "still suspended" in r.content.decode()
        credits_grant(workspace=workspace, amount=credits("450"), memo="top-up")
        r = c.post(f"/console/mailboxes/{mbx.pk}/renew/", follow=True)
        assert f"{mbx.email} is active." in r.content.decode()
    mbx.refresh_from_db()
    assert mbx.status == Mailbox.Status.ACTIVE


def test_mailboxes_page_requires_sign_in(db):
    r = Client().get("/console/mailboxes/")
    assert r.status_code == 302 and "/console/" in r["Location"]


def test_token_summary_is_json_safe(api):
    data = api.post("/v1/setup_sending", {"emails_per_week": 50}).json()["result"]
    token = accounts.token_lookup(plaintext=data["confirmation_token"])
    assert token.summary["Sender"] == "(default)" and token.summary["Brand hint"] == "(none)"

"""Passwordless sign-in: emailed code, emailed link (POST only), sign-up with 300 credits, throttles."""

import pytest
from django.test import Client

from accounts.models import Membership, SignInLink
from billing.models import CreditAccount
from tests.console.helpers import body, last_code, last_link, messages_to
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def _request_code(client, email):
    return client.post("/console/auth/login/", {"login": email})


def test_login_page_has_email_input_and_no_password():
    html = Client().get("/console/auth/login/").content.decode()
    assert '<input type="email" name="login"' in html
    assert "type=\"password\"" not in html and "name=\"password\"" not in html


def test_sign_in_by_emailed_code(owner):
    c = Client()
    resp = _request_code(c, owner.email)
    assert resp.status_code == 302 and resp["Location"].startswith("/console/auth/login/code/confirm/")
    code = last_code(owner.email)
    page = c.get(resp["Location"]).content.decode()
    assert 'name="code"' in page
    resp = c.post("/console/auth/login/code/confirm/", {"code": code})
    assert resp.status_code == 302
    assert c.get("/console/").status_code == 200


def test_unknown_address_gets_no_code_and_no_account():
    c = Client()
    resp = _request_code(c, "nobody@example.com")
    assert resp.status_code == 302  # no enumeration: same answer
    msgs = messages_to("nobody@example.com")
    assert len(msgs) == 1 and "sign-in code is" not in body(msgs[0])


def test_wrong_code_attempts_are_limited(owner):
    c = Client()
    _request_code(c, owner.email)
    code = last_code(owner.email)
    for _ in range(3):  # ACCOUNT_LOGIN_BY_CODE_MAX_ATTEMPTS
        c.post("/console/auth/login/code/confirm/", {"code": "WRONG1"})
    # The code is now dead: even the right one no longer signs in.
    c.post("/console/auth/login/code/confirm/", {"code": code})
    assert c.get("/console/").status_code == 302


def test_code_requests_throttled_per_address(owner):
    for i in range(3):
        assert _request_code(Client(REMOTE_ADDR=f"10.0.0.{i}"), owner.email).status_code == 302
    resp = _request_code(Client(REMOTE_ADDR="10.0.0.9"), owner.email)
    assert resp.status_code == 200 and b"Too many" in resp.content  # the form refuses; no 4th mail
    assert len([m for m in messages_to(owner.email) if "sign-in code is" in body(m)]) == 3


def test_sign_up_creates_workspace_with_300_credits():
    c = Client()
    resp = c.post("/console/auth/signup/", {"email": "New.Person@Example.com"})
    assert resp.status_code == 302
    code = last_code("new.person@example.com")
    resp = c.post(resp["Location"], {"code": code})
    assert resp.status_code == 302
    assert c.get("/console/").status_code == 200
    membership = Membership.objects.get(user__email="new.person@example.com")
    assert membership.role == "owner"
    assert CreditAccount.objects.get(pk=membership.workspace_id).balance_micros == 300_000_000


def test_link_get_does_not_sign_in_post_does_once(owner):
    _request_code(Client(), owner.email)
    link = last_link(owner.email)
    path = link.split("://", 1)[1].split("/", 1)[1]
    path = "/" + path
    browser = Client()
    page = browser.get(path)
    assert page.status_code == 200 and b"<form method=\"post\"" in page.content
    browser.get(path)  # scanners may follow it many times
    assert browser.get("/console/").status_code == 302  # still signed out
    assert SignInLink.objects.get().used_at is None
    resp = browser.post(path)
    assert resp.status_code == 302 and resp["Location"] == "/console/"
    assert browser.get("/console/").status_code == 200
    # Single use.
    again = Client()
    for resp in (again.post(path), again.get(path)):
        assert resp.status_code == 302 and resp["Location"] == "/console/auth/login/"
    assert again.get("/console/").status_code == 302
    assert b"no longer valid" in again.get("/console/auth/login/").content


def test_link_token_stored_hashed_and_expires(owner, settings):
    import time_machine
    from django.utils import timezone

    _request_code(Client(), owner.email)
    link = last_link(owner.email)
    token = link.rstrip("/").rsplit("/", 1)[1]
    row = SignInLink.objects.get()
    assert token not in row.token_hash and len(row.token_hash) == 64
    path = "/console/auth/link/" + token + "/"
    with time_machine.travel(timezone.now() + timezone.timedelta(seconds=601)):
        c = Client()
        assert c.post(path)["Location"] == "/console/auth/login/"
        assert c.get("/console/").status_code == 302


def test_inactive_user_cannot_use_link():
    user = UserFactory(email="gone@example.com")
    from accounts.console_auth import signin_link_issue

    url = signin_link_issue(user=user, email=user.email)
    user.is_active = False
    user.save()
    path = "/" + url.split("://", 1)[1].split("/", 1)[1]
    c = Client()
    assert c.post(path).status_code == 302 and c.get("/console/").status_code == 302


def test_session_stores_a_seed_never_the_code(owner):
    from django.contrib.sessions.models import Session

    c = Client()
    _request_code(c, owner.email)
    code = last_code(owner.email)
    raw = Session.objects.get(session_key=c.session.session_key).session_data
    decoded = str(c.session.load())
    assert code not in raw and code not in decoded and code.replace("-", "") not in decoded
    assert "seed:" in decoded
    # The mailed code is the one that works, with or without its dash, in any case.
    assert c.post("/console/auth/login/code/confirm/", {"code": code.replace("-", "").lower()}).status_code == 302
    assert c.get("/console/").status_code == 200


def test_sign_up_verification_code_is_derived_too():
    from django.contrib.sessions.models import Session

    c = Client()
    resp = c.post("/console/auth/signup/", {"email": "seeded@example.com"})
    code = last_code("seeded@example.com")
    assert code not in str(c.session.load())
    assert Session.objects.filter(session_data__contains=code).count() == 0
    c.post(resp["Location"], {"code": "BBBB-BBBB"})
    assert c.get("/console/").status_code == 302  # a wrong code does nothing
    c.post(resp["Location"], {"code": code})
    assert c.get("/console/").status_code == 200


def test_expired_links_are_purged(owner):
    import time_machine
    from django.utils import timezone

    from accounts.console_auth import signin_link_issue, signin_links_purge

    signin_link_issue(user=owner, email=owner.email)
    assert signin_links_purge() == 0
    with time_machine.travel(timezone.now() + timezone.timedelta(days=1, minutes=11)):
        assert signin_links_purge() == 1


def test_sign_up_by_link_after_post():
    from allauth.account.models import EmailAddress

    Client().post("/console/auth/signup/", {"email": "linky@example.com"})
    link = last_link("linky@example.com")
    path = "/" + link.split("://", 1)[1].split("/", 1)[1]
    other_browser = Client()
    assert other_browser.get(path).status_code == 200
    assert not EmailAddress.objects.get(email="linky@example.com").verified  # GET changed nothing
    assert other_browser.post(path).status_code == 302
    assert EmailAddress.objects.get(email="linky@example.com").verified
    assert other_browser.get("/console/").status_code == 200
    m = Membership.objects.get(user__email="linky@example.com")
    assert CreditAccount.objects.get(pk=m.workspace_id).balance_micros == 300_000_000


@pytest.mark.parametrize("path", ["/console/auth/password/reset/", "/console/auth/password/change/",
                                  "/console/auth/password/set/", "/console/auth/password/reset/key/1-x/"])
def test_no_password_pages(owner, path):
    c = Client()
    c.force_login(owner)
    assert c.get(path).status_code == 404
    assert Client().post(path, {"email": owner.email}).status_code == 404


def test_admin_login_is_the_console_sign_in():
    resp = Client().get("/admin/login/?next=/admin/")
    assert resp.status_code == 302 and resp["Location"].startswith("/console/auth/login/")


def test_sign_in_mail_names_the_site_and_comes_from_default_from_email(owner, settings):
    # Issue 14: the mail said "Hello from 127.0.0.1:8100!" (the request's host) and came from a bare address.
    settings.DEFAULT_FROM_EMAIL = "console@mail.example.com"
    settings.SITE_NAME = "Acme Outbound"
    _request_code(Client(), owner.email)
    msg = messages_to(owner.email)[-1]
    assert msg["From"] == "Acme Outbound <console@mail.example.com>"
    text = body(msg)
    assert "Hello from Acme Outbound!" in text and "Thank you for using Acme Outbound!" in text
    assert "127.0.0.1" not in text.split("http", 1)[0]  # the greeting names the site, not a host:port


def test_code_entry_page_uses_the_console_layout(owner):
    c = Client()
    page = c.get(_request_code(c, owner.email)["Location"]).content.decode()
    assert 'data-testid="code-entry"' in page and 'class="card"' in page
    assert '<label for="id_code">Code</label>' in page and '<button class="primary" type="submit">Sign in</button>' in page


def test_one_flash_message_after_sign_in(owner):
    c = Client()
    _request_code(c, owner.email)
    c.get("/console/auth/login/code/confirm/")  # the "code sent" message is shown (and consumed) here
    page = c.post("/console/auth/login/code/confirm/", {"code": last_code(owner.email)}, follow=True).content.decode()
    assert page.count('class="msg') == 1 and "Successfully signed in" in page

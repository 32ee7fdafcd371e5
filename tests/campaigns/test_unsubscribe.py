"""Unsubscribe: GET is safe (mail scanners follow links), POST and RFC 8058 one-click unsubscribe at once,
and mail to the mailto address unsubscribes too."""

from urllib.parse import unquote, urlparse

import pytest
from django.test import Client

from campaigns import messages, services
from campaigns.models import CampaignLead, Suppression
from tests.campaigns.conftest import run_tick, sink_messages


@pytest.fixture
def sent(launched, settings):
    run_tick()
    msg = next(m for m in sink_messages(settings) if m["To"].startswith("Ann"))
    https, mailto = [p.strip().strip("<>") for p in msg["List-Unsubscribe"].split(",")]
    return msg, https, mailto


def test_get_shows_confirmation_and_changes_nothing(sent, workspace):
    _, url, _ = sent
    client = Client(enforce_csrf_checks=True)
    for _ in range(3):
        page = client.get(urlparse(url).path)
        assert page.status_code == 200
        body = page.content.decode()
        assert "<button" in body and "Unsubscribe" in body and "ann@acme.test" in body
    assert client.head(urlparse(url).path).status_code == 200
    assert not Suppression.objects.filter(workspace=workspace).exists()
    assert CampaignLead.objects.get(email="ann@acme.test").state == "active"


def test_one_click_post(sent, workspace, settings, clock):
    _, url, _ = sent
    client = Client(enforce_csrf_checks=True)  # no cookie, no CSRF token: as a mail provider posts
    resp = client.post(urlparse(url).path, data="List-Unsubscribe=One-Click",
                       content_type="application/x-www-form-urlencoded")
    assert resp.status_code == 200
    s = Suppression.objects.get(workspace=workspace, email="ann@acme.test")
    assert (s.reason, s.source) == ("unsubscribed", "one-click")
    lead = CampaignLead.objects.get(email="ann@acme.test")
    assert (lead.state, lead.stop_reason) == ("stopped", "unsubscribed")
    # repeat is harmless
    assert client.post(urlparse(url).path, data="List-Unsubscribe=One-Click",
                       content_type="application/x-www-form-urlencoded").status_code == 200
    from datetime import timedelta
    clock.shift(timedelta(days=3))
    run_tick()
    assert [m["Subject"] for m in sink_messages(settings) if m["To"].startswith("Ann")] == ["Hi Ann"]


def test_form_button_post(sent, workspace):
    _, url, _ = sent
    resp = Client(enforce_csrf_checks=True).post(urlparse(url).path, {"List-Unsubscribe": "One-Click"})
    assert resp.status_code == 200 and "unsubscribed" in resp.content.decode()
    assert Suppression.objects.filter(workspace=workspace, email="ann@acme.test", reason="unsubscribed").exists()


@pytest.mark.parametrize("token", ["garbage", "1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "999999.x"])
def test_bad_token_is_404_envelope(token, db):
    for method in ("get", "post"):
        resp = getattr(Client(), method)(f"/u/{token}")
        assert resp.status_code == 404 and resp.json()["error"]["code"] == "not_found"


def test_tampered_token_rejected(sent):
    _, url, _ = sent
    token = urlparse(url).path.rsplit("/", 1)[1]
    pk, sig = token.split(".", 1)
    forged = f"{int(pk) + 1}.{sig}"
    assert messages.unsubscribe_lead_pk(forged) is None
    assert Client().post(f"/u/{forged}").status_code == 404


def test_other_methods_405(sent):
    _, url, _ = sent
    resp = Client().put(urlparse(url).path)
    assert resp.status_code == 405 and resp.json()["error"]["code"] == "method_not_allowed"


def test_mailto_unsubscribes(sent, workspace):
    _, _, mailto = sent
    to, _, query = mailto.removeprefix("mailto:").partition("?")
    subject = unquote(query.removeprefix("subject="))
    assert to == "alex@out-mail.test"
    assert services.unsubscribe_by_mailto(subject="hello", to_address=to, from_email="ann@acme.test") is None
    assert not Suppression.objects.filter(workspace=workspace).exists()
    lead = services.unsubscribe_by_mailto(subject=f"Re: {subject}", to_address=to, from_email="ann@acme.test")
    assert lead is not None and lead.email == "ann@acme.test"
    s = Suppression.objects.get(workspace=workspace, email="ann@acme.test")
    assert s.reason == "unsubscribed" and s.source.startswith("mailto")
    token = subject.split()[-1]
    bob = CampaignLead.objects.get(email="bob@beta.test")
    bob_token = messages.unsubscribe_token(bob)
    assert token != bob_token
    assert services.unsubscribe_by_mailto(to_address=f"alex+unsubscribe-{bob_token}@out-mail.test") == bob


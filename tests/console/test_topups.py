"""Top-ups: sandbox test credits (limits at their edges), Stripe Checkout creation and the signed webhook.

Stripe is a paid vendor API, so its one outbound call is answered by an httpx MockTransport with a
response recorded from Stripe's public API reference (Checkout Session object). Webhook payloads are
signed locally with the endpoint secret using Stripe's documented scheme."""

import json
import time
from urllib.parse import parse_qs

import httpx
import pytest
from django.test import Client

from billing import topups
from billing.models import CheckoutSession, CreditAccount, LedgerEntry
from core.money import format_credits

pytestmark = pytest.mark.django_db

SECRET = "whsec_test_console_secret"

# From https://docs.stripe.com/api/checkout/sessions/object (trimmed to the fields we read).
RECORDED_SESSION = {
    "id": "cs_test_a1b2c3d4e5f6g7h8i9j0",
    "object": "checkout.session",
    "amount_total": 1000,
    "currency": "usd",
    "mode": "payment",
    "payment_status": "unpaid",
    "status": "open",
    "url": "https://checkout.stripe.com/c/pay/cs_test_a1b2c3d4e5f6g7h8i9j0#fidkdWxOYHwnPyd1blpxYHZxWjA0",
}


def _balance(ws) -> str:
    return format_credits(CreditAccount.objects.get(pk=ws.pk).balance_micros)


@pytest.fixture
def stripe_on(settings, monkeypatch):
    settings.STRIPE_SECRET_KEY = "sk_test_console"
    settings.STRIPE_WEBHOOK_SECRET = SECRET
    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        assert request.url.path == "/v1/checkout/sessions"
        return httpx.Response(200, json=RECORDED_SESSION)

    real = topups._stripe_client
    monkeypatch.setattr(topups, "_stripe_client", lambda transport=None: real(httpx.MockTransport(handler)))
    return seen


def _event(session_id, *, event_id="evt_1", kind="checkout.session.completed", payment_status="paid"):
    return {"id": event_id, "object": "event", "type": kind,
            "data": {"object": {"id": session_id, "object": "checkout.session", "payment_status": payment_status}}}


def _post_webhook(event, *, secret=SECRET, timestamp=None, header=None):
    payload = json.dumps(event).encode()
    sig = header if header is not None else topups.webhook_sign(payload, secret, timestamp)
    return Client().post("/billing/stripe/webhook", data=payload, content_type="application/json",
                         headers={"Stripe-Signature": sig})


# --- sandbox ----------------------------------------------------------------------------------------
def test_sandbox_form_adds_exact_test_credits(console, workspace):
    page = console.get("/console/topups/").content.decode()
    assert "Sandbox: add test credits" in page and "Test credits only" in page
    resp = console.post("/console/topups/", {"mode": "sandbox", "credits": "500"})
    assert resp.status_code == 302
    assert _balance(workspace) == "800"
    entry = LedgerEntry.objects.filter(account_id=workspace.pk).first()
    assert entry.kind == "topup" and entry.amount_micros == 500_000_000 and "Sandbox test credits" in entry.memo


@pytest.mark.parametrize("amount,ok", [("499", False), ("500", True), ("100000", True), ("100001", False), ("0", False)])
def test_sandbox_limits(console, workspace, amount, ok):
    console.post("/console/topups/", {"mode": "sandbox", "credits": amount})
    assert _balance(workspace) == (format_credits((300 + int(amount)) * 1_000_000) if ok else "300")


def test_sandbox_form_absent_and_refused_when_not_sandbox(console, workspace, settings):
    settings.SANDBOX = False
    assert "Sandbox: add test credits" not in console.get("/console/topups/").content.decode()
    console.post("/console/topups/", {"mode": "sandbox", "credits": "1000"})
    assert _balance(workspace) == "300"


def test_member_cannot_top_up(workspace, member_of):
    _, c = member_of(workspace)
    assert c.post("/console/topups/", {"mode": "sandbox", "credits": "1000"}).status_code == 404
    assert _balance(workspace) == "300"


# --- Stripe -----------------------------------------------------------------------------------------
def test_checkout_then_webhook_credits_once(console, workspace, stripe_on):
    resp = console.post("/console/topups/", {"mode": "stripe", "pack": "1000"})
    assert resp.status_code == 302 and resp["Location"] == RECORDED_SESSION["url"]
    sent = parse_qs(stripe_on[0].content.decode())
    assert sent["line_items[0][price_data][unit_amount]"] == ["1000"]
    assert sent["metadata[workspace_id]"] == [str(workspace.pk)] and sent["mode"] == ["payment"]
    assert stripe_on[0].headers["Idempotency-Key"]
    session = CheckoutSession.objects.get()
    assert session.status == "open" and session.credits_micros == 1000 * 1_000_000

    ok = _post_webhook(_event(session.pk))
    assert ok.status_code == 200 and ok.json()["outcome"] == "credited"
    assert _balance(workspace) == "1300"
    # Stripe retries the same event: nothing more.
    assert _post_webhook(_event(session.pk)).json()["outcome"] == "already_credited"
    # A different event for the same paid session (e.g. async_payment_succeeded): nothing more.
    assert _post_webhook(_event(session.pk, event_id="evt_2",
                                kind="checkout.session.async_payment_succeeded")).json()["outcome"] == "already_credited"
    assert _balance(workspace) == "1300"
    entry = LedgerEntry.objects.get(kind="topup")
    assert entry.external_ref == "evt_1" and entry.amount_micros == 1_000_000_000


def test_custom_amount_is_priced_at_one_cent_per_credit(console, stripe_on):
    console.post("/console/topups/", {"mode": "stripe", "credits": "1234"})
    assert parse_qs(stripe_on[0].content.decode())["line_items[0][price_data][unit_amount]"] == ["1234"]


def test_custom_amount_limits(console, stripe_on, settings):
    console.post("/console/topups/", {"mode": "stripe", "credits": str(settings.TOPUP_MAX_CREDITS + 1)})
    console.post("/console/topups/", {"mode": "stripe", "credits": str(settings.TOPUP_MIN_CREDITS - 1)})
    assert stripe_on == []
    console.post("/console/topups/", {"mode": "stripe", "credits": str(settings.TOPUP_MAX_CREDITS)})
    assert len(stripe_on) == 1


def test_unpaid_completion_does_not_credit(console, workspace, stripe_on):
    console.post("/console/topups/", {"mode": "stripe", "pack": "1000"})
    resp = _post_webhook(_event(RECORDED_SESSION["id"], payment_status="unpaid"))
    assert resp.json()["outcome"] == "unpaid" and _balance(workspace) == "300"


@pytest.mark.parametrize("case", ["wrong_secret", "tampered", "stale", "missing", "garbled"])
def test_bad_signatures_are_rejected(console, workspace, stripe_on, case):
    console.post("/console/topups/", {"mode": "stripe", "pack": "1000"})
    event = _event(RECORDED_SESSION["id"])
    if case == "wrong_secret":
        resp = _post_webhook(event, secret="whsec_other")
    elif case == "stale":
        resp = _post_webhook(event, timestamp=int(time.time()) - 301)
    elif case == "missing":
        resp = Client().post("/billing/stripe/webhook", data=json.dumps(event), content_type="application/json")
    elif case == "garbled":
        resp = _post_webhook(event, header="t=abc,v1=")
    else:
        payload = json.dumps(event).encode()
        sig = topups.webhook_sign(payload, SECRET)
        event["data"]["object"]["id"] = "cs_other"
        resp = Client().post("/billing/stripe/webhook", data=json.dumps(event), content_type="application/json",
                             headers={"Stripe-Signature": sig})
    assert resp.status_code == 400 and resp.json()["error"]["code"] == "invalid_request"
    assert resp.json()["error"]["request_id"] == resp["X-Request-Id"]
    assert _balance(workspace) == "300"


def test_timestamp_tolerance_edge(console, workspace, stripe_on):
    console.post("/console/topups/", {"mode": "stripe", "pack": "1000"})
    payload = json.dumps(_event(RECORDED_SESSION["id"])).encode()
    now = int(time.time())
    assert topups.webhook_verify(payload, topups.webhook_sign(payload, SECRET, now - 300), now=now)["id"] == "evt_1"
    with pytest.raises(topups.SignatureError):
        topups.webhook_verify(payload, topups.webhook_sign(payload, SECRET, now - 301), now=now)


def test_unknown_session_and_other_events_are_acknowledged_without_credit(workspace, stripe_on):
    assert _post_webhook(_event("cs_unknown")).json()["outcome"] == "unknown_session"
    assert _post_webhook({"id": "evt_9", "type": "customer.created", "data": {"object": {}}}).json()["outcome"] == "ignored"
    assert _balance(workspace) == "300"


def test_webhook_is_404_when_stripe_is_off(settings):
    settings.STRIPE_WEBHOOK_SECRET = None
    resp = _post_webhook(_event("cs_x"))
    assert resp.status_code == 404 and resp.json()["error"]["code"] == "not_found"


def test_webhook_get_is_405_envelope(stripe_on):
    resp = Client().get("/billing/stripe/webhook")
    assert resp.status_code == 405 and resp.json()["error"]["code"] == "method_not_allowed"


def test_provider_failure_is_shown_not_crashed(console, settings, monkeypatch):
    settings.STRIPE_SECRET_KEY = "sk_test_console"
    real = topups._stripe_client
    monkeypatch.setattr(topups, "_stripe_client", lambda transport=None: real(
        httpx.MockTransport(lambda r: httpx.Response(401, json={"error": {"type": "invalid_request_error"}}))))
    resp = console.post("/console/topups/", {"mode": "stripe", "pack": "1000"})
    assert resp.status_code == 200 and b"refused to open a checkout" in resp.content
    assert CheckoutSession.objects.count() == 0

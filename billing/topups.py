"""Top-ups: Stripe Checkout (when STRIPE_SECRET_KEY is set) credited by a signature-verified webhook,
and, in sandbox mode, test credits from a clearly labelled console form.

Stripe is spoken over plain HTTPS with httpx (two calls' worth of API; no SDK dependency):
- `checkout_create` POSTs /v1/checkout/sessions (form-encoded, with an Idempotency-Key);
- `webhook_verify` implements Stripe's `Stripe-Signature` scheme: `t=<unix>,v1=<hex HMAC-SHA256 of
  "<t>.<raw body>" under the endpoint secret>`, with a replay tolerance;
- `webhook_handle` credits a paid session once: `credits_grant(kind="topup", external_ref=<event id>)` is
  unique on the event id, and the session row is locked and marked paid in the same transaction.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import time
import uuid

import httpx
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from accounts.models import User, Workspace
from billing.models import CheckoutSession, LedgerEntry
from billing.services import credits_grant
from core import errors, outbound
from core.money import MICROS_PER_CREDIT

logger = logging.getLogger(__name__)


def stripe_enabled() -> bool:
    return bool(settings.STRIPE_SECRET_KEY)


def packs() -> list[dict]:
    return [{"credits": c, "cents": p, "price": f"{p / 100:,.2f}"} for c, p in settings.TOPUP_PACKS]


def price_cents(credits_whole: int) -> int:
    for c, p in settings.TOPUP_PACKS:
        if c == credits_whole:
            return p
    return credits_whole * settings.TOPUP_CENTS_PER_CREDIT


def validate_amount(credits_whole: int, *, maximum: int | None = None) -> int:
    maximum = settings.TOPUP_MAX_CREDITS if maximum is None else maximum
    if not isinstance(credits_whole, int) or credits_whole < settings.TOPUP_MIN_CREDITS or credits_whole > maximum:
        raise errors.InvalidRequest(
            f"Choose between {settings.TOPUP_MIN_CREDITS:,} and {maximum:,} credits.",
            details={"fields": {"credits": ["out of range"]}},
        )
    return credits_whole


# --- sandbox ----------------------------------------------------------------------------------------
def sandbox_topup(*, workspace: Workspace, credits_whole: int, user: User | None) -> LedgerEntry:
    """Free test credits; only in sandbox mode."""
    if not settings.SANDBOX:
        raise errors.NotFound()
    validate_amount(credits_whole, maximum=settings.SANDBOX_TOPUP_MAX_CREDITS)
    return credits_grant(workspace=workspace, amount=credits_whole * MICROS_PER_CREDIT, kind=LedgerEntry.Kind.TOPUP,
                         memo="Sandbox test credits (not paid)", created_by=user)


# --- Stripe Checkout --------------------------------------------------------------------------------
def _stripe_client(transport: httpx.BaseTransport | None = None) -> httpx.Client:
    # core.outbound's client: 20 s for the whole call (connect, request, answer), not per read
    return outbound.client(base_url=settings.STRIPE_API_BASE, timeout=20, allow_private=True, transport=transport,
                           auth=(settings.STRIPE_SECRET_KEY, ""))


def checkout_create(*, workspace: Workspace, credits_whole: int, user: User | None, success_url: str, cancel_url: str,
                    transport: httpx.BaseTransport | None = None) -> CheckoutSession:
    if not stripe_enabled():
        raise errors.NotFound("Card top-ups are not configured.")
    validate_amount(credits_whole)
    cents = price_cents(credits_whole)
    form = {
        "mode": "payment",
        "success_url": success_url,
        "cancel_url": cancel_url,
        "client_reference_id": str(workspace.pk),
        "line_items[0][quantity]": "1",
        "line_items[0][price_data][currency]": "usd",
        "line_items[0][price_data][unit_amount]": str(cents),
        "line_items[0][price_data][product_data][name]": f"{credits_whole:,} credits",
        "metadata[workspace_id]": str(workspace.pk),
        "metadata[credits]": str(credits_whole),
    }
    if user is not None:
        form["customer_email"] = user.email
    try:
        with _stripe_client(transport) as client:
            resp = client.post("/v1/checkout/sessions", data=form, headers={"Idempotency-Key": str(uuid.uuid4())})
    except httpx.HTTPError as exc:
        logger.warning("stripe checkout create failed: %s", exc)
        raise errors.ProviderUnavailable("The payment provider could not be reached; try again.") from exc
    if resp.status_code >= 400:
        logger.warning("stripe checkout create: HTTP %s %s", resp.status_code, resp.text[:500])
        raise errors.ProviderUnavailable("The payment provider refused to open a checkout; try again later.")
    body = resp.json()
    return CheckoutSession.objects.create(
        id=body["id"], workspace=workspace, credits_micros=credits_whole * MICROS_PER_CREDIT, amount_cents=cents,
        url=body.get("url") or "", created_by=user,
    )


class SignatureError(errors.InvalidRequest):
    message = "Invalid Stripe signature."


def webhook_sign(payload: bytes, secret: str, timestamp: int | None = None) -> str:
    """A `Stripe-Signature` header value for `payload` (what Stripe sends; used by tests and tooling)."""
    t = int(time.time()) if timestamp is None else timestamp
    mac = hmac.new(secret.encode(), f"{t}.".encode() + payload, hashlib.sha256).hexdigest()
    return f"t={t},v1={mac}"


def webhook_verify(payload: bytes, header: str | None, *, secret: str | None = None, now: float | None = None) -> dict:
    secret = secret or settings.STRIPE_WEBHOOK_SECRET
    if not secret:
        raise errors.NotFound()
    if not header:
        raise SignatureError("Missing Stripe-Signature header.")
    timestamp, candidates = None, []
    for part in header.split(","):
        key, _, value = part.strip().partition("=")
        if key == "t":
            timestamp = value
        elif key == "v1":
            candidates.append(value)
    if not timestamp or not timestamp.isdigit() or not candidates:
        raise SignatureError("Malformed Stripe-Signature header.")
    expected = hmac.new(secret.encode(), timestamp.encode() + b"." + payload, hashlib.sha256).hexdigest()
    if not any(hmac.compare_digest(expected, c) for c in candidates):
        raise SignatureError()
    if abs((time.time() if now is None else now) - int(timestamp)) > settings.STRIPE_WEBHOOK_TOLERANCE_SECONDS:
        raise SignatureError("Stripe-Signature timestamp outside the tolerance.")
    try:
        event = json.loads(payload)
    except ValueError as exc:
        raise errors.InvalidRequest("The event body is not JSON.") from exc
    if not isinstance(event, dict) or not isinstance(event.get("id"), str):
        raise errors.InvalidRequest("The event has no id.")
    return event


def webhook_handle(event: dict) -> str:
    """Apply a verified event. Returns what happened (for the response and logs). Safe to repeat."""
    kind = event.get("type")
    obj = ((event.get("data") or {}).get("object")) or {}
    if kind not in ("checkout.session.completed", "checkout.session.async_payment_succeeded", "checkout.session.expired"):
        return "ignored"
    with transaction.atomic():
        session = CheckoutSession.objects.select_for_update().filter(pk=obj.get("id")).first()
        if session is None:
            logger.warning("stripe event %s for unknown checkout session %r", event["id"], obj.get("id"))
            return "unknown_session"
        if kind == "checkout.session.expired":
            if session.status == CheckoutSession.Status.OPEN:
                session.status = CheckoutSession.Status.EXPIRED
                session.save(update_fields=["status"])
            return "expired"
        if obj.get("payment_status") != "paid":
            return "unpaid"
        if session.status == CheckoutSession.Status.PAID:
            return "already_credited"
        entry = credits_grant(workspace=session.workspace, amount=session.credits_micros, kind=LedgerEntry.Kind.TOPUP,
                              external_ref=event["id"], memo=f"Card top-up (Stripe {session.pk})",
                              created_by=session.created_by)
        if entry is None:
            return "already_credited"
        session.status = CheckoutSession.Status.PAID
        session.paid_event_id = event["id"]
        session.paid_at = timezone.now()
        session.save(update_fields=["status", "paid_event_id", "paid_at"])
        return "credited"

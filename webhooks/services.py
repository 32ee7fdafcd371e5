"""Webhooks: endpoints, events, signed at-least-once delivery (Standard Webhooks).

Signatures follow Standard Webhooks: headers `webhook-id` (the delivery id, the same on every retry),
`webhook-timestamp` (seconds, the attempt's time) and `webhook-signature` (`v1,<base64 HMAC-SHA256 of
"{id}.{timestamp}.{body}">` under the base64 secret after `whsec_`; during the 24 hours after a rotation the
old secret signs too, space-separated). Requests go through core.outbound: no loopback/private/link-local
address unless WEBHOOKS_ALLOW_PRIVATE_NETWORKS=1 (loopback alone: WEBHOOKS_ALLOW_LOOPBACK, on by default in
sandbox mode), no redirects, WEBHOOK_TIMEOUT_SECONDS for the whole attempt (a receiver trickling its answer is
cut off there), capped body.
Delivery order per endpoint is not promised; a receiver deduplicates by `webhook-id`.

Lanes: delivery tasks run on their own Celery queue (`webhooks`, its own workers), so receivers never hold the
workers that send campaigns or ingest replies. A delivery is queued at most once at a time (`queued_at`); one
endpoint gets one attempt at a time (its `busy_until` lease), so a slow receiver holds one webhook worker; after
an attempt the worker queues that endpoint's next due delivery, and the sweep queues at most one per endpoint.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import json
import logging
import secrets as pysecrets
import time
from datetime import timedelta
from urllib.parse import urlsplit

from django.conf import settings
from django.core.mail import send_mail
from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from accounts.models import Membership, User, Workspace
from billing import services as billing
from billing.models import CreditAccount
from core import errors
from core.ids import new_id
from core.money import format_credits
from core.outbound import host_valid
from webhooks.models import WebhookDelivery, WebhookEndpoint, WebhookEvent

logger = logging.getLogger("webhooks")

EVENT_TYPES = [
    "reply.received", "reply.answered", "campaign.launched", "campaign.paused", "campaign.resumed", "campaign.completed",
    "operation.updated",
    "approval.requested", "approval.decided", "mailbox.needs_reconnect", "balance.low",
    "mailbox.health_changed", "domain.health_changed",
    "key.budget_warning", "key.budget_exceeded",
]
TEST_EVENT = "webhook.test"
MAX_ENDPOINTS = 20
ROTATION_OVERLAP = timedelta(hours=24)
DISABLE_AFTER = timedelta(days=3)
MAX_RESPONSE_BYTES = 64 * 1024


def allow_private() -> bool:
    return bool(settings.WEBHOOKS_ALLOW_PRIVATE_NETWORKS)


def allow_loopback() -> bool:
    """Loopback receivers (on by default in sandbox mode: nothing leaves the machine)."""
    return allow_private() or bool(settings.WEBHOOKS_ALLOW_LOOPBACK)


# --- secrets ----------------------------------------------------------------------------------------
def _fernet():
    from cryptography.fernet import Fernet

    return Fernet(base64.urlsafe_b64encode(hashlib.sha256(("webhook-secret:" + settings.SECRET_KEY).encode()).digest()))


def _seal(secret: str) -> str:
    return _fernet().encrypt(secret.encode()).decode()


def _unseal(sealed: str) -> str:
    return _fernet().decrypt(sealed.encode()).decode()


def secret_new() -> str:
    return "whsec_" + base64.b64encode(pysecrets.token_bytes(32)).decode()


def sign(*, secrets: list[str], msg_id: str, timestamp: int, body: bytes) -> str:
    out = []
    for secret in secrets:
        key = base64.b64decode(secret.removeprefix("whsec_"))
        mac = hmac.new(key, f"{msg_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
        out.append("v1," + base64.b64encode(mac).decode())
    return " ".join(out)


def signing_secrets(endpoint: WebhookEndpoint, now=None) -> list[str]:
    now = now or timezone.now()
    out = [_unseal(endpoint.secret)]
    if endpoint.previous_secret and endpoint.previous_secret_until and endpoint.previous_secret_until > now:
        out.append(_unseal(endpoint.previous_secret))
    return out


# --- endpoints --------------------------------------------------------------------------------------
def _url_check(url: str) -> str:
    url = (url or "").strip() if isinstance(url, str) else ""
    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError as exc:
        raise errors.InvalidRequest("url is not a valid URL.", details={"fields": {"url": ["invalid URL"]}}) from exc
    if parts.scheme not in ("https", "http") or not host or parts.username or parts.password or len(url) > 2000:
        raise errors.InvalidRequest("url must be an http(s) URL without credentials.",
                                    details={"fields": {"url": ["must be an http(s) URL"]}})
    if not host_valid(host):
        raise errors.InvalidRequest(f"url's host {host!r} is not a valid host name or IP address.",
                                    details={"fields": {"url": ["invalid host"]}})
    try:
        literal = ipaddress.ip_address(host)
    except ValueError:
        literal = None
    loopback = host == "localhost" or host.endswith(".localhost") or (literal is not None and literal.is_loopback)
    if loopback and not allow_loopback():
        raise errors.InvalidRequest(
            "url points to a loopback address, refused here; WEBHOOKS_ALLOW_LOOPBACK=1 allows receivers on this "
            "machine (on by default in sandbox mode).",
            details={"fields": {"url": ["loopback addresses are refused"]}, "setting": "WEBHOOKS_ALLOW_LOOPBACK"})
    if not loopback and not allow_private() and literal is not None and not _public(str(literal)):
        raise errors.InvalidRequest(
            "url points to a private or link-local address, refused here; WEBHOOKS_ALLOW_PRIVATE_NETWORKS=1 allows "
            "receivers on private networks (trusted networks only).",
            details={"fields": {"url": ["private addresses are refused"]},
                     "setting": "WEBHOOKS_ALLOW_PRIVATE_NETWORKS"})
    return url


def _public(ip: str) -> bool:
    from core.outbound import address_allowed

    return address_allowed(ip, allow_private=False)


def _events_check(events) -> list[str]:
    if not isinstance(events, list) or not events:
        raise errors.InvalidRequest("events must be a non-empty list.", details={"fields": {"events": ["required"]}})
    unknown = sorted({e for e in events if e not in EVENT_TYPES and e != "*"})
    if unknown:
        raise errors.InvalidRequest(f"Unknown events: {', '.join(map(str, unknown))}",
                                    details={"fields": {"events": [f"unknown event {e}" for e in unknown]}})
    return sorted(set(events))


def endpoint_create(*, workspace: Workspace, url: str, events, created_by: User | None = None
                    ) -> tuple[WebhookEndpoint, str]:
    url = _url_check(url)
    events = _events_check(events)
    with transaction.atomic():
        # Count under the workspace row lock: two creates counting at once each saw a free place and the
        # workspace ended above the cap (check-then-insert under READ COMMITTED).
        Workspace.objects.select_for_update(no_key=True).filter(pk=workspace.pk).first()  # inserts referencing it go on
        if WebhookEndpoint.objects.filter(workspace=workspace, deleted_at__isnull=True).count() >= MAX_ENDPOINTS:
            raise errors.InvalidRequest(f"At most {MAX_ENDPOINTS} webhook endpoints per workspace.")
        secret = secret_new()
        endpoint = WebhookEndpoint.objects.create(id=new_id("whk_"), workspace=workspace, url=url, events=events,
                                                  secret=_seal(secret), created_by=created_by)
    return endpoint, secret


def endpoint_get(*, workspace: Workspace, webhook_id) -> WebhookEndpoint:
    endpoint = WebhookEndpoint.objects.filter(workspace=workspace, pk=str(webhook_id), deleted_at__isnull=True).first()
    if endpoint is None:
        raise errors.NotFound("No such webhook endpoint.")
    return endpoint


def endpoints_list(*, workspace: Workspace):
    return WebhookEndpoint.objects.filter(workspace=workspace, deleted_at__isnull=True).order_by("created_at")


@transaction.atomic
def endpoint_delete(*, endpoint: WebhookEndpoint) -> None:
    now = timezone.now()
    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(deleted_at=now)
    WebhookDelivery.objects.filter(endpoint=endpoint, status=WebhookDelivery.Status.PENDING).update(
        status=WebhookDelivery.Status.FAILED, last_error="endpoint deleted")


def endpoint_rotate_secret(*, endpoint: WebhookEndpoint) -> str:
    """A new secret; the old one keeps signing (beside it) for 24 hours."""
    secret = secret_new()
    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(
        previous_secret=endpoint.secret, previous_secret_until=timezone.now() + ROTATION_OVERLAP, secret=_seal(secret))
    endpoint.refresh_from_db()
    return secret


def endpoint_enable(*, endpoint: WebhookEndpoint) -> WebhookEndpoint:
    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(status=WebhookEndpoint.Status.ACTIVE, disabled_at=None,
                                                          failing_since=None)
    endpoint.refresh_from_db()
    return endpoint


def endpoint_render(endpoint: WebhookEndpoint, *, secret: str | None = None, deliveries: bool = False) -> dict:
    out = {"webhook_id": endpoint.pk, "url": endpoint.url, "events": list(endpoint.events),
           "status": endpoint.status, "created_at": endpoint.created_at,
           "failing_since": endpoint.failing_since, "disabled_at": endpoint.disabled_at}
    if secret is not None:
        out["secret"] = secret
    if deliveries:
        out["recent_deliveries"] = [delivery_render(d) for d in
                                    endpoint.deliveries.select_related("event").order_by("-created_at")[:25]]
    return out


def delivery_render(d: WebhookDelivery) -> dict:
    return {"delivery_id": d.pk, "event_id": d.event_id, "event": d.event.type, "status": d.status,
            "attempts": d.attempts, "last_status_code": d.last_status_code, "last_error": d.last_error or None,
            "latency_ms": d.last_latency_ms, "created_at": d.created_at, "delivered_at": d.delivered_at,
            "next_attempt_at": d.next_attempt_at if d.status == WebhookDelivery.Status.PENDING else None}


# --- events -----------------------------------------------------------------------------------------
def _jsonable(data) -> dict:
    return json.loads(json.dumps(data, cls=DjangoJSONEncoder))


# The delivery task, named: webhooks.tasks runs these services, so they reach it through Celery's registry (it is
# registered when the app is ready, WebhooksConfig.ready) rather than by importing the module that imports them.
DELIVER_TASK = "webhooks.tasks.deliver"


def _task(name: str):
    from celery import current_app

    return current_app.tasks[name]


def _enqueue(delivery_ids: list[str]) -> None:
    """Send the task messages of deliveries already marked queued (`queued_at` set by whoever chose them)."""
    deliver = _task(DELIVER_TASK)
    for delivery_id in delivery_ids:
        try:
            deliver.delay(delivery_id)
        except Exception:  # noqa: BLE001 - the row is durable; the sweep sends it if the broker is down
            WebhookDelivery.objects.filter(pk=delivery_id).update(queued_at=None)
            logger.warning("webhooks: could not queue %s; the sweep will send it", delivery_id, exc_info=True)


def _queued_stale(now):
    """A delivery queued before this is taken for lost by the broker and may be queued again."""
    return now - timedelta(seconds=settings.WEBHOOK_QUEUED_STALE_SECONDS)


def _not_queued(now) -> Q:
    return Q(queued_at__isnull=True) | Q(queued_at__lt=_queued_stale(now))


def _mark_queued(delivery_id: str) -> bool:
    """Mark one delivery queued unless it already is (a fresh mark); True if this caller must send its message."""
    now = timezone.now()
    return WebhookDelivery.objects.filter(_not_queued(now), pk=delivery_id,
                                          status=WebhookDelivery.Status.PENDING).update(queued_at=now) == 1


def _new_delivery(endpoint: WebhookEndpoint, event: WebhookEvent) -> WebhookDelivery:
    now = timezone.now()  # queued_at: its message is sent when the creating transaction commits
    return WebhookDelivery(id=new_id("msg_"), endpoint=endpoint, event=event, next_attempt_at=now, queued_at=now,
                           retry_until=now + timedelta(hours=settings.WEBHOOK_RETRY_HOURS))


def event_emit(*, workspace: Workspace | str, type: str, data) -> WebhookEvent | None:
    """Record an event and one delivery per subscribed active endpoint; deliveries are queued when the
    surrounding transaction commits. Without a subscriber nothing is stored (and `data`, when a callable, is
    not even built)."""
    workspace_id = getattr(workspace, "pk", workspace)
    endpoints = [e for e in WebhookEndpoint.objects.filter(workspace_id=workspace_id, deleted_at__isnull=True,
                                                           status=WebhookEndpoint.Status.ACTIVE)
                 if type in e.events or "*" in e.events]
    if not endpoints:
        return None
    if callable(data):
        data = data()
    event = WebhookEvent.objects.create(id=new_id("evt_"), workspace_id=workspace_id, type=type, data=_jsonable(data))
    rows = WebhookDelivery.objects.bulk_create([_new_delivery(e, event) for e in endpoints])
    ids = [r.pk for r in rows]
    transaction.on_commit(lambda: _enqueue(ids))
    return event


def event_emit_safely(**kwargs) -> None:
    """For the receivers of other apps' events and signals (webhooks.receivers), which run inside the caller's
    transaction: a webhook problem is logged (its savepoint rolled back), never breaks the caller."""
    try:
        with transaction.atomic():
            event_emit(**kwargs)
    except Exception:  # noqa: BLE001
        logger.exception("webhooks: could not record event %s", kwargs.get("type"))


def endpoint_test(*, endpoint: WebhookEndpoint) -> WebhookDelivery:
    """A `webhook.test` event to this endpoint only (whatever it subscribes to)."""
    with transaction.atomic():
        event = WebhookEvent.objects.create(id=new_id("evt_"), workspace_id=endpoint.workspace_id, type=TEST_EVENT,
                                            data={"webhook_id": endpoint.pk, "message": "This is a test event."})
        delivery = _new_delivery(endpoint, event)
        delivery.save(force_insert=True)
        transaction.on_commit(lambda: _enqueue([delivery.pk]))
    return delivery


def delivery_replay(*, delivery: WebhookDelivery) -> WebhookDelivery:
    """Send again (same webhook-id, a new 24-hour retry window), whatever the delivery's outcome was."""
    now = timezone.now()
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        status=WebhookDelivery.Status.PENDING, next_attempt_at=now, claimed_until=None,
        retry_until=now + timedelta(hours=settings.WEBHOOK_RETRY_HOURS))
    if _mark_queued(delivery.pk):  # already queued: that message sends it
        transaction.on_commit(lambda: _enqueue([delivery.pk]))
    delivery.refresh_from_db()
    return delivery


# --- delivery ---------------------------------------------------------------------------------------
def backoff(attempts: int) -> timedelta:
    """Exponential: 30 s, 1 min, 2 min, … doubling, at most 2 hours between attempts."""
    base = settings.WEBHOOK_RETRY_BASE_SECONDS
    return timedelta(seconds=min(base * 2 ** max(attempts - 1, 0), 7200))


def _claimable(now) -> Q:
    return (Q(claimed_until__isnull=True) | Q(claimed_until__lt=now)) & Q(
        status=WebhookDelivery.Status.PENDING, next_attempt_at__lte=now,
        endpoint__status=WebhookEndpoint.Status.ACTIVE, endpoint__deleted_at__isnull=True)


def _claim(delivery_id: str) -> str | None:
    """Take the delivery and its endpoint for one attempt: None when taken, else why not ("not_due": not due,
    or held by another worker; "busy": another delivery to the same endpoint is under way, and that worker
    queues this one next). A message that does not lead to an attempt leaves the delivery unqueued."""
    now = timezone.now()
    lease = now + timedelta(seconds=settings.WEBHOOK_LEASE_SECONDS)
    endpoint_id = WebhookDelivery.objects.filter(_claimable(now), pk=delivery_id).values_list(
        "endpoint_id", flat=True).first()
    if endpoint_id is None:
        WebhookDelivery.objects.filter(pk=delivery_id).update(queued_at=None)
        return "not_due"
    if not WebhookEndpoint.objects.filter(Q(busy_until__isnull=True) | Q(busy_until__lt=now),
                                          pk=endpoint_id).update(busy_until=lease):
        WebhookDelivery.objects.filter(pk=delivery_id).update(queued_at=None)
        return "busy"
    if WebhookDelivery.objects.filter(_claimable(now), pk=delivery_id).update(
            claimed_until=lease, queued_at=None, attempts=F("attempts") + 1) != 1:
        WebhookEndpoint.objects.filter(pk=endpoint_id, busy_until=lease).update(busy_until=None)
        WebhookDelivery.objects.filter(pk=delivery_id).update(queued_at=None)
        return "not_due"
    return None


def body_of(event: WebhookEvent) -> bytes:
    return json.dumps({"type": event.type, "timestamp": event.created_at, "data": event.data},
                      cls=DjangoJSONEncoder, separators=(",", ":")).encode()


def delivery_attempt(*, delivery_id: str) -> str:
    """One attempt, if the delivery is due and not held by another worker. Returns the outcome."""
    from core import outbound

    refused = _claim(delivery_id)
    if refused:
        return refused
    d = WebhookDelivery.objects.select_related("endpoint", "event").get(pk=delivery_id)
    endpoint = d.endpoint
    body = body_of(d.event)
    timestamp = int(time.time())
    headers = {
        "content-type": "application/json", "webhook-id": d.pk, "webhook-timestamp": str(timestamp),
        "webhook-signature": sign(secrets=signing_secrets(endpoint), msg_id=d.pk, timestamp=timestamp, body=body),
    }
    code, error, latency = None, "", None
    started = time.monotonic()
    try:
        resp = outbound.request("POST", endpoint.url, timeout=float(settings.WEBHOOK_TIMEOUT_SECONDS),
                                max_bytes=MAX_RESPONSE_BYTES, allow_private=allow_private(), headers=headers,
                                content=body, allow_loopback=allow_loopback())
        code, latency = resp.status_code, resp.elapsed_ms
        if not 200 <= code < 300:
            error = f"HTTP {code}"
    except outbound.OutboundError as exc:
        error = str(exc)[:300]
        latency = int((time.monotonic() - started) * 1000)
    except Exception as exc:  # noqa: BLE001 - whatever went wrong is recorded; the delivery never hangs unexplained
        logger.exception("webhooks: attempt of %s failed", d.pk)
        error = f"{type(exc).__name__}: {exc}"[:300]
        latency = int((time.monotonic() - started) * 1000)
    try:
        return _record(d, code=code, error=error, latency=latency)
    finally:
        WebhookEndpoint.objects.filter(pk=endpoint.pk).update(busy_until=None)


def _record(d: WebhookDelivery, *, code, error: str, latency) -> str:
    now = timezone.now()
    fields = {"claimed_until": None, "last_status_code": code, "last_error": error[:300], "last_latency_ms": latency}
    if not error:
        WebhookDelivery.objects.filter(pk=d.pk).update(status=WebhookDelivery.Status.SUCCEEDED, delivered_at=now,
                                                        **fields)
        WebhookEndpoint.objects.filter(pk=d.endpoint_id).update(failing_since=None)
        return "succeeded"
    attempts = WebhookDelivery.objects.values_list("attempts", flat=True).get(pk=d.pk)
    next_at = now + backoff(attempts)
    if next_at > d.retry_until:
        WebhookDelivery.objects.filter(pk=d.pk).update(status=WebhookDelivery.Status.FAILED, **fields)
        outcome = "failed"
    else:
        WebhookDelivery.objects.filter(pk=d.pk).update(next_attempt_at=next_at, **fields)
        outcome = "retrying"
    WebhookEndpoint.objects.filter(pk=d.endpoint_id, failing_since__isnull=True).update(failing_since=now)
    return outcome


def deliveries_due(limit: int = 500) -> list[str]:
    """Deliveries to queue now, at most one per endpoint (the oldest due): due, not held (a lease left by a
    worker that died has expired), not already queued (unless queued so long ago that the message was lost), to
    an endpoint no worker is sending to. An endpoint's other due deliveries follow one by one after each attempt
    (`delivery_next`), so the queue holds at most one of each endpoint's retries however long it was down."""
    now = timezone.now()
    rows = WebhookDelivery.objects.filter(
        _claimable(now), _not_queued(now),
        Q(endpoint__busy_until__isnull=True) | Q(endpoint__busy_until__lt=now),
    ).order_by("next_attempt_at").values_list("pk", "endpoint_id")[:limit * 20]
    # an endpoint with a delivery in the queue already gets its next one from the worker that runs it
    seen = set(WebhookDelivery.objects.filter(status=WebhookDelivery.Status.PENDING,
                                              queued_at__gte=_queued_stale(now))
               .order_by().values_list("endpoint_id", flat=True).distinct())
    out = []
    for pk, endpoint_id in rows:
        if endpoint_id not in seen:
            seen.add(endpoint_id)
            out.append(pk)
            if len(out) >= limit:
                break
    return out


def deliveries_queue_due(limit: int = 500) -> list[str]:
    """The sweep's pick (`deliveries_due`), each marked queued; returns those whose message the caller sends."""
    return [pk for pk in deliveries_due(limit) if _mark_queued(pk)]


def delivery_next(*, delivery_id: str) -> str | None:
    """After an attempt: the same endpoint's oldest due delivery, marked queued, for the caller to send."""
    endpoint_id = WebhookDelivery.objects.filter(pk=delivery_id).values_list("endpoint_id", flat=True).first()
    if endpoint_id is None:
        return None
    now = timezone.now()
    for pk in WebhookDelivery.objects.filter(_claimable(now), _not_queued(now), endpoint_id=endpoint_id).order_by(
            "next_attempt_at").values_list("pk", flat=True)[:5]:
        if _mark_queued(pk):
            return pk
    return None


def endpoints_disable_failing() -> int:
    """Endpoints failing for DISABLE_AFTER (3 days) are disabled and their owners emailed."""
    cutoff = timezone.now() - DISABLE_AFTER
    count = 0
    for endpoint in WebhookEndpoint.objects.filter(status=WebhookEndpoint.Status.ACTIVE, deleted_at__isnull=True,
                                                   failing_since__lte=cutoff).select_related("workspace"):
        with transaction.atomic():
            # Re-check the whole condition in the UPDATE: a delivery that succeeded since the SELECT cleared
            # failing_since (and a deleted endpoint is left alone), so a recovered endpoint is not disabled.
            if not WebhookEndpoint.objects.filter(pk=endpoint.pk, status=WebhookEndpoint.Status.ACTIVE,
                                                  deleted_at__isnull=True, failing_since__lte=cutoff).update(
                    status=WebhookEndpoint.Status.DISABLED, disabled_at=timezone.now()):
                continue
            WebhookDelivery.objects.filter(endpoint=endpoint, status=WebhookDelivery.Status.PENDING).update(
                status=WebhookDelivery.Status.FAILED, last_error="endpoint disabled after 3 days of failures")
        count += 1
        owners = list(Membership.objects.filter(workspace=endpoint.workspace, role=Membership.Role.OWNER)
                      .values_list("user__email", flat=True))
        if owners:
            send_mail(
                f"Webhook endpoint disabled: {endpoint.url}",
                f"Deliveries to {endpoint.url} (workspace {endpoint.workspace.name}) have failed since "
                f"{endpoint.failing_since:%Y-%m-%d %H:%M} UTC, so the endpoint was disabled and nothing more is "
                f"sent to it. Fix the receiver, then enable it again in the console:\n\n"
                f"{settings.BASE_URL}/console/webhooks/\n",
                settings.DEFAULT_FROM_EMAIL, owners, fail_silently=True)
    return count


# --- balance.low ------------------------------------------------------------------------------------
# The threshold and whether it fired live on the credit account (billing): the statement that charges checks them,
# so the event follows the charge that crosses the threshold; the scheduler's sweep is the backstop.
def balance_threshold_get(*, workspace: Workspace) -> int | None:
    return billing.low_balance_threshold_get(workspace=workspace)


def balance_threshold_set(*, workspace: Workspace, threshold: int | None) -> None:
    billing.low_balance_threshold_set(workspace=workspace, threshold=threshold)


def balance_low_emit(*, workspace_id) -> None:
    """The balance.low event, with the account as it is now (billing's balance_low signal)."""
    account = CreditAccount.objects.filter(pk=workspace_id).first()
    if account is None or account.low_balance_threshold_micros is None:
        return
    event_emit_safely(workspace=workspace_id, type="balance.low", data={
        "credits_balance": format_credits(account.balance_micros),
        "credits_reserved": format_credits(account.reserved_micros),
        "credits_available": format_credits(account.available_micros),
        "threshold": format_credits(account.low_balance_threshold_micros)})


def balances_check() -> int:
    """The scheduler's backstop: balance.low for each workspace below its threshold that has not fired (a hold, not a
    charge, took it there), and re-arming; returns how many fired."""
    return billing.low_balance_sweep()


def events_purge(*, days: int = 30) -> int:
    """Events (and their deliveries) older than `days` with nothing left to send."""
    cutoff = timezone.now() - timedelta(days=days)
    old = WebhookEvent.objects.filter(created_at__lt=cutoff).exclude(deliveries__status=WebhookDelivery.Status.PENDING)
    return old.delete()[0]

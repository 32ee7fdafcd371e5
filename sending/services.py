"""Sending capacity: setup_sending (quote and purchase), the provisioning state machine, monthly upkeep.

Writes live here; reads in `sending.selectors`. Every task-driven transition re-reads its row under lock and
returns early when it has already moved, so each Celery task is safe to run twice.
"""

from __future__ import annotations

import calendar
import logging
import math
import re
import unicodedata
from datetime import UTC, datetime, timedelta

from celery import current_app
from django.conf import settings
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts import services as accounts
from billing import services as billing
from billing.models import LedgerEntry
from core import errors, events
from core.money import credits, format_credits
from sending import capacity
from sending.dkim_keys import dkim_key_generate, dns_records
from sending.models import Mailbox, Operation, Provider, SendingDomain
from sending.providers import get_provider, provider_for
from sending.providers.base import ACTIVE, FAILED, OutcomeUnknown, ProviderError
from sending.signals import mailbox_sendable

logger = logging.getLogger("sending")

VERB = "setup_sending"
EMAILS_PER_MAILBOX_PER_WEEK = 125  # 25 a day, 5 weekdays
MAILBOXES_PER_DOMAIN = 5
SETUP_PER_DOMAIN = credits("1500")
UPKEEP_PER_MAILBOX = credits("750")
MAX_ATTEMPTS = 5  # transient provider failures per item before it is given up (and refunded)
WAITING_DEADLINE = timedelta(hours=72)  # a live mailbox not active after this is given up (and refunded)
POLL_INTERVAL_LIVE = timedelta(minutes=5)
POLL_INTERVAL_MAX = timedelta(hours=1)


# --- sizing and quotes ------------------------------------------------------------------------------
def sizing(emails_per_week: int) -> dict:
    mailboxes = math.ceil(emails_per_week / EMAILS_PER_MAILBOX_PER_WEEK)
    domains = math.ceil(mailboxes / MAILBOXES_PER_DOMAIN)
    return {
        "domains": domains,
        "mailboxes": mailboxes,
        "setup_micros": SETUP_PER_DOMAIN * domains,
        "upkeep_micros": UPKEEP_PER_MAILBOX * mailboxes,
    }


def purchase_price(emails_per_week: int) -> int:
    """What a purchase charges: setup plus the first month of upkeep."""
    s = sizing(emails_per_week)
    return s["setup_micros"] + s["upkeep_micros"]


def canonical_params(*, emails_per_week: int, brand_hint: str | None = None, sender: dict | None = None,
                     provider: str | None = None) -> dict:
    """The parameters a token is bound to; an absent optional field and null are the same call (`provider` is
    named only when chosen, so a token approved without a choice stays bound to the operator's default)."""
    sender_clean = None
    if sender:
        sender_clean = {"first_name": sender.get("first_name") or "", "last_name": sender.get("last_name") or ""}
    params = {"emails_per_week": emails_per_week, "brand_hint": brand_hint or None, "sender": sender_clean}
    if provider:
        params["provider"] = provider
    return params


KIND_LABELS = {"google": "Google Workspace", "microsoft": "Microsoft 365", None: "sandbox"}


def setup_sending_quote(*, workspace, request_id: str, emails_per_week: int, brand_hint: str | None = None,
                        sender: dict | None = None, provider: str | None = None) -> dict:
    s = sizing(emails_per_week)
    params = canonical_params(emails_per_week=emails_per_week, brand_hint=brand_hint, sender=sender,
                              provider=provider)
    name, kind = provider_for(provider)
    vendor = get_provider(name)
    total = s["setup_micros"] + s["upkeep_micros"]
    summary = {
        "Action": "Buy sending capacity (setup_sending)",
        "Emails per week": emails_per_week,
        "Domains": s["domains"],
        "Mailboxes": s["mailboxes"],
        "Mailbox provider": KIND_LABELS[kind] + (" (sandbox)" if name == "sandbox" and kind else ""),
        "Brand hint": brand_hint or "(none)",
        "Sender": " ".join(p for p in (params["sender"] or {}).values() if p) or "(default)",
        "Setup credits (one time)": format_credits(s["setup_micros"]),
        "Upkeep credits per month": format_credits(s["upkeep_micros"]),
        "Charged on purchase (setup + first month)": format_credits(total),
        "Renewal": "monthly per active mailbox, from its activation",
    }
    token, plaintext = accounts.token_issue(workspace=workspace, verb=VERB, params=params, ttl=accounts.QUOTE_TTL,
                                            summary=summary, request_id=request_id)
    return {
        "status": "quote",
        "quote": {
            "domains": s["domains"],
            "mailboxes": s["mailboxes"],
            "setup_credits": format_credits(s["setup_micros"]),
            "upkeep_credits_per_month": format_credits(s["upkeep_micros"]),
            "renewal_cadence": "monthly",
            "provider": kind or "sandbox",
            "ready_estimate": vendor.ready_estimate,
            "quote_expires_at": token.expires_at,
        },
        **accounts.token_fields(token, plaintext),
    }


def token_precheck(*, workspace, params: dict, plaintext: str) -> None:
    """Raise the confirmation_* error a purchase would get, without consuming anything, so that a bad token is
    reported before the hold is placed (a 402 must not hide a denied or pending token)."""
    from accounts.models import ConfirmationToken

    token = accounts.token_lookup(plaintext=plaintext)
    if token is None or token.workspace_id != workspace.pk:
        raise errors.ConfirmationInvalid("Unknown confirmation token.")
    if token.verb != VERB or token.params_hash != accounts.params_canonical_hash(params):
        raise errors.ConfirmationInvalid("The call's parameters differ from those approved; request a new quote.",
                                         details={"approved_params": token.params})
    if token.status == ConfirmationToken.Status.DENIED:
        raise errors.ConfirmationDenied()
    if token.status == ConfirmationToken.Status.USED:
        raise errors.ConfirmationUsed()
    if token.status == ConfirmationToken.Status.EXPIRED or token.is_expired:
        raise errors.ConfirmationExpired()
    if token.status == ConfirmationToken.Status.PENDING:
        raise errors.ConfirmationPending(details={"approval_url": accounts.approval_url(token)})


# --- names --------------------------------------------------------------------------------------------
def _slug(text: str) -> str:
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    return re.sub(r"[^a-z0-9]+", "", ascii_text)[:40]


DOMAIN_PATTERNS = ("get{b}.com", "try{b}.com", "{b}hq.com", "meet{b}.com", "use{b}.com", "hey{b}.com",
                   "{b}mail.com", "with{b}.com", "go{b}.com", "{b}team.com", "join{b}.com", "{b}app.com")


def domain_candidates(brand: str, needed: int) -> list[str]:
    """Sending-domain candidates for a brand word, never the brand's own domain (cold mail must not risk the
    main domain's reputation): several patterns first, then numbered variants."""
    base = _slug(brand) or "outbound"
    names = [p.format(b=base) for p in DOMAIN_PATTERNS]
    n = 2
    while len(names) < needed * 4 + len(DOMAIN_PATTERNS):
        names.append(f"get{base}{n}.com")
        n += 1
    return names


def domains_choose(*, provider, brand: str, count: int) -> list[str]:
    """`count` available domains for the brand, checked with the provider; 502 provider_unavailable if it
    cannot answer or too few are free."""
    chosen: list[str] = []
    candidates = domain_candidates(brand, count)
    batch = 12
    for i in range(0, len(candidates), batch):
        chunk = candidates[i:i + batch]
        try:
            free = provider.domains_available(chunk)
        except (ProviderError, OutcomeUnknown) as exc:
            raise errors.ProviderUnavailable(f"The domain provider could not check availability: {exc}") from exc
        taken = set(SendingDomain.objects.filter(name__in=free).values_list("name", flat=True))
        chosen.extend(n for n in free if n not in taken and n not in chosen)
        if len(chosen) >= count:
            return chosen[:count]
    raise errors.ProviderUnavailable("Not enough available domains for this brand; try another brand_hint.")


def local_parts(first: str, last: str) -> list[str]:
    """Mailbox local parts for one sender, in order of preference (up to 5 per domain)."""
    f, la = _slug(first), _slug(last)
    if f and la:
        return [f, f"{f}.{la}", f"{f[0]}.{la}", f"{f}{la}", f"{f}.{la[0]}"]
    one = f or la or "hello"
    return [one, f"{one}.mail", f"{one}.team", f"{one}.hi", f"{one}.desk"]


# --- purchase ---------------------------------------------------------------------------------------
def setup_sending_purchase(*, workspace, request_id: str, confirmation_token: str, emails_per_week: int,
                           brand_hint: str | None = None, sender: dict | None = None, provider: str | None = None,
                           hold=None) -> tuple[dict, int]:
    """Consume the approved token, capture the charge from `hold` and create the operation with its domains and
    mailboxes (all pending), in one transaction: a crash can never leave a purchase made but unpaid, or paid but
    not made. Provisioning starts when it commits. Returns (result, charge)."""
    params = canonical_params(emails_per_week=emails_per_week, brand_hint=brand_hint, sender=sender,
                              provider=provider)
    token_precheck(workspace=workspace, params=params, plaintext=confirmation_token)
    s = sizing(emails_per_week)
    name, kind = provider_for(provider)
    vendor = get_provider(name)
    brand = brand_hint or workspace.name or "outbound"
    names = domains_choose(provider=vendor, brand=brand, count=s["domains"])
    first = (params["sender"] or {}).get("first_name") or ""
    last = (params["sender"] or {}).get("last_name") or ""
    if not (first or last):
        first = "hello"
    charge = s["setup_micros"] + s["upkeep_micros"]
    try:
        with transaction.atomic():
            accounts.token_consume(workspace=workspace, verb=VERB, params=params, plaintext=confirmation_token,
                                   request_id=request_id)
            live_provider = Provider.SANDBOX if vendor.name == "sandbox" else Provider.VENDOR
            op = Operation.objects.create(
                workspace=workspace, kind=Operation.Kind.SETUP_SENDING, provider=name,
                request_id=request_id, params={**params, **{k: s[k] for k in ("domains", "mailboxes")}},
                charged_micros=charge, next_step_at=timezone.now(),
            )
            remaining = s["mailboxes"]
            parts = local_parts(first, last)
            emails: list[str] = []
            for domain_name in names:
                domain = SendingDomain.objects.create(workspace=workspace, name=domain_name, provider=live_provider,
                                                      operation=op)
                for local in parts[:min(MAILBOXES_PER_DOMAIN, remaining)]:
                    email = f"{local}@{domain_name}"
                    Mailbox.objects.create(workspace=workspace, domain=domain, email=email, first_name=first.strip()[:100],
                                           last_name=last.strip()[:100], provider=live_provider, operation=op,
                                           mail_provider=kind or "")
                    emails.append(email)
                    remaining -= 1
            if hold is not None:  # the pipeline's later settle of this hold is then a no-op
                billing.hold_settle(hold=hold, charge=charge, verb=VERB, memo=f"setup_sending {op.id}")
            transaction.on_commit(lambda: _enqueue_advance(op.id))
    except IntegrityError as exc:  # a domain or mailbox name taken by a concurrent purchase
        raise errors.ProviderUnavailable("A chosen domain was taken meanwhile; retry with a new Idempotency-Key.") from exc
    result = {"status": "purchased", "operation_id": op.id, "domains": names, "mailboxes": emails}
    return result, charge


def _enqueue_advance(operation_id: str, countdown: float | None = None) -> None:
    try:  # by the task's registered name: sending.tasks runs these services
        if countdown:
            current_app.signature("sending.tasks.operation_advance").apply_async(args=[operation_id],
                                                                               countdown=countdown)
        else:
            current_app.signature("sending.tasks.operation_advance").delay(operation_id)
    except Exception:  # noqa: BLE001 - the periodic sweep picks it up from the database
        logger.exception("could not enqueue operation %s; the sweep will advance it", operation_id)


# --- the provisioning state machine -------------------------------------------------------------------
def _step_delay() -> timedelta:
    if settings.SANDBOX:
        return timedelta(seconds=settings.SANDBOX_PROVISION_SECONDS)
    return POLL_INTERVAL_LIVE


def operation_advance(*, operation_id: str) -> str | None:
    """Move one operation one step if it is due. Safe to run twice and concurrently (row lock, due check).
    Returns the status after the step (None when the operation does not exist)."""
    with transaction.atomic():
        op = Operation.objects.select_for_update().filter(pk=operation_id).first()
        if op is None:
            return None
        now = timezone.now()
        if op.is_final or (op.next_step_at and op.next_step_at > now):
            return op.status
        provider = get_provider(op.provider)
        before = op.status
        if op.status == Operation.Status.QUEUED:
            _move(op, Operation.Status.RUNNING, now)
        elif op.status == Operation.Status.RUNNING:
            if _place_orders(op, provider, now):
                _move(op, Operation.Status.WAITING_EXTERNAL, now)
        elif op.status == Operation.Status.WAITING_EXTERNAL:
            _poll(op, provider, now)
        op.updated_at = now
        op.attempts += 1
        op.save()
        status, due = op.status, op.next_step_at
        if status != before:
            events.emit(workspace=op.workspace_id, type="operation.updated", data=operation_render(op))
    if status not in Operation.FINAL and due is not None:
        transaction.on_commit(lambda: _enqueue_advance(operation_id, countdown=max(0.0, (due - timezone.now()).total_seconds())))
    return status


def _move(op: Operation, status: str, now: datetime) -> None:
    op.status = status
    op.next_step_at = now + _step_delay()


def _unknown(op: Operation, what: str, now: datetime) -> None:
    op.outcome_unknown = True
    op.error = {"code": "operation_unknown_state",
                "message": f"The provider's answer to {what} was lost; its state will be read back before anything "
                           "is retried."}
    op.next_step_at = now + _step_delay()


def _failed_item(obj, reason: str) -> bool:
    """Mark a domain or mailbox failed, only if its status is still the one this step read, or `removed`: the
    owner may have removed the mailbox meanwhile (committed). The vendor never delivered it, so it is a miss
    and refunded like any failure (misses are never charged); a removal is not refunded only when the mailbox
    was delivered. A status that moved on otherwise is left alone."""
    statuses = {obj.status} | ({Mailbox.Status.REMOVED} if isinstance(obj, Mailbox) else set())
    if not type(obj).objects.filter(pk=obj.pk, status__in=statuses).update(status=obj.Status.FAILED):
        logger.info("provisioning of %s failed, but it is no longer %s: left as it is", obj, obj.status)
        return False
    obj.status = obj.Status.FAILED
    logger.warning("provisioning of %s failed: %s", obj, reason)
    return True


def _place_orders(op: Operation, provider, now: datetime) -> bool:
    """Order every pending domain once. True when every order is placed (or failed for good)."""
    progress = op.progress or {}
    unknown = set(progress.get("unknown", []))
    tries = progress.setdefault("tries", {})
    for domain in op.domains.filter(status=SendingDomain.Status.PENDING).order_by("name"):
        ref = f"{op.id}:{domain.name}"
        try:
            if domain.name in unknown:  # read back before anything else: never re-execute blindly
                found = provider.domain_lookup(name=domain.name, client_ref=ref)
                unknown.discard(domain.name)
                ext = found if found is not None else provider.domain_register(name=domain.name, client_ref=ref)
            else:
                ext = provider.domain_register(name=domain.name, client_ref=ref)
        except OutcomeUnknown:
            unknown.add(domain.name)
            progress["unknown"] = sorted(unknown)
            op.progress = progress
            _unknown(op, f"registering {domain.name}", now)
            return False
        except ProviderError as exc:
            if exc.permanent or tries.get(domain.name, 0) + 1 >= MAX_ATTEMPTS:
                _failed_item(domain, exc.message)
                continue
            tries[domain.name] = tries.get(domain.name, 0) + 1
            op.progress = progress
            op.next_step_at = now + _step_delay()
            return False
        domain.vendor_ref = ext.ref
        domain.status = SendingDomain.Status.FAILED if ext.status == FAILED else SendingDomain.Status.REGISTERING
        domain.save(update_fields=["vendor_ref", "status"])
    progress["unknown"] = sorted(unknown)
    op.progress = progress
    op.outcome_unknown = bool(unknown)
    if not unknown:
        op.error = None
    return True


def _order_mailboxes(op: Operation, provider, now: datetime) -> bool:
    """Order each mailbox once its domain is active (vendors need the domain live first). False when the step
    must stop here (a lost answer or a retryable refusal); the next run goes on from the database state."""
    progress = op.progress or {}
    unknown = set(progress.get("unknown", []))
    tries = progress.setdefault("tries", {})
    for mailbox in (op.mailboxes.filter(status=Mailbox.Status.PROVISIONING, vendor_ref="")
                    .select_related("domain").order_by("email")):
        if mailbox.domain.status == SendingDomain.Status.FAILED:
            _failed_item(mailbox, "its domain failed")
            continue
        if mailbox.domain.status != SendingDomain.Status.ACTIVE:
            continue
        ref = f"{op.id}:{mailbox.email}"
        try:
            if mailbox.email in unknown:
                found = provider.mailbox_lookup(email=mailbox.email, client_ref=ref)
                unknown.discard(mailbox.email)
                ext = found if found is not None else provider.mailbox_create(
                    domain_ref=mailbox.domain.vendor_ref, email=mailbox.email, first_name=mailbox.first_name,
                    last_name=mailbox.last_name, client_ref=ref)
            else:
                ext = provider.mailbox_create(domain_ref=mailbox.domain.vendor_ref, email=mailbox.email,
                                              first_name=mailbox.first_name, last_name=mailbox.last_name,
                                              client_ref=ref)
        except OutcomeUnknown:
            unknown.add(mailbox.email)
            progress["unknown"] = sorted(unknown)
            op.progress = progress
            _unknown(op, f"creating {mailbox.email}", now)
            return False
        except ProviderError as exc:
            if exc.permanent or tries.get(mailbox.email, 0) + 1 >= MAX_ATTEMPTS:
                _failed_item(mailbox, exc.message)
                continue
            tries[mailbox.email] = tries.get(mailbox.email, 0) + 1
            op.progress = progress
            op.next_step_at = now + _step_delay()
            return False
        mailbox.vendor_ref = ext.ref
        fields = ["vendor_ref"]
        if ext.email and ext.email != mailbox.email:  # the vendor resolved a collision with another address
            logger.info("mailbox %s was created as %s", mailbox.email, ext.email)
            mailbox.email = ext.email
            fields.append("email")
        mailbox.save(update_fields=fields)
        if ext.status == FAILED:
            _failed_item(mailbox, ext.detail)
    progress["unknown"] = sorted(unknown)
    op.progress = progress
    op.outcome_unknown = False
    op.error = None
    return True


def _poll(op: Operation, provider, now: datetime) -> None:
    """Read every ordered item's state; activate what is live; finish when nothing is pending."""
    deadline_passed = not settings.SANDBOX and now - op.created_at > WAITING_DEADLINE
    progress = op.progress or {}
    waiting = progress.setdefault("waiting", {})  # item -> what it waits for (shown in GET /v1/operations/:id)
    op.progress = progress
    for domain in op.domains.filter(status=SendingDomain.Status.REGISTERING):
        try:
            ext = provider.domain_status(ref=domain.vendor_ref)
        except (ProviderError, OutcomeUnknown) as exc:
            if deadline_passed:
                _failed_item(domain, f"deadline passed: {exc}")
            continue  # a read: simply asked again next time
        if ext.status == ACTIVE:
            if not domain.dkim_private_key_encrypted:
                dkim_key_generate(domain)
                domain.save(update_fields=["dkim_selector", "dkim_private_key_encrypted"])
            try:  # a provider that writes DNS publishes the DKIM key before the domain counts as active
                provider.domain_dns_publish(ref=domain.vendor_ref, name=domain.name, records=dns_records(domain))
            except (ProviderError, OutcomeUnknown) as exc:
                if deadline_passed:
                    _failed_item(domain, f"deadline passed: {exc}")
                else:
                    waiting[domain.name] = f"publishing DKIM: {exc}"
                continue
            domain.status, domain.activated_at = SendingDomain.Status.ACTIVE, now
            domain.save(update_fields=["status", "activated_at"])
            waiting.pop(domain.name, None)
        elif ext.status == FAILED or deadline_passed:
            _failed_item(domain, ext.detail or "deadline passed")
            waiting.pop(domain.name, None)
        elif ext.detail:
            waiting[domain.name] = ext.detail
    if not _order_mailboxes(op, provider, now):
        return
    for mailbox in op.mailboxes.filter(status=Mailbox.Status.PROVISIONING).exclude(vendor_ref="").select_related("domain"):
        try:
            ext = provider.mailbox_status(ref=mailbox.vendor_ref)
        except (ProviderError, OutcomeUnknown) as exc:
            if deadline_passed:
                _failed_item(mailbox, f"deadline passed: {exc}")
            continue
        if ext.status == ACTIVE:
            _activate(mailbox, ext.connection, now)
            waiting.pop(mailbox.email, None)
        elif ext.status == FAILED or deadline_passed:
            _failed_item(mailbox, ext.detail or "deadline passed")
            waiting.pop(mailbox.email, None)
        elif ext.detail:
            waiting[mailbox.email] = ext.detail
    pending = (op.domains.filter(status__in=[SendingDomain.Status.PENDING, SendingDomain.Status.REGISTERING]).exists()
               or op.mailboxes.filter(status=Mailbox.Status.PROVISIONING).exists())
    if pending:
        progress["polls"] = progress.get("polls", 0) + 1
        op.next_step_at = now + _waiting_delay(progress["polls"])
        return
    progress.pop("waiting", None)
    _finish(op, now)


def _waiting_delay(polls: int) -> timedelta:
    """How long to wait before asking the vendor again about items that are still pending: the step delay in
    sandbox mode; live, a backoff from POLL_INTERVAL_LIVE doubling up to POLL_INTERVAL_MAX (DNS propagation and
    a vendor's verification take hours, and asking every five minutes for three days helps nobody)."""
    if settings.SANDBOX:
        return _step_delay()
    return min(POLL_INTERVAL_LIVE * (2 ** min(polls - 1, 10)), POLL_INTERVAL_MAX)


def _activate(mailbox: Mailbox, connection: dict, now: datetime) -> bool:
    """Activate a mailbox the vendor delivered, only if it is still provisioning. The owner may have removed it
    after this poll read it (committed): writing the stale object back made it active again, renewed and charged
    every month. A removed mailbox stays removed, exactly as if the removal had come first: its first month is
    not refunded (removal never is), and the vendor sync deletes the vendor-side mailbox after the grace period
    (it is `removed` with a `vendor_ref`). Returns whether it was activated."""
    from sending import crypto

    fields = {"status": Mailbox.Status.ACTIVE, "activated_at": now,
              "renewals": 1,  # the first month was paid with the purchase
              "renews_at": add_months(now, 1)}
    for key in ("smtp_host", "smtp_port", "smtp_security", "smtp_username", "imap_host", "imap_port",
                "imap_security", "imap_username", "auth", "oauth_provider"):
        if key in connection:
            fields[key] = connection[key]
    if connection.get("secret"):
        fields["secret_encrypted"] = crypto.encrypt(connection["secret"])
    if not Mailbox.objects.filter(pk=mailbox.pk, status=Mailbox.Status.PROVISIONING).update(**fields):
        logger.info("mailbox %s was delivered by the vendor but is no longer provisioning: left as it is", mailbox)
        return False
    for key, value in fields.items():
        setattr(mailbox, key, value)
    return True


def _finish(op: Operation, now: datetime) -> None:
    domains = list(op.domains.order_by("name"))
    mailboxes = list(op.mailboxes.order_by("email"))
    failed_domains = sum(1 for d in domains if d.status == SendingDomain.Status.FAILED)
    failed_mailboxes = sum(1 for m in mailboxes if m.status == Mailbox.Status.FAILED)
    refund = failed_domains * SETUP_PER_DOMAIN + failed_mailboxes * UPKEEP_PER_MAILBOX
    refund = min(refund, op.charged_micros - op.refunded_micros)
    if refund > 0:
        billing.credits_refund(workspace=op.workspace, amount=refund, request_id=op.request_id, verb=VERB,
                               memo=f"{op.id}: {failed_domains} domain(s), {failed_mailboxes} mailbox(es) not delivered",
                               external_ref=f"refund:{op.id}")
        op.refunded_micros += refund
    if failed_domains == 0 and failed_mailboxes == 0:
        op.status = Operation.Status.SUCCEEDED
    elif failed_mailboxes == len(mailboxes) and failed_domains == len(domains):
        op.status = Operation.Status.FAILED  # nothing delivered (everything refunded)
    else:
        op.status = Operation.Status.PARTIALLY_SUCCEEDED
    op.result = operation_summary(op, domains=domains, mailboxes=mailboxes)
    if op.status != Operation.Status.SUCCEEDED:
        op.error = {"code": "provisioning_incomplete" if op.status == Operation.Status.PARTIALLY_SUCCEEDED
                    else "provisioning_failed",
                    "message": f"{failed_domains} domain(s) and {failed_mailboxes} mailbox(es) could not be "
                               f"provisioned; {format_credits(op.refunded_micros)} credits refunded."}
    else:
        op.error = None
    op.outcome_unknown = False
    op.next_step_at = None
    op.finished_at = now


def operation_summary(op: Operation, *, domains=None, mailboxes=None) -> dict:
    domains = domains if domains is not None else list(op.domains.order_by("name"))
    mailboxes = mailboxes if mailboxes is not None else list(op.mailboxes.order_by("email"))
    waiting = {} if op.is_final else (op.progress or {}).get("waiting", {})
    return {
        "domains": [{"name": d.name, "status": d.status,
                     **({"dns_records": dns_records(d)} if d.status == SendingDomain.Status.ACTIVE else {}),
                     **({"waiting_for": waiting[d.name]} if d.name in waiting else {})}
                    for d in domains],
        "mailboxes": [{"email": m.email, "status": m.status, "mailbox_id": m.id,
                       **({"full_volume_on": full_volume_on(m)} if m.status == Mailbox.Status.ACTIVE else {}),
                       **({"waiting_for": waiting[m.email]} if m.email in waiting else {})}
                      for m in mailboxes],
        "credits_charged": format_credits(op.charged_micros),
        "credits_refunded": format_credits(op.refunded_micros),
    }


def operation_render(op: Operation) -> dict:
    """An operation as get_operation returns it (and the `operation.updated` event carries it)."""
    body = {"operation_id": op.id, "kind": op.kind, "status": op.status, "request_id": op.request_id,
            "created_at": op.created_at, "updated_at": op.updated_at}
    if op.is_final and op.result is not None:
        body["result"] = op.result
    elif not op.is_final:
        body["result"] = operation_summary(op)
    if op.error:
        body["error"] = op.error
    return body


def full_volume_on(mailbox: Mailbox) -> str | None:
    """The UTC day (ISO date) from which an active mailbox may send its full daily volume: new live mailboxes
    ramp up (sending.capacity.daily_cap); sandbox mailboxes and unknown activation dates have no ramp."""
    when = capacity.warmup_full_at(mailbox)
    return when.date().isoformat() if when else None


def operations_due(limit: int = 200) -> list[str]:
    return list(Operation.objects.exclude(status__in=Operation.FINAL)
                .filter(next_step_at__lte=timezone.now()).order_by("next_step_at").values_list("pk", flat=True)[:limit])


# --- monthly upkeep ---------------------------------------------------------------------------------
def add_months(start: datetime, months: int) -> datetime:
    """`start` plus whole calendar months, the day clamped to the month's length (Jan 31 + 1 = Feb 28/29)."""
    month0 = start.month - 1 + months
    year, month = start.year + month0 // 12, month0 % 12 + 1
    day = min(start.day, calendar.monthrange(year, month)[1])
    return start.replace(year=year, month=month, day=day)


def mailbox_renew(*, mailbox_id: str, now: datetime | None = None) -> str:
    """Charge every due month of upkeep (750 credits each) for one mailbox. Safe to run twice: each period is a
    ledger entry with external_ref `upkeep:<mailbox>:<due date of the period>`. A period the balance cannot cover suspends
    the mailbox (owners are emailed); a suspended mailbox that can pay again is reactivated, its cycle
    restarting from that day. Returns the mailbox status afterwards."""
    now = now or timezone.now()
    with transaction.atomic():
        m = Mailbox.objects.select_for_update().select_related("workspace").filter(pk=mailbox_id).first()
        if m is None:
            return "missing"
        if m.status not in (Mailbox.Status.ACTIVE, Mailbox.Status.SUSPENDED) or m.renews_at is None:
            return m.status
        while m.renews_at <= now:
            period = m.renews_at.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
            try:
                billing.credits_debit(workspace=m.workspace, amount=UPKEEP_PER_MAILBOX, kind=LedgerEntry.Kind.UPKEEP,
                                      verb="upkeep", memo=f"monthly upkeep {m.email} (period due {period})",
                                      external_ref=f"upkeep:{m.id}:{period}")
            except errors.InsufficientCredits:
                if m.status == Mailbox.Status.ACTIVE:
                    m.status = Mailbox.Status.SUSPENDED
                    m.suspended_at = now
                    m.suspended_reason = "monthly upkeep could not be charged: insufficient credits"
                    m.save(update_fields=["status", "suspended_at", "suspended_reason"])
                    transaction.on_commit(lambda m=m: _notify_suspended(m))
                    transaction.on_commit(lambda m=m: _enqueue_vendor_sync(m))
                return m.status
            except IntegrityError:
                pass  # this period was already charged by an earlier run
            m.renewals += 1
            if m.status == Mailbox.Status.SUSPENDED:  # reactivated: the new cycle starts today
                m.status = Mailbox.Status.ACTIVE
                m.suspended_at = None
                m.suspended_reason = ""
                m.activated_at = now
                m.renews_at = add_months(now, 1)
                m.renewals = 1
                m.save()
                transaction.on_commit(lambda m=m: _enqueue_vendor_sync(m))
                transaction.on_commit(lambda m=m: mailbox_sendable.send(sender=Mailbox, mailbox_id=m.pk))
                return m.status
            m.renews_at = add_months(m.activated_at, m.renewals)
        m.save(update_fields=["renewals", "renews_at"])
        return m.status


def mailboxes_due(now: datetime | None = None, limit: int = 1000) -> list[str]:
    now = now or timezone.now()
    return list(Mailbox.objects.filter(status__in=[Mailbox.Status.ACTIVE, Mailbox.Status.SUSPENDED],
                                       renews_at__lte=now).order_by("renews_at").values_list("pk", flat=True)[:limit])


def _notify_suspended(mailbox: Mailbox) -> None:
    from accounts.selectors import workspace_approver_emails

    recipients = workspace_approver_emails(workspace_id=mailbox.workspace_id)
    if not recipients:
        return
    send_mail(
        subject=f"Mailbox {mailbox.email} suspended: monthly upkeep unpaid",
        message=(f"The monthly upkeep of {format_credits(UPKEEP_PER_MAILBOX)} credits for {mailbox.email} could not "
                 "be charged, so the mailbox is suspended and sends nothing.\n\n"
                 f"Top up credits at {settings.BASE_URL}/console/ ; the mailbox is renewed and reactivated "
                 "automatically within the hour, or at once from the Mailboxes page."),
        from_email=None, recipient_list=recipients, fail_silently=True,
    )


# --- the vendor-side mailbox follows ours: suspended, resumed, deleted ------------------------------------------
def _vendor_out_of_sync():
    from django.db.models import Q

    return (Mailbox.objects.filter(provider=Provider.VENDOR, vendor_deleted_at__isnull=True)
            .exclude(vendor_ref="")
            .filter(Q(status=Mailbox.Status.SUSPENDED, vendor_suspended=False)
                    | Q(status=Mailbox.Status.ACTIVE, vendor_suspended=True)
                    | Q(status=Mailbox.Status.REMOVED)))


def mailboxes_vendor_due(limit: int = 500) -> list[str]:
    """Bought mailboxes whose vendor-side state lags ours (or that were removed and may be due for deletion)."""
    return list(_vendor_out_of_sync().order_by("pk").values_list("pk", flat=True)[:limit])


def _enqueue_vendor_sync(mailbox: Mailbox) -> None:
    if mailbox.provider != Provider.VENDOR or not mailbox.vendor_ref:
        return
    try:  # by the task's registered name: sending.tasks runs these services
        current_app.signature("sending.tasks.mailbox_vendor_sync").delay(mailbox.id)
    except Exception:  # noqa: BLE001 - the upkeep sweep reconciles it from the database
        logger.exception("could not enqueue the vendor sync of mailbox %s", mailbox.id)


def mailbox_vendor_sync(*, mailbox_id: str, now: datetime | None = None) -> str:
    """Bring the vendor-side mailbox in line with ours: suspended while its upkeep is unpaid, resumed once paid,
    deleted when removed capacity's grace period (`provider.delete_grace`) is over. Each vendor call is
    idempotent and recorded only after it succeeded, so a failure or a crash is simply retried by the next sweep.
    Returns what was done: `suspended`, `resumed`, `deleted`, `waiting` (grace period), `in_sync` or `retry`."""
    now = now or timezone.now()
    m = _vendor_out_of_sync().select_related("operation").filter(pk=mailbox_id).first()
    if m is None:
        return "in_sync"
    provider = get_provider(m.operation.provider if m.operation else None)
    try:
        if m.status == Mailbox.Status.REMOVED:
            removed = m.removed_at or m.created_at
            if now - removed < provider.delete_grace:
                return "waiting"
            provider.mailbox_delete(ref=m.vendor_ref)
            Mailbox.objects.filter(pk=m.pk, status=Mailbox.Status.REMOVED).update(vendor_deleted_at=now)
            return "deleted"
        suspend = m.status == Mailbox.Status.SUSPENDED
        if suspend:
            provider.mailbox_suspend(ref=m.vendor_ref)
        else:
            provider.mailbox_resume(ref=m.vendor_ref)
        # Record what the vendor now holds whatever our status became meanwhile: a renewal may have reactivated
        # the mailbox during the call (and its own sync found nothing to do). Conditional on the status, this
        # write was lost and the vendor stayed suspended while we said active and in sync; recorded, the
        # mismatch (active, vendor_suspended) is what `_vendor_out_of_sync` and the upkeep sweep repair.
        Mailbox.objects.filter(pk=m.pk).update(vendor_suspended=suspend)
        return "suspended" if suspend else "resumed"
    except (ProviderError, OutcomeUnknown) as exc:
        logger.warning("vendor sync of mailbox %s failed, retried by the sweep: %s", m.pk, exc)
        return "retry"

"""Billing services. Every balance change is one ledger entry plus one conditional UPDATE of the cached
balance in the same transaction; available balance never goes below zero under any concurrency."""

from __future__ import annotations

import hashlib
import json
import logging
import uuid
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.models import Workspace
from billing import ledger_sql
from billing.models import CreditAccount, Hold, IdempotencyRecord, LedgerEntry, RequestRecord
from core import errors
from core.money import credits, format_credits

logger = logging.getLogger(__name__)

SIGNUP_GRANT = credits(300)


# --- accounts and ledger ----------------------------------------------------------------------------
def account_open(*, workspace: Workspace) -> CreditAccount:
    with transaction.atomic():
        account, created = CreditAccount.objects.get_or_create(workspace=workspace)
        if created:
            _post(account_id=account.pk, kind=LedgerEntry.Kind.SIGNUP_GRANT, amount=SIGNUP_GRANT, memo="Free signup credits")
    account.refresh_from_db()
    return account


def _post(*, account_id, kind: str, amount: int, memo: str = "", request_id: str = "", verb: str = "",
          external_ref: str | None = None, created_by=None, require_available: bool = False,
          reserved_delta: int = 0) -> LedgerEntry:
    """Append one ledger entry and move the cached balance by `amount`, atomically (billing.ledger_sql.post).
    A debit with `require_available` only happens when the available balance covers it (else
    InsufficientCredits). `reserved_delta` moves the reserve in the same UPDATE (a capture frees its hold as
    it charges)."""
    assert transaction.get_connection().in_atomic_block, "ledger posts need a transaction"
    now = timezone.now()
    posted = ledger_sql.post(account_id=account_id, kind=kind, amount=amount, reserved_delta=reserved_delta,
                             require_available=amount < 0 and require_available, request_id=request_id, verb=verb,
                             memo=memo, external_ref=external_ref,
                             created_by_id=created_by.pk if created_by is not None else None, now=now)
    if posted is None:
        raise errors.InsufficientCredits()
    entry_id, balance_after = posted
    entry = LedgerEntry(id=entry_id, account_id=account_id, kind=kind, amount_micros=amount,
                        balance_after_micros=balance_after, memo=memo[:500], request_id=request_id, verb=verb,
                        external_ref=external_ref, created_by=created_by, created_at=now)
    entry._state.adding, entry._state.db = False, "default"
    return entry


def credits_grant(*, workspace: Workspace, amount: int, memo: str = "", kind: str = LedgerEntry.Kind.GRANT,
                  created_by=None, external_ref: str | None = None) -> LedgerEntry | None:
    """Add credits. With `external_ref` (a payment event id) the grant happens at most once: a repeat
    returns None."""
    if amount <= 0:
        raise errors.InvalidRequest("A grant must be a positive amount.")
    try:
        with transaction.atomic():
            return _post(account_id=workspace.pk, kind=kind, amount=amount, memo=memo, created_by=created_by,
                         external_ref=external_ref)
    except IntegrityError:
        if external_ref and LedgerEntry.objects.filter(kind=kind, external_ref=external_ref).exists():
            return None
        raise


def credits_refund(*, workspace: Workspace, amount: int, memo: str = "", request_id: str = "", verb: str = "",
                   external_ref: str | None = None) -> LedgerEntry | None:
    if amount <= 0:
        return None
    try:
        with transaction.atomic():
            return _post(account_id=workspace.pk, kind=LedgerEntry.Kind.REFUND, amount=amount, memo=memo,
                         request_id=request_id, verb=verb, external_ref=external_ref)
    except IntegrityError:
        if external_ref and LedgerEntry.objects.filter(kind=LedgerEntry.Kind.REFUND, external_ref=external_ref).exists():
            return None
        raise


def credits_debit(*, workspace: Workspace, amount: int, kind: str, memo: str = "", request_id: str = "",
                  verb: str = "", external_ref: str | None = None) -> LedgerEntry:
    """Take credits outside a hold (e.g. monthly upkeep). Raises InsufficientCredits if not available."""
    if amount <= 0:
        raise ValueError("debit amount must be positive")
    with transaction.atomic():
        return _post(account_id=workspace.pk, kind=kind, amount=-amount, memo=memo, request_id=request_id, verb=verb,
                     external_ref=external_ref, require_available=True)


def account_get(*, workspace: Workspace) -> CreditAccount:
    return CreditAccount.objects.get(pk=workspace.pk)


# --- holds: authorize / capture / void --------------------------------------------------------------
def hold_place(*, workspace: Workspace, amount: int, request_id: str = "") -> Hold:
    """Reserve `amount` if the available balance covers it: one conditional UPDATE, never read-then-write."""
    if amount <= 0:
        raise ValueError("hold amount must be positive")
    with transaction.atomic():
        hold = _reserve(workspace=workspace, amount=amount, request_id=request_id)
        if hold is None:
            raise insufficient_credits(workspace=workspace, amount=amount)
        return hold


def insufficient_credits(*, workspace: Workspace, amount: int) -> errors.InsufficientCredits:
    """The 402 for a hold of `amount` that the available balance does not cover, with both figures."""
    account = CreditAccount.objects.filter(pk=workspace.pk).first()
    available = account.available_micros if account else 0
    return errors.InsufficientCredits(
        details={"required": format_credits(amount), "credits_available": format_credits(available)})


def _reserve(*, workspace: Workspace, amount: int, request_id: str, record: dict | None = None,
             async_commit: bool = False) -> Hold | None:
    """The conditional reserve and its hold row (inside the caller's transaction on SQLite); None when short.
    With `record` (verb, channel, api_key_id), the request record `request_id` is inserted by the same
    statement, whether or not the reserve happens."""
    now = timezone.now()
    hold = Hold(id=uuid.uuid4(), account_id=workspace.pk, request_id=request_id, amount_micros=amount,
                captured_micros=0, status=Hold.Status.HELD, created_at=now,
                expires_at=now + timedelta(seconds=settings.HOLD_TTL_SECONDS))
    hold._state.adding, hold._state.db = False, "default"
    available = ledger_sql.reserve(hold=hold, record=record, async_commit=async_commit)
    if available is None:
        return None
    hold.available_after_micros = available  # (not a field: the reading the reserve itself returned)
    return hold


def hold_settle(*, hold: Hold, charge: int, verb: str = "", memo: str = "") -> int:
    """Capture `charge` of the hold and release the rest, once. Returns what was charged.

    The hold is claimed by a conditional UPDATE (held -> captured/released): whoever claims it moves the
    money, in one account UPDATE and one ledger entry; anyone else (a retry, the expiry sweep) changes nothing
    and gets what it captured. A charge above the hold is taken only as far as the available balance allows
    (never below zero), under row locks."""
    if charge < 0:
        raise ValueError("charge must not be negative")
    if charge > hold.amount_micros:
        return _settle_above_hold(hold=hold, charge=charge, verb=verb, memo=memo)
    with ledger_sql.atomic():
        return _settle_within_hold(hold=hold, charge=charge, verb=verb, memo=memo)[0]


def _settle_within_hold(*, hold: Hold, charge: int, verb: str = "", memo: str = "", close: dict | None = None,
                        account_id=None, async_commit: bool = False, writes=()) -> tuple[int, int | None]:
    """hold_settle for charge <= hold (optionally closing the request record too): one statement on
    PostgreSQL, a few in one transaction on SQLite (billing.ledger_sql). Returns (charged, available)."""
    now = timezone.now()
    status = Hold.Status.CAPTURED if charge > 0 else Hold.Status.RELEASED
    claimed, charged, available = ledger_sql.settle(
        hold=hold, account_id=hold.account_id if hold is not None else account_id, charge=charge, status=status,
        now=now, verb=verb, memo=memo, close=close, async_commit=async_commit, writes=writes)
    if claimed:
        hold.status, hold.captured_micros, hold.resolved_at = status, charge, now
    return charged, available


def _settle_above_hold(*, hold: Hold, charge: int, verb: str, memo: str) -> int:
    """hold_settle for a charge larger than the hold: the excess only as far as the available balance goes."""
    with transaction.atomic():
        locked = Hold.objects.select_for_update().get(pk=hold.pk)
        if locked.status != Hold.Status.HELD:
            return locked.captured_micros
        account = CreditAccount.objects.select_for_update().get(pk=locked.account_id)
        final = locked.amount_micros + min(charge - locked.amount_micros, max(0, account.available_micros))
        _post(account_id=account.pk, kind=LedgerEntry.Kind.CHARGE, amount=-final,
              reserved_delta=-locked.amount_micros, request_id=locked.request_id, verb=verb, memo=memo)
        locked.status = Hold.Status.CAPTURED
        locked.captured_micros = final
        locked.resolved_at = timezone.now()
        locked.save(update_fields=["status", "captured_micros", "resolved_at"])
        hold.status, hold.captured_micros = locked.status, final
        return final


def hold_extend(*, hold: Hold, seconds: int | None = None) -> bool:
    """Push a hold's expiry out while its request is still working (a long LLM stream), so the sweep for
    crashed requests does not release it mid-flight. A conditional UPDATE: a hold already captured or
    released is never revived. Returns whether the hold was still held."""
    ttl = settings.HOLD_TTL_SECONDS if seconds is None else seconds
    return Hold.objects.filter(pk=hold.pk, status=Hold.Status.HELD).update(
        expires_at=timezone.now() + timedelta(seconds=ttl)) == 1


def hold_release(*, hold: Hold) -> None:
    hold_settle(hold=hold, charge=0)


# What the record of a request that never settled says once the sweep has released its hold.
ABANDONED = {"code": "internal", "message": "The request did not finish (the server stopped before settling it); its "
             "hold was released when it expired and nothing was charged."}


def holds_release_expired() -> int:
    """Release holds whose request crashed before settling (periodic task), and close those requests' records
    that are still `in_progress` as failed (`internal`, nothing charged): GET /v1/requests/:id then tells the
    truth instead of `in_progress` forever. Only a hold this sweep claimed closes its record (a settlement
    that won the claim closes its own)."""
    released = 0
    for hold in Hold.objects.filter(status=Hold.Status.HELD, expires_at__lte=timezone.now())[:1000]:
        hold_release(hold=hold)
        if hold.status == Hold.Status.RELEASED:
            RequestRecord.objects.filter(pk=hold.request_id, status=RequestRecord.Status.IN_PROGRESS).update(
                status=RequestRecord.Status.FAILED, error=ABANDONED, completed_at=timezone.now())
        released += 1
    if released:
        logger.warning("released %d expired holds", released)
    return released


# --- request records --------------------------------------------------------------------------------
def request_open(*, request_id: str, workspace: Workspace, verb: str, api_key=None, channel: str = "rest") -> RequestRecord:
    return RequestRecord.objects.create(id=request_id, workspace=workspace, verb=verb, api_key=api_key, channel=channel)


def request_delete(*, request_id: str) -> None:
    """Forget a request record (a call refused by the rate limit after its record was opened: refused hits are
    never recorded). The usage rollups follow (their trigger)."""
    RequestRecord.objects.filter(pk=request_id).delete()


def request_close(*, request_id: str, status: str, http_status: int, charged: int = 0, error: dict | None = None,
                  usage: dict | None = None) -> None:
    fields = {"status": status, "http_status": http_status, "credits_charged_micros": charged, "error": error,
              "completed_at": timezone.now()}
    if usage is not None:
        fields["usage"] = usage
    RequestRecord.objects.filter(pk=request_id).update(**fields)


# --- the LLM passthrough's hot path: the same rules in fewer statements -----------------------------------
def request_open_with_hold(*, request_id: str, workspace: Workspace, verb: str, amount: int, api_key=None,
                           channel: str = "rest", async_commit: bool = False) -> Hold | None:
    """`request_open` and the hold at once (one statement on PostgreSQL, one transaction on SQLite). The record
    is opened either way; returns the hold, or None when `amount` is 0 or the balance is short (the caller
    then refuses with InsufficientCredits and closes the record). `async_commit`: on PostgreSQL the statement's
    transaction commits with synchronous_commit off (only the LLM door asks, LLM_ASYNC_COMMIT)."""
    record = {"verb": verb, "channel": channel, "api_key_id": api_key.pk if api_key is not None else None}
    with ledger_sql.atomic():
        return _reserve(workspace=workspace, amount=amount, request_id=request_id, record=record,
                        async_commit=async_commit)


# SETTLE_AFTER_RESPONSE: a hold this close to its expiry could be released by the sweep before the settlement
# claims it, so such a call (one that ran nearly HOLD_TTL_SECONDS) settles before it answers.
SETTLE_MARGIN = timedelta(seconds=60)
SETTLE_RETRIES = (0.05, 0.25, 1.0)  # seconds before each retry of a settlement that failed after its answer


def promised_available(hold: Hold | None, charge: int) -> int | None:
    """When a settlement of `hold` to `charge` may follow the answer (SETTLE_AFTER_RESPONSE, both doors): the
    available balance to state, as of the call's own hold (the hold's own reading plus what the settlement will
    release of it; calls of the same workspace settling meanwhile are not in it). None when the answer must wait
    for the settlement: the setting is off, there is no hold or the hold's statement read no balance, the charge
    is above the hold (the locked path decides what is taken) or the hold is about to expire."""
    available = getattr(hold, "available_after_micros", None)
    if (not settings.SETTLE_AFTER_RESPONSE or available is None or not 0 <= charge <= hold.amount_micros
            or hold.expires_at <= timezone.now() + SETTLE_MARGIN):
        return None
    return available + hold.amount_micros - charge


def hold_settle_close(*, hold: Hold | None, charge: int, workspace: Workspace, request_id: str, status: str,
                      http_status: int, verb: str = "", usage: dict | None = None,
                      error: dict | None = None, async_commit: bool = False, writes=()) -> tuple[int, int]:
    """`hold_settle` + `request_close` + the available balance afterwards, at once (one statement on
    PostgreSQL, one transaction on SQLite). Returns (charged, available_micros). `async_commit`: as for
    `request_open_with_hold`. `writes`: unsaved model instances (a verb's result rows, Outcome.writes) inserted
    in the same statement or transaction, so they commit with the charge or not at all."""
    if charge < 0:
        raise ValueError("charge must not be negative")
    close = {"id": request_id, "status": status, "http_status": http_status, "error": error, "usage": usage}
    if hold is None or charge <= hold.amount_micros:
        with ledger_sql.atomic():
            charged, available = _settle_within_hold(hold=hold, charge=charge, verb=verb, close=close,
                                                     account_id=workspace.pk, async_commit=async_commit,
                                                     writes=writes)
        return charged, available
    with transaction.atomic(savepoint=False):
        if async_commit:
            ledger_sql.async_commit_local()
        ledger_sql.save_all(writes)
        charged = _settle_above_hold(hold=hold, charge=charge, verb=verb, memo="")
        request_close(request_id=request_id, status=status, http_status=http_status, charged=charged, usage=usage,
                      error=error)
        balance, reserved = CreditAccount.objects.values_list("balance_micros", "reserved_micros").get(
            pk=workspace.pk)
    return charged, balance - reserved


# --- idempotency (CONTRACT section 2) ---------------------------------------------------------------
IN_PROGRESS_LEASE = timedelta(minutes=15)


@dataclass
class Replay:
    status: int
    body: bytes
    request_id: str


def body_hash(data: dict) -> str:
    blob = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()


def idempotency_begin(*, workspace: Workspace, key: str, verb: str, data: dict, request_id: str) -> Replay | None:
    """Claim `key` for this call. Returns a Replay for a completed original; raises 409s; None to proceed."""
    digest = body_hash(data)
    now = timezone.now()
    for _ in range(3):
        try:
            with transaction.atomic():
                IdempotencyRecord.objects.create(
                    workspace=workspace, key=key, verb=verb, body_hash=digest, request_id=request_id,
                    expires_at=now + timedelta(hours=settings.IDEMPOTENCY_TTL_HOURS),
                )
            return None
        except IntegrityError:
            pass
        existing = IdempotencyRecord.objects.filter(workspace=workspace, key=key).first()
        if existing is None:
            continue
        if existing.expires_at <= now:
            IdempotencyRecord.objects.filter(pk=existing.pk, expires_at__lte=now).delete()
            continue
        if existing.verb != verb or existing.body_hash != digest:
            raise errors.IdempotencyKeyReused(details={"original_request_id": existing.request_id})
        if existing.state == IdempotencyRecord.State.COMPLETED:
            return Replay(status=existing.response_status, body=bytes(existing.response_body), request_id=existing.request_id)
        if now - existing.created_at > IN_PROGRESS_LEASE:
            # The original crashed mid-flight long ago; take the key over.
            if IdempotencyRecord.objects.filter(pk=existing.pk, state=IdempotencyRecord.State.IN_PROGRESS,
                                                created_at=existing.created_at).delete()[0]:
                continue
        raise errors.IdempotencyInProgress(details={"original_request_id": existing.request_id})
    raise errors.IdempotencyInProgress()


def idempotency_complete(*, workspace: Workspace, key: str, request_id: str, status: int, body: bytes, store: bool) -> None:
    qs = IdempotencyRecord.objects.filter(workspace=workspace, key=key, request_id=request_id)
    if store:
        qs.update(state=IdempotencyRecord.State.COMPLETED, response_status=status, response_body=body)
    else:
        qs.delete()  # retryable outcomes are not stored: the same key executes again


def idempotency_purge() -> int:
    return IdempotencyRecord.objects.filter(expires_at__lte=timezone.now()).delete()[0]

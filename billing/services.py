"""Billing services. Every balance change is one ledger entry plus one conditional UPDATE of the cached
balance in the same transaction; available balance never goes below zero under any concurrency."""

from __future__ import annotations

import hashlib
import json
import logging
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F, Q, Sum
from django.utils import timezone

from accounts.models import Workspace
from billing import ledger_sql
from billing.models import CreditAccount, Hold, IdempotencyRecord, KeyBudget, LedgerEntry, RequestRecord
from billing.selectors import iso_utc, key_budget_view, period_resets_at
from billing.signals import balance_low, key_budget_alert
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
    entry_id, balance_after, fired = posted
    if fired:
        _low_balance(account_id)
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
            _budget_refund(request_id=request_id, amount=amount)
            return _post(account_id=workspace.pk, kind=LedgerEntry.Kind.REFUND, amount=amount, memo=memo,
                         request_id=request_id, verb=verb, external_ref=external_ref)
    except IntegrityError:
        if external_ref and LedgerEntry.objects.filter(kind=LedgerEntry.Kind.REFUND, external_ref=external_ref).exists():
            return None
        raise


def _budget_refund(*, request_id: str, amount: int) -> None:
    """A refund of a request's charge gives it back to the budget the charge counted in (its hold's key and
    periods), within the same transaction and before the account moves (the budget row is locked first)."""
    if not request_id:
        return
    counted = (Hold.objects.filter(request_id=request_id, budget_key_id__isnull=False, captured_micros__gt=0)
               .values_list("budget_key_id", "created_at", "captured_micros").first())
    if counted is None:
        return
    key_id, created_at, captured = counted
    with transaction.get_connection().cursor() as cursor:
        ledger_sql.budget_give_back(cursor, key_id=key_id, when=created_at, amount=min(amount, captured))


def credits_debit(*, workspace: Workspace, amount: int, kind: str, memo: str = "", request_id: str = "",
                  verb: str = "", external_ref: str | None = None) -> LedgerEntry:
    """Take credits outside a hold (e.g. monthly upkeep). Raises InsufficientCredits if not available."""
    if amount <= 0:
        raise ValueError("debit amount must be positive")
    with transaction.atomic():
        return _post(account_id=workspace.pk, kind=kind, amount=-amount, memo=memo, request_id=request_id,
                     verb=verb, external_ref=external_ref, require_available=True)


def account_get(*, workspace: Workspace) -> CreditAccount:
    return CreditAccount.objects.get(pk=workspace.pk)


# --- holds: authorize / capture / void --------------------------------------------------------------
def hold_place(*, workspace: Workspace, amount: int, request_id: str = "", api_key=None) -> Hold:
    """Reserve `amount` if the available balance covers it and `api_key`'s budget allows it: one conditional
    UPDATE, never read-then-write. Raises KeyBudgetExceeded or InsufficientCredits."""
    if amount <= 0:
        raise ValueError("hold amount must be positive")
    with transaction.atomic():
        hold, refusal = _reserve(workspace=workspace, amount=amount, request_id=request_id, api_key=api_key)
    if refusal is not None:
        raise refusal
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
             async_commit: bool = False, api_key=None) -> tuple[Hold | None, errors.DomainError | None]:
    """The conditional reserve and its hold row (inside the caller's transaction on SQLite). Returns (hold,
    None), or (None, the KeyBudgetExceeded to raise) when `api_key`'s budget refused it, or (None, None) when
    short (or `amount` is 0). With `record` (verb, channel, api_key_id), the request record `request_id` is
    inserted by the same statement, whether or not the reserve happens. The caller raises the refusal once its
    transaction is over (the record is kept)."""
    now = timezone.now()
    hold = Hold(id=uuid.uuid4(), account_id=workspace.pk, request_id=request_id, amount_micros=amount,
                captured_micros=0, status=Hold.Status.HELD, created_at=now,
                expires_at=now + timedelta(seconds=settings.HOLD_TTL_SECONDS))
    hold._state.adding, hold._state.db = False, "default"
    key_id = api_key.pk if api_key is not None else None
    available, budget = ledger_sql.reserve(hold=hold, record=record, async_commit=async_commit, api_key_id=key_id)
    if available is None:
        period = budget.passed_by(amount) if budget is not None else None
        if period is None:
            return None, None
        refusal = key_budget_exceeded(budget=budget, period=period, now=now)
        _budget_alert(api_key=api_key, workspace_id=workspace.pk, budget=budget, period=period, kind="exceeded",
                      spent=getattr(budget, period), now=now)
        return None, refusal
    hold.available_after_micros = available  # (not a field: the reading the reserve itself returned)
    if budget is not None:
        hold.budget_after = budget._replace(day=budget.day + amount, month=budget.month + amount)
        _budget_crossed(api_key=api_key, workspace_id=workspace.pk, budget=budget, amount=amount, now=now)
    return hold, None


# --- key budgets (CONTRACT 4.12) ---------------------------------------------------------------------
WARNING_SHARE = (4, 5)  # key.budget_warning at 80% of a limit


def key_budget_exceeded(*, budget, period: str, now) -> errors.KeyBudgetExceeded:
    limit = budget.daily_limit if period == "day" else budget.monthly_limit
    spent = budget.day if period == "day" else budget.month
    word = "daily" if period == "day" else "monthly"
    resets = period_resets_at(period, now)
    return errors.KeyBudgetExceeded(
        f"This call would pass the key's {word} spend limit of {format_credits(limit)} credits "
        f"({format_credits(spent)} spent or held); it resets at {iso_utc(resets)}. Nothing was charged.",
        details={"period": period, "limit": format_credits(limit), "spent": format_credits(spent),
                 "resets_at": iso_utc(resets)})


def _budget_crossed(*, api_key, workspace_id, budget, amount: int, now) -> None:
    """After a hold counted in the budget: alert when it took a period's spent plus held to 80% of the limit or
    to the limit (only a crossing asks the database anything, and each alert goes out once per period)."""
    for period, before, limit in (("day", budget.day, budget.daily_limit),
                                  ("month", budget.month, budget.monthly_limit)):
        if limit is None or limit <= 0:
            continue
        after = before + amount
        if after >= limit > before:
            _budget_alert(api_key=api_key, workspace_id=workspace_id, budget=budget, period=period, kind="exceeded",
                          spent=after, now=now)
        if after * WARNING_SHARE[1] >= limit * WARNING_SHARE[0] > before * WARNING_SHARE[1]:
            _budget_alert(api_key=api_key, workspace_id=workspace_id, budget=budget, period=period, kind="warning",
                          spent=after, now=now)


def _budget_alert(*, api_key, workspace_id, budget, period: str, kind: str, spent: int, now) -> None:
    """Mark (kind, period) as alerted for this period, at most once (a conditional UPDATE), and send
    key_budget_alert after commit if this call is the one that marked it."""
    day, month = ledger_sql.periods(now)
    current = day if period == "day" else month
    column = f"{'warned' if kind == 'warning' else 'exceeded'}_{period}"
    marked = KeyBudget.objects.filter(pk=budget.key_id).filter(
        Q(**{f"{column}__isnull": True}) | ~Q(**{column: current})).update(**{column: current})
    if not marked:
        return
    limit = budget.daily_limit if period == "day" else budget.monthly_limit
    payload = {"workspace_id": workspace_id, "api_key_id": budget.key_id,
               "key_name": getattr(api_key, "name", ""), "kind": kind, "period": period, "limit": limit,
               "spent": spent, "resets_at": period_resets_at(period, now)}
    transaction.on_commit(lambda: _send_alert(payload))


def _send_alert(payload: dict) -> None:
    try:
        key_budget_alert.send(sender=KeyBudget, **payload)
    except Exception:  # noqa: BLE001 - an alert never fails the call that crossed the line
        logger.exception("could not send the key budget alert %s", payload)


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


def _low_balance(workspace_id) -> None:
    """The statement that moved the balance took the available balance below the account's low-balance threshold
    (and marked it fired): send balance_low once the transaction commits."""
    transaction.on_commit(lambda: _send_low_balance(workspace_id))


def _send_low_balance(workspace_id) -> None:
    try:
        balance_low.send(sender=CreditAccount, workspace_id=workspace_id)
    except Exception:  # noqa: BLE001 - an alert never fails the call that was charged
        logger.exception("could not send balance_low for %s", workspace_id)


def _settle_within_hold(*, hold: Hold, charge: int, verb: str = "", memo: str = "", close: dict | None = None,
                        account_id=None, async_commit: bool = False, writes=()) -> tuple[int, int | None]:
    """hold_settle for charge <= hold (optionally closing the request record too): one statement on
    PostgreSQL, a few in one transaction on SQLite (billing.ledger_sql). Returns (charged, available)."""
    now = timezone.now()
    status = Hold.Status.CAPTURED if charge > 0 else Hold.Status.RELEASED
    claimed, charged, available, fired = ledger_sql.settle(
        hold=hold, account_id=hold.account_id if hold is not None else account_id, charge=charge, status=status,
        now=now, verb=verb, memo=memo, close=close, async_commit=async_commit, writes=writes)
    if claimed:
        hold.status, hold.captured_micros, hold.resolved_at = status, charge, now
    if fired:
        _low_balance(hold.account_id if hold is not None else account_id)
    return charged, available


def _settle_above_hold(*, hold: Hold, charge: int, verb: str, memo: str) -> int:
    """hold_settle for a charge larger than the hold: the excess only as far as the available balance goes."""
    with transaction.atomic():
        locked = Hold.objects.select_for_update().get(pk=hold.pk)
        if locked.status != Hold.Status.HELD:
            return locked.captured_micros
        budget = None
        if locked.budget_key_id is not None:  # locked before the account, as every money statement does
            budget = KeyBudget.objects.select_for_update().filter(pk=locked.budget_key_id).first()
        account = CreditAccount.objects.select_for_update().get(pk=locked.account_id)
        excess = min(charge - locked.amount_micros, max(0, account.available_micros))
        if budget is not None:
            excess = min(excess, _budget_room(budget, locked.created_at))
        final = locked.amount_micros + excess
        _post(account_id=account.pk, kind=LedgerEntry.Kind.CHARGE, amount=-final,
              reserved_delta=-locked.amount_micros, request_id=locked.request_id, verb=verb, memo=memo)
        if budget is not None and excess > 0:
            day, month = ledger_sql.periods(locked.created_at)
            KeyBudget.objects.filter(pk=budget.pk, day=day).update(day_micros=F("day_micros") + excess)
            KeyBudget.objects.filter(pk=budget.pk, month=month).update(month_micros=F("month_micros") + excess)
        locked.status = Hold.Status.CAPTURED
        locked.captured_micros = final
        locked.resolved_at = timezone.now()
        locked.save(update_fields=["status", "captured_micros", "resolved_at"])
        hold.status, hold.captured_micros = locked.status, final
        return final


def _budget_room(budget: KeyBudget, when) -> int:
    """What `budget` still allows in the periods of `when` (a charge above its hold takes no more than this)."""
    day, month = ledger_sql.periods(when)
    room = []
    if budget.daily_limit_micros is not None and budget.day == day:
        room.append(budget.daily_limit_micros - budget.day_micros)
    if budget.monthly_limit_micros is not None and budget.month == month:
        room.append(budget.monthly_limit_micros - budget.month_micros)
    return max(0, min(room)) if room else 1 << 62


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
    then refuses with InsufficientCredits and closes the record); raises KeyBudgetExceeded (the record open, the
    caller closes it) when `api_key`'s daily or monthly limit would be passed. `async_commit`: on PostgreSQL the statement's
    transaction commits with synchronous_commit off (only the LLM door asks, LLM_ASYNC_COMMIT)."""
    record = {"verb": verb, "channel": channel, "api_key_id": api_key.pk if api_key is not None else None}
    with ledger_sql.atomic():
        hold, refusal = _reserve(workspace=workspace, amount=amount, request_id=request_id, record=record,
                                 async_commit=async_commit, api_key=api_key)
    if refusal is not None:
        refusal.recorded = True  # (the record is open: the caller closes it as failed)
        raise refusal
    return hold


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


# --- key budgets: setting and reading ------------------------------------------------------------------
KEEP = object()  # key_limits_set: leave this limit as it is


def key_limits_set(*, api_key, daily=KEEP, monthly=KEEP) -> KeyBudget:
    """Set `api_key`'s daily and/or monthly limit (micro-credits, None = no limit; KEEP leaves one as it is).

    The first time, the budget row is created with what the key has already spent in this UTC day and month
    (its request records' charges) plus what it holds right now; its open holds are then counted in the budget
    (their settlement gives back what they do not capture), so a limit set mid-period counts the period whole.
    A changed limit re-arms the period's alerts."""
    for value in (daily, monthly):
        if value is not KEEP and value is not None and (not isinstance(value, int) or value < 0):
            raise errors.InvalidRequest("A limit is a credit amount of zero or more, or none.")
    now = timezone.now()
    with transaction.atomic():
        budget = KeyBudget.objects.select_for_update().filter(pk=api_key.pk).first()
        if budget is None:
            budget = _budget_open(api_key=api_key, now=now)
        if daily is not KEEP and daily != budget.daily_limit_micros:
            budget.daily_limit_micros, budget.warned_day, budget.exceeded_day = daily, None, None
        if monthly is not KEEP and monthly != budget.monthly_limit_micros:
            budget.monthly_limit_micros, budget.warned_month, budget.exceeded_month = monthly, None, None
        budget.updated_at = now
        budget.save()
    return budget


def _budget_open(*, api_key, now) -> KeyBudget:
    day, month = ledger_sql.periods(now)
    month_start = datetime(month.year, month.month, 1, tzinfo=UTC)
    day_start = datetime(day.year, day.month, day.day, tzinfo=UTC)
    records = RequestRecord.objects.filter(api_key=api_key, created_at__gte=month_start)
    spent_month = records.aggregate(s=Sum("credits_charged_micros"))["s"] or 0
    spent_day = records.filter(created_at__gte=day_start).aggregate(s=Sum("credits_charged_micros"))["s"] or 0
    open_holds = Hold.objects.filter(status=Hold.Status.HELD, budget_key_id__isnull=True, request_id__in=
                                     RequestRecord.objects.filter(api_key=api_key).values("id"))
    held_day = held_month = 0
    for hold_id, amount, created in open_holds.values_list("id", "amount_micros", "created_at"):
        hday, hmonth = ledger_sql.periods(created)
        if Hold.objects.filter(pk=hold_id, status=Hold.Status.HELD, budget_key_id__isnull=True).update(
                budget_key_id=api_key.pk):
            held_day += amount if hday == day else 0
            held_month += amount if hmonth == month else 0
    budget, _ = KeyBudget.objects.get_or_create(api_key=api_key, defaults={
        "day": day, "day_micros": spent_day + held_day, "month": month, "month_micros": spent_month + held_month,
        "updated_at": now})
    return KeyBudget.objects.select_for_update().get(pk=budget.pk)


def key_budget_settings(*, api_key) -> dict:
    """A key's spend limits as `manage.py key_limits` prints them (beside the key's other settings):
    `daily_limit` and `monthly_limit` (credit strings or None) and `limits` (as GET /v1/usage `key.limits`)."""
    budget = KeyBudget.objects.filter(pk=api_key.pk).first()

    def fmt(value):
        return None if value is None else format_credits(value)

    return {"daily_limit": fmt(budget.daily_limit_micros) if budget else None,
            "monthly_limit": fmt(budget.monthly_limit_micros) if budget else None,
            "limits": key_budget_view(api_key=api_key, budget=budget)}


# --- balance.low: the threshold lives on the account, so the statement that charges checks it ---------------
def low_balance_threshold_get(*, workspace: Workspace) -> int | None:
    return CreditAccount.objects.filter(pk=workspace.pk).values_list("low_balance_threshold_micros", flat=True).first()


def low_balance_threshold_set(*, workspace: Workspace, threshold: int | None) -> None:
    """Set (or, with None, remove) the workspace's low-balance threshold; it is armed afresh."""
    if threshold is not None and threshold < 0:
        raise errors.InvalidRequest("A threshold is a credit amount of zero or more.")
    CreditAccount.objects.filter(pk=workspace.pk).update(low_balance_threshold_micros=threshold,
                                                         low_balance_fired_at=None)


def low_balance_sweep() -> int:
    """The backstop of the check in every charge: mark fired (and send balance_low for) each account whose
    available balance is below its threshold without having fired (holds of calls in flight, not yet charges,
    or a threshold just set), and re-arm those back at or above it. Conditional UPDATEs: never twice."""
    fired = 0
    available = F("balance_micros") - F("reserved_micros")
    below = CreditAccount.objects.filter(low_balance_threshold_micros__isnull=False, low_balance_fired_at__isnull=True,
                                         low_balance_threshold_micros__gt=available)
    for workspace_id in below.values_list("pk", flat=True)[:1000]:
        with transaction.atomic():
            if below.filter(pk=workspace_id).update(low_balance_fired_at=timezone.now()):
                _low_balance(workspace_id)
                fired += 1
    CreditAccount.objects.filter(low_balance_fired_at__isnull=False).filter(
        Q(low_balance_threshold_micros__isnull=True) | Q(low_balance_threshold_micros__lte=available)).update(
        low_balance_fired_at=None)
    return fired

"""The money statements, written as SQL: post (move the account and append one ledger entry: every ledger
write goes through it), reserve (a conditional UPDATE of the account and the hold row) and settle within the
hold (claim the hold held -> captured/released, then the same move and entry as post). Reserve and settle can
also open / close the request record.

On PostgreSQL each is ONE statement (data-modifying CTEs), so it commits in one round trip to the server
and needs no BEGIN/COMMIT around it: this is what keeps the LLM passthrough's two database steps
(hold before the provider is called, settle before the final chunk) cheap. On SQLite (no data-modifying
CTEs) the same steps are a few statements, run inside the caller's transaction (`atomic()`).

The rules are those of billing.services: a reserve only happens when the available balance covers it; a
hold resolves once (whoever claims it moves the money; anyone else changes nothing and reads what was
captured); the ledger entry's balance_after is the balance its own UPDATE produced. Charges above a hold
keep the locked ORM path (billing.services._settle_above_hold).

Key budgets (billing.models.KeyBudget) ride in the same statements: the reserve locks the key's budget row (if
it has one), places the hold only when neither its daily nor its monthly limit would be passed (and the balance
covers it), and adds the amount to both counters; the settlement gives back what the hold does not capture.
Lock order is always the budget row, then the account row (a settlement takes its hold row first), so no two of
these statements can deadlock.

One difference from a read after the fact: on PostgreSQL a settle that loses the claim to a concurrent one
reports the captured amount of its statement's snapshot. The only concurrent claimer in this service is the
expiry sweep, which releases (captures 0), and that is what the snapshot shows; the money moves once
either way.
"""

from __future__ import annotations

import contextlib
from datetime import UTC
from functools import cache
from typing import NamedTuple

from django.db import connection, transaction

from billing.models import CreditAccount, Hold, KeyBudget, LedgerEntry, RequestRecord

HELD = Hold.Status.HELD.value
CHARGE = LedgerEntry.Kind.CHARGE.value
IN_PROGRESS = RequestRecord.Status.IN_PROGRESS.value


def _single_statement() -> bool:
    return connection.vendor == "postgresql"


def atomic():
    """The transaction a reserve or settle needs: none on PostgreSQL (one statement is atomic by itself, and
    BEGIN/COMMIT would be two more round trips), a transaction on other databases."""
    if _single_statement():
        return contextlib.nullcontext()
    return transaction.atomic(savepoint=False)


@cache
def _field(model, name):
    return model._meta.get_field(name)


def _db(model, name, value):
    """A Python value as the database driver wants it for this column (UUIDs, datetimes, JSON)."""
    if value is None:
        return None
    return _field(model, name).get_db_prep_value(value, connection)


@cache
def _tables():
    return {"account": CreditAccount._meta.db_table, "hold": Hold._meta.db_table,
            "ledger": LedgerEntry._meta.db_table, "record": RequestRecord._meta.db_table,
            "budget": KeyBudget._meta.db_table}


def periods(when) -> tuple:
    """The UTC day and the first day of the UTC month of `when` (an aware datetime): a budget's periods."""
    day = when.astimezone(UTC).date()
    return day, day.replace(day=1)


# --- reserve -------------------------------------------------------------------------------------------
_RECORD_INSERT = ("INSERT INTO {record} (id, workspace_id, api_key_id, verb, channel, status, credits_charged_micros, "
                  "created_at) VALUES (%(rid)s, %(account)s, %(key)s, %(verb)s, %(channel)s, %(in_progress)s, 0, "
                  "%(now)s)")
_RESERVE_UPDATE = ("UPDATE {account} SET reserved_micros = reserved_micros + %(amount)s "
                   "WHERE workspace_id = %(account)s AND %(amount)s > 0 AND balance_micros >= reserved_micros + %(amount)s")
_AVAILABLE = " RETURNING balance_micros - reserved_micros"  # the available balance the reserve leaves
_HOLD_INSERT = ("INSERT INTO {hold} (id, account_id, request_id, amount_micros, captured_micros, status, created_at, "
                "expires_at) {source}")
_HOLD_VALUES = "%(hold)s, %(account)s, %(rid)s, %(amount)s, 0, %(held)s, %(now)s, %(expires)s"


# LLM_ASYNC_COMMIT: `set_config(..., true)` is SET LOCAL as a function, so it can ride inside the one statement
# (no BEGIN/SET/COMMIT round trips): it holds for that statement's own transaction, whose commit then does not
# wait for the WAL flush, and it is gone when the statement returns. A CTE that is not a data-modifying one
# only runs when referenced, hence the references to `nosync` in the statements below.
_ASYNC_CTE = "nosync AS (SELECT set_config('synchronous_commit', 'off', true))"


def async_commit_local() -> None:
    """SET LOCAL synchronous_commit = off for the current transaction (PostgreSQL; nothing elsewhere)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit = off")


# The key's budget: its counters as of this period (a counter of a past period counts zero), locked; the
# refusal test; the counting UPDATE (the hold's amount added, the periods moved on). `lk` only reads when
# there is something to hold, so free calls never wait on the budget row.
_BUDGET_LOCK = ("SELECT api_key_id AS k, CASE WHEN day = %(day)s THEN day_micros ELSE 0 END AS d, "
                "CASE WHEN month = %(month)s THEN month_micros ELSE 0 END AS m, "
                "daily_limit_micros AS dl, monthly_limit_micros AS ml "
                "FROM {budget} WHERE api_key_id = %(bkey)s AND %(amount)s > 0")
_BUDGET_PASSED = "d + %(amount)s > dl OR m + %(amount)s > ml"
_BUDGET_COUNT = ("UPDATE {budget} SET "
                 "day_micros = (CASE WHEN day = %(day)s THEN day_micros ELSE 0 END) + %(amount)s, day = %(day)s, "
                 "month_micros = (CASE WHEN month = %(month)s THEN month_micros ELSE 0 END) + %(amount)s, "
                 "month = %(month)s WHERE api_key_id = %(bkey)s")
_HOLD_INSERT_B = ("INSERT INTO {hold} (id, account_id, request_id, amount_micros, captured_micros, status, created_at, "
                  "expires_at, budget_key_id) {source}")


@cache
def _reserve_sql(vendor_single: bool, with_record: bool, async_commit: bool = False) -> list[str]:
    t = _tables()
    if vendor_single:
        ctes = [_ASYNC_CTE] if async_commit else []
        if with_record:
            ctes.append("rec AS (" + _RECORD_INSERT.format(**t) + ")")
        ctes.append("lk AS MATERIALIZED (" + _BUDGET_LOCK.format(**t) + " FOR UPDATE)")
        ctes.append("acct AS (" + _RESERVE_UPDATE.format(**t)
                    + f" AND NOT EXISTS (SELECT 1 FROM lk WHERE {_BUDGET_PASSED})" + _AVAILABLE + " AS avail)")
        ctes.append("kb AS (" + _BUDGET_COUNT.format(**t) + " AND EXISTS (SELECT 1 FROM acct))")
        gate = " WHERE EXISTS (SELECT 1 FROM nosync)" if async_commit else ""  # a one-time filter: always runs
        ctes.append("ins AS (" + _HOLD_INSERT_B.format(
            source=f"SELECT {_HOLD_VALUES}, (SELECT k FROM lk) FROM acct{gate}", **t) + ")")
        return ["WITH " + ", ".join(ctes) + " SELECT (SELECT avail FROM acct), k, d, m, dl, ml "
                "FROM (SELECT 1) AS one LEFT JOIN lk ON true"]
    # SQLite: the account's reserve refuses a passed budget by itself and says whether the key has one, so a key
    # without limits costs no statement more; the count and the hold follow in the same transaction.
    out = [_RECORD_INSERT.format(**t)] if with_record else []
    passed = (f"SELECT 1 FROM {t['budget']} WHERE api_key_id = %(bkey)s AND ((daily_limit_micros IS NOT NULL AND "
              "(CASE WHEN day = %(day)s THEN day_micros ELSE 0 END) + %(amount)s > daily_limit_micros) OR "
              "(monthly_limit_micros IS NOT NULL AND (CASE WHEN month = %(month)s THEN month_micros ELSE 0 END) + "
              "%(amount)s > monthly_limit_micros))")
    return out + [
        _RESERVE_UPDATE.format(**t) + f" AND NOT EXISTS ({passed})" + _AVAILABLE
        + f", EXISTS (SELECT 1 FROM {t['budget']} WHERE api_key_id = %(bkey)s)",
        _BUDGET_LOCK.format(**t),
        _BUDGET_COUNT.format(**t) + " RETURNING day_micros, month_micros, daily_limit_micros, monthly_limit_micros",
        _HOLD_INSERT_B.format(source=f"VALUES ({_HOLD_VALUES}, %(bkey)s)", **t)]


class Budget(NamedTuple):
    """A key's budget as the reserve found it (before its own hold): limits (None = none) and spent plus held."""

    key_id: object
    day: int
    month: int
    daily_limit: int | None
    monthly_limit: int | None

    def passed_by(self, amount: int) -> str | None:
        """The period ("day" first, then "month") whose limit `amount` more would pass, or None."""
        if self.daily_limit is not None and self.day + amount > self.daily_limit:
            return "day"
        if self.monthly_limit is not None and self.month + amount > self.monthly_limit:
            return "month"
        return None


class Reservation(NamedTuple):
    available: int | None  # the available balance right after the reserve; None when the hold was not placed
    budget: Budget | None  # the key's budget before this hold; None when the key has none (or nothing to hold)


def reserve(*, hold: Hold, record: dict | None, async_commit: bool = False, api_key_id=None) -> Reservation:
    """Reserve `hold.amount_micros` on the account and insert `hold` if the available balance covers it and the
    key's budget (`api_key_id`, when it has a KeyBudget) is not passed in either period (an amount of 0 reserves
    nothing); with `record`, insert the request record (always). A placed hold is counted in the key's budget
    (`hold.budget_key_id` set). `async_commit` (PostgreSQL only): this statement's transaction commits with
    synchronous_commit off (the LLM door, LLM_ASYNC_COMMIT)."""
    day, month = periods(hold.created_at)
    params = {
        "hold": _db(Hold, "id", hold.id), "account": _db(Hold, "account", hold.account_id), "rid": hold.request_id,
        "amount": hold.amount_micros, "held": HELD, "now": _db(Hold, "created_at", hold.created_at),
        "expires": _db(Hold, "expires_at", hold.expires_at),
        "bkey": _db(KeyBudget, "api_key", api_key_id), "day": _db(KeyBudget, "day", day),
        "month": _db(KeyBudget, "month", month),
    }
    if record is not None:
        params.update(key=_db(RequestRecord, "api_key", record["api_key_id"]), verb=record["verb"],
                      channel=record["channel"], in_progress=IN_PROGRESS)
    single = _single_statement()
    statements = _reserve_sql(single, record is not None, async_commit and single)
    with connection.cursor() as cursor:
        if len(statements) == 1:
            cursor.execute(statements[0], params)
            available, key, *counts = cursor.fetchone()
            budget = Budget(api_key_id, *counts) if key is not None else None
            if available is not None and budget is not None:
                hold.budget_key_id = api_key_id
            return Reservation(None if available is None else int(available), budget)
        *before, update, lock, count, insert = statements
        for sql in before:
            cursor.execute(sql, params)
        if hold.amount_micros <= 0:
            return Reservation(None, None)
        cursor.execute(update, params)
        row = cursor.fetchone()
        if row is None:  # short, or the budget refused it: read which (the same transaction)
            budget = None
            if api_key_id is not None:
                cursor.execute(lock, params)
                found = cursor.fetchone()
                budget = Budget(api_key_id, *found[1:]) if found is not None else None
            return Reservation(None, budget)
        available, budgeted = int(row[0]), bool(row[1])
        budget = None
        if budgeted:
            cursor.execute(count, params)
            day_after, month_after, daily, monthly = cursor.fetchone()
            amount = hold.amount_micros
            budget = Budget(api_key_id, day_after - amount, month_after - amount, daily, monthly)
            hold.budget_key_id = api_key_id
        else:
            params["bkey"] = None
        cursor.execute(insert, params)
        return Reservation(available, budget)


# --- ledger posts: move the account and append the entry -------------------------------------------------
# The one way the cached balance and the ledger move together (billing.services._post and the settlement
# below both use it): one UPDATE of the account returns the balance the entry records.
# The same UPDATE keeps balance.low's state: a debit that leaves the available balance below the account's
# threshold marks it fired (once: only if not already), a move that leaves it at or above clears the mark (re-armed);
# the third column says whether this very statement fired it (its own timestamp is the mark).
_NEW_AVAILABLE = "balance_micros + %(amount)s - reserved_micros - %(reserved_delta)s"
_MOVE = ("UPDATE {account} SET balance_micros = balance_micros + %(amount)s, "
         "reserved_micros = reserved_micros + %(reserved_delta)s, "
         "low_balance_fired_at = CASE WHEN low_balance_threshold_micros IS NULL THEN NULL "
         f"WHEN {_NEW_AVAILABLE} >= low_balance_threshold_micros THEN NULL "
         "WHEN low_balance_fired_at IS NULL AND %(amount)s < 0 THEN %(now)s ELSE low_balance_fired_at END "
         "WHERE workspace_id = %(account)s{guard} "
         "RETURNING balance_micros, reserved_micros, "
         "(low_balance_fired_at IS NOT NULL AND low_balance_fired_at = %(now)s) AS fired")
# A debit that must be covered by the available balance (the check constraint refuses it anyway; this makes
# the refusal a clean "no row" instead of an IntegrityError).
_COVERED = " AND balance_micros + %(amount)s >= reserved_micros + %(reserved_delta)s"
_ENTRY = ("INSERT INTO {ledger} (account_id, kind, amount_micros, balance_after_micros, request_id, verb, memo, "
          "external_ref, created_by_id, created_at) {source} RETURNING id, balance_after_micros")
_ENTRY_VALUES = ("%(account)s, %(kind)s, %(amount)s, {balance}, %(rid)s, %(verb)s, %(memo)s, %(external_ref)s, "
                 "%(created_by)s, %(now)s")


def _post_params(*, account_id, kind: str, amount: int, reserved_delta: int, request_id: str, verb: str, memo: str,
                 external_ref, created_by_id, now) -> dict:
    return {"account": _db(Hold, "account", account_id), "kind": kind, "amount": amount,
            "reserved_delta": reserved_delta, "rid": request_id, "verb": verb, "memo": memo[:500],
            "external_ref": external_ref, "created_by": created_by_id, "now": _db(LedgerEntry, "created_at", now)}


@cache
def _post_sql_single(guard: str) -> str:
    t = _tables()
    return ("WITH acct AS (" + _MOVE.format(guard=guard, **t) + "), e AS ("
            + _ENTRY.format(source="SELECT " + _ENTRY_VALUES.format(balance="balance_micros") + " FROM acct", **t)
            + ") SELECT e.id, e.balance_after_micros, acct.fired FROM e, acct")


def _post_steps(cursor, params: dict, guard: str, *, enter: bool = True):
    """SQLite: the account UPDATE, then (if it moved and `enter`) the entry. Returns (balance, reserved, entry
    id, fired: whether it took the balance below the low-balance threshold) or None when the guarded UPDATE moved
    nothing."""
    t = _tables()
    cursor.execute(_MOVE.format(guard=guard, **t), params)
    row = cursor.fetchone()
    if row is None:
        return None
    balance, reserved, fired = row
    entry_id = None
    if enter:
        cursor.execute(_ENTRY.format(source="VALUES (" + _ENTRY_VALUES.format(balance="%(after)s") + ")", **t),
                       {**params, "after": balance})
        entry_id = cursor.fetchone()[0]
    return balance, reserved, entry_id, bool(fired)


def post(*, account_id, kind: str, amount: int, reserved_delta: int = 0, require_available: bool = False,
         request_id: str = "", verb: str = "", memo: str = "", external_ref: str | None = None,
         created_by_id=None, now) -> tuple[int, int, bool] | None:
    """Move the balance by `amount` (and the reserve by `reserved_delta`) and append one ledger entry, in one
    statement on PostgreSQL (inside the caller's transaction elsewhere). With `require_available`, only when
    the available balance covers it. Returns (entry id, balance after, whether this took the available balance
    below the account's low-balance threshold), or None when nothing moved."""
    params = _post_params(account_id=account_id, kind=kind, amount=amount, reserved_delta=reserved_delta,
                          request_id=request_id, verb=verb, memo=memo, external_ref=external_ref,
                          created_by_id=created_by_id, now=now)
    guard = _COVERED if require_available else ""
    with connection.cursor() as cursor:
        if _single_statement():
            cursor.execute(_post_sql_single(guard), params)
            row = cursor.fetchone()
            return (row[0], row[1], bool(row[2])) if row is not None else None
        moved = _post_steps(cursor, params, guard)
        return (moved[2], moved[0], moved[3]) if moved is not None else None


# --- settle within the hold ------------------------------------------------------------------------------
_CLAIM = ("UPDATE {hold} SET status = %(status)s, captured_micros = %(charge)s, resolved_at = %(now)s "
          "WHERE id = %(hold)s AND status = %(held)s")
_CLAIMED = " AND EXISTS (SELECT 1 FROM claim)"


def _close_set(with_usage: bool) -> str:
    sets = "status = %(rstatus)s, http_status = %(http)s, error = %(error)s, completed_at = %(now)s"
    return sets + (", usage = %(usage)s" if with_usage else "")


# The record is closed by whoever claims the hold, or (no hold, or the claim lost) only if still in progress: a late
# settlement never reopens a record the expiry sweep closed as failed.
_OPEN_OR_CLAIMED = " AND (status = %(in_progress)s OR EXISTS (SELECT 1 FROM claim))"


# What a settlement gives back to the key's budget: the part of the hold it does not capture, in the hold's own
# periods (a period already over has nothing to give back to).
_BUDGET_GIVE = ("UPDATE {budget} SET "
                "day_micros = day_micros - CASE WHEN day = %(hday)s THEN LEAST(%(give)s, day_micros) ELSE 0 END, "
                "month_micros = month_micros - CASE WHEN month = %(hmonth)s THEN LEAST(%(give)s, month_micros) "
                "ELSE 0 END WHERE api_key_id = %(bkey)s")


def budget_give_back(cursor, *, key_id, when, amount: int) -> None:
    """Give `amount` back to key `key_id`'s budget for the periods of `when` (a refund; inside the caller's
    transaction, before the account moves: the budget row is always locked first)."""
    if key_id is None or amount <= 0:
        return
    day, month = periods(when)
    sql = _BUDGET_GIVE.format(**_tables())
    if not _single_statement():
        sql = sql.replace("LEAST(", "MIN(")
    cursor.execute(sql, {"hday": _db(KeyBudget, "day", day), "hmonth": _db(KeyBudget, "month", month),
                         "give": amount, "bkey": _db(KeyBudget, "api_key", key_id)})


@cache
def _settle_sql_single(with_close: bool, with_usage: bool, async_commit: bool = False,
                       writes: tuple[str, ...] = (), with_budget: bool = False) -> str:
    """The settlement as one statement; `writes`: the INSERT ... SELECT CTE bodies of a verb's result rows
    (`_inserts`), run only when this statement claims the hold (or there is none)."""
    t = _tables()
    ctes = [_ASYNC_CTE] if async_commit else []
    ctes.append("claim AS (" + _CLAIM.format(**t) + " RETURNING 1)")
    guard = _CLAIMED
    if with_budget:
        # the budget row is locked before the account row (the reserve's order): the account's guard waits for it
        ctes.append("give AS (" + _BUDGET_GIVE.format(**t) + _CLAIMED + " RETURNING 1)")
        guard += " AND (SELECT count(*) FROM give) >= 0"
    ctes += [
        "acct AS (" + _MOVE.format(guard=guard, **t) + ")",
        "entry AS (" + _ENTRY.format(
            source="SELECT " + _ENTRY_VALUES.format(balance="balance_micros") + " FROM acct WHERE %(charge)s > 0",
            **t) + ")",
        f"charged AS (SELECT COALESCE((SELECT %(charge)s FROM claim), "
        f"(SELECT captured_micros FROM {t['hold']} WHERE id = %(hold)s), 0) AS v)",
    ]
    ctes += [f"w{n} AS ({body} WHERE %(hold)s IS NULL OR EXISTS (SELECT 1 FROM claim))" for n, body in enumerate(writes)]
    if with_close:
        ctes.append(f"rec AS (UPDATE {t['record']} SET {_close_set(with_usage)}, "
                    f"credits_charged_micros = (SELECT v FROM charged) WHERE id = %(rid)s{_OPEN_OR_CLAIMED})")
    # `(SELECT 1 FROM nosync)` runs the set_config before the statement's result is complete.
    extra = ", (SELECT 1 FROM nosync)" if async_commit else ""
    return ("WITH " + ", ".join(ctes) + f" SELECT (SELECT count(*) FROM claim), (SELECT v FROM charged){extra}, "
            "COALESCE((SELECT fired FROM acct), false), COALESCE((SELECT balance_micros - reserved_micros FROM acct), "
            f"(SELECT balance_micros - reserved_micros FROM {t['account']} WHERE workspace_id = %(account)s))")


def insertable(objs) -> bool:
    """Whether `_inserts` can write `objs` as Model.save would: plain models (no multi-table inheritance), values
    that are values (no expressions or database defaults)."""
    return all(not obj._meta.parents and not any(hasattr(getattr(obj, f.attname), "resolve_expression")
                                                for f in obj._meta.local_concrete_fields)
               for obj in objs)


def _inserts(objs) -> tuple[tuple[str, ...], dict]:
    """The `INSERT ... SELECT` bodies writing `objs` (unsaved model instances that are `insertable`; an automatic
    primary key is left to the database, generated columns to their expression, as Model.save does) and their
    parameters. No save signals are sent and the instances' primary keys stay unset."""
    bodies, params = [], {}
    quote = connection.ops.quote_name
    for n, obj in enumerate(objs):
        meta = obj._meta
        fields = [f for f in meta.local_concrete_fields
                  if not getattr(f, "generated", False) and (obj.pk is not None or f is not meta.auto_field)]
        names = [f"w{n}_{i}" for i in range(len(fields))]
        bodies.append(f"INSERT INTO {quote(meta.db_table)} ({', '.join(quote(f.column) for f in fields)}) "
                      f"SELECT {', '.join(f'%({name})s' for name in names)}")
        params.update({name: f.get_db_prep_save(f.pre_save(obj, True), connection)
                       for name, f in zip(names, fields, strict=True)})
    return tuple(bodies), params


def save_all(objs) -> None:
    """Insert `objs` (unsaved model instances) with the ORM, inside the caller's transaction."""
    for obj in objs:
        obj.save(force_insert=True)


def settle(*, hold: Hold | None, account_id, charge: int, status: str, now, verb: str, memo: str,
           close: dict | None, async_commit: bool = False, writes=()) -> tuple[bool, int, int | None, bool]:
    """Capture `charge` (at most the hold's amount) and release the rest, once: the claim, then the same
    account move and ledger entry as `post` (no entry for a release); with `close`, close the request record
    with what was charged (unless it lost the claim and the record is no longer in progress); `writes` (unsaved
    model instances: a verb's result rows, `insertable`) are inserted by the same statement (PostgreSQL) or
    transaction (elsewhere) when this settlement claims the hold (or there is none). Returns (claimed, charged,
    available after, whether this charge took the available balance below the low-balance threshold) —
    available is None on SQLite when the claim was lost and there is no `close` (nobody reads it there)."""
    rid = close["id"] if close is not None else (hold.request_id if hold is not None else "")
    params = _post_params(account_id=account_id, kind=CHARGE, amount=-charge,
                          reserved_delta=-hold.amount_micros if hold is not None else 0, request_id=rid, verb=verb,
                          memo=memo, external_ref=None, created_by_id=None, now=now)
    params.update(hold=_db(Hold, "id", hold.id) if hold is not None else None, charge=charge, status=status,
                  held=HELD)
    with_budget = hold is not None and hold.budget_key_id is not None
    if with_budget:
        hday, hmonth = periods(hold.created_at)
        params.update(bkey=_db(KeyBudget, "api_key", hold.budget_key_id), hday=_db(KeyBudget, "day", hday),
                      hmonth=_db(KeyBudget, "month", hmonth), give=hold.amount_micros - charge)
    with_usage = close is not None and close.get("usage") is not None
    if close is not None:
        params.update(rstatus=close["status"], http=close["http_status"],
                      error=_db(RequestRecord, "error", close.get("error")),
                      usage=_db(RequestRecord, "usage", close.get("usage")))
    params["in_progress"] = IN_PROGRESS
    with connection.cursor() as cursor:
        if _single_statement():
            bodies, extra = _inserts(writes)
            params.update(extra)
            cursor.execute(_settle_sql_single(close is not None, with_usage, async_commit, bodies, with_budget), params)
            row = cursor.fetchone()
            claimed, charged, fired, available = row[0], row[1], row[-2], row[-1]
            return bool(claimed), int(charged), available, bool(fired)
        settled = _settle_steps(cursor, hold, params, close is not None, with_usage)
    if settled[0] or hold is None:  # the rows commit with the charge: only the claimer writes them
        save_all(writes)
    return settled


def _settle_steps(cursor, hold, params, with_close: bool, with_usage: bool):
    t = _tables()
    claimed, available, charged, fired = False, None, 0, False
    if hold is not None:
        cursor.execute(_CLAIM.format(**t), params)
        claimed = cursor.rowcount == 1
    if claimed:
        if hold.budget_key_id is not None:
            cursor.execute(_BUDGET_GIVE.format(**t).replace("LEAST(", "MIN("), params)
        balance, reserved, _, fired = _post_steps(cursor, params, "", enter=params["charge"] > 0)
        available, charged = balance - reserved, params["charge"]
    elif hold is not None:
        cursor.execute(f"SELECT captured_micros FROM {t['hold']} WHERE id = %(hold)s", params)
        charged = cursor.fetchone()[0]
    if with_close:
        guard = "" if claimed else " AND status = %(in_progress)s"  # (_OPEN_OR_CLAIMED)
        cursor.execute(f"UPDATE {t['record']} SET {_close_set(with_usage)}, credits_charged_micros = %(charged)s "
                       f"WHERE id = %(rid)s{guard}", {**params, "charged": charged})
        if available is None:
            cursor.execute(f"SELECT balance_micros - reserved_micros FROM {t['account']} WHERE workspace_id = %(account)s",
                           params)
            available = cursor.fetchone()[0]
    return claimed, charged, available, fired

"""The one money path every verb runs through, whichever door it came in by (REST, MCP, the LLM door): it composes
the domain apps (accounts' keys and scopes, billing's holds, the idempotency store) around a registered verb, so it
lives above them, not in `core` (the kernel imports no domain app).

Two steps around the verb's own work:

- `admit`: rate limit -> scope -> idempotency begin (replay or 409) -> validate input -> open the request record
  and place the hold in one statement (402 if short). A refusal after the idempotency step is recorded as failed.
  A door whose work can be abandoned (the LLM door's provider request) may start it before the hold is confirmed
  (`admit_early`, and `early`): api.early.EarlyStart says when.
- `settle`: settle the hold to the exact charge, close the request record and read the balance back in one
  statement -> store the idempotent result -> render `{"result", "service"}`. With `settle_later` (both REST
  doors, SETTLE_AFTER_RESPONSE) a call whose settlement is known exactly is answered first, and its settlement
  follows once the response is made (handed to the server) (`settle_after_answer`).

`execute` is admit -> run -> settle for an ordinary verb; a streaming verb (the LLM door) calls `admit`, relays,
then `settle_hold` itself. Both steps write through api.dbwork.run_write (SQLite: one writer at a time, on one
connection, waiting settlements first) with LLM_ASYNC_COMMIT (PostgreSQL: the statements commit asynchronously).
`execute` never raises: every outcome, errors included, is a `VerbResponse` carrying the exact bytes to send.
"""

from __future__ import annotations

import functools
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import close_old_connections, transaction

from api.dbwork import run_write
from api.early import budget_room, early_start
from billing import ledger_sql
from billing import services as billing
from core import errors
from core.money import service_block
from core.parsers import check_json_value
from core.ratelimit import RateInfo
from core.ratelimit import hit as ratelimit_hit
from core.ratelimit import hit_start as ratelimit_hit_start
from core.verbs import Context, Verb, check_idempotency_key, dumps, validate

logger = logging.getLogger("api.pipeline")


@dataclass
class VerbResponse:
    status: int
    body: bytes
    request_id: str
    headers: dict = field(default_factory=dict)
    replayed: bool = False

    @property
    def data(self) -> dict:
        return json.loads(self.body)

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


@dataclass
class Admission:
    """A call `admit` let through (or is letting through): what `settle` needs, and what a refusal must undo."""

    verb: Verb
    ctx: Context
    rate: RateInfo | None = None
    data: dict | None = None  # the validated input
    amount: int = 0  # the hold's amount
    prepared: Any = None  # what the door's `prepare` made of the body (the LLM door: its Call)
    idempotency_key: str | None = None  # claimed by this call: completed (stored or freed) when it ends
    recording: bool = False  # past the idempotency step: a refusal is recorded (if the verb keeps records)
    record_open: bool = False  # the request record is open: it is closed when the call ends
    replay: VerbResponse | None = None  # an idempotent replay: nothing else was done

    @property
    def request_id(self) -> str:
        return self.ctx.request_id

    @property
    def hold(self):
        return self.ctx.hold


def _error_response(exc: errors.DomainError, request_id: str, rate: RateInfo | None) -> VerbResponse:
    headers = dict(exc.headers)
    if rate:
        headers.update(rate.headers())
    return VerbResponse(status=exc.http_status, body=dumps(errors.error_body(exc, request_id)), request_id=request_id, headers=headers)


def scope_refused(key, scope: str) -> errors.DomainError:
    """insufficient_scope naming what lacks the scope: the API key, or the OAuth connection (by its client's
    name) that the call came through."""
    connection = key.connection_name()
    if connection is None:
        return errors.InsufficientScope(f"This API key lacks the scope {scope}.", details={"required_scope": scope})
    return errors.InsufficientScope(
        f"The OAuth connection \u201c{connection}\u201d lacks the scope {scope}: connect the client again and grant "
        "it (an owner or admin sees the connection on the console's API keys page).",
        details={"required_scope": scope, "connection": connection})


def _prepare(verb: Verb, ctx: Context, body: dict) -> tuple[dict, int, Any]:
    """The validated input and the hold's amount (the default `prepare` of `admit`)."""
    data = validate(verb, body)
    return data, verb.hold_amount(ctx, data), None


# --- admit ------------------------------------------------------------------------------------------------
def admit_early(verb: Verb, *, ctx: Context, body: dict, prepare=None) -> Admission | None:
    """A call that may start its work before the rate limit and the hold confirm it: no query, no network, so a
    door may run it on its event loop. Only when the body is valid and this process's allowances (api.early)
    cover the hold, one more request and the key's budget; the door then starts its (abandonable) work and runs
    `admit(..., started=admission)` at once, sending nothing to the client before that returns or refuses. None:
    the call goes through `admit` from the start (which produces, and records, every refusal)."""
    try:
        data, amount, prepared = (prepare or functools.partial(_prepare, verb))(ctx, body)
    except Exception:  # noqa: BLE001 - refused: `admit` refuses it again, recorded
        return None
    key = ctx.api_key
    if not early_start.claim(ctx.workspace.pk, amount, key.pk, budget_key=key.pk):
        return None
    return Admission(verb=verb, ctx=ctx, data=data, amount=amount, prepared=prepared, recording=True)


def admit(verb: Verb, *, ctx: Context, raw: dict | Callable[[], dict] | None = None,
          idempotency_key: str | None = None, prepare=None, idempotent: Callable[[dict], bool] | None = None,
          early: Callable[[Admission], None] | None = None, started: Admission | None = None) -> Admission:
    """Everything before the verb's work (see the module's docstring). Returns the Admission (its `replay` set for
    an idempotent replay); raises a DomainError (the rate-limit headers attached) on refusal, having recorded and
    released whatever it had opened.

    `prepare(ctx, body) -> (data, amount, prepared)` replaces the input serializer and the verb's hold amount (the
    LLM door: its catalog and metering); `idempotent(body)`: whether an Idempotency-Key applies to this body (the
    LLM door: not to a stream). `early(admission)`: called (on this thread) before the hold is placed when this
    process's allowance covers it (api.early): the door may start its work meanwhile, and must wait for this
    function's return or refusal before anything reaches the client. `started`: an admission `admit_early` let
    start (its work already begun): only the rate-limit hit and the hold are left, run at once (the hit's answer
    is read after the hold statement; a refused hit undoes the hold: nothing recorded)."""

    adm = started or Admission(verb=verb, ctx=ctx)
    key = ctx.api_key
    hold = pending = None
    read_at = time.monotonic()
    try:
        if started is not None:
            # The rate-limit hit's request leaves now and its answer is read once the hold is placed: the two round
            # trips (the cache, the database) overlap on this one thread. A refusal then undoes the hold.
            pending = ratelimit_hit_start(f"key:{key.pk}")
        else:
            if verb.method != "POST":
                idempotency_key = None  # reads are naturally idempotent
            if ctx.rate is not None:  # the door already counted this request (MCP)
                adm.rate = ctx.rate
            else:
                adm.rate = ratelimit_hit(f"key:{key.pk}")
                early_start.learn_rate(key.pk, adm.rate, read_at)
            if not adm.rate.allowed:
                raise errors.RateLimited()
            if verb.scope and not key.has_scope(verb.scope):
                raise scope_refused(key, verb.scope)
            body = raw() if callable(raw) else (raw or {})
            if not isinstance(body, dict):
                raise errors.InvalidRequest("The body must be a JSON object.")
            if not callable(raw):  # a parsed REST body was checked by its parser; MCP arguments are checked here
                check_json_value(body)
            if idempotency_key is not None and idempotent is not None and not idempotent(body):
                idempotency_key = None
            ctx.idempotency_key = idempotency_key
            if idempotency_key is not None:
                check_idempotency_key(idempotency_key)
            elif verb.requires_idempotency(body):
                raise errors.IdempotencyKeyRequired(
                    f"{verb.name} needs an Idempotency-Key header (MCP: idempotency_key).")
            if idempotency_key is not None:
                replay = billing.idempotency_begin(workspace=ctx.workspace, key=idempotency_key, verb=verb.name,
                                                   data=body, request_id=ctx.request_id)
                if replay is not None:
                    headers = {"Idempotent-Replayed": "true", **(adm.rate.headers() if adm.rate else {})}
                    adm.replay = VerbResponse(status=replay.status, body=replay.body, request_id=replay.request_id,
                                              headers=headers, replayed=True)
                    return adm
                adm.idempotency_key = idempotency_key
            adm.recording = True  # from here on a refusal is recorded (if the verb keeps records)
            # Validate before anything is written: a bad body costs no hold (its record is written with the refusal).
            adm.data, adm.amount, adm.prepared = (prepare or functools.partial(_prepare, verb))(ctx, body)
            if early is not None and early_start.claim(ctx.workspace.pk, adm.amount, budget_key=key.pk):
                early(adm)
        amount = adm.amount
        refusal = None
        try:
            # the record and the hold in one statement (PostgreSQL; one transaction on SQLite): billing.ledger_sql
            if verb.record or amount > 0:
                hold, refusal = run_write(functools.partial(_place, verb, ctx, amount))
        except BaseException:
            if pending is not None:
                pending.close()
            raise
        adm.record_open = verb.record
        if key is None:  # a console member's call: no key, no key budget to learn
            pass
        elif refusal is not None:
            early_start.learn_budget(key.pk, None, refused=True)
        elif hold is not None:
            early_start.learn_budget(key.pk, budget_room(hold), read_at)
        if pending is not None:
            adm.rate = pending.result()
            early_start.learn_rate(key.pk, adm.rate, read_at)
            if not adm.rate.allowed:  # as if the call never came in, as a refused hit always is: nothing recorded
                run_write(functools.partial(_unadmit, hold, ctx.request_id if verb.record else None))
                hold, adm.record_open, adm.recording = None, False, False
                raise errors.RateLimited()
        if refusal is not None:
            raise refusal
        if amount > 0 and hold is None:
            early_start.forget(ctx.workspace.pk)
            raise billing.insufficient_credits(workspace=ctx.workspace, amount=amount)
        ctx.hold = hold
        return adm
    except Exception as exc:
        if hold is not None:
            try:
                billing.hold_release(hold=hold)
            except Exception:  # noqa: BLE001 - left to the expiry sweep; the refusal is still recorded
                logger.exception("could not release the hold of %s", ctx.request_id)
                close_old_connections()
        raise refuse(adm, exc) from exc


def _place(verb: Verb, ctx: Context, amount: int):
    """An admission's write step: the request record and the hold in one statement (PostgreSQL; one transaction on
    SQLite), or the hold alone for a verb that keeps no records. (hold or None, the KeyBudgetExceeded to raise or
    None): a refusal by the key's budget leaves the record open, committed, and is raised by the caller."""
    try:
        if verb.record:
            return billing.request_open_with_hold(
                request_id=ctx.request_id, workspace=ctx.workspace, verb=verb.name, amount=amount,
                api_key=ctx.api_key, channel=ctx.channel, async_commit=settings.LLM_ASYNC_COMMIT), None
        return billing.hold_place(workspace=ctx.workspace, amount=amount, request_id=ctx.request_id,
                                  api_key=ctx.api_key), None
    except errors.KeyBudgetExceeded as exc:
        return None, exc


def _unadmit(hold, request_id: str | None) -> None:
    """Undo an admission refused by the rate limit after its hold was placed: as if the call never came in."""
    with transaction.atomic():
        if hold is not None:
            billing.hold_release(hold=hold)
        if request_id is not None:
            billing.request_delete(request_id=request_id)


def refuse(adm: Admission, exc: BaseException) -> errors.DomainError:
    """Record a call refused or failed before its settlement, as failed (its record opened if it had none yet, and
    closed; its Idempotency-Key completed: stored when the refusal is replayable, freed otherwise). Returns the
    DomainError to answer, the rate-limit headers attached. Never raises."""

    ctx = adm.ctx
    err = errors.as_domain_error(exc, ctx.request_id)
    if adm.rate is not None:
        err.headers = {**err.headers, **adm.rate.headers()}
    if getattr(exc, "recorded", False):  # refused by the key's budget in the statement that opened the record
        adm.record_open = True
    try:
        if adm.recording and adm.verb.record and not adm.record_open:  # refused before its record was written
            billing.request_open(request_id=ctx.request_id, workspace=ctx.workspace, verb=adm.verb.name,
                                 api_key=ctx.api_key, channel=ctx.channel)
            adm.record_open = True
        if adm.record_open:
            billing.request_close(request_id=ctx.request_id, status="failed", http_status=err.http_status,
                                  error={"code": err.code, "message": err.message})
            adm.record_open = False
        if adm.idempotency_key is not None:
            billing.idempotency_complete(workspace=ctx.workspace, key=adm.idempotency_key, request_id=ctx.request_id,
                                         status=err.http_status, body=dumps(errors.error_body(err, ctx.request_id)),
                                         store=errors.idempotency_replayable(err.code))
            adm.idempotency_key = None
    except Exception:  # noqa: BLE001
        logger.exception("could not record the failure of %s", ctx.request_id)
        close_old_connections()
    return err


# --- settle -------------------------------------------------------------------------------------------------
def settle_hold(adm: Admission, *, charge: int, status: str = "succeeded", http_status: int = 200,
                usage: dict | None = None, error: dict | None = None, writes=()) -> tuple[int, int]:
    """Settle the hold to the exact charge (the rest released), close the request record and read the balance back:
    one statement (PostgreSQL), one transaction (SQLite), ahead of waiting admissions. Returns (charged,
    available); what it read teaches this process's allowances (api.early)."""

    ctx = adm.ctx
    read_at = time.monotonic()
    charged, available = run_write(functools.partial(
        billing.hold_settle_close, hold=ctx.hold, charge=charge, workspace=ctx.workspace, request_id=ctx.request_id,
        status=status, http_status=http_status, verb=adm.verb.name, usage=usage, error=error,
        async_commit=settings.LLM_ASYNC_COMMIT, writes=writes), settlement=True)
    adm.record_open = False
    early_start.learn(ctx.workspace.pk, available, read_at)
    if ctx.hold is not None and ctx.api_key is not None:  # the key's budget as its hold left it, fresh again
        early_start.learn_budget(ctx.api_key.pk, budget_room(ctx.hold), read_at)
    return charged, available


def promised(adm: Admission, charge: int) -> int | None:
    """The available balance to state in an answer sent before its settlement (billing.services.promised_available),
    or None when the answer must wait for it (a call with an Idempotency-Key always waits: a replay must be the
    settled body)."""

    if adm.idempotency_key is not None or adm.replay is not None or not adm.record_open:
        return None
    return billing.promised_available(adm.hold, charge)


def _retry_after(request_id: str, attempt: int, delay: float | None) -> bool:
    """A settlement after its answer failed: whether to retry (after `delay`), logged either way."""
    if delay is None:
        logger.exception("the settlement of %s after its answer failed %d times; its hold is left to the expiry sweep",
                         request_id, attempt + 1)
        return False
    logger.warning("the settlement of %s after its answer failed; retrying", request_id, exc_info=True)
    return True


def _check_settled(request_id: str, charge: int, charged: int) -> None:
    if charged != charge:
        logger.error("%s was answered with a charge of %d micro-credits but settled %d", request_id, charge, charged)


def settle_after_answer(adm: Admission, charge: int, settle: Callable[[], tuple[int, int]],
                        undo: Callable[[], None] = lambda: None) -> None:
    """The settlement of a call already answered (SETTLE_AFTER_RESPONSE), run once the response is made: retried (a
    pool timeout, a locked SQLite file), since the client was told the charge (`undo` resets what a failed attempt
    left behind); after the last failure the hold is left to the expiry sweep (nothing charged, the record closed
    as failed). `settle_after_answer_async` is the same for a door that settles from its event loop."""

    for attempt, delay in enumerate((*billing.SETTLE_RETRIES, None)):
        try:
            charged, _ = settle()
        except Exception:  # noqa: BLE001
            close_old_connections()
            undo()
            if not _retry_after(adm.request_id, attempt, delay):
                return
            time.sleep(delay)
            continue
        _check_settled(adm.request_id, charge, charged)
        return


async def settle_after_answer_async(adm: Admission, charge: int, settle) -> None:
    """`settle_after_answer` with `settle` a coroutine function (run on a database thread), waiting between
    attempts on the event loop rather than on a database thread."""
    import asyncio


    for attempt, delay in enumerate((*billing.SETTLE_RETRIES, None)):
        try:
            charged, _ = await settle()
        except Exception:  # noqa: BLE001
            if not _retry_after(adm.request_id, attempt, delay):
                return
            await asyncio.sleep(delay)
            continue
        _check_settled(adm.request_id, charge, charged)
        return


def _render(verb: Verb, result, service: dict) -> Any:
    if verb.envelope:
        return {"result": result, "service": service}
    if verb.service_in_result:
        return {**result, "service": service}
    return result


def settle(adm: Admission, outcome, *,
           settle_later: Callable[[Callable[[], None]], None] | None = None) -> VerbResponse:
    """Settle an admitted call to its outcome and render the response (see the module's docstring); raises as the
    settlement does (`execute` records the failure)."""

    verb, ctx = adm.verb, adm.ctx
    request_id = ctx.request_id
    if outcome.charge and ctx.hold is None:
        raise RuntimeError(f"verb {verb.name} charged {outcome.charge} without a hold")
    if outcome.writes and not ledger_sql.insertable(outcome.writes):
        ledger_sql.save_all(outcome.writes)  # rows the settlement's statement cannot write: written now
        outcome.writes = ()
    headers = adm.rate.headers() if adm.rate else {}
    if settle_later is not None and (verb.envelope or verb.service_in_result):
        available = promised(adm, outcome.charge)
        if available is not None:
            response = VerbResponse(status=outcome.status, request_id=request_id, headers=headers, body=dumps(
                _render(verb, outcome.result, service_block(request_id, outcome.charge, available))))
            fresh = [obj for obj in outcome.writes if obj.pk is None]

            def undo():  # a rolled-back ORM insert (SQLite) left its id on the instance: not reused
                for obj in fresh:
                    obj.pk, obj._state.adding = None, True

            settle_later(functools.partial(
                settle_after_answer, adm, outcome.charge,
                functools.partial(settle_hold, adm, charge=outcome.charge, http_status=outcome.status,
                                  usage=outcome.usage, writes=outcome.writes), undo))
            return response
    available = None
    if adm.record_open:
        charged, available = settle_hold(adm, charge=outcome.charge, http_status=outcome.status, usage=outcome.usage,
                                         writes=outcome.writes)
    else:
        ledger_sql.save_all(outcome.writes)  # no request record to settle with: the verb's rows are written now
        charged = billing.hold_settle(hold=ctx.hold, charge=outcome.charge, verb=verb.name) if ctx.hold else 0
    if verb.envelope or verb.service_in_result:
        if available is None:
            available = billing.account_get(workspace=ctx.workspace).available_micros
        payload = _render(verb, outcome.result, service_block(request_id, charged, available))
    else:
        payload = outcome.result
    response = VerbResponse(status=outcome.status, body=dumps(payload), request_id=request_id, headers=headers)
    if adm.idempotency_key is not None:
        billing.idempotency_complete(workspace=ctx.workspace, key=adm.idempotency_key, request_id=request_id,
                                     status=response.status, body=response.body, store=True)
        adm.idempotency_key = None
    return response


# --- an ordinary verb: admit, run, settle ------------------------------------------------------------------------
def execute(verb: Verb, *, ctx: Context, raw: dict | Callable[[], dict] | None = None,
            idempotency_key: str | None = None,
            settle_later: Callable[[Callable[[], None]], None] | None = None) -> VerbResponse:
    """Run `verb` for `ctx`: admit, run, settle (see the module's docstring). `settle_later` (both REST doors,
    SETTLE_AFTER_RESPONSE): when what the settlement will commit is known exactly (billing.services.
    promised_available) and the call has no Idempotency-Key, the response is returned before the settlement, which
    is handed to `settle_later` as a function to run once the response is made."""

    try:
        adm = admit(verb, ctx=ctx, raw=raw, idempotency_key=idempotency_key)
    except errors.DomainError as err:  # recorded by admit
        return _error_response(err, ctx.request_id, None)
    if adm.replay is not None:
        return adm.replay
    try:
        try:
            outcome = verb.run(ctx, **adm.data)
        except BaseException:
            if ctx.hold is not None:
                billing.hold_release(hold=ctx.hold)
            raise
        return settle(adm, outcome, settle_later=settle_later)
    except Exception as exc:  # noqa: BLE001 - every failure becomes an envelope
        return _error_response(refuse(adm, exc), ctx.request_id, None)

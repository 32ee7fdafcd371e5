"""The one pipeline every verb runs through, whichever door (REST, MCP) it came in by: `execute` composes the
domain apps (accounts' keys and scopes, billing's holds, the idempotency store) around a registered verb, so it
lives above them, not in `core` (the kernel imports no domain app).

`execute` does, in order: rate limit -> scope -> idempotency begin (replay or 409) -> validate input -> open the
request record and place the hold in one statement (402 if short) -> run -> settle the hold to the exact charge,
close the request record and read the balance back in one statement -> store the idempotent result -> render
`{"result", "service"}`. Through the API door (SETTLE_AFTER_RESPONSE) a call whose settlement is known exactly is
answered before that settlement, which follows as soon as the response is out. A request refused after the
idempotency step is recorded as failed, as before.
It never raises: every outcome, errors included, is a `VerbResponse` carrying the exact bytes to send.
"""

from __future__ import annotations

import functools
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from django.db import close_old_connections

from core import errors
from core.money import service_block
from core.parsers import check_json_value
from core.ratelimit import RateInfo
from core.ratelimit import hit as ratelimit_hit
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


def _error_response(exc: errors.DomainError, request_id: str, rate: RateInfo | None) -> VerbResponse:
    headers = dict(exc.headers)
    if rate:
        headers.update(rate.headers())
    return VerbResponse(status=exc.http_status, body=dumps(errors.error_body(exc, request_id)), request_id=request_id, headers=headers)


# --- the pipeline -----------------------------------------------------------------------------------
def _settle(verb: Verb, ctx: Context, outcome, request_id: str) -> tuple[int, int]:
    """Settle the hold to the exact charge, close the request record and read the balance back: one statement
    (PostgreSQL), one transaction (SQLite). Returns (charged, available)."""
    from billing import services as billing

    return billing.hold_settle_close(hold=ctx.hold, charge=outcome.charge, workspace=ctx.workspace,
                                     request_id=request_id, status="succeeded", http_status=outcome.status,
                                     verb=verb.name, usage=outcome.usage, writes=outcome.writes)


def _settle_after_answer(verb: Verb, ctx: Context, outcome, request_id: str) -> None:
    """The settlement of a call already answered (SETTLE_AFTER_RESPONSE), run by the door once the response is
    out: retried (a pool timeout, a locked SQLite file), since the client was told the charge; after the last
    failure the hold is left to the expiry sweep (nothing charged, the record closed as failed)."""
    from billing import services as billing

    fresh = [obj for obj in outcome.writes if obj.pk is None]
    for attempt, delay in enumerate((*billing.SETTLE_RETRIES, None)):
        try:
            charged, _ = _settle(verb, ctx, outcome, request_id)
        except Exception:  # noqa: BLE001
            close_old_connections()
            for obj in fresh:  # a rolled-back ORM insert (SQLite) left its id on the instance: not reused
                obj.pk, obj._state.adding = None, True
            if delay is None:
                logger.exception("the settlement of %s after its answer failed %d times; its hold is left to the "
                                 "expiry sweep", request_id, attempt + 1)
                return
            logger.warning("the settlement of %s after its answer failed; retrying", request_id, exc_info=True)
            time.sleep(delay)
            continue
        if charged != outcome.charge:
            logger.error("%s was answered with a charge of %d micro-credits but settled %d", request_id,
                         outcome.charge, charged)
        return


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


def execute(verb: Verb, *, ctx: Context, raw: dict | Callable[[], dict] | None = None,
            idempotency_key: str | None = None,
            settle_later: Callable[[Callable[[], None]], None] | None = None) -> VerbResponse:
    """Run `verb` for `ctx` (see the module's docstring). `settle_later` (the API door, SETTLE_AFTER_RESPONSE):
    when what the settlement will commit is known exactly (billing.services.promised_available) and the call has
    no Idempotency-Key, the response is returned before the settlement, which is handed to `settle_later` as a
    function to run (on a database thread) once the response is out."""
    from billing import ledger_sql
    from billing import services as billing

    rate: RateInfo | None = None
    idem_claimed = past_idempotency = False
    record_open = False
    request_id = ctx.request_id
    if verb.method != "POST":
        idempotency_key = None  # reads are naturally idempotent
    ctx.idempotency_key = idempotency_key
    try:
        rate = ctx.rate if ctx.rate is not None else ratelimit_hit(f"key:{ctx.api_key.pk}")
        if not rate.allowed:
            raise errors.RateLimited()
        if verb.scope and not ctx.api_key.has_scope(verb.scope):
            raise scope_refused(ctx.api_key, verb.scope)
        body = raw() if callable(raw) else (raw or {})
        if not isinstance(body, dict):
            raise errors.InvalidRequest("The body must be a JSON object.")
        if not callable(raw):  # a parsed REST body was checked by its parser; MCP arguments are checked here
            check_json_value(body)
        if idempotency_key is not None:
            check_idempotency_key(idempotency_key)
        elif verb.requires_idempotency(body):
            raise errors.IdempotencyKeyRequired(f"{verb.name} needs an Idempotency-Key header (MCP: idempotency_key).")

        if idempotency_key is not None:
            replay = billing.idempotency_begin(workspace=ctx.workspace, key=idempotency_key, verb=verb.name,
                                               data=body, request_id=request_id)
            if replay is not None:
                headers = {"Idempotent-Replayed": "true", **(rate.headers() if rate else {})}
                return VerbResponse(status=replay.status, body=replay.body, request_id=replay.request_id,
                                    headers=headers, replayed=True)
            idem_claimed = True

        past_idempotency = True  # from here on a refusal is recorded (if the verb keeps records)
        # Validate before anything is written: a bad body costs no hold (its record is written with the refusal).
        data = validate(verb, body)
        amount = verb.hold_amount(ctx, data)
        if verb.record:
            # the record and the hold in one statement (PostgreSQL; one transaction on SQLite): billing.ledger_sql
            ctx.hold = billing.request_open_with_hold(request_id=request_id, workspace=ctx.workspace, verb=verb.name,
                                                      amount=amount, api_key=ctx.api_key, channel=ctx.channel)
            record_open = True
            if amount > 0 and ctx.hold is None:
                raise billing.insufficient_credits(workspace=ctx.workspace, amount=amount)
        elif amount > 0:
            ctx.hold = billing.hold_place(workspace=ctx.workspace, amount=amount, request_id=request_id,
                                          api_key=ctx.api_key)
        try:
            outcome = verb.run(ctx, **data)
        except BaseException:
            if ctx.hold is not None:
                billing.hold_release(hold=ctx.hold)
            raise
        if outcome.charge and ctx.hold is None:
            raise RuntimeError(f"verb {verb.name} charged {outcome.charge} without a hold")
        available = None
        if outcome.writes and not ledger_sql.insertable(outcome.writes):
            ledger_sql.save_all(outcome.writes)  # rows the settlement's statement cannot write: written now
            outcome.writes = ()
        if record_open and settle_later is not None and verb.envelope and not idem_claimed:
            promised = billing.promised_available(ctx.hold, outcome.charge)
            if promised is not None:
                response = VerbResponse(
                    status=outcome.status, request_id=request_id, headers=rate.headers() if rate else {},
                    body=dumps({"result": outcome.result,
                                "service": service_block(request_id, outcome.charge, promised)}))
                settle_later(functools.partial(_settle_after_answer, verb, ctx, outcome, request_id))
                return response
        if record_open:
            charged, available = _settle(verb, ctx, outcome, request_id)
            record_open = False
        else:
            ledger_sql.save_all(outcome.writes)  # no request record to settle with: the verb's rows are written now
            charged = billing.hold_settle(hold=ctx.hold, charge=outcome.charge, verb=verb.name) if ctx.hold else 0

        if verb.envelope:
            if available is None:
                available = billing.account_get(workspace=ctx.workspace).available_micros
            payload = {
                "result": outcome.result,
                "service": service_block(request_id, charged, available),
            }
        else:
            payload = outcome.result
        response = VerbResponse(status=outcome.status, body=dumps(payload), request_id=request_id,
                                headers=rate.headers() if rate else {})
        if idem_claimed:
            billing.idempotency_complete(workspace=ctx.workspace, key=idempotency_key, request_id=request_id,
                                         status=response.status, body=response.body, store=True)
        return response
    except Exception as exc:  # noqa: BLE001 - every failure becomes an envelope
        err = errors.as_domain_error(exc, request_id)
        response = _error_response(err, request_id, rate)
        if getattr(exc, "recorded", False):  # refused by the key's budget in the statement that opened the record
            record_open = True
        try:
            if past_idempotency and verb.record and not record_open:  # refused before its record was written
                billing.request_open(request_id=request_id, workspace=ctx.workspace, verb=verb.name,
                                     api_key=ctx.api_key, channel=ctx.channel)
                record_open = True
            if record_open:
                billing.request_close(request_id=request_id, status="failed", http_status=err.http_status,
                                      error={"code": err.code, "message": err.message})
            if idem_claimed:
                billing.idempotency_complete(workspace=ctx.workspace, key=idempotency_key, request_id=request_id,
                                             status=response.status, body=response.body,
                                             store=errors.idempotency_replayable(err.code))
        except Exception:  # noqa: BLE001
            logger.exception("could not record the failure of %s", request_id)
            close_old_connections()
        return response

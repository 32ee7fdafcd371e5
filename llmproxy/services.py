"""The database side of an LLM call, in two sync steps so an async view crosses into a thread only twice:
`chat_begin` (key, rate limit, idempotency, request record, allowlist, hold) and `chat_finish` (settle the
hold to the exact charge and refund the rest in one transaction, close the request record). Same order
and same rules as `api.pipeline.execute`."""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from dataclasses import dataclass, field

from django.conf import settings
from django.db import close_old_connections, connection, transaction

from accounts.services import key_authenticate, key_cached
from billing import services as billing
from core import errors
from core.money import service_block
from core.parsers import parse_json_object
from core.ratelimit import RateInfo
from core.ratelimit import hit as ratelimit_hit
from core.ratelimit import hit_start as ratelimit_hit_start
from llmproxy import catalog, metering

logger = logging.getLogger(__name__)

VERB = "llm_chat"

_sqlite_writer = threading.Lock()


def _write():
    """One write step of the hot path. On SQLite, writers of this process queue on an in-process lock first:
    SQLite's own busy handler waits by sleeping in growing steps (up to 100 ms), which under many parallel
    streams costs far more than the transactions themselves. On PostgreSQL each step is one statement
    (billing.ledger_sql), atomic by itself: no BEGIN/COMMIT round trips around it."""
    if connection.vendor != "sqlite":
        return contextlib.nullcontext()
    return _LockedAtomic()


_thread = threading.local()


def _release_connection() -> None:
    """Give the database connection back between begin and finish: otherwise every open stream (and every
    non-streaming call waiting on its provider) keeps a server connection until the response ends, and a
    few hundred parallel streams exhaust PostgreSQL's max_connections. SQLite keeps its (cheap, local) one:
    closing the last connection to a WAL database checkpoints it. Never inside an atomic block (tests).
    The dedicated database threads of llmproxy.asgi keep theirs (`run_on_db_thread`): a fixed few threads,
    so a fixed few connections, and no pool checkout and return around every step."""
    if connection.vendor != "sqlite" and not connection.in_atomic_block and not getattr(_thread, "keep", False):
        connection.close()


def run_on_db_thread(fn, kwargs: dict):
    """Run one database step on a dedicated thread that keeps its connection between steps; a connection
    found unusable after an error is closed (the next step opens a new one)."""
    _thread.keep = True
    try:
        return fn(**kwargs)
    except BaseException:
        if connection.connection is not None and connection.errors_occurred:
            if connection.is_usable():
                connection.errors_occurred = False
            else:
                connection.close()
        raise


class _LockedAtomic:
    def __enter__(self):
        _sqlite_writer.acquire()
        try:
            self.atomic = transaction.atomic()
            return self.atomic.__enter__()
        except BaseException:
            _sqlite_writer.release()
            raise

    def __exit__(self, *exc):
        try:
            return self.atomic.__exit__(*exc)
        finally:
            _sqlite_writer.release()


@dataclass
class Call:
    request_id: str
    workspace: object
    api_key: object
    model: catalog.Model
    body: dict
    stream: bool
    rate: RateInfo
    hold: object = None
    hold_micros: int = 0
    prompt_estimate: int = 0
    idempotency_key: str | None = None
    replay: billing.Replay | None = None
    headers: dict = field(default_factory=dict)


def _with_rate(exc: BaseException, rate: RateInfo | None, request_id: str) -> errors.DomainError:
    err = errors.as_domain_error(exc, request_id)
    if rate is not None:
        err.headers = {**err.headers, **rate.headers()}
    return err


def authenticate(*, authorization: str | None, request_id: str):
    """Key and rate limit for the routes that are not chat (GET /v1/llm/models)."""
    rate = None
    try:
        key = key_authenticate(authorization=authorization, cache_seconds=settings.API_KEY_CACHE_SECONDS)
        rate = ratelimit_hit(f"key:{key.pk}")
        if not rate.allowed:
            raise errors.RateLimited()
        return key, rate
    except Exception as exc:
        raise _with_rate(exc, rate, request_id) from exc


def validate(body: dict) -> catalog.Model:
    metering.validate_body(body)
    model = catalog.model_get(body["model"])
    if model is None:
        raise errors.ModelNotAllowed(
            f"Model {str(body['model'])[:200]!r} is not on the allowlist; GET /v1/llm/models lists the allowed ids.",
            details={"model": str(body["model"])[:200], "allowed": sorted(catalog.models())},
        )
    problem = catalog.live_problem(model)
    if problem:  # refused before any hold (CONTRACT 4.14): recorded as failed, nothing charged
        raise errors.ProviderUnavailable(f"{problem}. Nothing was charged.",
                                         details={"model": model.id, "setting": "LLM_MODELS_FILE"})
    return model


class EarlyStart:
    """Per process: how much of a workspace's available balance, and of a key's rate limit, the LLM door may
    count on before the database and the rate limit confirm them, so that the provider request can leave while
    they are checked (`admit`, and `early` in chat_begin) instead of after.

    Learned from the last answers: every settlement returns the workspace's available balance, and that value
    (fresh for EARLY_START_SECONDS) is the money allowance; every rate-limit hit returns the key's remaining
    requests, and that count (fresh for RATE_START_SECONDS) is the rate allowance. Each call started early
    takes its hold amount and one request out of them at once, under a lock. A reading does not count calls
    claimed meanwhile and not yet confirmed, so an allowance can run ahead by the calls in flight. A refused hold
    forgets the workspace and a refused rate-limit hit the key: their next calls are checked first, as they
    always were, until a reading teaches it again. A key's budget (billing.models.KeyBudget) is a third
    allowance, learned from every hold the key places (how far below its nearest limit it is, or that it has
    none) and forgotten when its budget refuses a hold: a call starts early only while that is known and covers
    its hold; a limit set meanwhile in another process can cost one abandoned provider request within
    EARLY_START_SECONDS, never a charge. A reading taken before a refusal (on another database
    thread, arriving late: `read_at`) teaches nothing. The allowances are only an optimisation: the hold itself
    (the conditional UPDATE) and the rate-limit hit still decide, so nothing can overspend or pass the limit, no byte reaches the client
    before both are confirmed, and a refused call is the same 402 or 429 with nothing charged. What an
    allowance ahead of the truth costs (calls in flight, or another process or verb spending meanwhile) is a
    provider request that is started and then abandoned."""

    def __init__(self, seconds: float, rate_seconds: float = 5.0):
        self.seconds = seconds
        self.rate_seconds = rate_seconds
        self._lock = threading.Lock()
        self._left: dict = {}  # workspace id -> (micro-credits, monotonic deadline)
        self._rate: dict = {}  # key id -> (requests, monotonic deadline)
        self._budget: dict = {}  # key id -> (micro-credits below its nearest limit or None, monotonic deadline)
        self._refused: dict = {}  # workspace or ("key", key id) -> monotonic time of its last refusal

    @staticmethod
    def _covers(left, amount: int, now: float) -> bool:
        return left is not None and left[0] >= amount and left[1] >= now

    def claim(self, workspace_id, amount: int, key_id=None, budget_key=None) -> bool:
        """Take `amount` from the workspace's allowance, (with `key_id`) one request from the key's, and (with
        `budget_key`) `amount` from that key's budget allowance (a key without limits has an unbounded one, but
        it must be known); all or nothing."""
        now = time.monotonic()
        with self._lock:
            left = self._left.get(workspace_id)
            if amount <= 0 or not self._covers(left, amount, now):
                return False
            room = None
            if budget_key is not None:
                room = self._budget.get(budget_key)
                if room is None or room[1] < now or (room[0] is not None and room[0] < amount):
                    return False
            if key_id is not None:
                rate = self._rate.get(key_id)
                if not self._covers(rate, 1, now):
                    return False
                self._rate[key_id] = (rate[0] - 1, rate[1])
            if room is not None and room[0] is not None:
                self._budget[budget_key] = (room[0] - amount, room[1])
            self._left[workspace_id] = (left[0] - amount, left[1])
            return True

    def learn_budget(self, key_id, room: int | None, read_at: float | None = None, refused: bool = False) -> None:
        """A reserve's reading of the key's budget: `room` micro-credits left below its nearest limit (None: the
        key has no limits); `refused` (the budget refused a hold): forget the key until a reading teaches it."""
        with self._lock:
            if refused:
                self._refuse(self._budget, key_id, ("budget", key_id))
            else:
                self._keep(self._budget, key_id, room, self.seconds, read_at, ("budget", key_id))

    def _keep(self, table: dict, subject, value, seconds: float, read_at: float | None, refusal_of) -> None:
        """Under the lock: `table[subject] = (value, deadline)`, unless the reading predates the last refusal; a
        reading is fresh for `seconds` from when it was taken (`read_at`, else now)."""
        taken = time.monotonic() if read_at is None else read_at
        if taken < self._refused.get(refusal_of, float("-inf")):
            return
        if len(table) >= 10_000:
            table.clear()
        table[subject] = (value, taken + seconds)

    def _refuse(self, table: dict, subject, refusal_of) -> None:
        now = time.monotonic()
        table.pop(subject, None)
        if len(self._refused) >= 10_000:  # a refusal older than every freshness window can no longer matter
            horizon = now - max(self.seconds, self.rate_seconds)
            self._refused = {k: t for k, t in self._refused.items() if t >= horizon}
        self._refused[refusal_of] = now

    def learn(self, workspace_id, available: int | None, read_at: float | None = None) -> None:
        """A settlement's reading of the available balance (`read_at`: monotonic time the statement started)."""
        if available is None:
            return
        with self._lock:
            self._keep(self._left, workspace_id, available, self.seconds, read_at, workspace_id)

    def learn_rate(self, key_id, rate: RateInfo, read_at: float | None = None) -> None:
        """A rate-limit hit's answer: `remaining` more requests, or none (refused: forget the key)."""
        with self._lock:
            if not rate.allowed or rate.remaining <= 0:
                self._refuse(self._rate, key_id, ("key", key_id))
            else:
                self._keep(self._rate, key_id, rate.remaining, self.rate_seconds, read_at, ("key", key_id))

    def forget(self, workspace_id) -> None:
        with self._lock:
            self._refuse(self._left, workspace_id, workspace_id)


EARLY_START_SECONDS = 5.0
RATE_START_SECONDS = 5.0
early_start = EarlyStart(EARLY_START_SECONDS, RATE_START_SECONDS)


def _prepare(*, key, rate, body: dict, request_id: str, idempotency_key: str | None) -> Call:
    """The call a valid body asks for (the model checked, the hold's amount and the prompt estimate computed);
    raises a DomainError for an invalid body or a model off the allowlist."""
    model = validate(body)
    return Call(request_id=request_id, workspace=key.workspace, api_key=key, model=model, body=body,
                stream=body.get("stream") is True, rate=rate, hold_micros=model.charge_for(metering.hold_tokens(body)),
                prompt_estimate=metering.prompt_estimate(body), idempotency_key=idempotency_key)


# Bodies above this size are not admitted on the event loop: parsing and measuring them would stall every other
# stream of the process; they go through chat_begin on the database thread, as before.
ADMIT_MAX_BODY_BYTES = 64 * 1024


def admit(*, authorization: str | None, request_id: str, raw_body: bytes, content_type: str | None,
          idempotency_key: str | None) -> Call | None:
    """The call, if it may start at once: no query, no network, so it runs on the event loop before anything
    else (LLM_EARLY_START). Only when everything is already known in this process: the key found valid within
    its cache time, a valid body of at most ADMIT_MAX_BODY_BYTES without an Idempotency-Key, and the allowances
    of EarlyStart covering the hold and one more request. The caller sends the provider request and runs
    chat_begin(admitted=call) at once; nothing reaches the client before chat_begin returns (the rate limit hit and the hold placed) or
    refuses. None: the call goes through chat_begin from the start (every refusal is produced there)."""
    if idempotency_key is not None or settings.API_KEY_CACHE_SECONDS <= 0 or len(raw_body) > ADMIT_MAX_BODY_BYTES:
        return None
    key = key_cached(authorization=authorization)
    if key is None:
        return None
    try:
        call = _prepare(key=key, rate=None, body=parse_json_object(raw_body, content_type), request_id=request_id,
                        idempotency_key=None)
    except Exception:  # noqa: BLE001 - refused: chat_begin refuses it again, recorded
        return None
    if not early_start.claim(key.workspace_id, call.hold_micros, key.pk, budget_key=key.pk):
        return None
    return call


def chat_begin(*, authorization: str | None, request_id: str, raw_body: bytes, content_type: str | None,
               idempotency_key: str | None, channel: str = "rest", early=None, admitted: Call | None = None) -> Call:
    """Everything before the upstream call. Raises a DomainError (rate-limit headers attached) on refusal,
    having recorded and released whatever it had opened. Returns a Call with `replay` set for an
    idempotent replay.

    `early(call)`, when given, is called (on this thread) before the hold is placed if this process's
    allowance for the workspace covers it (EarlyStart, LLM_EARLY_START): the caller may send the provider
    request meanwhile, and must wait for this function's return (the hold placed, the same Call with
    `hold` set) or its refusal before anything reaches the client. `admitted`: a call `admit` let start
    before this step (its provider request already sent): only the rate-limit hit and the hold are left, run at
    once (the hit's answer is read after the hold statement; a refused hit undoes the hold: nothing recorded)."""
    rate = key = pending = None
    record_open = idem_claimed = past_idempotency = False
    hold = None
    try:
        key = admitted.api_key if admitted is not None else key_authenticate(
            authorization=authorization, cache_seconds=settings.API_KEY_CACHE_SECONDS)
        read_at = time.monotonic()
        if admitted is not None:
            # The rate-limit hit's request leaves now and its answer is read once the hold is placed: the two
            # round trips (Redis, the database) overlap on this one thread. A refusal then undoes the hold.
            pending = ratelimit_hit_start(f"key:{key.pk}")
            call = admitted
            past_idempotency = True  # (it has no Idempotency-Key)
        else:
            rate = ratelimit_hit(f"key:{key.pk}")
            early_start.learn_rate(key.pk, rate, read_at)
            if not rate.allowed:
                raise errors.RateLimited()
            body = parse_json_object(raw_body, content_type)
            stream = body.get("stream") is True
            if idempotency_key is not None and not stream:
                from core.verbs import check_idempotency_key

                check_idempotency_key(idempotency_key)
                replay = billing.idempotency_begin(workspace=key.workspace, key=idempotency_key, verb=VERB, data=body,
                                                   request_id=request_id)
                if replay is not None:
                    return Call(request_id=replay.request_id, workspace=key.workspace, api_key=key, model=None,
                                body=body, stream=False, rate=rate, replay=replay)
                idem_claimed = True
            past_idempotency = True  # from here on a refusal is recorded (as api.pipeline.execute does)
            call = _prepare(key=key, rate=rate, body=body, request_id=request_id,
                            idempotency_key=idempotency_key if idem_claimed else None)
            if early is not None and early_start.claim(key.workspace_id, call.hold_micros, budget_key=key.pk):
                early(call)
        amount = call.hold_micros
        # One transaction (one commit, three statements) for the record and the hold: the hot path's write cost.
        refusal = None
        try:
            with _write():
                try:
                    hold = billing.request_open_with_hold(request_id=request_id, workspace=key.workspace, verb=VERB,
                                                          amount=amount, api_key=key, channel=channel,
                                                          async_commit=settings.LLM_ASYNC_COMMIT)
                except errors.KeyBudgetExceeded as exc:  # the record is open: commit it, refuse below
                    refusal = exc
        except BaseException:
            if pending is not None:
                pending.close()
            raise
        record_open = True
        if refusal is not None:
            early_start.learn_budget(key.pk, None, refused=True)
        elif hold is not None:
            early_start.learn_budget(key.pk, _budget_room(hold), read_at)
        if pending is not None:
            rate = call.rate = pending.result()
            early_start.learn_rate(key.pk, rate, read_at)
            if not rate.allowed:  # as if the call never came in, as a refused hit always is: nothing recorded
                with _write():
                    if hold is not None:
                        billing.hold_release(hold=hold)
                    billing.request_delete(request_id=request_id)
                hold, record_open, past_idempotency = None, False, False
                raise errors.RateLimited()
        if refusal is not None:
            raise refusal
        if amount > 0 and hold is None:
            early_start.forget(key.workspace_id)
            raise billing.insufficient_credits(workspace=key.workspace, amount=amount)
        call.hold = hold
        _release_connection()
        return call
    except Exception as exc:
        err = _with_rate(exc, rate, request_id)
        if getattr(exc, "recorded", False):  # refused by the key's budget in the statement that opened the record
            record_open = True
        try:
            if hold is not None:
                billing.hold_release(hold=hold)
            if past_idempotency:  # a refused call is still recorded, as failed
                if not record_open:
                    billing.request_open(request_id=request_id, workspace=key.workspace, verb=VERB, api_key=key,
                                         channel=channel)
                billing.request_close(request_id=request_id, status="failed", http_status=err.http_status,
                                      error={"code": err.code, "message": err.message})
            if idem_claimed:
                from core.verbs import dumps

                billing.idempotency_complete(workspace=key.workspace, key=idempotency_key, request_id=request_id,
                                             status=err.http_status, body=dumps(errors.error_body(err, request_id)),
                                             store=errors.idempotency_replayable(err.code))
        except Exception:  # noqa: BLE001
            logger.exception("could not record the refusal of %s", request_id)
            close_old_connections()
        raise err from exc


def _budget_room(hold) -> int | None:
    """How far below its nearest limit the key's budget was left by `hold` (None: the key has no limits)."""
    budget = getattr(hold, "budget_after", None)
    if budget is None:
        return None
    room = [limit - spent for limit, spent in ((budget.daily_limit, budget.day), (budget.monthly_limit, budget.month))
            if limit is not None]
    return min(room) if room else None


def chat_finish(*, call: Call, status: str, usage: dict | None, http_status: int = 200) -> dict:
    """Settle the hold to the exact charge of `usage` (the rest released in the same transaction), close
    the request record; returns the `service` envelope."""
    charge = charge_of(call, usage)
    record_usage = {"model": call.model.id, **usage} if usage else None
    read_at = time.monotonic()
    with _write():
        charged, available = billing.hold_settle_close(
            hold=call.hold, charge=charge, workspace=call.workspace, request_id=call.request_id, status=status,
            http_status=http_status, verb=VERB, usage=record_usage, async_commit=settings.LLM_ASYNC_COMMIT)
    early_start.learn(call.workspace.pk, available, read_at)
    if call.hold is not None:  # the key's budget as its hold left it, fresh again (a long stream outlives it)
        early_start.learn_budget(call.api_key.pk, _budget_room(call.hold), read_at)
    if status != "succeeded" and call.idempotency_key:  # a cut call is not replayable: free the key for a retry
        billing.idempotency_complete(workspace=call.workspace, key=call.idempotency_key, request_id=call.request_id,
                                     status=http_status, body=b"", store=False)
    _release_connection()
    return service_block(call.request_id, charged, available)


def chat_fail(*, call: Call, error: errors.DomainError) -> None:
    """Upstream failed before any output: release the hold (nothing charged), record the failure."""
    read_at = time.monotonic()
    with _write():
        _, available = billing.hold_settle_close(
            hold=call.hold, charge=0, workspace=call.workspace, request_id=call.request_id, status="failed",
            http_status=error.http_status, verb=VERB, error={"code": error.code, "message": error.message},
            async_commit=settings.LLM_ASYNC_COMMIT)
    early_start.learn(call.workspace.pk, available, read_at)
    idempotency_store(call=call, status=error.http_status, body=None, error=error)
    _release_connection()


def idempotency_store(*, call: Call, status: int, body: bytes | None, error: errors.DomainError | None = None) -> None:
    if not call.idempotency_key:
        return
    if error is not None:
        from core.verbs import dumps

        body = dumps(errors.error_body(error, call.request_id))
    billing.idempotency_complete(workspace=call.workspace, key=call.idempotency_key, request_id=call.request_id,
                                 status=status, body=body,
                                 store=errors.idempotency_replayable(error.code if error else None))


def charge_of(call: Call, usage: dict | None) -> int:
    """What `usage` costs at the call's model price (nothing without usage)."""
    return call.model.charge_for(usage["total_tokens"]) if usage else 0


def promised_service(call: Call, charge: int) -> dict | None:
    """The `service` block of a non-streamed call answered before its settlement commits (SETTLE_AFTER_RESPONSE):
    its exact charge and the available balance billing.services.promised_available states; None when the answer
    must wait for the settlement (that function says when, and a call with an Idempotency-Key always waits: a
    replay must be the settled body)."""
    if call.idempotency_key or call.replay is not None:
        return None
    available = billing.promised_available(call.hold, charge)
    return None if available is None else service_block(call.request_id, charge, available)


def answer_body(upstream_body: dict, service: dict) -> bytes:
    """A non-streamed answer as the client gets it: the provider's body plus `service`."""
    from core.verbs import dumps

    return dumps({**upstream_body, "service": service})


def chat_finish_body(*, call: Call, usage: dict, upstream_body: dict) -> bytes:
    """Non-streaming success: settle, then the upstream body plus `service`, stored for idempotent replay."""
    out = answer_body(upstream_body, chat_finish(call=call, status="succeeded", usage=usage))
    idempotency_store(call=call, status=200, body=out)
    return out


def hold_heartbeat(*, call: Call) -> bool:
    """Keep a streaming call's hold alive past HOLD_TTL_SECONDS (see views._relay); False once it is resolved."""
    if call.hold is None:
        return False
    try:
        return billing.hold_extend(hold=call.hold)
    finally:
        close_old_connections()

"""The LLM door's side of the money path: the protocol only (the catalog's allowlist, the metering of a chat body,
the `service` block in OpenAI's shape). Admission and settlement are `api.pipeline`'s (`admit`, `settle_hold`),
shared with every other metered verb, in two sync steps so an async view crosses into a thread only twice:
`chat_begin` (key, then the pipeline's admission: rate limit, idempotency, record and hold) and `chat_finish`
(the pipeline's settlement to the exact charge of the usage)."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.db import close_old_connections

from accounts.services import key_authenticate, key_cached
from api import pipeline
from api.dbwork import release_connection
from api.early import EarlyStart, early_start  # noqa: F401 - the allowances the door's early start reads
from billing import services as billing
from core import errors
from core.money import service_block
from core.parsers import parse_json_object
from core.ratelimit import hit as ratelimit_hit
from core.verbs import Context
from llmproxy import catalog, metering

VERB = "llm_chat"


@dataclass
class Call:
    """One chat call as the door relays it: the protocol's side (model, body, metering) and its admission."""

    request_id: str
    workspace: object
    api_key: object
    model: catalog.Model | None
    body: dict
    stream: bool
    hold_micros: int = 0
    prompt_estimate: int = 0
    admission: pipeline.Admission | None = None
    replay: pipeline.VerbResponse | None = None

    @property
    def rate(self):
        return self.admission.rate

    @property
    def hold(self):
        return self.admission.hold if self.admission is not None else None

    @property
    def idempotency_key(self) -> str | None:
        """The Idempotency-Key this call claimed (None once completed, and for a stream: it does not apply)."""
        return self.admission.idempotency_key if self.admission is not None else None


def _with_rate(exc: BaseException, rate, request_id: str) -> errors.DomainError:
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


def _verb():
    from core.verbs import REGISTRY

    return REGISTRY[VERB]


def _prepare(ctx: Context, body: dict) -> tuple[dict, int, Call]:
    """The pipeline's `prepare` for a chat body: the model checked, the hold's amount and the prompt estimate
    computed; raises a DomainError for an invalid body or a model off the allowlist."""
    model = validate(body)
    call = Call(request_id=ctx.request_id, workspace=ctx.workspace, api_key=ctx.api_key, model=model, body=body,
                stream=body.get("stream") is True, hold_micros=model.charge_for(metering.hold_tokens(body)),
                prompt_estimate=metering.prompt_estimate(body))
    return body, call.hold_micros, call


def _not_a_stream(body: dict) -> bool:
    return body.get("stream") is not True  # a stream is not replayable: its Idempotency-Key is not used


# Bodies above this size are not admitted on the event loop: parsing and measuring them would stall every other
# stream of the process; they go through chat_begin on the database thread.
ADMIT_MAX_BODY_BYTES = 64 * 1024


def admit(*, authorization: str | None, request_id: str, raw_body: bytes, content_type: str | None,
          idempotency_key: str | None, channel: str = "rest") -> Call | None:
    """The call, if it may start at once (LLM_EARLY_START; api.pipeline.admit_early): no query, no network, so it
    runs on the event loop before anything else. Only when the key was found valid within its cache time and the
    body, of at most ADMIT_MAX_BODY_BYTES and without an Idempotency-Key, is valid. The caller sends the provider
    request and runs chat_begin(admitted=call) at once; nothing reaches the client before chat_begin returns or
    refuses. None: the call goes through chat_begin from the start (every refusal is produced there)."""
    if idempotency_key is not None or settings.API_KEY_CACHE_SECONDS <= 0 or len(raw_body) > ADMIT_MAX_BODY_BYTES:
        return None
    key = key_cached(authorization=authorization)
    if key is None:
        return None
    try:
        body = parse_json_object(raw_body, content_type)
    except Exception:  # noqa: BLE001 - refused: chat_begin refuses it again, recorded
        return None
    ctx = Context(workspace=key.workspace, api_key=key, request_id=request_id, channel=channel)
    adm = pipeline.admit_early(_verb(), ctx=ctx, body=body, prepare=_prepare)
    if adm is None:
        return None
    adm.prepared.admission = adm
    return adm.prepared


def chat_begin(*, authorization: str | None, request_id: str, raw_body: bytes, content_type: str | None,
               idempotency_key: str | None, channel: str = "rest", early=None, admitted: Call | None = None) -> Call:
    """Everything before the upstream call: the key, then the pipeline's admission. Raises a DomainError (rate-limit
    headers attached) on refusal, having recorded and released whatever it had opened. Returns a Call with
    `replay` set for an idempotent replay.

    `early(call)`, when given, is called (on this thread) before the hold is placed if this process's allowance
    covers it (api.early, LLM_EARLY_START): the caller may send the provider request meanwhile, and must wait for
    this function's return (the hold placed) or its refusal before anything reaches the client. `admitted`: a call
    `admit` let start before this step (its provider request already sent): only the rate-limit hit and the hold
    are left (api.pipeline.admit's `started`)."""
    try:
        if admitted is not None:
            adm = pipeline.admit(_verb(), ctx=admitted.admission.ctx, started=admitted.admission)
        else:
            key = key_authenticate(authorization=authorization, cache_seconds=settings.API_KEY_CACHE_SECONDS)
            ctx = Context(workspace=key.workspace, api_key=key, request_id=request_id, channel=channel)

            def on_early(adm: pipeline.Admission) -> None:
                adm.prepared.admission = adm
                early(adm.prepared)

            adm = pipeline.admit(_verb(), ctx=ctx, raw=lambda: parse_json_object(raw_body, content_type),
                                 idempotency_key=idempotency_key, prepare=_prepare, idempotent=_not_a_stream,
                                 early=on_early if early is not None else None)
            if adm.replay is not None:
                return Call(request_id=adm.replay.request_id, workspace=key.workspace, api_key=key, model=None,
                            body={}, stream=False, admission=adm, replay=adm.replay)
    except Exception as exc:
        raise errors.as_domain_error(exc, request_id) from exc
    call = adm.prepared
    call.admission = adm
    release_connection()
    return call


def chat_finish(*, call: Call, status: str, usage: dict | None, http_status: int = 200) -> dict:
    """Settle the hold to the exact charge of `usage` (the rest released in the same statement), close the request
    record; returns the `service` envelope."""
    adm = call.admission
    charged, available = pipeline.settle_hold(adm, charge=charge_of(call, usage), status=status,
                                              http_status=http_status,
                                              usage={"model": call.model.id, **usage} if usage else None)
    if status != "succeeded" and adm.idempotency_key:  # a cut call is not replayable: free the key for a retry
        billing.idempotency_complete(workspace=call.workspace, key=adm.idempotency_key, request_id=call.request_id,
                                     status=http_status, body=b"", store=False)
        adm.idempotency_key = None
    release_connection()
    return service_block(call.request_id, charged, available)


def chat_fail(*, call: Call, error: errors.DomainError) -> None:
    """Upstream failed before any output: release the hold (nothing charged), record the failure."""
    pipeline.settle_hold(call.admission, charge=0, status="failed", http_status=error.http_status,
                         error={"code": error.code, "message": error.message})
    idempotency_store(call=call, status=error.http_status, body=None, error=error)
    release_connection()


def idempotency_store(*, call: Call, status: int, body: bytes | None, error: errors.DomainError | None = None) -> None:
    if not call.idempotency_key:
        return
    if error is not None:
        from core.verbs import dumps

        body = dumps(errors.error_body(error, call.request_id))
    billing.idempotency_complete(workspace=call.workspace, key=call.idempotency_key, request_id=call.request_id,
                                 status=status, body=body,
                                 store=errors.idempotency_replayable(error.code if error else None))
    call.admission.idempotency_key = None


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

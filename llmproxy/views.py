"""The LLM passthrough routes (async Django views, no thread held while a stream flows).

POST /v1/llm/chat and /v1/llm/chat/completions, GET /v1/llm/models[/<id>]: the official `openai` client
works with `base_url={base_url}/v1/llm`. The database is touched twice per call (begin, finish), each
through `sync_to_async`; the upstream call goes through `upstream.send` (one pooled aiohttp session per event loop).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time

from django.conf import settings
from django.http import HttpResponse, JsonResponse, StreamingHttpResponse
from django.views.decorators.csrf import csrf_exempt

from api import dbwork, pipeline
from core import errors
from core.money import format_credits, parse_credits
from llmproxy import catalog, metering, services, upstream

logger = logging.getLogger(__name__)

OVERHEAD_HEADER = "X-Passthrough-Overhead-Ms"

# The database steps run where api.dbwork puts them (the dedicated database threads under the fast door, else
# sync_to_async); the work left after a response is api.dbwork's too (its registry, waited for at shutdown).
fast_path = dbwork.fast_door
close_db_threads = dbwork.close_db_threads
_background = dbwork.background
_shielded_background = dbwork.shielded_background
_shielded = dbwork.shielded
drain_background = dbwork.drain_background

_begin = dbwork.on_db_thread(services.chat_begin)
_finish = dbwork.on_db_thread(services.chat_finish)
_heartbeat = dbwork.on_db_thread(services.hold_heartbeat)
_finish_body = dbwork.on_db_thread(services.chat_finish_body)
_fail = dbwork.on_db_thread(services.chat_fail)
_authenticate = dbwork.on_db_thread(services.authenticate)


def _started(request) -> float:
    return getattr(request, "started_at", None) or time.perf_counter()


def _overhead(response, started: float, upstream_seconds: float):
    added = max(0.0, time.perf_counter() - started - upstream_seconds)
    response[OVERHEAD_HEADER] = f"{added * 1000:.3f}"
    return response


def _error(request, err: BaseException, started: float, upstream_seconds: float = 0.0):
    return _overhead(errors.error_response(err, request), started, upstream_seconds)


def _headers(response, call: services.Call):
    for name, value in call.rate.headers().items():
        response[name] = value
    return response


# --- chat ---------------------------------------------------------------------------------------------
def _set_once(future: asyncio.Future, value) -> None:
    if not future.done():
        future.set_result(value)


def _go(early: asyncio.Future | None):
    """The `early` callback chat_begin calls on its database thread: resolves `early` on this loop."""
    if early is None:
        return None
    loop = early.get_loop()

    def go(call) -> None:
        try:
            loop.call_soon_threadsafe(_set_once, early, call)
        except RuntimeError:  # the loop is closing: the call simply continues with the hold placed first
            pass
    return go


def _after(task: asyncio.Future, coro_fn) -> None:
    """Run `coro_fn(result)` once `task` succeeds, in the background (the request may be gone)."""
    async def later():
        try:
            value = await task
        except BaseException:  # noqa: BLE001 - refused or failed: begin recorded it itself
            return
        await coro_fn(value)
    _shielded_background(later())


async def _interrupted(call: services.Call) -> None:
    """Nothing was delivered to a client that went away: release the hold, record the call as interrupted."""
    if call.replay is None:
        await _finish(call=call, status="interrupted", usage=None, http_status=499)


@csrf_exempt
async def chat(request):
    started = _started(request)
    if request.method != "POST":
        return _error(request, errors.MethodNotAllowed(headers={"Allow": "POST"}), started)
    # The provider request may leave before the rate limit and the hold are confirmed (services.EarlyStart):
    # at once when everything is known in this process (`admit`, no query), else as soon as the database thread
    # allows it (`early` resolves with the call). `begin` resolves once the hold is placed (or raises the refusal).
    admitted = early = None
    if settings.LLM_EARLY_START:
        admitted = services.admit(authorization=request.headers.get("Authorization"), request_id=request.request_id,
                                  raw_body=request.body, content_type=request.content_type,
                                  idempotency_key=request.headers.get("Idempotency-Key"))
        if admitted is None:
            early = asyncio.get_running_loop().create_future()
    begin = asyncio.ensure_future(_begin(
        authorization=request.headers.get("Authorization"), request_id=request.request_id,
        raw_body=request.body, content_type=request.content_type,
        idempotency_key=request.headers.get("Idempotency-Key"), early=_go(early), admitted=admitted,
    ))
    if admitted is not None:
        call, placing = admitted, begin
    else:
        try:  # (begin is never cancelled: its thread would place the hold anyway)
            await asyncio.wait((begin,) if early is None else (begin, early), return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:  # the client went away: once the hold is placed, release it
            _after(begin, _interrupted)
            raise
        placing = None
        if begin.done():
            if early is not None:
                early.cancel()
            try:
                call = begin.result()
            except errors.DomainError as err:
                return _error(request, err, started)
        else:
            call, placing = early.result(), begin
    if call.replay is not None:
        from api.rest import http_response

        return _overhead(http_response(call.replay), started, 0.0)
    if call.stream:
        return await _chat_stream(request, call, started, placing)
    return await _chat_once(request, call, started, placing)


async def _abandon(provider: asyncio.Future, close=None) -> None:
    """Stop a provider request nobody will read: cancel it, or `close(result)` if it had already answered."""
    provider.cancel()
    (result,) = await asyncio.gather(provider, return_exceptions=True)
    if close is not None and not isinstance(result, BaseException):
        await close(result)


async def _placed(placing: asyncio.Future | None, provider: asyncio.Future, close=None) -> None:
    """Wait until the checks of a call whose provider request left early have passed (the rate-limit hit, for an
    admitted call, and the hold placed). Refused (DomainError: 402, or 429): the provider request is abandoned
    and the refusal raised. The client gone meanwhile: the provider request
    is abandoned, and the hold released once placed."""
    if placing is None:
        return
    try:
        await asyncio.shield(placing)
    except asyncio.CancelledError:
        _shielded_background(_abandon(provider, close))
        _after(placing, _interrupted)
        raise
    except BaseException:
        await _shielded(_abandon(provider, close))
        raise


async def _upstream_failed(request, call, err: errors.DomainError, started: float, upstream_seconds: float):
    await _shielded(_fail(call=call, error=err))
    err.headers = {**err.headers, **call.rate.headers()}
    return _error(request, err, started, upstream_seconds)


async def _chat_once(request, call: services.Call, started: float, placing: asyncio.Future | None = None):
    t0 = time.perf_counter()
    provider = upstream.fetch(call.model, upstream.request_body(call.model, call.body, stream=False), call.request_id,
                              pooled=fast_path.get())
    if placing is not None:  # the provider request runs while the hold is placed
        provider = asyncio.ensure_future(provider)
        try:
            await _placed(placing, provider)
        except errors.DomainError as err:
            return _error(request, err, started)
    try:
        status, content = await provider
    except upstream.UNREACHABLE as exc:
        return await _upstream_failed(request, call, upstream.unavailable(exc), started, time.perf_counter() - t0)
    except asyncio.CancelledError:  # the client went away before the upstream answered: nothing delivered
        if placing is not None:  # (the task may have finished in the same turn: its outcome is read, not lost)
            _shielded_background(_abandon(provider))
        await _shielded(_interrupted(call))
        raise
    upstream_seconds = time.perf_counter() - t0
    if status >= 300:
        return await _upstream_failed(request, call, upstream.error_for_status(status, content),
                                      started, upstream_seconds)
    try:
        data = json.loads(content)
        if not isinstance(data, dict):
            raise ValueError("not an object")
    except ValueError:
        return await _upstream_failed(request, call, errors.ProviderUnavailable(
            "The model provider sent a malformed response; nothing was charged. Retry later."), started, upstream_seconds)
    tokens = metering.usage_tokens(data.get("usage"))
    if tokens is not None:
        usage = metering.usage_record(*tokens, estimated=False)
    else:
        usage = metering.usage_record(call.prompt_estimate, metering.completion_estimate_of_body(data), estimated=True)
    if "model" in data:
        data["model"] = call.model.id  # the id the client asked for, not the provider's own name
    charge = services.charge_of(call, usage)
    promised = services.promised_service(call, charge) if fast_path.get() else None
    if promised is not None:
        # SETTLE_AFTER_RESPONSE: the answer leaves now and the settlement follows (in the background, which
        # the server's shutdown waits for); what it will commit is exactly what the body states.
        body = services.answer_body(data, promised)
        _shielded_background(_settle_after_response(call, usage, charge))
    else:
        body = await _shielded(_finish_body(call=call, usage=usage, upstream_body=data))
    response = HttpResponse(body, content_type="application/json")
    return _overhead(_headers(response, call), started, upstream_seconds)


async def _settle_after_response(call: services.Call, usage: dict, promised: int) -> None:
    """Settle a call already answered, as every verb's settlement after its answer is (api.pipeline): retried,
    since the client was told the charge; after the last failure the hold is left to the expiry sweep."""
    async def settle():
        service = await _finish(call=call, status="succeeded", usage=usage)
        return parse_credits(service["credits_charged"]), None

    await pipeline.settle_after_answer_async(call.admission, promised, settle)


# --- streaming ----------------------------------------------------------------------------------------
class UpstreamCut(Exception):
    pass


async def sse_data(chunks):
    """The `data` payloads (bytes) of an SSE stream, one per event, from its body's chunks (bytes as they came
    off the connection). Parsed from the bytes directly: decoding to text and splitting lines with an HTTP
    client's helpers cost more CPU per chunk than the rest of the relay."""
    lines: list[bytes] = []
    pending = b""

    def feed(line: bytes):
        nonlocal lines
        if not line:
            if lines:
                out, lines = b"\n".join(lines), []
                return out
            return None
        if line[:1] == b":":
            return None
        name, _, value = line.partition(b":")
        if name == b"data":
            lines.append(value[1:] if value[:1] == b" " else value)
        return None

    async for chunk in chunks:
        if b"\r" in chunk:  # CRLF or CR line ends
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        parts = (pending + chunk).split(b"\n") if pending else chunk.split(b"\n")
        pending = parts.pop()
        for line in parts:
            data = feed(line)
            if data is not None:
                yield data
    if pending:
        feed(pending)
    if lines:
        yield b"\n".join(lines)


def _event(data: str | bytes) -> bytes:
    return b"data: " + (data.encode() if isinstance(data, str) else data) + b"\n\n"


def _parse_chunk(data: bytes) -> dict:
    try:
        obj = json.loads(data)
    except ValueError as exc:
        raise UpstreamCut("malformed chunk") from exc
    if not isinstance(obj, dict):
        raise UpstreamCut("malformed chunk")
    if obj.get("error") is not None:
        raise UpstreamCut(json.dumps(obj["error"])[:500])
    return obj


def _carries_output(obj: dict) -> bool:
    for choice in obj.get("choices") or []:
        if isinstance(choice, dict) and (choice.get("finish_reason") or metering._text_of_delta(choice.get("delta") or {})):
            return True
    return metering.usage_tokens(obj.get("usage")) is not None


async def _open_stream(call: services.Call, meter: metering.StreamMeter):
    """Send the streamed request and read until the provider has produced output, so that a provider failing
    before any output is a clean 502 with nothing charged. Returns (resp, events, buffered, done); on a
    failure (upstream.UNREACHABLE, UpstreamCut, DomainError) or a cancellation the response is closed first."""
    resp = None
    try:
        resp = await upstream.send(call.model, upstream.request_body(call.model, call.body, stream=True),
                                   call.request_id, pooled=fast_path.get())
        if resp.status >= 300:
            raise upstream.error_for_status(resp.status, await resp.read())
        if "text/event-stream" not in resp.content_type:
            raise errors.ProviderUnavailable("The model provider did not stream; nothing was charged. Retry later.")
        events = sse_data(resp.chunks())
        buffered: list[bytes] = []
        done = False
        async for data in events:
            if data == b"[DONE]":
                done = True
                break
            obj = _parse_chunk(data)
            meter.observe(obj)
            buffered.append(data)
            if _carries_output(obj):
                break
        else:
            if not done:
                raise UpstreamCut("the stream ended before any output")
        return resp, events, buffered, done
    except BaseException:
        if resp is not None:
            await _shielded(resp.aclose())
        raise


async def _close_opened(opened) -> None:
    await opened[0].aclose()


async def _chat_stream(request, call: services.Call, started: float, placing: asyncio.Future | None = None):
    meter = metering.StreamMeter(prompt_estimate=call.prompt_estimate)
    t0 = time.perf_counter()
    provider = _open_stream(call, meter)
    if placing is not None:  # the provider request runs while the hold is placed
        provider = asyncio.ensure_future(provider)
        try:
            await _placed(placing, provider, close=_close_opened)
        except errors.DomainError as err:
            return _error(request, err, started)
    try:
        resp, events, buffered, done = await provider
    except asyncio.CancelledError:
        if placing is not None:  # the stream may have opened in the same turn: it is closed, not left open
            _shielded_background(_abandon(provider, close=_close_opened))
        await _shielded(_interrupted(call))
        raise
    except (*upstream.UNREACHABLE, UpstreamCut, errors.DomainError) as exc:
        if isinstance(exc, errors.DomainError):
            err = exc
        elif isinstance(exc, UpstreamCut):
            err = errors.ProviderUnavailable(f"The model provider failed before any output ({exc}); nothing was charged.")
        else:
            err = upstream.unavailable(exc)
        return await _upstream_failed(request, call, err, started, time.perf_counter() - t0)
    upstream_seconds = time.perf_counter() - t0
    last_part = [False]
    response = StreamingHttpResponse(_relay(call, resp, events, buffered, done, meter, last_part),
                                     content_type="text/event-stream")
    response.last_part = last_part  # llmproxy.asgi ends the response with the final part: one write, not two
    # A client gone before the body began (its headers unsent): the relay never ran, so its cleanup never will.
    response.on_unsent = lambda: _shielded_background(_unsent(call, resp))
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"
    return _overhead(_headers(response, call), started, upstream_seconds)


async def _unsent(call: services.Call, resp: upstream.Answer) -> None:
    """The stream's response never started (the client went away first): close the provider's stream, release
    the hold, record the call as interrupted with nothing delivered."""
    try:
        await resp.aclose()
    finally:
        await _interrupted(call)


async def _relay(call: services.Call, resp: upstream.Answer, events, buffered: list[bytes], done: bool,
                 meter: metering.StreamMeter, last_part: list):
    """Forward the upstream's chunks as they come; hold back its final usage chunk, settle, and send it
    with `service`. A cut on either side settles as `interrupted`, charged for what was delivered.
    `last_part[0]` is set just before the final part is yielded."""
    settled = False
    drained = None
    renamed = _Renamer(call.model.id)
    choices = metering.choices(call.body)
    usage_chunk: dict | None = None
    last: dict | None = None
    try:
        head = []
        for data in buffered:
            obj = json.loads(data)
            last = obj
            if obj.get("usage") and not obj.get("choices"):
                usage_chunk = obj
                continue
            head.append(_event(renamed(data, obj)))
        if head:
            yield b"".join(head)  # one write for what was held back until the first output
        if not done:
            beat_every = settings.HOLD_TTL_SECONDS / 3
            next_beat = time.monotonic() + beat_every
            async for data in events:
                if data == b"[DONE]":
                    done = True
                    break
                if time.monotonic() >= next_beat:  # a long stream: keep the hold from the crashed-request sweep
                    next_beat = time.monotonic() + beat_every
                    await _shielded(_heartbeat(call=call))
                obj = _parse_chunk(data)
                meter.observe(obj)
                last = obj
                if obj.get("usage") and not obj.get("choices"):
                    usage_chunk = obj
                    if metering.usage_tokens(obj["usage"]) is not None and meter.finished >= set(range(choices)):
                        # every choice finished and the usage is usable: OpenAI's include_usage chunk, documented as
                        # the last before [DONE]. Settle now; the rest is read (not relayed) in the background.
                        done = True
                        break
                    continue
                yield _event(renamed(data, obj))
        if not done and not (meter.finished and meter.usage):
            raise UpstreamCut("the stream ended early")
        if done:  # read the body to its end (so the connection is reused) while the settlement runs, then close it
            drained = _shielded_background(_drain(events, resp))
        usage = meter.settle_usage()
        service = await _shielded(_finish(call=call, status="succeeded", usage=usage))
        settled = True
        # the provider's usage chunk, unless its usage was unusable (the charge then rests on the estimate, and
        # the final chunk says so)
        own = usage_chunk is not None and meter.usage is not None and meter.usage == usage_chunk["usage"]
        final = usage_chunk if own else _synthetic_final(last, usage)
        final["model"] = call.model.id
        final["service"] = service
        last_part[0] = True
        yield _event(json.dumps(final, ensure_ascii=False, separators=(",", ":"))) + b"data: [DONE]\n\n"
    except (*upstream.UNREACHABLE, UpstreamCut) as exc:
        usage = meter.settle_usage()
        service = await _shielded(_finish(call=call, status="interrupted", usage=usage))
        settled = True
        err = errors.ProviderUnavailable(
            f"The model provider interrupted the stream ({type(exc).__name__}); charged for what was delivered.")
        body = errors.error_body(err, call.request_id)
        body["service"] = service
        last_part[0] = True
        yield _event(json.dumps(body, ensure_ascii=False, separators=(",", ":")))
    finally:
        if drained is None:  # (else the drain closes it once read: the response may be complete, and this cancelled)
            await _shielded(resp.aclose())
        if not settled:  # the client went away: charge what was delivered, release the rest
            await _shielded(_finish(call=call, status="interrupted", usage=meter.settle_usage(), http_status=499))


async def _drain(events, resp: upstream.Answer, seconds: float = 1.0) -> None:
    """After the end of a stream, read the upstream body to its end, then close it: a fully read connection goes
    back to the pool, while closing a half-read one closes the connection (then every stream paid a new TCP
    connection). Runs in the background: the client's response may be complete (and its view cancelled) first."""
    async def rest():
        async for _ in events:
            pass
    try:
        await asyncio.wait_for(rest(), seconds)
    except (*upstream.UNREACHABLE, UpstreamCut):
        pass
    except Exception:  # noqa: BLE001 - nobody awaits this task: say what went wrong instead of losing it
        logger.warning("reading the rest of a provider's stream failed", exc_info=True)
    finally:
        await resp.aclose()


class _Renamer:
    """A chunk as relayed, its `model` the id the client asked for (`vendor_a/model_small`) instead of the
    provider's own name. A byte replacement of the one field (no re-serialization on the hot path; the two
    encoded names kept for the stream, which names one model throughout); a chunk whose spacing is unusual is
    re-serialized."""

    __slots__ = ("model_id", "name", "pairs")

    def __init__(self, model_id: str):
        self.model_id = model_id
        self.name = None
        self.pairs: tuple = ()

    def __call__(self, data: bytes, obj: dict) -> bytes:
        name = obj.get("model")
        if not isinstance(name, str) or name == self.model_id:
            return data
        if name != self.name:
            old = json.dumps(name, ensure_ascii=False).encode()
            new = json.dumps(self.model_id, ensure_ascii=False).encode()
            self.name, self.pairs = name, tuple((sep + old, sep + new) for sep in (b'"model":', b'"model": '))
        for old, new in self.pairs:
            if old in data:
                return data.replace(old, new, 1)
        return json.dumps({**obj, "model": self.model_id}, ensure_ascii=False, separators=(",", ":")).encode()


def _synthetic_final(last: dict | None, usage: dict) -> dict:
    """The final usage chunk, for an upstream that sent none (usage then is the documented estimate)."""
    last = last or {}
    chunk = {"id": last.get("id", ""), "object": "chat.completion.chunk", "created": last.get("created", int(time.time())),
             "model": last.get("model", ""), "choices": []}
    chunk["usage"] = {k: usage[k] for k in ("prompt_tokens", "completion_tokens", "total_tokens")}
    chunk["usage"]["estimated"] = usage["estimated"]
    return chunk


# --- models -------------------------------------------------------------------------------------------
def _model_object(model: catalog.Model) -> dict:
    return {"id": model.id, "object": "model", "created": 0, "owned_by": model.id.split("/")[0],
            "credits_per_1k_tokens": format_credits(model.price_per_1k_micros)}


async def _models_common(request):
    started = _started(request)
    if request.method != "GET":
        raise errors.MethodNotAllowed(headers={"Allow": "GET"})
    key, rate = await _authenticate(authorization=request.headers.get("Authorization"), request_id=request.request_id)
    return started, rate


def _json(request, data, rate, started):
    response = JsonResponse(data, json_dumps_params={"ensure_ascii": False})
    for name, value in rate.headers().items():
        response[name] = value
    return _overhead(response, started, 0.0)


async def models(request):
    started = _started(request)
    try:
        started, rate = await _models_common(request)
    except errors.DomainError as err:
        return _error(request, err, started)
    return _json(request, {"object": "list", "data": [_model_object(m) for m in catalog.models().values()]}, rate, started)


async def model_detail(request, model_id: str):
    started = _started(request)
    try:
        started, rate = await _models_common(request)
        model = catalog.model_get(model_id)
        if model is None:
            raise errors.NotFound(f"Model {model_id[:200]!r} is not on the allowlist.")
    except errors.DomainError as err:
        return _error(request, err, started)
    return _json(request, _model_object(model), rate, started)

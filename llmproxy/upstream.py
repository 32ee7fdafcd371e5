"""Upstream HTTP: the passthrough's provider call (one aiohttp session per event loop, since an async connection
pool belongs to the loop that opened it), one pooled httpx client per upstream for the sync callers, both built by
core.outbound, the upstream request, and error mapping."""

from __future__ import annotations

import asyncio
import json
import threading
import weakref

import aiohttp
import httpx
from django.conf import settings

from core import errors, outbound
from core.outbound import USER_AGENT
from llmproxy import echo
from llmproxy.catalog import Model
from llmproxy.echo import EchoTransport

TIMEOUT = httpx.Timeout(connect=10.0, read=300.0, write=30.0, pool=30.0)
# The whole call, connect to the last byte of the answer (a stream included): a provider trickling tokens never
# trips the 300-second wait for its next bytes, so without it one call could hold a connection and a hold for ever.
TOTAL_SECONDS = float(settings.LLM_UPSTREAM_TOTAL_SECONDS)
LIMITS = httpx.Limits(max_connections=2000, max_keepalive_connections=500, keepalive_expiry=30.0)

_sync_clients: dict[str, httpx.Client] = {}
_lock = threading.Lock()


_ssl_context = None


def _verify():
    """One TLS context for every client (each new httpx client otherwise loads the CA store: ~20 ms)."""
    global _ssl_context
    if _ssl_context is None:
        _ssl_context = httpx.create_ssl_context()
    return _ssl_context


def _client_kwargs(model: Model) -> dict:
    kwargs = {"timeout": TIMEOUT, "total": TOTAL_SECONDS, "limits": LIMITS, "verify": _verify(),
              "allow_private": True}  # an operator-configured provider, often on a private network
    if model.is_echo:
        kwargs["transport"] = EchoTransport()
        kwargs.pop("limits")
    return kwargs


# --- the async provider call (the passthrough's hot path) ---------------------------------------------------
# aiohttp, not httpx: measured on this stack (bench/RESULTS.md, ninth session), one non-streamed call to a local
# provider costs the client 570-730 us of CPU through httpx (its request and response models, httpcore's pool)
# against 70-140 us through aiohttp (C-accelerated HTTP parser, one pool keyed by host), and a stream 800-1050
# against 210-270 us: a fifth of everything the passthrough spends per call. aiohttp also sends a small
# request's header block and body in one write. The sync path (the llm_chat verb, reply classification)
# stays on httpx.

# What "the provider could not be reached" looks like on the async path: connect, read and pool timeouts,
# refused or reset connections, a malformed HTTP answer (the sync callers catch httpx.HTTPError themselves).
UNREACHABLE = (aiohttp.ClientError, TimeoutError)

READ_IDLE_SECONDS = TIMEOUT.read  # the longest wait for the provider's next bytes
AIO_TIMEOUT = outbound.async_timeout(total=TOTAL_SECONDS, timeout=TIMEOUT)
_sessions: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _new_session() -> aiohttp.ClientSession:
    return outbound.async_session(timeout=AIO_TIMEOUT, limits=LIMITS, verify=_verify())


def _session() -> aiohttp.ClientSession:
    """This event loop's session (a connection pool belongs to the loop that opened it): every upstream shares
    it, its pool keyed by host, port and TLS."""
    loop = asyncio.get_running_loop()
    session = _sessions.get(loop)
    if session is None or session.closed:
        for gone in [other for other in _sessions if other.is_closed()]:  # a session keeps its loop alive
            del _sessions[gone]
        session = _sessions[loop] = _new_session()
    return session


async def close_sessions() -> None:
    """Close this event loop's provider connections (the server's lifespan shutdown calls it)."""
    session = _sessions.pop(asyncio.get_running_loop(), None)
    if session is not None:
        await session.close()


class Answer:
    """A provider's answer once its headers are in: `status`, `content_type`, the body read whole (`read`) or
    as it comes (`chunks`), and `aclose`, which returns a fully read connection to the pool and closes one
    that was left half-read."""

    __slots__ = ("status", "content_type", "_resp", "_parts", "_own_session", "_deadline")

    def __init__(self, status: int, content_type: str, resp: aiohttp.ClientResponse | None = None,
                 parts: list[bytes] | None = None, own_session: aiohttp.ClientSession | None = None,
                 deadline: float | None = None):
        self.status, self.content_type, self._resp, self._parts = status, content_type, resp, parts
        self._own_session = own_session
        self._deadline = deadline  # the loop time by which the whole call must be done

    def _expire(self) -> None:
        self._resp.content.set_exception(
            aiohttp.ServerTimeoutError(f"no data from the provider for {READ_IDLE_SECONDS:g} s, or the call took "
                                       f"longer than {TOTAL_SECONDS:g} s"))

    def _wait(self, loop) -> float:
        """How long the next wait for bytes may last: the idle limit, cut to what is left of the call's deadline."""
        if self._deadline is None:
            return READ_IDLE_SECONDS
        return max(0.0, min(READ_IDLE_SECONDS, self._deadline - loop.time()))

    async def read(self) -> bytes:
        if self._resp is None:
            return b"".join(self._parts)
        loop = asyncio.get_running_loop()
        timer = loop.call_later(self._wait(loop), self._expire)
        try:
            return await self._resp.read()
        finally:
            timer.cancel()

    def chunks(self):
        """The body's bytes as they come off the connection (an async iterator)."""
        if self._resp is None:
            return _aiter(self._parts)
        return self._watched()

    async def _watched(self):
        """aiohttp's read timeout is lost when its parser fails mid-body (a malformed chunked encoding: the body's
        reader is then left waiting for ever, aiohttp 3.14); so each wait for the next bytes has its own timer,
        which fails the read as aiohttp's own timeout would. The timer does not run while the consumer has a chunk."""
        loop = asyncio.get_running_loop()
        timer = loop.call_later(self._wait(loop), self._expire)
        try:
            async for chunk in self._resp.content.iter_any():
                timer.cancel()
                yield chunk
                timer = loop.call_later(self._wait(loop), self._expire)
        finally:
            timer.cancel()

    async def aclose(self) -> None:
        if self._resp is not None:
            self._resp.release()
        if self._own_session is not None:
            await self._own_session.close()


async def _aiter(parts: list[bytes]):
    for part in parts:
        yield part


async def send(model: Model, body: bytes, request_id: str, *, pooled: bool = True) -> Answer:
    """POST a chat request to the model's provider; returns once the answer's headers are in. The sandbox echo
    upstream answers in process. `pooled=False` (an event loop that lives for one request, as under Django's
    sync handlers and test client): a session of its own, closed with the answer."""
    if model.is_echo:
        status, content_type, parts = echo.answer(body)
        return Answer(status, content_type, parts=parts)
    session = _session() if pooled else _new_session()
    deadline = asyncio.get_running_loop().time() + TOTAL_SECONDS
    try:
        # Never sent twice: a provider that disconnects after the request was written may have processed it (Go's
        # net/http resends such a POST only when nothing was written; aiohttp, only idempotent methods).
        resp = await session.post(model.chat_url, data=body, headers=request_headers(model, request_id),
                                  allow_redirects=False)
    except BaseException:
        if not pooled:
            await asyncio.shield(session.close())
        raise
    return Answer(resp.status, resp.headers.get("Content-Type", ""), resp=resp, own_session=None if pooled else session,
                  deadline=deadline)


async def fetch(model: Model, body: bytes, request_id: str, *, pooled: bool = True) -> tuple[int, bytes]:
    """A non-streamed call: the provider's status and whole body."""
    answer = await send(model, body, request_id, pooled=pooled)
    try:
        return answer.status, await answer.read()
    finally:
        await answer.aclose()


def sync_client(model: Model) -> httpx.Client:
    client = _sync_clients.get(model.upstream_base_url)
    if client is None:
        with _lock:
            client = _sync_clients.get(model.upstream_base_url)
            if client is None:
                client = _sync_clients[model.upstream_base_url] = outbound.client(**_client_kwargs(model))
    return client


def request_headers(model: Model, request_id: str) -> dict:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
               "User-Agent": USER_AGENT, "X-Request-Id": request_id}
    key = model.api_key()
    if key:
        headers["Authorization"] = f"Bearer {key}"
    return headers


def request_body(model: Model, body: dict, *, stream: bool) -> bytes:
    """The client's body, untouched but for `model` (the upstream's name), the completion cap the hold assumed
    when the client sent none (so the completion is bounded by what was held), and, when streaming,
    `stream_options.include_usage` forced on so the stream can be settled to the token."""
    from llmproxy.metering import DEFAULT_MAX_TOKENS

    out = dict(body)
    out["model"] = model.upstream_model
    if out.get("max_tokens") is None and out.get("max_completion_tokens") is None:
        out[model.completion_cap_param] = DEFAULT_MAX_TOKENS
    if stream:
        out["stream"] = True
        out["stream_options"] = {**(body.get("stream_options") or {}), "include_usage": True}
    else:
        out.pop("stream_options", None)
        if "stream" in out:
            out["stream"] = False
    return json.dumps(out, ensure_ascii=False, separators=(",", ":")).encode()


def error_for_status(status: int, content: bytes) -> errors.DomainError:
    """An upstream non-2xx as our envelope: the caller's mistakes (400, 404, 413, 422) are 400
    invalid_request with the upstream's own error in details; everything else is 502 provider_unavailable."""
    try:
        upstream_error = json.loads(content).get("error")
    except (ValueError, AttributeError):
        upstream_error = None
    if upstream_error is None:
        upstream_error = content[:500].decode("utf-8", "replace")
    details = {"upstream_status": status, "upstream_error": upstream_error}
    if status in (400, 404, 413, 422):
        message = "The model provider rejected the request."
        if isinstance(upstream_error, dict) and upstream_error.get("message"):
            message = f"The model provider rejected the request: {upstream_error['message']}"[:500]
        return errors.InvalidRequest(message, details=details)
    return errors.ProviderUnavailable(
        f"The model provider answered HTTP {status}; nothing was charged. Retry later.", details=details
    )


def unavailable(exc: BaseException) -> errors.DomainError:
    return errors.ProviderUnavailable(
        f"The model provider could not be reached ({type(exc).__name__}); nothing was charged. Retry later."
    )

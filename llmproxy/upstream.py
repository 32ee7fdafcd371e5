"""Upstream HTTP: one pooled httpx client per upstream base URL (per event loop for the async ones, since
an async connection pool belongs to the loop that opened it), the upstream request, and error mapping."""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import weakref

import httpcore
import httpx

from core import errors
from llmproxy.catalog import Model
from llmproxy.echo import EchoTransport

TIMEOUT = httpx.Timeout(connect=10.0, read=300.0, write=30.0, pool=30.0)
LIMITS = httpx.Limits(max_connections=2000, max_keepalive_connections=500, keepalive_expiry=30.0)

_async_clients: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_sync_clients: dict[str, httpx.Client] = {}
_lock = threading.Lock()


_ssl_context = None


def _verify():
    """One TLS context for every client (each new httpx client otherwise loads the CA store: ~20 ms)."""
    global _ssl_context
    if _ssl_context is None:
        _ssl_context = httpx.create_ssl_context()
    return _ssl_context


class _CoalescingStream(httpcore.AsyncNetworkStream):
    """A connection to the provider whose writes are held until the next read: httpcore writes a request's header
    block and its body separately, so every upstream call was two socket writes (two segments, and the provider's
    process woken for the first one alone). HTTP/1.1 always reads the response after sending a request, so the
    request goes out whole, in one write, when that read starts. A write error then surfaces from the read (an
    httpx error either way: 502, nothing charged)."""

    def __init__(self, stream: httpcore.AsyncNetworkStream):
        self._stream = stream
        self._pending: list[bytes] = []
        self._write_timeout: float | None = None  # the writes' own timeout (not the read's), kept for the flush

    async def _flush(self) -> None:
        data = b"".join(self._pending) if len(self._pending) > 1 else self._pending[0]
        self._pending.clear()
        await self._stream.write(data, self._write_timeout)

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        if self._pending:
            await self._flush()
        return await self._stream.read(max_bytes, timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if buffer:
            self._pending.append(bytes(buffer))
            self._write_timeout = timeout

    async def aclose(self) -> None:
        self._pending.clear()
        await self._stream.aclose()

    async def start_tls(self, ssl_context, server_hostname=None, timeout=None):
        if self._pending:  # e.g. a proxy's CONNECT
            await self._flush()
        return _CoalescingStream(await self._stream.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str):
        return self._stream.get_extra_info(info)


class _CoalescingBackend(httpcore.AsyncNetworkBackend):
    def __init__(self, backend: httpcore.AsyncNetworkBackend):
        self._backend = backend

    async def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        return _CoalescingStream(await self._backend.connect_tcp(host, port, timeout, local_address, socket_options))

    async def connect_unix_socket(self, path, timeout=None, socket_options=None):
        return _CoalescingStream(await self._backend.connect_unix_socket(path, timeout, socket_options))

    async def sleep(self, seconds: float) -> None:
        await self._backend.sleep(seconds)


def _async_transport() -> httpx.AsyncHTTPTransport:
    """httpx's transport, its connection pool's network backend wrapped by _CoalescingBackend (httpx has no
    parameter for the backend; the pool keeps it in `_network_backend` and hands it to each new connection)."""
    transport = httpx.AsyncHTTPTransport(verify=_verify(), limits=LIMITS, trust_env=False)
    pool = transport._pool
    backend = getattr(pool, "_network_backend", None)
    if isinstance(pool, httpcore.AsyncConnectionPool) and backend is not None:
        pool._network_backend = _CoalescingBackend(backend)
    return transport


def _client_kwargs(model: Model, *, asynchronous: bool = False) -> dict:
    kwargs = {"timeout": TIMEOUT, "limits": LIMITS, "follow_redirects": False, "trust_env": False,
              "verify": _verify()}
    if model.is_echo:
        kwargs["transport"] = EchoTransport()
        kwargs.pop("limits")
    elif asynchronous:
        kwargs["transport"] = _async_transport()
        del kwargs["limits"], kwargs["verify"]
    return kwargs


# Each upstream's pool is split into this many httpx clients, used in turn. httpcore's pool re-examines every
# connection of the pool (a poll() syscall each, and a quadratic idle count) whenever a request starts or ends,
# so one pool of N open streams costs O(N^2) per request: at 200 parallel streams that was the largest CPU cost
# of the passthrough. Sixteen pools of N/16 cost 256x less per request, with the same keep-alive reuse.
POOL_SHARDS = 16


def async_client(model: Model) -> httpx.AsyncClient:
    loop = asyncio.get_running_loop()
    per_loop = _async_clients.get(loop)
    if per_loop is None:
        per_loop = _async_clients.setdefault(loop, {})
    shards = per_loop.get(model.upstream_base_url)
    if shards is None:
        count = 1 if model.is_echo else POOL_SHARDS
        shards = per_loop[model.upstream_base_url] = (
            [httpx.AsyncClient(**_client_kwargs(model, asynchronous=True)) for _ in range(count)], itertools.count())
    clients, turn = shards
    return clients[next(turn) % len(clients)]


def sync_client(model: Model) -> httpx.Client:
    client = _sync_clients.get(model.upstream_base_url)
    if client is None:
        with _lock:
            client = _sync_clients.get(model.upstream_base_url)
            if client is None:
                client = _sync_clients[model.upstream_base_url] = httpx.Client(**_client_kwargs(model))
    return client


def request_headers(model: Model, request_id: str) -> dict:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
               "X-Request-Id": request_id}
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

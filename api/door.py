"""The fast HTTP door shared by the API's hot routes: the LLM passthrough (llmproxy.asgi) and the REST verbs
(below). config.asgi sends these routes here instead of to Django's handler.

Why: Django's ASGI handler starts a new worker thread for every request (asgiref's per-request thread-sensitive
context), opens a new database connection in it, sends two request signals and runs the middleware stack (sessions,
auth, CSRF, messages, allauth) and URL resolution: for a metered verb that was more than half of the time. This
door does what the middleware does for these routes: a `req_…` id echoed as X-Request-Id, 413 for an oversized
body (the error envelope), the security headers Django's middleware would add, the envelope for anything
unexpected, and a client disconnect cancelling the view. Everything else (any other method, path parameters,
OPTIONS, a Host that is not allowed) still goes to Django, which answers it.

The verb door runs `api.pipeline.execute` (the one pipeline) on a pool of worker threads that keep their database
connection between calls on SQLite (no connect per call) and hand it back to the pool on PostgreSQL.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from django.conf import settings

from api.dbwork import background, drain, drain_background, shutdown_pool, writer_connection  # noqa: F401 - (the shutdown's)
from core import errors
from core.ids import new_id

logger = logging.getLogger("core.errors")


class _Headers(dict):
    """Request headers by case-insensitive name (what the views read: `request.headers.get(...)`)."""

    def get(self, name, default=None):
        return dict.get(self, name.lower(), default)

    def __getitem__(self, name):
        return dict.__getitem__(self, name.lower())

    def __contains__(self, name):
        return dict.__contains__(self, name.lower())


class Request:
    """The few attributes of a Django HttpRequest the LLM views and the error envelope use."""

    __slots__ = ("method", "path", "headers", "body", "content_type", "request_id", "started_at", "META", "query_string")

    def __init__(self, scope, body: bytes, request_id: str, started_at: float):
        self.method = scope["method"]
        self.path = scope["path"]
        headers = _Headers()
        for name, value in scope["headers"]:
            key = name.decode("latin-1").lower()
            value = value.decode("latin-1")
            earlier = dict.get(headers, key)
            dict.__setitem__(headers, key, value if earlier is None else f"{earlier},{value}")
        self.headers = headers
        self.body = body
        self.content_type = headers.get("content-type", "").split(";")[0].strip() or None
        self.request_id = request_id
        self.started_at = started_at
        self.META = {"CONTENT_LENGTH": headers.get("content-length", ""), "REQUEST_METHOD": self.method}
        self.query_string = scope.get("query_string", b"")

    @property
    def GET(self):  # noqa: N802 - the name Django's HttpRequest uses
        from django.http import QueryDict

        return QueryDict(self.query_string.decode("latin-1"))


def security_headers() -> list[tuple[bytes, bytes]]:
    """What SecurityMiddleware and XFrameOptionsMiddleware add to every response, from the same settings."""
    out = []
    if settings.SECURE_CONTENT_TYPE_NOSNIFF:
        out.append((b"x-content-type-options", b"nosniff"))
    if settings.SECURE_REFERRER_POLICY:
        policy = settings.SECURE_REFERRER_POLICY
        policy = policy if isinstance(policy, str) else ",".join(policy)
        out.append((b"referrer-policy", policy.encode("latin-1")))
    if settings.SECURE_CROSS_ORIGIN_OPENER_POLICY:
        out.append((b"cross-origin-opener-policy", settings.SECURE_CROSS_ORIGIN_OPENER_POLICY.encode("latin-1")))
    out.append((b"x-frame-options", settings.X_FRAME_OPTIONS.upper().encode("latin-1")))
    if settings.SECURE_HSTS_SECONDS:  # BASE_URL is https (browsers ignore it over plain http)
        hsts = f"max-age={settings.SECURE_HSTS_SECONDS}"
        if settings.SECURE_HSTS_INCLUDE_SUBDOMAINS:
            hsts += "; includeSubDomains"
        out.append((b"strict-transport-security", hsts.encode("latin-1")))
    return out


_extra_headers: list | None = None


async def read_body(receive, limit: int) -> bytes | None:
    """The request body; None if the client went away; raises PayloadTooLarge past `limit` bytes."""
    parts = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise errors.PayloadTooLarge()
        parts.append(chunk)
        if not message.get("more_body"):
            return b"".join(parts)


async def send_error(scope, send, err: errors.DomainError) -> None:
    """Answer an HTTP request with the error envelope before any door handles it (config.asgi: https_required)."""
    request = Request(scope, b"", new_id("req_"), time.perf_counter())
    await _send(send, request, errors.error_response(err, request))


async def _send(send, request: Request, response) -> None:
    global _extra_headers
    if _extra_headers is None:
        _extra_headers = security_headers()
    response["X-Request-Id"] = getattr(response, "_request_id_override", None) or request.request_id
    headers = [(name.encode("ascii"), value.encode("latin-1")) for name, value in response.items()]
    present = {name.lower() for name, _ in headers}
    headers.extend(h for h in _extra_headers if h[0] not in present)
    if not response.streaming and b"content-length" not in present:
        headers.append((b"content-length", str(len(response.content)).encode("ascii")))
    try:
        await _send_parts(send, response, headers)
    finally:
        sent = getattr(response, "sent", None)  # a settlement waiting for this answer to leave (_run_verb)
        if sent is not None:
            sent.set()


async def _send_parts(send, response, headers) -> None:
    try:
        await send({"type": "http.response.start", "status": response.status_code, "headers": headers})
    except BaseException:  # client gone before the body began: a streaming body's own cleanup never runs
        unsent = getattr(response, "on_unsent", None)
        if unsent is not None:
            unsent()
        raise
    if not response.streaming:
        await send({"type": "http.response.body", "body": response.content})
        return
    # The view may mark its final part (`response.last_part`): it goes out with the end of the body in one
    # write, so a client that stops reading at `data: [DONE]` finds the response complete and keeps the
    # connection. The iterator is still run to its end (its cleanup runs there).
    last_part = getattr(response, "last_part", None) or [False]
    ended = False
    async for part in response.streaming_content:
        if part and not ended:
            ended = last_part[0]
            await send({"type": "http.response.body", "body": part, "more_body": not ended})
    if not ended:
        await send({"type": "http.response.body", "body": b""})


async def _respond(scope, receive, send, view, kwargs, started: float, request_id: str) -> None:
    try:
        length = int(dict(scope["headers"]).get(b"content-length", b"0") or 0)
    except ValueError:
        length = 0
    request = Request(scope, b"", request_id, started)  # (its body is set once read)
    try:
        if length > settings.MAX_BODY_BYTES:
            raise errors.PayloadTooLarge()
        body = await read_body(receive, settings.MAX_BODY_BYTES)
    except errors.PayloadTooLarge as err:
        await _send(send, request, errors.error_response(err, request))
        return
    if body is None:
        return
    request.body = body

    async def run():
        try:
            response = await view(request, **kwargs)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 (the envelope, never a traceback)
            logger.error("unhandled exception (request_id=%s) on %s %s", request_id, request.method, request.path,
                         exc_info=exc)
            response = errors.error_response(errors.Internal(), request)
        await _send(send, request, response)

    # A client that goes away cancels the view, as Django's ASGI handler does: an open stream then settles
    # as `interrupted` (the relay's `finally`) and a pending upstream call is abandoned.
    work = asyncio.ensure_future(run())
    watcher = asyncio.ensure_future(_disconnected(receive))
    try:
        await asyncio.wait((work, watcher), return_when=asyncio.FIRST_COMPLETED)
    finally:
        watcher.cancel()
        if not work.done():
            work.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await work


async def _disconnected(receive) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return




# --- the REST verbs -----------------------------------------------------------------------------------------
_verb_routes: dict[tuple[str, str], object] | None = None
_verb_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()
_allowed_hosts: dict[bytes, bool] = {}
_allow: dict[str, str] = {}


def _routes() -> dict[tuple[str, str], object]:
    """(path, method) -> verb, for the registered verbs whose REST path has no parameters."""
    global _verb_routes
    if _verb_routes is None:
        from core.verbs import REGISTRY

        _verb_routes = {(verb.path, verb.method): verb for verb in REGISTRY.values()
                        if verb.rest_route and not verb.test_only and "<" not in verb.path}
        for path in {p for p, _ in _verb_routes}:  # what DRF's view answers in Allow: the path's methods + OPTIONS
            _allow[path] = ", ".join([m for p, m in sorted(_verb_routes) if p == path] + ["OPTIONS"])
    return _verb_routes


def _host_allowed(scope) -> bool:
    """Django's ALLOWED_HOSTS rule (a request with any other Host goes to Django, which refuses it)."""
    from django.http.request import split_domain_port, validate_host

    host = b""
    for name, value in scope["headers"]:
        if name == b"host":
            host = value
            break
    ok = _allowed_hosts.get(host)
    if ok is None:
        domain, _ = split_domain_port(host.decode("latin-1"))
        allowed = settings.ALLOWED_HOSTS
        if settings.DEBUG and not allowed:
            allowed = [".localhost", "127.0.0.1", "[::1]"]
        ok = bool(domain) and validate_host(domain, allowed)
        if len(_allowed_hosts) < 1024:
            _allowed_hosts[host] = ok
    return ok


def verb_route(scope):
    """(view, kwargs) for a REST verb call this door answers, or None (then Django handles the request)."""
    verb = _routes().get((scope.get("path", ""), scope.get("method", "")))
    if verb is None or not _host_allowed(scope):
        return None
    return _verb_view, {"verb": verb}


def _pool() -> ThreadPoolExecutor:
    global _verb_pool
    if _verb_pool is None:
        with _pool_lock:
            if _verb_pool is None:
                _verb_pool = ThreadPoolExecutor(max(1, settings.API_THREADS), thread_name_prefix="api")
    return _verb_pool


def close_threads() -> None:
    """The verb threads and SQLite's writing connection: connections closed, threads stopped (new ones start on the
    next call)."""
    global _verb_pool
    pool, _verb_pool = _verb_pool, None
    shutdown_pool(pool)
    writer_connection.close()


def _db_begin() -> None:
    """Before work on an API thread: drop a connection that errored or (PostgreSQL) outlived its use."""
    from django.db import connection

    if connection.connection is not None and (connection.errors_occurred or connection.vendor != "sqlite"):
        connection.close_if_unusable_or_obsolete()


def _db_end() -> None:
    """After work on an API thread: SQLite keeps its connection for the next call; PostgreSQL's goes back to the
    pool (a thread must not sit on a pooled connection)."""
    from django.db import connection

    if connection.vendor != "sqlite" or connection.errors_occurred:
        connection.close()


def _call(fn, args, kwargs):
    _db_begin()
    try:
        return fn(*args, **kwargs)
    finally:
        _db_end()


async def run_in_api_thread(fn, *args, **kwargs):
    """`fn(*args, **kwargs)` (sync Django code) on one of the API's worker threads (the MCP door's key lookups and
    tool calls use it too): no thread started and no database connection opened per call. The caller's context
    variables go along (the MCP door's request state), as with asgiref's sync_to_async."""
    context = contextvars.copy_context()
    return await asyncio.get_running_loop().run_in_executor(_pool(), context.run, _call, fn, args, kwargs)


def _resolve(answer: asyncio.Future, response) -> None:
    if not answer.done():
        answer.set_result(response)


def _run_verb(request: Request, verb, loop: asyncio.AbstractEventLoop, answer: asyncio.Future) -> None:
    """One REST verb call on a worker thread, through the adapter both REST doors share (api.rest.run_verb); run by
    `run_in_api_thread`. The response goes to the event loop (`answer`) as soon as it is made; a settlement left for
    after the answer (SETTLE_AFTER_RESPONSE) then runs here, on the thread that answered, with its connection,
    before this thread takes any new call: no queue between a call's answer and its settlement, so a burst of new
    calls cannot hold answered calls unsettled. It starts once the loop has sent the answer, or after SENT_WAIT at
    most: started at once, it held the GIL while the loop waited to send, and a lone call's answer came 0.3-0.5 ms
    later (a fifth of its latency on SQLite); under load the loop is busy, the bound is reached, and the settlement
    waits no more than that (bench/RESULTS.md, "the write gate's order")."""
    from api.rest import run_verb

    try:
        response = run_verb(request, verb)
    except Exception as exc:  # noqa: BLE001 - refusals before the pipeline (key, body) and anything unexpected
        if not isinstance(exc, errors.DomainError):
            logger.error("unhandled exception (request_id=%s) on %s %s", request.request_id, request.method,
                         request.path, exc_info=exc)
        response = errors.error_response(exc, request)
    settlement = getattr(response, "after_send", None)
    response.after_send = None
    sent = response.sent = threading.Event() if settlement is not None else None
    with contextlib.suppress(RuntimeError):  # the loop has closed (shutdown): nobody waits for the answer
        loop.call_soon_threadsafe(_resolve, answer, response)
    if settlement is not None:
        sent.wait(SENT_WAIT)
        try:
            settlement()  # api.pipeline.settle_after_answer: retried, and logged if it still fails
        except Exception:  # noqa: BLE001
            logger.exception("the settlement of %s after its answer failed", request.request_id)


SENT_WAIT = 0.001  # seconds a settlement waits for its answer to be sent (`_run_verb`)

# Calls whose work (the verb, then its settlement after the answer) is still running: kept referenced until done,
# and waited for by the server's lifespan shutdown (api.dbwork.drain_background).
_background = background


async def _verb_view(request: Request, verb):
    loop = asyncio.get_running_loop()
    answer = loop.create_future()
    work = asyncio.ensure_future(run_in_api_thread(_run_verb, request, verb, loop, answer))
    _background.add(work)  # a client gone (this view cancelled) does not stop the call or its settlement
    work.add_done_callback(_background.discard)
    if not answer.done():
        await asyncio.wait((answer, work), return_when=asyncio.FIRST_COMPLETED)
    if not answer.done():  # the work ended without an answer: what it raised becomes the envelope
        work.result()
        raise RuntimeError("a verb call ended without an answer")
    response = answer.result()
    if not response.has_header("Allow"):
        response["Allow"] = _allow.get(verb.path, verb.method)
    return response


async def verb_app(scope, receive, send, view, kwargs) -> None:
    await _respond(scope, receive, send, view, kwargs, time.perf_counter(), new_id("req_"))

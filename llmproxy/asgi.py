"""A direct ASGI entry for the LLM routes (config.asgi sends `/v1/llm/chat`, `/v1/llm/chat/completions`,
`/v1/llm/models` and `/v1/llm/models/<id>` here; every other path, and anything under `/v1/llm/` that is not
one of these, still goes to Django).

Why: Django's ASGI handler costs a worker thread per request, two request signals (each a thread hop), the
middleware stack (sessions, auth, CSRF, messages, allauth) and URL resolution; for a streaming passthrough
that was about a fifth of the time the service added. This entry runs the same view functions
(`llmproxy.views`) with a minimal request object and does what the middleware does for these routes:
a `req_…` id echoed as X-Request-Id on every response, 413 for an oversized body (the error envelope),
the security headers Django's middleware would add, the envelope for anything unexpected, and a client
disconnect cancelling the view (so a cut stream settles as `interrupted`, exactly as under Django).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from django.conf import settings

from core import errors
from core.ids import new_id
from llmproxy import views

logger = logging.getLogger("core.errors")

PREFIX = "/v1/llm/"


def route(path: str):
    """(view, kwargs) for an LLM path, or None (then Django handles it, 404 included)."""
    if path == "/v1/llm/chat/completions" or path == "/v1/llm/chat":
        return views.chat, {}
    if path == "/v1/llm/models":
        return views.models, {}
    if path.startswith("/v1/llm/models/") and len(path) > len("/v1/llm/models/"):
        return views.model_detail, {"model_id": path[len("/v1/llm/models/"):]}
    return None


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

    __slots__ = ("method", "path", "headers", "body", "content_type", "request_id", "started_at", "META")

    def __init__(self, scope, body: bytes, request_id: str, started_at: float):
        self.method = scope["method"]
        self.path = scope["path"]
        headers = _Headers()
        for name, value in scope["headers"]:
            key = name.decode("latin-1").lower()
            value = value.decode("latin-1")
            headers[key] = f"{headers[key]},{value}" if key in headers else value
        self.headers = headers
        self.body = body
        self.content_type = headers.get("content-type", "").split(";")[0].strip() or None
        self.request_id = request_id
        self.started_at = started_at
        self.META = {"CONTENT_LENGTH": headers.get("content-length", ""), "REQUEST_METHOD": self.method}


def _security_headers() -> list[tuple[bytes, bytes]]:
    """What SecurityMiddleware and XFrameOptionsMiddleware add to every response, from the same settings."""
    out = []
    if getattr(settings, "SECURE_CONTENT_TYPE_NOSNIFF", True):
        out.append((b"x-content-type-options", b"nosniff"))
    if getattr(settings, "SECURE_REFERRER_POLICY", None):
        policy = settings.SECURE_REFERRER_POLICY
        policy = policy if isinstance(policy, str) else ",".join(policy)
        out.append((b"referrer-policy", policy.encode("latin-1")))
    if getattr(settings, "SECURE_CROSS_ORIGIN_OPENER_POLICY", None):
        out.append((b"cross-origin-opener-policy", settings.SECURE_CROSS_ORIGIN_OPENER_POLICY.encode("latin-1")))
    out.append((b"x-frame-options", getattr(settings, "X_FRAME_OPTIONS", "DENY").upper().encode("latin-1")))
    if getattr(settings, "SECURE_HSTS_SECONDS", 0):  # BASE_URL is https (browsers ignore it over plain http)
        hsts = f"max-age={settings.SECURE_HSTS_SECONDS}"
        if getattr(settings, "SECURE_HSTS_INCLUDE_SUBDOMAINS", False):
            hsts += "; includeSubDomains"
        out.append((b"strict-transport-security", hsts.encode("latin-1")))
    return out


_extra_headers: list | None = None


async def _read_body(receive, limit: int) -> bytes | None:
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


async def _send_response(send, request: Request, response) -> None:
    global _extra_headers
    if _extra_headers is None:
        _extra_headers = _security_headers()
    response["X-Request-Id"] = getattr(response, "_request_id_override", None) or request.request_id
    headers = [(name.encode("ascii"), value.encode("latin-1")) for name, value in response.items()]
    present = {name.lower() for name, _ in headers}
    headers.extend(h for h in _extra_headers if h[0] not in present)
    await send({"type": "http.response.start", "status": response.status_code, "headers": headers})
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
    probe = Request(scope, b"", request_id, started)
    try:
        if length > settings.MAX_BODY_BYTES:
            raise errors.PayloadTooLarge()
        body = await _read_body(receive, settings.MAX_BODY_BYTES)
    except errors.PayloadTooLarge as err:
        await _send_response(send, probe, errors.error_response(err, probe))
        return
    if body is None:
        return
    request = Request(scope, body, request_id, started)

    async def run():
        try:
            response = await view(request, **kwargs)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 (the envelope, never a traceback)
            logger.error("unhandled exception (request_id=%s) on %s %s", request_id, request.method, request.path,
                         exc_info=exc)
            response = errors.error_response(errors.Internal(), request)
        await _send_response(send, request, response)

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


async def app(scope, receive, send, view, kwargs) -> None:
    views.fast_path.set(True)  # this request's context only (each ASGI request runs in its own task)
    await _respond(scope, receive, send, view, kwargs, time.perf_counter(), new_id("req_"))

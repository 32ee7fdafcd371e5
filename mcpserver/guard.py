"""What every request to the MCP app passes through before the SDK sees it.

- Every response (metadata and OAuth routes included) carries `X-Request-Id` and the security headers the
  rest of the service sends.
- `/mcp` is stateless (`stateless_http`): there is nothing to stream from server to client, so `GET /mcp`
  (the SSE stream, which the transport lets a server refuse) and `DELETE /mcp` (no session to end) are 405
  with `Allow: POST` and the error envelope, and hold nothing. Any other method but POST and OPTIONS too.
- A body over MAX_BODY_BYTES is 413 with the error envelope (declared or streamed).
- Every `/mcp` request with a valid bearer counts against its key's rate limit (the same bucket as REST; a
  tool call inside it is not counted again) and at most MCP_MAX_CONCURRENT_PER_KEY requests of one key run at
  once in a process; beyond either, 429 `rate_limited` with the envelope and Retry-After.

The key resolved here is handed to the bearer verifier and the tool call through `current` (no second lookup).
"""

from __future__ import annotations

import json
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from api.door import read_body, run_in_api_thread, security_headers
from core import errors
from core.ids import new_id
from core.ratelimit import RateInfo
from core.ratelimit import hit as ratelimit_hit

MCP_PATH = "/mcp"
ALLOWED_METHODS = ("POST", "OPTIONS")


@dataclass
class RequestState:
    request_id: str
    token: str | None = None
    key: Any = None
    rate: RateInfo | None = None
    extra: dict = field(default_factory=dict)


current: ContextVar[RequestState | None] = ContextVar("mcp_request", default=None)

_in_flight: dict[int, int] = {}


def _bearer(scope) -> str | None:
    for name, value in scope.get("headers") or []:
        if name.lower() == b"authorization":
            scheme, _, token = value.decode("latin-1").strip().partition(" ")
            return token.strip() if scheme.lower() == "bearer" and token.strip() else None
    return None


def _content_length(scope) -> int:
    for name, value in scope.get("headers") or []:
        if name.lower() == b"content-length":
            try:
                return int(value)
            except ValueError:
                return 0
    return 0


async def _envelope(send, exc: errors.DomainError, request_id: str, extra: dict | None = None) -> None:
    body = json.dumps(errors.error_body(exc, request_id), ensure_ascii=False).encode()
    headers = {"content-type": "application/json", "content-length": str(len(body)), **(exc.headers or {}),
               **(extra or {})}
    await send({"type": "http.response.start", "status": exc.http_status,
                "headers": [(k.lower().encode("latin-1"), str(v).encode("latin-1")) for k, v in headers.items()]})
    await send({"type": "http.response.body", "body": body})


def _resolve(token: str):
    from accounts.services import key_authenticate

    return key_authenticate(authorization=f"Bearer {token}", oauth=True, cache_seconds=settings.API_KEY_CACHE_SECONDS)


async def handle(scope, receive, send, app) -> None:
    """Run `app` for one HTTP request to the MCP app with the rules above."""
    request_id = new_id("req_")
    extra_headers = security_headers()

    async def send_with_headers(message):
        if message["type"] == "http.response.start":
            headers = [h for h in message.get("headers", []) if h[0].lower() != b"x-request-id"]
            present = {h[0].lower() for h in headers}
            headers.append((b"x-request-id", request_id.encode()))
            headers.extend(h for h in extra_headers if h[0] not in present)
            message = {**message, "headers": headers}
        await send(message)

    if scope.get("path") != MCP_PATH:
        await app(scope, receive, send_with_headers)
        return

    method = scope.get("method", "GET").upper()
    if method not in ALLOWED_METHODS:
        await _envelope(send_with_headers, errors.MethodNotAllowed(
            f"{method} is not served at /mcp: this server is stateless (no server-to-client stream, no session "
            "to end); send JSON-RPC with POST."), request_id, {"Allow": ", ".join(ALLOWED_METHODS)})
        return
    if _content_length(scope) > settings.MAX_BODY_BYTES:
        await _envelope(send_with_headers, errors.PayloadTooLarge(), request_id)
        return

    body = b""
    if method == "POST":  # read (bounded) before anything runs: a streamed body over the limit is a clean 413
        try:
            body = await read_body(receive, settings.MAX_BODY_BYTES)
        except errors.PayloadTooLarge as exc:
            await _envelope(send_with_headers, exc, request_id)
            return
        if body is None:
            return  # the client went away
        receive = _replay(body, receive)

    state = RequestState(request_id=request_id, token=_bearer(scope))
    key_id = None
    if method == "POST" and state.token:
        try:
            state.key = await run_in_api_thread(_resolve, state.token)
        except errors.Unauthenticated:
            state.key = None  # the SDK answers 401 with its WWW-Authenticate challenge
        if state.key is not None:
            state.rate = await run_in_api_thread(ratelimit_hit, f"key:{state.key.pk}")
            # Over the limit, a tool call goes on to the pipeline, which answers it as a tool error carrying
            # the 429 (what MCP clients show an agent); any other request is refused here.
            if not state.rate.allowed and not _is_tool_call(body):
                await _envelope(send_with_headers, errors.RateLimited(), request_id, state.rate.headers())
                return
            key_id = state.key.pk
            cap = settings.MCP_MAX_CONCURRENT_PER_KEY
            if _in_flight.get(key_id, 0) >= cap:
                await _envelope(send_with_headers, errors.RateLimited(
                    f"At most {cap} concurrent /mcp requests per key; retry when one has finished.",
                    details={"concurrent_limit": cap}), request_id, {**state.rate.headers(), "Retry-After": "1"})
                return
            _in_flight[key_id] = _in_flight.get(key_id, 0) + 1

    token = current.set(state)
    try:
        await app(scope, receive, send_with_headers)
    finally:
        current.reset(token)
        if key_id is not None:
            left = _in_flight.get(key_id, 1) - 1
            if left > 0:
                _in_flight[key_id] = left
            else:
                _in_flight.pop(key_id, None)


def _replay(body: bytes, original):
    """The body already read, then the client's own messages (a disconnect when it goes away)."""
    sent = False

    async def receive():
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await original()
    return receive


def _is_tool_call(body: bytes) -> bool:
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return False
    return isinstance(message, dict) and message.get("method") == "tools/call"

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

import time

from api.door import _respond
from core.ids import new_id
from llmproxy import views

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


async def app(scope, receive, send, view, kwargs) -> None:
    views.fast_path.set(True)  # this request's context only (each ASGI request runs in its own task)
    await _respond(scope, receive, send, view, kwargs, time.perf_counter(), new_id("req_"))

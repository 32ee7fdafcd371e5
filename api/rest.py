"""The one adapter from HTTP to the pipeline, for both REST doors (api.views under Django's handler, api.door's fast
door): the key, the context, the body or the declared query parameters, `execute`, the HTTP response. A call answered
before its settlement (SETTLE_AFTER_RESPONSE) carries that settlement as `response.after_send`, which each door runs
once the response is made: the fast door on the thread that answered (the answer already handed to the event loop),
Django's handler when it closes the response."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpResponse

from accounts.services import key_authenticate
from api.pipeline import execute
from core.parsers import parse_json_object
from core.verbs import Context, Verb


def http_response(resp) -> HttpResponse:
    out = HttpResponse(resp.body, status=resp.status, content_type="application/json")
    for name, value in resp.headers.items():
        out[name] = value
    out._request_id_override = resp.request_id
    return out


def run_verb(request, verb: Verb, path_params: dict | None = None) -> HttpResponse:
    """One REST call of `verb`: `request` is a Django HttpRequest or the fast door's Request (headers, body,
    content_type, GET, request_id). Raises a DomainError for a refusal before the pipeline (the key, the body's
    encoding); the pipeline's own outcomes are responses."""
    key = key_authenticate(authorization=request.headers.get("Authorization"),
                           cache_seconds=settings.API_KEY_CACHE_SECONDS)
    ctx = Context(workspace=key.workspace, api_key=key, request_id=request.request_id, channel="rest")
    if verb.method == "POST":
        def raw():
            body = parse_json_object(request.body, request.content_type)
            return {**body, **path_params} if path_params else body  # path parameters (/v1/webhooks/<id>/test)
    else:
        raw = dict(path_params or {})
        query = request.GET
        for name in verb.query:  # declared query parameters only; others are ignored
            if name in query:
                raw[name] = query[name]
    later = []  # SETTLE_AFTER_RESPONSE: the settlement the pipeline leaves for after the response
    try:
        response = http_response(execute(verb, ctx=ctx, raw=raw, idempotency_key=request.headers.get("Idempotency-Key"),
                                         settle_later=later.append if settings.SETTLE_AFTER_RESPONSE else None))
    except BaseException:
        for settle in later:  # the answer will not be the one it promised: settle now all the same
            settle()
        raise
    response.after_send = later[0] if later else None
    return response

"""The REST door under Django's handler: one generic DRF view per registered verb, over the REST adapter
(api.rest.run_verb) both REST doors share."""

from __future__ import annotations

import re

from django.conf import settings
from django.db import connections
from django.http import JsonResponse
from django.urls import path
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework.views import APIView

from api.readiness import live_config_problems
from api.rest import run_verb
from core import errors
from core.schemas import ErrorSerializer, ServiceEnvelopeSerializer
from core.verbs import REGISTRY, Verb

COMMON_ERRORS = (errors.InvalidRequest, errors.Unauthenticated, errors.HttpsRequired, errors.RateLimited, errors.Internal)


class VerbView(APIView):
    verb: Verb = None  # set by as_view(verb=…)
    authentication_classes: list = []
    permission_classes: list = []

    def _handle(self, request, verb: Verb | None = None, **kwargs):
        response = run_verb(request._request, verb or self.verb, kwargs)
        after = response.after_send
        if after is not None:  # SETTLE_AFTER_RESPONSE: run when the handler closes the response, once it is out
            response.after_send = None
            response._resource_closers.append(after)
        return response

    def post(self, request, **kwargs):
        return self._handle(request, **kwargs)

    def get(self, request, **kwargs):
        return self._handle(request, **kwargs)


def _status_of(exc) -> int:
    return exc.http_status


def _documented_view(verb: Verb):
    """A VerbView subclass carrying the verb's OpenAPI description."""
    if verb.envelope:
        response = inline_serializer(
            name=f"{verb.name.title().replace('_', '')}Response",
            fields={"result": verb.output() if isinstance(verb.output, type) else _any_object(),
                    "service": ServiceEnvelopeSerializer()},
        )
    else:
        response = verb.output
    by_status: dict[int, list[str]] = {}
    extra = ()
    if verb.method == "POST":
        extra = (errors.IdempotencyKeyReused, errors.IdempotencyInProgress, errors.PayloadTooLarge,
                 errors.UnsupportedMediaType)
        if verb.idempotency != "optional":
            extra += (errors.IdempotencyKeyRequired,)
        if verb.max_charge:
            extra += (errors.InsufficientCredits, errors.KeyBudgetExceeded)
    for exc in (*COMMON_ERRORS, *extra, *verb.errors):
        by_status.setdefault(_status_of(exc), []).append(exc.code)
    if verb.scope:
        by_status.setdefault(403, []).append("insufficient_scope")
    responses = {200: response}
    for status, codes in sorted(by_status.items()):
        responses[status] = OpenApiResponse(ErrorSerializer, description="Error codes: " + ", ".join(sorted(set(codes))))
    parameters = []
    if verb.method == "POST":
        from drf_spectacular.utils import OpenApiParameter

        parameters.append(OpenApiParameter(
            "Idempotency-Key", str, OpenApiParameter.HEADER,
            required=verb.idempotency == "required",
            description="Replays the original response without charging again. "
            + ("Required." if verb.idempotency == "required" else
               "Required when confirmation_token is sent." if callable(verb.idempotency) else "Optional."),
        ))
    if verb.query and verb.input is not None:
        from drf_spectacular.utils import OpenApiParameter
        from rest_framework import serializers as drf_serializers

        fields = verb.input().fields
        for name in verb.query:
            f = fields[name]
            kind = int if isinstance(f, drf_serializers.IntegerField) else str
            enum = list(f.choices) if isinstance(f, drf_serializers.ChoiceField) else None
            parameters.append(OpenApiParameter(name, kind, OpenApiParameter.QUERY, required=False, enum=enum,
                                               description=str(f.help_text or "")))
    request = verb.input if verb.method == "POST" else None
    path_params = set(re.findall(r"<(?:\w+:)?(\w+)>", verb.path))
    if request is not None and path_params and set(request().fields) <= path_params:
        request = None  # everything it takes is in the path (POST /v1/webhooks/{webhook_id}/test): no body
    description = verb.description
    if verb.scope:
        description += f"\n\nRequires scope `{verb.scope}`."
    decorator = extend_schema(
        operation_id=verb.name, summary=verb.summary or verb.name, description=description.strip(),
        request=request, responses=responses, parameters=parameters,
        tags=list(verb.tags) or [verb.name.split("_")[0]],
    )
    attrs = {"verb": verb, "http_method_names": [verb.method.lower(), "options"]}
    handler = decorator(lambda self, request, **kw: self._handle(request, verb=verb, **kw))
    attrs[verb.method.lower()] = handler
    return type(f"{verb.name.title().replace('_', '')}View", (VerbView,), attrs)


def _any_object():
    from rest_framework import serializers

    return serializers.DictField()


def verb_urlpatterns(verbs=None):
    patterns = []
    by_route: dict[str, list[Verb]] = {}
    for verb in verbs if verbs is not None else [v for v in REGISTRY.values() if not v.test_only and v.rest_route]:
        by_route.setdefault(verb.path.lstrip("/"), []).append(verb)
    for route, group in by_route.items():
        view = _documented_view(group[0])
        if len(group) > 1:  # several verbs on one path, one per method (GET and POST /v1/webhooks)
            attrs = {"http_method_names": [v.method.lower() for v in group] + ["options"]}
            for other in group[1:]:
                attrs[other.method.lower()] = getattr(_documented_view(other), other.method.lower())
            view = type(f"{view.__name__}Multi", (view,), attrs)
        patterns.append(path(route, view.as_view(), name=f"verb-{group[0].name}"))
    return patterns


# --- health -----------------------------------------------------------------------------------------
def healthz(request):
    return JsonResponse({"status": "ok"})


def readyz(request):

    checks = {}
    try:
        with connections["default"].cursor() as cursor:
            cursor.execute("SELECT 1")
        checks["database"] = "ok"
    except Exception as exc:  # noqa: BLE001
        checks["database"] = f"error: {type(exc).__name__}"
    try:
        if settings.REDIS_URL:
            import redis

            redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2).ping()
        else:
            settings.BROKER_DIR.mkdir(parents=True, exist_ok=True)
            probe = settings.BROKER_DIR / ".ready"
            probe.write_text("ok")
        checks["broker"] = "ok"
    except Exception as exc:  # noqa: BLE001
        checks["broker"] = f"error: {type(exc).__name__}"
    ready = all(v == "ok" for v in checks.values())
    # Live-mode misconfiguration (CONTRACT 4.14): named here, each problem with its setting. The process still
    # serves (everything else works; the affected calls answer provider_unavailable with nothing charged), so
    # it does not make the instance unready: `status` says `degraded`.
    problems = live_config_problems()
    checks["configuration"] = "ok" if not problems else "error: " + "; ".join(problems)
    status = "unavailable" if not ready else "degraded" if problems else "ok"
    return JsonResponse({"status": status, "checks": checks}, status=200 if ready else 503)

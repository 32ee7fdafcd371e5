"""OpenAPI for the LLM routes. They are plain async Django views (streaming, no thread per stream), which
drf-spectacular does not enumerate; each gets a documentation-only DRF view as its `cls`, which is all the
schema generator looks at. These classes never serve a request."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    inline_serializer,
)
from rest_framework import serializers
from rest_framework.views import APIView

from core.schemas import ErrorSerializer, ServiceEnvelopeSerializer
from llmproxy import metering
from llmproxy.verbs import LlmChatIn
from llmproxy.views import OVERHEAD_HEADER

_OVERHEAD = OpenApiParameter(OVERHEAD_HEADER, str, OpenApiParameter.HEADER, response=True,
                             description="Milliseconds the passthrough itself added (total minus upstream time; "
                                         "for streams, up to the first output).")


def _errors(**by_status):
    return {status: OpenApiResponse(ErrorSerializer, description="Error codes: " + codes)
            for status, codes in by_status.items()}


ChatCompletionResponse = inline_serializer(
    name="LlmChatCompletion",
    fields={
        "id": serializers.CharField(),
        "object": serializers.CharField(help_text="chat.completion"),
        "model": serializers.CharField(help_text="The model id the request asked for (vendor/model)."),
        "choices": serializers.ListField(child=serializers.DictField()),
        "usage": inline_serializer(name="LlmUsage", fields={
            "prompt_tokens": serializers.IntegerField(), "completion_tokens": serializers.IntegerField(),
            "total_tokens": serializers.IntegerField()}),
        "service": ServiceEnvelopeSerializer(),
    },
)

CHAT_DESCRIPTION = f"""OpenAI-compatible chat completions (also at `/v1/llm/chat/completions`, so the `openai`
client works with `base_url={{base_url}}/v1/llm`). Only allowlisted models (`GET /v1/llm/models`); every other
request field passes through to the model provider untouched.

Billing: before calling the provider the call holds (prompt estimate + `max_completion_tokens`, else
`max_tokens`, else {metering.DEFAULT_MAX_TOKENS}) x `n` tokens at the model's price (402 `insufficient_credits`
if short, 402 `key_budget_exceeded` if the hold would pass the key's daily or monthly limit; no provider call
either way); it then settles exactly from the provider's `usage` (prompt + completion tokens),
refunding the rest. A provider failure before any output is 502 `provider_unavailable` with nothing charged.

Response: the provider's body plus `service`. With `stream: true` the response is server-sent events, the
provider's chunks as they come; `stream_options.include_usage` is always requested upstream, and the final
usage chunk (`choices: []`) carries `usage` and `service`, followed by `data: [DONE]`. A stream cut by either
side settles as `interrupted` (GET /v1/requests/{{id}}), charged for what was delivered; a provider cut ends
the stream with a `{{"error": …, "service": …}}` event and no `[DONE]`.

`Idempotency-Key` is honoured on non-streaming calls."""


class ChatDoc(APIView):
    @extend_schema(
        operation_id="llm_chat", summary="Chat completion with an allowlisted model, billed per token",
        description=CHAT_DESCRIPTION, tags=["llm"], request=LlmChatIn,
        parameters=[OpenApiParameter("Idempotency-Key", str, OpenApiParameter.HEADER, required=False,
                                     description="Non-streaming calls only: replays without charging again."),
                    _OVERHEAD],
        responses={
            200: OpenApiResponse(ChatCompletionResponse,
                                 description="A chat.completion plus `service`; or, with stream: true, "
                                             "text/event-stream of chat.completion.chunk objects."),
            **_errors(**{"400": "invalid_request, model_not_allowed", "401": "unauthenticated",
                         "402": "insufficient_credits, key_budget_exceeded", "409": "idempotency_key_reused, idempotency_in_progress",
                         "415": "unsupported_media_type", "429": "rate_limited",
                         "502": "provider_unavailable"}),
        },
        examples=[OpenApiExample("chat", request_only=True, value={
            "model": "vendor_a/model_small", "messages": [{"role": "user", "content": "Say hi"}], "max_tokens": 64})],
    )
    def post(self, request):  # pragma: no cover - documentation only
        raise NotImplementedError


class ChatCompletionsDoc(ChatDoc):
    @extend_schema(operation_id="llm_chat_completions", summary="Alias of POST /v1/llm/chat (OpenAI path)",
                   description="Same as POST /v1/llm/chat.", tags=["llm"], request=LlmChatIn,
                   parameters=[_OVERHEAD],
                   responses={200: ChatCompletionResponse,
                              **_errors(**{"400": "invalid_request, model_not_allowed", "401": "unauthenticated",
                                           "402": "insufficient_credits, key_budget_exceeded", "502": "provider_unavailable"})})
    def post(self, request):  # pragma: no cover - documentation only
        raise NotImplementedError


ModelObject = inline_serializer(name="LlmModel", fields={
    "id": serializers.CharField(help_text="vendor/model"), "object": serializers.CharField(help_text="model"),
    "created": serializers.IntegerField(), "owned_by": serializers.CharField(),
    "credits_per_1k_tokens": serializers.CharField(help_text="Price of 1,000 prompt + completion tokens."),
})


class ModelsDoc(APIView):
    @extend_schema(operation_id="llm_models", summary="The allowlisted models and their prices", tags=["llm"],
                   description="OpenAI-style model list. Free.",
                   responses={200: inline_serializer(name="LlmModelList", fields={
                       "object": serializers.CharField(), "data": ModelObject.__class__(many=True)}),
                       **_errors(**{"401": "unauthenticated", "429": "rate_limited"})})
    def get(self, request):  # pragma: no cover - documentation only
        raise NotImplementedError


class ModelDoc(APIView):
    @extend_schema(operation_id="llm_model", summary="One allowlisted model", tags=["llm"],
                   parameters=[OpenApiParameter("model_id", OpenApiTypes.STR, OpenApiParameter.PATH,
                                                description="e.g. vendor_a/model_large")],
                   responses={200: ModelObject, **_errors(**{"401": "unauthenticated", "404": "not_found"})})
    def get(self, request, model_id):  # pragma: no cover - documentation only
        raise NotImplementedError


def document(view, doc_cls):
    """Let drf-spectacular describe the async view `view` from `doc_cls`; Django still routes to `view`."""
    view.cls = doc_cls
    view.initkwargs = {}
    return view

"""`llm_chat` in the verb registry, so the MCP server (built from the registry) exposes it. REST is served by
llmproxy.views (streaming needs its own async view): `rest_route=False`.

Over MCP the call is non-streaming, through the same allowlist, hold and exact settlement as REST; the
tool's result is the REST body: the upstream's chat completion plus `service`."""

from __future__ import annotations

import json

import httpx
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core import errors
from core.verbs import Context, Outcome, Verb, register
from llmproxy import metering, services, upstream


@extend_schema_field({"anyOf": [
    {"type": "string"},
    {"type": "array", "items": {"type": "object", "properties": {"type": {"type": "string", "enum": ["text"]},
                                                                 "text": {"type": "string"}},
                                "required": ["type", "text"]}},
]})
class MessageContentField(serializers.JSONField):
    """Any JSON passes through to the model provider; the schema names the two shapes a chat message has."""


class MessageSerializer(serializers.Serializer):
    role = serializers.CharField(help_text="system, user, assistant or tool")
    content = MessageContentField(help_text="A string, or a list of content parts ({\"type\": \"text\", \"text\"}).",
                                  required=False, allow_null=True)


class LlmChatIn(serializers.Serializer):
    """Chat completions, OpenAI style. Unknown fields pass through to the model provider untouched."""

    model = serializers.CharField(help_text="An allowlisted model id (GET /v1/llm/models), e.g. vendor_a/model_small.")
    messages = MessageSerializer(many=True, help_text="The conversation, [{role, content}].")
    max_tokens = serializers.IntegerField(required=False, min_value=1, max_value=metering.MAX_COMPLETION_TOKENS,
                                          help_text=f"Completion cap; the hold assumes {metering.DEFAULT_MAX_TOKENS} when absent.")
    max_completion_tokens = serializers.IntegerField(required=False, min_value=1,
                                                    max_value=metering.MAX_COMPLETION_TOKENS)
    temperature = serializers.FloatField(required=False)
    stream = serializers.BooleanField(required=False, help_text="REST only (server-sent events); false over MCP.")

    def to_internal_value(self, data):
        if not isinstance(data, dict):
            raise serializers.ValidationError({"body": ["The body must be a JSON object."]})
        metering.validate_body(data)
        if data.get("stream") is True:
            raise errors.InvalidRequest("Streaming is available over REST (POST /v1/llm/chat with stream: true), "
                                        "not as a tool call.", details={"fields": {"stream": ["Must be false here."]}})
        services.validate(data)
        return dict(data)  # everything passes through


def _hold(ctx: Context, data: dict) -> int:
    return hold_for(data)


def complete(ctx: Context, body: dict) -> tuple[dict, dict, int]:
    """One non-streaming chat completion through the allowlist and the model's upstream: (the provider's body,
    usage with the model id, the exact charge in micro-credits). Billing is the caller's pipeline hold, settled
    to that charge; a verb that writes its prompt from data (replies' draft_reply) calls this too."""
    model = services.validate(body)
    try:
        resp = upstream.sync_client(model).post(model.chat_url,
                                                content=upstream.request_body(model, body, stream=False),
                                                headers=upstream.request_headers(model, ctx.request_id))
    except httpx.HTTPError as exc:
        raise upstream.unavailable(exc) from exc
    if resp.status_code >= 300:
        raise upstream.error_for_status(resp.status_code, resp.content)
    try:
        data = json.loads(resp.content)
        if not isinstance(data, dict):
            raise ValueError
    except ValueError as exc:
        raise errors.ProviderUnavailable("The model provider sent a malformed response; nothing was charged.") from exc
    tokens = metering.usage_tokens(data.get("usage"))
    if tokens is not None:
        usage = metering.usage_record(*tokens, estimated=False)
    else:
        usage = metering.usage_record(metering.prompt_estimate(body), metering.completion_estimate_of_body(data),
                                      estimated=True)
    return data, {"model": model.id, **usage}, model.charge_for(usage["total_tokens"])


def hold_for(body: dict) -> int:
    """What a call with this chat body must hold: the prompt bound plus its completion cap, at the model's price."""
    return services.validate(body).charge_for(metering.hold_tokens(body))


def run_llm_chat(ctx: Context, **body) -> Outcome:
    data, usage, charge = complete(ctx, body)
    return Outcome(result=data, charge=charge, usage=usage)  # `service` is added by the pipeline's settlement


llm_chat = register(Verb(
    name="llm_chat", path="/v1/llm/chat", run=run_llm_chat, input=LlmChatIn, max_charge=_hold,
    envelope=False, service_in_result=True, rest_route=False, tags=("llm",),
    errors=(errors.ModelNotAllowed, errors.InsufficientCredits, errors.ProviderUnavailable),
    summary="Chat completion with an allowlisted model, billed per token from the same balance",
    description=(
        "OpenAI-style chat completions. Holds (prompt bound: a token per byte of the body + max_tokens) at the model's price, then settles "
        "exactly from the provider's token usage and refunds the rest. The result is the provider's chat "
        "completion plus `service` (request_id, credits_charged, credits_available)."
    ),
))

"""Tool generation without a live server: schemas from serializers, descriptions, test-verb visibility."""

from __future__ import annotations

import json

import anyio
import pytest
from rest_framework import serializers

from accounts.models import ConfirmationToken
from accounts.services import token_approve
from billing.models import CreditAccount
from core.verbs import Outcome, StrictSerializer, Verb
from mcpserver import tools
from mcpserver.app import McpAsgiApp
from mcpserver.schema import serializer_schema
from tests import testverbs  # noqa: F401 - registers test_echo / test_confirm


class StepIn(serializers.Serializer):
    subject = serializers.CharField(required=False, allow_blank=True, help_text="Empty: reply in the thread.")
    wait_days = serializers.IntegerField(min_value=0, max_value=60, default=0)


class WindowIn(StrictSerializer):
    days = serializers.ListField(child=serializers.ChoiceField(choices=["mon", "tue"]), min_length=1)


class CampaignIn(StrictSerializer):
    name = serializers.CharField(max_length=200, help_text="Shown in the console.")
    steps = StepIn(many=True)
    window = WindowIn(required=False, allow_null=True, help_text="When to send.")
    email = serializers.EmailField(allow_null=True, required=False)
    max_credits = serializers.DecimalField(max_digits=12, decimal_places=6, required=False)
    confirmation_token = serializers.CharField(required=False)


def run_noop(ctx, **data):
    return Outcome(result=data)


def test_nested_serializers_are_inlined_with_constraints_and_help_text():
    schema = serializer_schema(CampaignIn)
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert schema["required"] == ["name", "steps"]
    props = schema["properties"]
    assert props["name"] == {"type": "string", "maxLength": 200, "minLength": 1, "description": "Shown in the console."}
    step = props["steps"]["items"]
    assert props["steps"]["type"] == "array" and step["type"] == "object"
    assert step["properties"]["wait_days"] == {"type": "integer", "minimum": 0, "maximum": 60, "default": 0}
    assert step["properties"]["subject"]["description"] == "Empty: reply in the thread."
    assert "additionalProperties" not in step  # a plain Serializer accepts what it ignores
    window = props["window"]
    assert window["type"] == ["object", "null"] and window["description"] == "When to send."
    assert window["additionalProperties"] is False  # a nested StrictSerializer refuses unknown fields too
    assert window["properties"]["days"]["items"] == {"type": "string", "enum": ["mon", "tue"]}
    assert window["properties"]["days"]["minItems"] == 1
    assert props["email"]["format"] == "email" and props["email"]["type"] == ["string", "null"]
    assert "description" not in schema  # the serializer's docstring is not agent-facing text
    text = json.dumps(schema)
    for openapi_only in ("nullable", "x-spec-enum-id", "allOf", "$ref", "refuses unknown fields"):
        assert openapi_only not in text


def test_field_names_that_look_like_schema_keywords_survive():
    class Odd(StrictSerializer):
        nullable = serializers.CharField(required=False)
        default = serializers.IntegerField(required=False)
        readOnly = serializers.BooleanField(required=False)  # noqa: N815

    assert set(serializer_schema(Odd)["properties"]) == {"nullable", "default", "readOnly"}


def test_tool_for_a_new_verb_needs_no_per_verb_code():
    verb = Verb(name="make_campaign", mcp_name="create_campaign", path="/v1/campaigns", run=run_noop, input=CampaignIn,
                idempotency="required", scope="campaign:write", summary="Create a draft campaign",
                description="Drafts never send.")
    tool = tools.tool_for(verb)
    assert tool.name == "create_campaign"
    # Every argument is listed (strict function calling); the optional ones, idempotency_key included (SPEC
    # 4.11), accept null for "not given".
    assert tool.input_schema["required"] == ["name", "steps", "window", "email", "max_credits",
                                             "confirmation_token", "idempotency_key"]
    assert tool.input_schema["properties"]["name"]["type"] == "string"
    assert {"type": "null"} in tool.input_schema["properties"]["confirmation_token"]["anyOf"]
    assert "idempotency_key_required" in tool.input_schema["properties"]["idempotency_key"]["description"]
    assert tool.input_schema["properties"]["idempotency_key"]["description"].startswith("Required for this tool")
    assert tool.description.startswith("Create a draft campaign.\n\nDrafts never send.")
    assert "`campaign:write`" in tool.description and "approval_url" in tool.description
    assert tool.annotations.read_only_hint is False and tool.annotations.open_world_hint is True
    assert tools.tool_for(verb) is tool  # cached per Verb object


def test_reserved_argument_name_is_refused():
    class Clash(StrictSerializer):
        idempotency_key = serializers.CharField()

    with pytest.raises(RuntimeError, match="reserves"):
        tools.input_schema(Verb(name="clash", path="/v1/clash", run=run_noop, input=Clash))


def test_test_verbs_are_not_tools_in_the_product(settings):
    settings.MCP_INCLUDE_TEST_VERBS = False
    assert not any(v.test_only for v in tools.exposed_verbs())
    assert tools.verb_for_tool("test_echo") is None
    settings.MCP_INCLUDE_TEST_VERBS = True
    assert {"test_echo", "test_confirm"} <= {v.name for v in tools.exposed_verbs()}


def test_requests_before_the_lifespan_get_an_error_envelope():
    app = McpAsgiApp()
    sent = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    anyio.run(app, {"type": "http", "method": "POST", "path": "/mcp", "headers": [], "query_string": b""},
              receive, send)
    assert sent[0]["status"] == 503
    assert b'"code":"internal"' in sent[1]["body"].replace(b" ", b"")


def test_pending_confirmation_is_not_replayed_over_rest_either(api, workspace, owner):
    """The retry rule the MCP docs give agents (same token, same key after approval) holds for REST too."""
    token = api.post("/v1/test_confirm", {"amount": 2}).json()["result"]["confirmation_token"]
    headers = {"Idempotency-Key": "rest-buy"}
    body = {"amount": 2, "confirmation_token": token}
    assert api.post("/v1/test_confirm", body, headers=headers).json()["error"]["code"] == "confirmation_pending"
    token_approve(token=ConfirmationToken.objects.get(), user=owner)
    done = api.post("/v1/test_confirm", body, headers=headers)
    assert done.status_code == 200 and done.json()["service"]["credits_charged"] == "0.000002"
    assert CreditAccount.objects.get(pk=workspace.pk).available_micros == 300_000_000 - 2

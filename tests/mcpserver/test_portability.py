"""Every tool's input schema as OpenAI's strict function calling and Gemini's function declarations take it
(checkers in mcpserver/portability.py, written from the two public documents), and the arguments such a
schema makes a model send ("null" for what it leaves out, {name, value} pairs for a map) reach the REST
serializer as the REST body would."""

from __future__ import annotations

import json

import pytest

from campaigns.models import Campaign, CampaignLead
from core.verbs import REGISTRY
from mcpserver import tools
from mcpserver.portability import gemini_problems, openai_strict_problems
from mcpserver.schema import arguments_from_portable, portable_schema
from sending.testing import make_active_mailbox
from tests import testverbs  # noqa: F401 - registers test_echo / test_confirm
from tests.campaigns.helpers import campaign_body
from tests.mcpserver.conftest import live as live  # noqa: F401 - fixture
from tests.mcpserver.conftest import mcp_session

PRODUCT_TOOLS_WITH_WARNINGS = ("setup_sending", "create_campaign", "llm_chat")


def _all_verbs():
    return list(REGISTRY.values())  # test-only verbs too: a new verb of any shape must stay portable


@pytest.mark.parametrize("verb", _all_verbs(), ids=lambda v: v.tool_name)
def test_every_tool_schema_is_accepted_by_both_subsets(verb):
    schema = tools.tool_for(verb).input_schema
    assert openai_strict_problems(schema) == []
    assert gemini_problems(schema, openai_marker=True) == []
    # The one point where the two documents contradict each other, and nothing else: OpenAI's strict mode
    # requires additionalProperties: false on every object, Gemini's Schema has no such field.
    raw = gemini_problems(schema)
    assert raw and all(p.endswith("unknown field 'additionalProperties'") for p in raw)
    # What the schemas say in words instead of keywords the subsets lack.
    text = json.dumps(schema)
    for keyword in ('"default"', '"nullable"', '"$ref"', '"oneOf"', '"allOf"', '"type": ["'):
        assert keyword not in text, (verb.tool_name, keyword)


def test_the_schemas_before_the_portable_form_were_refused():
    """The REST bodies' JSON Schema (what the tools served before): the MCP Inspector's portability warnings."""
    by_name = {v.tool_name: v for v in _all_verbs()}
    for name in PRODUCT_TOOLS_WITH_WARNINGS:
        rest = tools.rest_schema(by_name[name])
        assert openai_strict_problems(rest), name
    setup = tools.rest_schema(by_name["setup_sending"])
    assert any("type must be one value" in p for p in gemini_problems(setup, openai_marker=True))
    chat = tools.rest_schema(by_name["llm_chat"])
    assert any("format 'double'" in p for p in openai_strict_problems(chat))
    campaign = tools.rest_schema(by_name["create_campaign"])
    assert any("custom: an object must set additionalProperties: false" in p for p in openai_strict_problems(campaign))
    assert any("'default' is not supported" in p for p in openai_strict_problems(campaign))
    assert any("type must be one value" in p for p in gemini_problems(campaign, openai_marker=True))


@pytest.mark.parametrize(("schema", "openai", "gemini"), [
    ({"type": "object", "properties": {"a": {"type": ["string", "null"]}}, "required": ["a"],
      "additionalProperties": False}, None, "type must be one value"),
    ({"type": "object", "properties": {"a": {}}, "required": ["a"], "additionalProperties": False},
     "no type", "no type"),
    ({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": False},
     "every property must be required", None),
    ({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
     "additionalProperties: false", None),
    ({"type": "object", "properties": {"a": {"type": "integer", "default": 3}}, "required": ["a"],
      "additionalProperties": False}, "'default' is not supported", None),
    ({"type": "object", "properties": {"a": {"type": "string", "format": "email"}}, "required": ["a"],
      "additionalProperties": False}, None, "format 'email'"),
    ({"type": "object", "properties": {"a": {"type": "number", "format": "double"}}, "required": ["a"],
      "additionalProperties": False}, "format 'double'", None),
    ({"type": "object", "properties": {"a": {"type": "object", "additionalProperties": {"type": "string"}}},
      "required": ["a"], "additionalProperties": False}, "additionalProperties: false", "additionalProperties"),
    ({"type": "object", "properties": {"a": {"oneOf": [{"type": "string"}, {"type": "integer"}]}},
      "required": ["a"], "additionalProperties": False}, "no type", "unknown field 'oneOf'"),
    ({"type": "object", "properties": {"a": {"type": "integer", "enum": [1, 2]}}, "required": ["a"],
      "additionalProperties": False}, None, "enum must be a non-empty list of strings"),
    ({"type": "object", "properties": {"a-b": {"type": "string"}}, "required": ["a-b"],
      "additionalProperties": False}, None, "not a valid parameter name"),
    ({"anyOf": [{"type": "object"}]}, "root must be an object", "parameters must be an object"),
])
def test_the_checkers_refuse_what_their_documents_refuse(schema, openai, gemini):
    o, g = openai_strict_problems(schema), gemini_problems(schema, openai_marker=True)
    assert any(openai in p for p in o) if openai else o == [], o
    assert any(gemini in p for p in g) if gemini else g == [], g


def test_portable_form_keeps_the_meaning():
    rest = {"type": "object", "additionalProperties": False, "required": ["name"], "properties": {
        "name": {"type": "string", "maxLength": 5},
        "note": {"type": ["string", "null"], "description": "Free text."},
        "limit": {"type": "integer", "default": 25},
        "when": {"type": "string", "format": "date-time"},
        "id": {"type": "string", "format": "uuid"},
        "vars": {"type": "object", "additionalProperties": {}},
        "window": {"type": "object", "properties": {"tz": {"type": "string", "default": "UTC"}}},
    }}
    schema = portable_schema(rest)
    props = schema["properties"]
    assert schema["required"] == list(props)
    assert props["name"] == {"type": "string", "maxLength": 5}  # required: unchanged, not nullable
    assert props["note"] == {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "Free text."}
    assert props["limit"] == {"anyOf": [{"type": "integer"}, {"type": "null"}], "description": "Default: 25."}
    assert props["when"]["anyOf"][0] == {"type": "string", "format": "date-time"}
    assert "pattern" in props["id"]["anyOf"][0] and "format" not in props["id"]["anyOf"][0]
    pair = props["vars"]["anyOf"][0]["items"]
    assert pair["required"] == ["name", "value"] and "Given as a list of {name, value} pairs." in (
        props["vars"]["description"])
    window = props["window"]["anyOf"][0]
    assert window["additionalProperties"] is False and window["required"] == ["tz"]
    assert openai_strict_problems(schema) == [] and gemini_problems(schema, openai_marker=True) == []

    args = {"name": "x", "note": None, "limit": None, "when": None, "id": None,
            "vars": [{"name": "city", "value": "Oslo"}, {"name": "n", "value": 3}], "window": {"tz": None}}
    assert arguments_from_portable(rest, args) == {
        "name": "x", "note": None, "vars": {"city": "Oslo", "n": 3}, "window": {}}
    # What does not fit is left for the serializer to refuse with its own field errors.
    assert arguments_from_portable(rest, {"name": None, "vars": [{"name": "a"}]}) == {
        "name": None, "vars": [{"name": "a"}]}
    assert arguments_from_portable(rest, {"vars": {"city": "Oslo"}}) == {"vars": {"city": "Oslo"}}


@pytest.mark.django_db(transaction=True)
def test_a_strict_model_call_creates_the_same_campaign_as_rest(live, api_key, workspace):  # noqa: F811
    """Arguments as a model in strict mode writes them (every argument present, null where it has nothing,
    custom variables as pairs) over the official MCP client: the campaign is the one the REST body makes."""
    make_active_mailbox(workspace)
    body = campaign_body()
    args = {
        "name": body["name"],
        "leads": [
            {"email": "Ann@Acme.test", "first_name": "Ann", "last_name": None, "company_name": "Acme",
             "custom": [{"name": "city", "value": "Oslo"}]},
            {"email": "bob@beta.test", "first_name": None, "last_name": "Stone", "company_name": None,
             "custom": None},
        ],
        "steps": [{**body["steps"][0]}, {"subject": None, "body": body["steps"][1]["body"], "wait_days": 2}],
        "sending_window": {"timezone": None, "days": None, "start_hour": 8, "end_hour": None},
        "stop_on_reply": None,
        "idempotency_key": None,
    }

    async def fn(client):
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert openai_strict_problems(listed["create_campaign"].input_schema) == []
        missing = await client.call_tool("create_campaign", args)
        created = await client.call_tool("create_campaign", {**args, "idempotency_key": "strict-1"})
        return missing, created

    missing, created = mcp_session(live.url, api_key, fn)
    assert missing.structured_content["error"]["code"] == "idempotency_key_required"  # null = not given
    assert not created.is_error, created.content[0].text
    campaign = Campaign.objects.get(pk=created.structured_content["result"]["campaign_id"])
    assert campaign.sending_window["start_hour"] == 8 and campaign.sending_window["end_hour"] == 17
    leads = {lead.email: lead for lead in CampaignLead.objects.filter(campaign=campaign)}
    assert leads["ann@acme.test"].custom == {"city": "Oslo"}
    assert leads["bob@beta.test"].custom == {}

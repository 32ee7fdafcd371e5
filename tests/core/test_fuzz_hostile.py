"""Hostile but well-formed input is a 400 `invalid_request` naming the field, never a (retryable) 500
(issue 15.4): deep nesting, NaN / Infinity / 1e400, integers beyond 64 bits, NUL characters (PostgreSQL cannot
store them), a completion cap that overflows the hold, on every POST route and through the MCP door. The
hypothesis test throws arbitrary trees with these leaves at the API so the class stays closed. Every number
field of every verb refuses non-ASCII digits ("٥", "５"), which Python's int() reads as 5 (issue 15.8).

Runs on SQLite and, with DATABASE_URL set, on PostgreSQL (where a NUL in jsonb was the 500)."""

from __future__ import annotations

import json
import math
import re
import uuid
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from campaigns.models import Campaign
from core.verbs import product_verbs
from tests.campaigns.helpers import campaign_body

# raw JSON text of each hostile value, as a client would send it
HOSTILE = {
    "nan": "NaN",
    "infinity": "Infinity",
    "minus_infinity": "-Infinity",
    "1e400": "1e400",
    "minus_1e400": "-1e400",
    "int_beyond_64_bits": str(2**64),
    "nul": '"a\\u0000b"',
    "deep_990": "[" * 990 + "]" * 990,
    "deep_100000": "[" * 100_000 + "]" * 100_000,
}

POST_ROUTES = sorted({v.path for v in product_verbs() if v.method == "POST" and "<" not in v.path})


def _errors(resp):
    assert resp.status_code == 400, (resp.status_code, resp.content[:300])
    err = resp.json()["error"]
    assert err["code"] == "invalid_request"
    return err["details"]["fields"]


def _campaign_raw(value_text: str) -> str:
    marker = "\"__HOSTILE__\""
    body = campaign_body()
    body["leads"][0]["custom"] = {"v": "__HOSTILE__"}
    return json.dumps(body).replace(marker, value_text)


@pytest.mark.parametrize("shape", sorted(HOSTILE))
def test_hostile_value_in_lead_custom_is_400_naming_the_field(api, shape):
    resp = api.post("/v1/campaigns", raw=_campaign_raw(HOSTILE[shape]), headers={"Idempotency-Key": f"k-{shape}"})
    fields = _errors(resp)
    if shape.startswith("deep"):  # past the parser's own recursion limit the body as a whole is named
        assert list(fields) == ["body"] or any(name.startswith("leads[0].custom.v") for name in fields), fields
    else:
        assert any(name.startswith("leads[0].custom.v") for name in fields), fields
    assert Campaign.objects.count() == 0


def test_nul_in_a_key_is_400(api):
    raw = _campaign_raw('"x"').replace('{"v": "x"}', '{"v\\u0000": "x"}')
    assert "leads[0].custom.v\\u0000" in _errors(api.post("/v1/campaigns", raw=raw, headers={"Idempotency-Key": "k"}))


@pytest.mark.parametrize("path", POST_ROUTES)
@pytest.mark.parametrize("shape", sorted(HOSTILE))
def test_every_post_route_answers_hostile_shapes_with_400(api, path, shape):
    raw = '{"x": {"y": [' + HOSTILE[shape] + "]}}"
    resp = api.post(path, raw=raw, headers={"Idempotency-Key": f"k-{uuid.uuid4()}"})
    fields = _errors(resp)
    assert shape.startswith("deep") or any(name.startswith("x.y[0]") for name in fields), fields


@pytest.mark.parametrize("name, value", [
    ("max_tokens", 2**62), ("max_tokens", 2**63 - 1), ("max_tokens", 1_000_001),
    ("max_completion_tokens", 2**62), ("n", 10**6), ("max_tokens", 0),
])
def test_llm_completion_cap_that_would_overflow_the_hold_is_400(api, name, value):
    body = {"model": "vendor_a/model_small", "messages": [{"role": "user", "content": "hi"}], name: value}
    assert name in _errors(api.post("/v1/llm/chat", body))


def test_llm_hostile_values_are_400(api):
    for text in ("NaN", "1e400", '"\\u0000"'):
        raw = '{"model": "vendor_a/model_small", "messages": [{"role": "user", "content": ' + text + "}]}"
        assert "messages[0].content" in _errors(api.post("/v1/llm/chat", raw=raw))


def _nested(depth: int):
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("value, field", [
    (float("nan"), "leads[0].custom.v"), (float("inf"), "leads[0].custom.v"), (2**70, "leads[0].custom.v"),
    ("a\x00b", "leads[0].custom.v"), (_nested(5000), "leads[0].custom.v"),
])
def test_mcp_door_refuses_the_same_shapes(api_key, value, field):
    """Tool arguments arrive already parsed: the pipeline applies the same checks."""
    from mcpserver.tools import call_verb_sync

    body = campaign_body()
    body["leads"][0]["custom"] = {"v": value}
    body["idempotency_key"] = "mcp-1"
    resp = call_verb_sync("create_campaign", body, bearer=api_key)
    assert resp.status == 400, resp.body[:300]
    fields = resp.data["error"]["details"]["fields"]
    assert any(name.startswith(field) for name in fields), fields


def test_mcp_door_refuses_a_huge_completion_cap(api_key):
    from mcpserver.tools import call_verb_sync

    resp = call_verb_sync("llm_chat", {"model": "vendor_a/model_small", "max_tokens": 2**62,
                                       "messages": [{"role": "user", "content": "hi"}]}, bearer=api_key)
    assert resp.status == 400 and "max_tokens" in resp.data["error"]["details"]["fields"]


# --- the fuzz: arbitrary trees with hostile leaves ---------------------------------------------------
_leaf = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12),
    st.sampled_from(["\x00", "a\x00", "\u0665", "\uff15"]),
)
_tree = st.recursive(_leaf, lambda kids: st.one_of(st.lists(kids, max_size=3),
                                                   st.dictionaries(st.text(max_size=5), kids, max_size=3)),
                     max_leaves=12)


def _hostile(value, depth: int = 0) -> bool:
    if depth >= 60:
        return True
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return not -(2**63) <= value < 2**63
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, list):
        return any(_hostile(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return any("\x00" in k or _hostile(v, depth + 1) for k, v in value.items())
    return False


@hsettings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=_tree, depth=st.sampled_from([0, 1, 70]))
def test_fuzz_create_campaign_never_500(api, value, depth):
    for _ in range(depth):
        value = [value]
    body = campaign_body()
    body["leads"][0]["custom"] = {"v": value}
    raw = json.dumps(body, allow_nan=True)
    resp = api.post("/v1/campaigns", raw=raw, headers={"Idempotency-Key": f"k-{uuid.uuid4()}"})
    assert resp.status_code < 500, resp.content[:300]
    if _hostile(value, depth=3):  # custom.v sits at depth 3 of the body
        assert resp.status_code == 400 and resp.json()["error"]["code"] == "invalid_request"


# --- non-ASCII digits: every number field of every verb -----------------------------------------------
def _number_fields():
    """(verb, field path) for every integer, float, decimal and credit-string field of every verb's input."""
    from rest_framework import serializers

    out = []

    def walk(verb, ser, prefix):
        for name, f in ser.fields.items():
            if isinstance(f, serializers.ListSerializer):
                walk(verb, f.child, prefix + [name, 0])
            elif isinstance(f, serializers.Serializer):
                walk(verb, f, prefix + [name])
            elif (isinstance(f, serializers.IntegerField | serializers.FloatField | serializers.DecimalField)
                  or type(f).__name__ == "CreditStringField"):
                out.append((verb, prefix + [name]))

    for verb in product_verbs():
        if verb.input is not None and verb.name != "llm_chat":  # llm_chat: its own test above
            walk(verb, verb.input(), [])
    return out


def _label(path) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else (f".{p}" if i else p) for i, p in enumerate(path))


NUMBER_FIELDS = _number_fields()


@pytest.mark.parametrize("digits", ["\u0665", "\uff15", "1\u0660", "\u0665.5"])
@pytest.mark.parametrize("verb, path", NUMBER_FIELDS, ids=[f"{v.name}-{_label(p)}" for v, p in NUMBER_FIELDS])
def test_numbers_in_non_ascii_digits_are_400_on_every_verb(api, verb, path, digits):
    label = _label(path)
    if verb.method == "GET":
        if path[0] not in (getattr(verb, "query", None) or ()):
            pytest.skip("not a query parameter")
        url = re.sub(r"<[^>]+>", "x", verb.path)
        resp = api.get(f"{url}?{path[0]}={quote(digits)}")
        assert resp.status_code in (400, 404), resp.content[:300]
        if resp.status_code == 404:
            return  # the resource in the path does not exist; the list route is the one that matters
    else:
        body: dict = {}
        node = body
        for key, nxt in zip(path, path[1:] + [None], strict=True):
            if isinstance(key, int):
                continue  # `node` is already the list's first element
            if nxt is None:
                node[key] = digits
            elif isinstance(nxt, int):
                node = node.setdefault(key, [{}])[0]
            else:
                node = node.setdefault(key, {})
        resp = api.post(verb.path, body, headers={"Idempotency-Key": f"k-{uuid.uuid4()}"})
    fields = _errors(resp)
    normalized = {re.sub(r"\.(\d+)(?=\.|$)", r"[\1]", k) for k in fields}
    assert label in normalized, (label, fields)


# --- bounded work for hostile bodies -------------------------------------------------------------------------
def test_lone_surrogates_and_key_floods_are_cheap_400s(api):
    """A lone UTF-16 surrogate (with an Idempotency-Key too, whose hash needs UTF-8), a million unknown keys, and
    1,001 unknown keys: each a 400 envelope; an error lists at most 20 unknown fields."""
    import json as _json

    from core.verbs import MAX_LISTED_FIELDS

    for body, headers in [(b'{"email": "\\ud800"}', {}), (b'{"email": "\\ud800"}', {"Idempotency-Key": "k-sur"}),
                          (b'{"\\udc00": 1}', {})]:
        r = api.post("/v1/verify_email", raw=body, headers=headers)
        assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_request", r.content
    llm = b'{"model": "sandbox/echo", "messages": [{"role": "user", "content": "\\ud800"}]}'
    for path in ("/v1/llm/chat", "/v1/llm/chat/completions"):
        r = api.post(path, raw=llm)
        assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_request", (path, r.content)
    flood = _json.dumps({f"k{i}": 1 for i in range(1_000_000)}).encode()
    r = api.post("/v1/verify_email", raw=flood)
    assert r.status_code == 400 and len(r.content) < 2000
    many = _json.dumps({"email": "a@b.example", **{f"k{i}": 1 for i in range(500)}}).encode()
    r = api.post("/v1/verify_email", raw=many)
    fields = r.json()["error"]["details"]["fields"]
    assert r.status_code == 400 and len(fields) == MAX_LISTED_FIELDS + 1 and "480 more" in fields["..."][0]

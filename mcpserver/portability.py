"""Checkers for the two JSON Schema subsets that LLM function calling accepts, written from their public documents.

- `openai_strict_problems`: OpenAI function calling with `strict: true` (the "Supported schemas" section of the
  Structured Outputs guide): the root is an object and not `anyOf`; types string, number, boolean, integer,
  object, array, null (in a union), enum, anyOf; every object sets `additionalProperties: false` and lists every
  property in `required` (an optional parameter is a union with null); string keywords `pattern` and `format`
  (date-time, time, date, duration, email, hostname, ipv4, ipv6, uuid), `minLength`/`maxLength` (unsupported
  only for fine-tuned models); number keywords multipleOf, maximum, exclusiveMaximum, minimum, exclusiveMinimum;
  array keywords minItems, maxItems; `$defs`/`$ref`; not allOf, not, if/then/else, dependentRequired,
  dependentSchemas; at most 10 levels of nesting, 5000 properties, 1000 enum values.  Anything else (`default`
  among them) is refused with an error when `strict` is on.
- `gemini_problems`: Gemini function declarations' `parameters`, "a select subset of an OpenAPI 3.0 schema
  object" (the API reference's `Schema`): the fields type (one value, not a list: STRING, NUMBER, INTEGER,
  BOOLEAN, ARRAY, OBJECT, NULL), format (NUMBER: float, double; INTEGER: int32, int64; STRING: enum, date-time),
  title, description, nullable, enum (strings), items, minItems, maxItems, properties, required, minProperties,
  maxProperties, minLength, maxLength, pattern, minimum, maximum, anyOf, propertyOrdering, default, example.
  Any other field is refused ("Invalid JSON payload received. Unknown name ..."), `additionalProperties`,
  `$ref`, `oneOf`, `const` and `exclusiveMinimum` included.  Parameter names start with a letter or an
  underscore and hold only letters, digits and underscores, at most 64 characters.

The two documents contradict each other on one point: OpenAI's strict mode requires `additionalProperties:
false` on every object and Gemini's `Schema` has no such field.  `gemini_problems(..., openai_marker=True)`
tolerates exactly that marker (`false`, nothing else); see docs/mcp.md for what a Gemini client does with it.

Both return a list of problems, each "path: what", empty when the schema is accepted.
"""

from __future__ import annotations

import re
from typing import Any

_OPENAI_TYPES = {"string", "number", "boolean", "integer", "object", "array", "null"}
_OPENAI_COMMON = {"type", "description", "title", "enum", "anyOf", "$ref", "$defs"}
_OPENAI_BY_TYPE = {
    "string": {"pattern", "format", "minLength", "maxLength"},
    "number": {"multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"},
    "integer": {"multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"},
    "array": {"items", "minItems", "maxItems"},
    "object": {"properties", "required", "additionalProperties"},
    "boolean": set(),
    "null": set(),
}
_OPENAI_FORMATS = {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
_OPENAI_MAX_DEPTH = 10
_OPENAI_MAX_PROPERTIES = 5000
_OPENAI_MAX_ENUM_VALUES = 1000

_GEMINI_TYPES = {"string", "number", "integer", "boolean", "array", "object", "null"}
_GEMINI_FIELDS = {
    "type", "format", "title", "description", "nullable", "enum", "items", "minItems", "maxItems", "properties",
    "required", "minProperties", "maxProperties", "minLength", "maxLength", "pattern", "minimum", "maximum",
    "anyOf", "propertyOrdering", "default", "example",
}
_GEMINI_FORMATS = {"string": {"enum", "date-time"}, "number": {"float", "double"}, "integer": {"int32", "int64"}}
_GEMINI_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")


def _where(path: tuple) -> str:
    return "/".join(str(p) for p in path) or "(root)"


# --- OpenAI strict ------------------------------------------------------------------------------------
def openai_strict_problems(schema: Any) -> list[str]:
    problems: list[str] = []
    if not isinstance(schema, dict) or schema.get("type") != "object":
        problems.append("(root): the root must be an object schema (type: object)")
    elif "anyOf" in schema:
        problems.append("(root): the root must not be anyOf")
    counts = {"properties": 0, "enum": 0}
    defs = schema.get("$defs", {}) if isinstance(schema, dict) else {}
    _openai(schema, (), 1, problems, counts, defs)
    if counts["properties"] > _OPENAI_MAX_PROPERTIES:
        problems.append(f"(root): {counts['properties']} object properties, at most {_OPENAI_MAX_PROPERTIES}")
    if counts["enum"] > _OPENAI_MAX_ENUM_VALUES:
        problems.append(f"(root): {counts['enum']} enum values, at most {_OPENAI_MAX_ENUM_VALUES}")
    return problems


def _openai(node: Any, path: tuple, depth: int, problems: list[str], counts: dict, defs: dict) -> None:
    where = _where(path)
    if not isinstance(node, dict):
        problems.append(f"{where}: a schema must be an object, got {type(node).__name__}")
        return
    if depth > _OPENAI_MAX_DEPTH:
        problems.append(f"{where}: nested deeper than {_OPENAI_MAX_DEPTH} levels")
    if "$ref" in node:
        ref = node["$ref"]
        if ref != "#" and not (isinstance(ref, str) and ref.startswith("#/$defs/") and ref[8:] in defs):
            problems.append(f"{where}: $ref {ref!r} does not name a definition")
        return
    for name, sub in (node.get("$defs") or {}).items():
        _openai(sub, (*path, "$defs", name), depth, problems, counts, defs)
    if "anyOf" in node:
        branches = node["anyOf"]
        extra = set(node) - {"anyOf", "description", "title"}
        if extra:
            problems.append(f"{where}: anyOf beside {sorted(extra)} (put them inside the branches)")
        if not isinstance(branches, list) or not branches:
            problems.append(f"{where}: anyOf must be a non-empty list")
            return
        for i, branch in enumerate(branches):
            _openai(branch, (*path, "anyOf", i), depth, problems, counts, defs)
        return
    types = node.get("type")
    if types is None:
        if "enum" in node:
            types = sorted({_json_type(v) for v in node["enum"]})
        else:
            problems.append(f"{where}: no type (a schema needs type, enum, anyOf or $ref)")
            return
    type_list = types if isinstance(types, list) else [types]
    unknown = [t for t in type_list if t not in _OPENAI_TYPES]
    if unknown or not type_list:
        problems.append(f"{where}: unsupported type {types!r}")
        return
    allowed = set(_OPENAI_COMMON)
    for t in type_list:
        allowed |= _OPENAI_BY_TYPE[t]
    for key in node:
        if key not in allowed:
            problems.append(f"{where}: keyword {key!r} is not supported in strict mode")
    if "enum" in node:
        values = node["enum"]
        if not isinstance(values, list) or not values:
            problems.append(f"{where}: enum must be a non-empty list")
        else:
            counts["enum"] += len(values)
            for v in values:
                if _json_type(v) not in type_list and not (_json_type(v) == "integer" and "number" in type_list):
                    problems.append(f"{where}: enum value {v!r} does not match type {types!r}")
    if "format" in node and node["format"] not in _OPENAI_FORMATS:
        problems.append(f"{where}: format {node['format']!r} is not supported")
    if "object" in type_list:
        props = node.get("properties", {})
        if not isinstance(props, dict):
            problems.append(f"{where}: properties must be an object")
            props = {}
        counts["properties"] += len(props)
        if node.get("additionalProperties") is not False:
            problems.append(f"{where}: an object must set additionalProperties: false")
        required = node.get("required", [])
        missing = [name for name in props if name not in required]
        if missing:
            problems.append(f"{where}: every property must be required (a union with null makes it optional): "
                            f"{missing}")
        stray = [name for name in required if name not in props]
        if stray:
            problems.append(f"{where}: required names unknown properties {stray}")
        for name, sub in props.items():
            _openai(sub, (*path, "properties", name), depth + 1, problems, counts, defs)
    if "array" in type_list:
        if "items" not in node:
            problems.append(f"{where}: an array needs items")
        else:
            _openai(node["items"], (*path, "items"), depth + 1, problems, counts, defs)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "object" if isinstance(value, dict) else "array"


# --- Gemini function declarations ---------------------------------------------------------------------
def gemini_problems(schema: Any, *, openai_marker: bool = False) -> list[str]:
    problems: list[str] = []
    if not isinstance(schema, dict) or str(schema.get("type", "")).lower() != "object":
        problems.append("(root): parameters must be an object schema (type: object)")
    _gemini(schema, (), problems, openai_marker)
    return problems


def _gemini(node: Any, path: tuple, problems: list[str], openai_marker: bool) -> None:
    where = _where(path)
    if not isinstance(node, dict):
        problems.append(f"{where}: a schema must be an object, got {type(node).__name__}")
        return
    for key, value in node.items():
        if key == "additionalProperties" and openai_marker and value is False:
            continue
        if key not in _GEMINI_FIELDS:
            problems.append(f"{where}: unknown field {key!r}")
    t = node.get("type")
    if t is None:
        if "anyOf" not in node:
            problems.append(f"{where}: no type (a schema needs type or anyOf)")
    elif not isinstance(t, str):
        problems.append(f"{where}: type must be one value, not {t!r}")
        t = None
    elif t.lower() not in _GEMINI_TYPES:
        problems.append(f"{where}: unsupported type {t!r}")
        t = None
    t = t.lower() if isinstance(t, str) else None
    if "format" in node:
        allowed = _GEMINI_FORMATS.get(t or "", set())
        if node["format"] not in allowed:
            problems.append(f"{where}: format {node['format']!r} is not supported for type {t!r}")
    if "enum" in node:
        values = node["enum"]
        if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
            problems.append(f"{where}: enum must be a non-empty list of strings")
    if "anyOf" in node:
        branches = node["anyOf"]
        if not isinstance(branches, list) or not branches:
            problems.append(f"{where}: anyOf must be a non-empty list")
        else:
            for i, branch in enumerate(branches):
                _gemini(branch, (*path, "anyOf", i), problems, openai_marker)
    props = node.get("properties")
    if props is not None:
        if t != "object":
            problems.append(f"{where}: properties on a non-object schema")
        if not isinstance(props, dict):
            problems.append(f"{where}: properties must be an object")
        else:
            for name, sub in props.items():
                if not _GEMINI_NAME.match(name):
                    problems.append(f"{where}: property name {name!r} is not a valid parameter name")
                _gemini(sub, (*path, "properties", name), problems, openai_marker)
            stray = [name for name in node.get("required", []) if name not in props]
            if stray:
                problems.append(f"{where}: required names unknown properties {stray}")
    if t == "array":
        if "items" not in node:
            problems.append(f"{where}: an array needs items")
        else:
            _gemini(node["items"], (*path, "items"), problems, openai_marker)

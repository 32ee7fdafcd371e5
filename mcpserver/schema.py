"""JSON Schema for a verb's input, from the same DRF serializer that validates REST bodies.

drf-spectacular maps the fields (so custom fields annotated with `@extend_schema_field` or an
`OpenApiSerializerFieldExtension` look the same in /openapi.json and in the MCP tool list); nested
serializers, which it turns into `$ref`s to components, are inlined so that an agent sees one
self-contained object schema per tool.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import ComponentRegistry
from rest_framework.views import APIView

from core.verbs import StrictSerializer

_REF_PREFIX = "#/components/schemas/"


class _Inspector(AutoSchema):
    """An AutoSchema outside a view: just enough context for `_map_serializer`."""

    def __init__(self, method: str, path: str):
        super().__init__()
        self.registry = ComponentRegistry()
        self.method = method
        self.path = path
        self.path_regex = path
        view = APIView()
        view.request = None
        self.view = view


def _inline(node: Any, components: dict[str, tuple[dict, Any]], seen: tuple[str, ...] = ()) -> Any:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_REF_PREFIX):
            name = ref[len(_REF_PREFIX):]
            if name in seen or name not in components:  # a recursive shape: stop at a plain object
                return {"type": "object"}
            component_schema, obj = components[name]
            target = _inline(copy.deepcopy(component_schema), components, (*seen, name))
            target.pop("description", None)  # a serializer's docstring: the field's help_text is what agents need
            if _is_strict(obj) and target.get("type") == "object":
                target["additionalProperties"] = False
            extra = {k: v for k, v in node.items() if k != "$ref"}
            return {**target, **extra}
        return {k: _inline(v, components, seen) for k, v in node.items()}
    if isinstance(node, list):
        return [_inline(v, components, seen) for v in node]
    return node


def _is_strict(obj) -> bool:
    cls = obj if isinstance(obj, type) else type(obj)
    return issubclass(cls, StrictSerializer)


def _is_choice_listing(text: Any) -> bool:
    lines = str(text).splitlines()
    return bool(lines) and all(line.startswith("* `") for line in lines)


_SCHEMA_MAPS = ("properties", "patternProperties", "$defs")
_SUBSCHEMAS = ("items", "additionalProperties", "not", "anyOf", "oneOf", "allOf", "prefixItems")


def _json_schema(node: Any) -> Any:
    """OpenAPI 3.0 dialect -> plain JSON Schema: unwrap single `allOf`, `nullable` -> a null type, drop
    drf-spectacular's vendor keys and its generated enum listings."""
    if isinstance(node, list):
        return [_json_schema(v) for v in node]
    if not isinstance(node, dict):
        return node
    node = dict(node)
    if isinstance(node.get("allOf"), list) and len(node["allOf"]) == 1:
        inner = node.pop("allOf")[0]
        node = {**inner, **node}
    for key in [k for k in node if k.startswith("x-") or k in ("readOnly", "writeOnly")]:
        node.pop(key)
    if "enum" in node and _is_choice_listing(node.get("description", "")):
        node.pop("description")
    nullable = node.pop("nullable", False)
    out = {}
    for key, value in node.items():
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: _json_schema(sub) for name, sub in value.items()}
        elif key in _SUBSCHEMAS:
            out[key] = _json_schema(value)
        else:
            out[key] = value
    if nullable:
        if isinstance(out.get("type"), str):
            out["type"] = [out["type"], "null"]
            if "enum" in out and None not in out["enum"]:
                out["enum"] = [*out["enum"], None]
        else:
            description = out.pop("description", None)
            out = {"anyOf": [out, {"type": "null"}]}
            if description:
                out["description"] = description
    return out


def serializer_schema(serializer_class, *, method: str = "POST", path: str = "/") -> dict[str, Any]:
    """`{"type": "object", "properties": …, "required": […]}` for a serializer class (or None: no fields)."""
    if serializer_class is None:
        return {"type": "object", "properties": {}, "additionalProperties": False}
    inspector = _Inspector(method, path)
    schema = inspector._map_serializer(serializer_class(), "request")
    components = {
        component.name: (component.schema, component.object)
        for component in inspector.registry._components.values()
        if component.type == "schemas" and component.schema is not None
    }
    schema = _json_schema(_inline(schema, components))
    schema.pop("description", None)  # the serializer's docstring is for developers, not for agents
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    if issubclass(serializer_class, StrictSerializer):
        schema["additionalProperties"] = False
    return schema


# --- the portable form of a tool's input schema ------------------------------------------------------------
_NULL = {"type": "null"}
_SCALAR = {"anyOf": [{"type": "string"}, {"type": "number"}, {"type": "boolean"}]}
_UUID_PATTERN = "^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$"
_FORMAT_WORDS = {"email": "An email address.", "uri": "A URL.", "uuid": "A UUID."}


def _with_description(node: dict, text: str) -> dict:
    description = node.get("description", "")
    node["description"] = f"{description} {text}".strip() if description else text
    return node


def _is_nullable(node: dict) -> bool:
    t = node.get("type")
    if t == "null" or (isinstance(t, list) and "null" in t):
        return True
    return any(isinstance(b, dict) and _is_nullable(b) for b in node.get("anyOf") or ())


def _nullable(node: dict) -> dict:
    """`node` or null, as a union both subsets accept (never a list of types, never OpenAPI's `nullable`)."""
    if node.get("type") == "null" or (node.get("anyOf") and any(b == _NULL for b in node["anyOf"])):
        return node
    description = node.pop("description", None)
    out = {"anyOf": [*node["anyOf"], _NULL]} if set(node) == {"anyOf"} else {"anyOf": [node, _NULL]}
    if description:
        out["description"] = description
    return out


def portable_schema(node: Any) -> Any:
    """The input schema in the subset that both the OpenAI strict function-calling mode and Gemini function
    declarations accept (mcpserver/portability.py checks both), with the same meaning:

    - every object lists all its properties as required and sets `additionalProperties: false`; a property that
      may be left out becomes a union with null (`arguments_from_portable` turns that null back into
      "not given", so the REST serializer sees exactly what a REST client would send);
    - `type: [X, "null"]` becomes `anyOf: [{type: X, ...}, {type: "null"}]`;
    - `default` and the formats one of the subsets lacks move into the description (a UUID keeps a pattern);
    - a map (`additionalProperties: <schema>`) becomes a list of `{name, value}` pairs, and a schema that
      accepts any value (`{}`) a string, number or boolean.
    """
    if not isinstance(node, dict):
        return node
    node = dict(node)
    if "default" in node:
        default = node.pop("default")
        _with_description(node, f"Default: {json.dumps(default)}.")
    types = node.get("type")
    if isinstance(types, list):
        rest = [t for t in types if t != "null"]
        node["type"] = rest[0] if len(rest) == 1 else rest
        if "enum" in node:
            node["enum"] = [v for v in node["enum"] if v is not None]
        if len(rest) == 1 and "null" in types:
            return _nullable(portable_schema(node))
    fmt = node.get("format")
    if fmt is not None and not (node.get("type") == "string" and fmt == "date-time"):
        node.pop("format")
        if fmt == "uuid" and "pattern" not in node:
            node["pattern"] = _UUID_PATTERN
        if fmt in _FORMAT_WORDS:
            _with_description(node, _FORMAT_WORDS[fmt])
    if "anyOf" in node:
        branches = []
        for branch in (portable_schema(b) for b in node["anyOf"]):
            parts = branch["anyOf"] if isinstance(branch, dict) and set(branch) <= {"anyOf"} else [branch]
            branches.extend(b for b in parts if b not in branches)
        node["anyOf"] = branches
        return node
    if node.get("type") is None and "enum" not in node:
        return {**_SCALAR, **({"description": node["description"]} if "description" in node else {})}
    if node.get("type") == "object":
        extra = node.get("additionalProperties")
        if isinstance(extra, dict) and not node.get("properties"):
            pair = {"type": "object", "properties": {"name": {"type": "string", "minLength": 1},
                                                     "value": portable_schema(extra)},
                    "required": ["name", "value"], "additionalProperties": False}
            out = {"type": "array", "items": pair}
            if "description" in node:
                out["description"] = node["description"]
            return _with_description(out, "Given as a list of {name, value} pairs.")
        props = node.get("properties") or {}
        required = set(node.get("required") or ())
        out_props = {}
        for name, sub in props.items():
            sub = portable_schema(sub)
            if name not in required:
                sub = _nullable(sub) if not _is_nullable(sub) else sub
            out_props[name] = sub
        node["properties"] = out_props
        node["required"] = list(out_props)
        node["additionalProperties"] = False
        return node
    if node.get("type") == "array" and "items" in node:
        node["items"] = portable_schema(node["items"])
    return node


def _object_branch(schema: dict) -> dict | None:
    """The object (or map) schema inside `schema`, looking through a union with null."""
    if schema.get("type") == "object" or (isinstance(schema.get("type"), list) and "object" in schema["type"]):
        return schema
    for branch in schema.get("anyOf") or ():
        if isinstance(branch, dict) and (found := _object_branch(branch)) is not None:
            return found
    return None


def _array_items(schema: dict) -> dict | None:
    if schema.get("type") == "array" or (isinstance(schema.get("type"), list) and "array" in schema["type"]):
        return schema.get("items") if isinstance(schema.get("items"), dict) else None
    for branch in schema.get("anyOf") or ():
        if isinstance(branch, dict) and (found := _array_items(branch)) is not None:
            return found
    return None


def arguments_from_portable(schema: dict, value: Any) -> Any:
    """Tool arguments written against `portable_schema(schema)` -> the body `schema` describes (the REST body):
    a null for a property that `schema` neither requires nor allows to be null is dropped (it stands for "not
    given"), and a list of `{name, value}` pairs where `schema` has a map becomes that map.  Anything that does
    not fit is passed on unchanged, for the serializer to refuse with its usual field errors."""
    obj = _object_branch(schema)
    if obj is not None and isinstance(value, dict):
        props = obj.get("properties") or {}
        required = set(obj.get("required") or ())
        out = {}
        for key, item in value.items():
            sub = props.get(key)
            if sub is None:
                out[key] = item
            elif item is None and key not in required and not _is_nullable(sub):
                continue
            else:
                out[key] = arguments_from_portable(sub, item)
        return out
    if obj is not None and isinstance(value, list) and isinstance(obj.get("additionalProperties"), dict):
        pairs = [p for p in value if isinstance(p, dict) and set(p) == {"name", "value"}]
        names = [p["name"] for p in pairs]
        if len(pairs) == len(value) and len(set(names)) == len(names) and all(isinstance(n, str) for n in names):
            return {p["name"]: arguments_from_portable(obj["additionalProperties"], p["value"]) for p in pairs}
        return value
    items = _array_items(schema)
    if items is not None and isinstance(value, list):
        return [arguments_from_portable(items, v) for v in value]
    return value

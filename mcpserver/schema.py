"""JSON Schema for a verb's input, from the same DRF serializer that validates REST bodies.

drf-spectacular maps the fields (so custom fields annotated with `@extend_schema_field` or an
`OpenApiSerializerFieldExtension` look the same in /openapi.json and in the MCP tool list); nested
serializers, which it turns into `$ref`s to components, are inlined so that an agent sees one
self-contained object schema per tool.
"""

from __future__ import annotations

import copy
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

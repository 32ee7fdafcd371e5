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


def _inline(node: Any, components: dict[str, Any], seen: tuple[str, ...] = ()) -> Any:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_REF_PREFIX):
            name = ref[len(_REF_PREFIX):]
            if name in seen or name not in components:  # a recursive shape: stop at a plain object
                return {"type": "object"}
            target = _inline(copy.deepcopy(components[name]), components, (*seen, name))
            extra = {k: v for k, v in node.items() if k != "$ref"}
            return {**target, **extra}
        return {k: _inline(v, components, seen) for k, v in node.items()}
    if isinstance(node, list):
        return [_inline(v, components, seen) for v in node]
    return node


def serializer_schema(serializer_class, *, method: str = "POST", path: str = "/") -> dict[str, Any]:
    """`{"type": "object", "properties": …, "required": […]}` for a serializer class (or None: no fields)."""
    if serializer_class is None:
        return {"type": "object", "properties": {}, "additionalProperties": False}
    inspector = _Inspector(method, path)
    schema = inspector._map_serializer(serializer_class(), "request")
    components = {
        component.name: component.schema
        for component in inspector.registry._components.values()
        if component.type == "schemas" and component.schema is not None
    }
    schema = _inline(schema, components)
    schema.pop("description", None)  # the serializer's docstring is for developers, not for agents
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    if issubclass(serializer_class, StrictSerializer):
        schema["additionalProperties"] = False
    return schema

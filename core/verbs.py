"""The verb registry: what a verb is (`Verb`, `Context`, `Outcome`, its strict input serializer), the registry
every domain app registers into, input validation, the idempotency key's rule and the JSON encoding every door
uses. The kernel imports no domain app: the pipeline that composes them (`api.pipeline.execute`) lives above
them."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from rest_framework import serializers

from core import errors
from core.ratelimit import RateInfo


@dataclass
class Context:
    """Who is calling: resolved by the door (REST view or MCP tool) before `execute`."""

    workspace: Any
    api_key: Any
    request_id: str
    channel: str = "rest"
    hold: Any = None
    idempotency_key: str | None = None
    extra: dict = field(default_factory=dict)
    rate: RateInfo | None = None  # the door already counted this request against the key's rate limit (MCP)


@dataclass
class Outcome:
    """What a verb's run function returns: the result object and the exact charge in micro-credits."""

    result: Any
    charge: int = 0
    usage: dict | None = None
    status: int = 200
    # Unsaved model instances (the verb's result rows) the pipeline inserts in the settlement's own statement
    # (PostgreSQL) or transaction: they commit with the charge or not at all, and cost no round trip of their own.
    writes: tuple = ()


@dataclass
class Verb:
    name: str
    path: str
    run: Callable[..., Outcome]
    input: type[serializers.Serializer] | None = None
    output: Any = None  # serializer class (or OpenAPI type) for documentation
    method: str = "POST"
    scope: str | None = None
    # "optional", "required", or a callable(raw_body) -> bool for "required when …"
    idempotency: str | Callable[[dict], bool] = "optional"
    max_charge: int | Callable[[Context, dict], int] = 0
    envelope: bool = True  # False for the GET state reads: the body is the object itself
    # With envelope False: the result is an object that carries the `service` block itself (the LLM's chat
    # completion, OpenAI's shape plus `service`), filled in by the pipeline's settlement.
    service_in_result: bool = False
    record: bool = True  # open a request record (usage, GET /v1/requests/:id)
    mcp_name: str | None = None
    summary: str = ""
    description: str = ""
    errors: tuple = ()
    tags: tuple = ()
    test_only: bool = False
    rest_route: bool = True  # False when the app serves its own REST route (e.g. streaming LLM chat)
    query: tuple = ()  # GET verbs: input fields read from the query string (e.g. cursor, state), besides the path

    @property
    def tool_name(self) -> str:
        return self.mcp_name or self.name

    def requires_idempotency(self, raw: dict) -> bool:
        if callable(self.idempotency):
            return bool(self.idempotency(raw))
        return self.idempotency == "required"

    def hold_amount(self, ctx: Context, data: dict) -> int:
        return self.max_charge(ctx, data) if callable(self.max_charge) else int(self.max_charge)


REGISTRY: dict[str, Verb] = {}


def register(verb: Verb) -> Verb:
    existing = REGISTRY.get(verb.name)
    if existing is not None and existing is not verb and existing.path != verb.path:
        raise RuntimeError(f"verb {verb.name!r} registered twice")
    REGISTRY[verb.name] = verb
    return verb


def product_verbs() -> list[Verb]:
    return [v for v in REGISTRY.values() if not v.test_only]


# --- input validation -------------------------------------------------------------------------------
MAX_LISTED_FIELDS = 20  # an error lists at most this many unknown fields (and says how many more there were)


def unknown_fields(names) -> dict:
    """The error details of unknown fields: the first MAX_LISTED_FIELDS by name, then a count of the rest."""
    names = sorted(names)
    out = {name: ["Unknown field."] for name in names[:MAX_LISTED_FIELDS]}
    if len(names) > MAX_LISTED_FIELDS:
        out["..."] = [f"{len(names) - MAX_LISTED_FIELDS} more unknown fields."]
    return out


class StrictSerializer(serializers.Serializer):
    """A request body serializer that refuses unknown fields (CONTRACT section 2)."""

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError(unknown_fields(unknown))
            # DRF reads "٥" or "５" as 5 (int() and float() accept any Unicode digit): numbers are ASCII
            non_ascii = sorted(name for name, f in self.fields.items()
                               if isinstance(f, serializers.IntegerField | serializers.FloatField
                                             | serializers.DecimalField)
                               and isinstance(data.get(name), str) and not data[name].isascii())
            if non_ascii:
                raise serializers.ValidationError({name: ["Numbers are written with ASCII digits (0-9)."]
                                                   for name in non_ascii})
        return super().to_internal_value(data)


def validate(verb: Verb, raw: dict) -> dict:
    if verb.input is None:
        if raw:
            raise errors.InvalidRequest(details={"fields": unknown_fields(raw)})
        return {}
    ser = verb.input(data=raw)
    if not ser.is_valid():
        raise errors.InvalidRequest(details={"fields": errors.flatten_validation_errors(ser.errors)})
    return dict(ser.validated_data)


# --- responses --------------------------------------------------------------------------------------
def dumps(obj) -> bytes:
    return json.dumps(obj, cls=DjangoJSONEncoder, ensure_ascii=False, separators=(",", ":")).encode()


IDEMPOTENCY_KEY_MAX = 255


def check_idempotency_key(key: str) -> None:
    if not (1 <= len(key) <= IDEMPOTENCY_KEY_MAX) or not all(32 < ord(c) < 127 or c == " " for c in key):
        raise errors.InvalidRequest(
            "Idempotency-Key must be 1 to 255 printable ASCII characters.",
            details={"fields": {"Idempotency-Key": ["1 to 255 printable ASCII characters."]}},
        )

"""One MCP tool per registered verb, and the call adapter over `api.pipeline.execute`.

Nothing here knows any particular verb: names, schemas, descriptions and behaviour all come from the
`Verb` declarations in `core.verbs.REGISTRY`, so a verb registered by any app is a tool with no extra code.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import mcp_types as types
from django.conf import settings

from accounts.services import key_authenticate
from api.pipeline import VerbResponse, execute
from core import errors
from core.ids import new_id
from core.verbs import REGISTRY, Context, Verb, dumps
from mcpserver.schema import arguments_from_portable, portable_schema, serializer_schema

logger = logging.getLogger("mcpserver")

IDEMPOTENCY_ARG = "idempotency_key"
META_PREFIX = "service/"

CONFIRMATION_GUIDANCE = (
    "Human approval: a call without `confirmation_token` returns a quote or preview carrying "
    "`confirmation_token`, `confirmation_expires_at` and `approval_url`. Nothing is bought or sent yet. "
    "Show the approval_url to your human and wait for them to approve it in the console; then call this tool "
    "again with exactly the same arguments plus `confirmation_token` and an `idempotency_key` (reuse that key "
    "on every retry). While the token is not approved the call fails with error code `confirmation_pending`: "
    "ask the human again, do not loop. `confirmation_denied` means the human said no."
)


def exposed_verbs() -> list[Verb]:
    """Every registered verb, in registration order; test-only verbs only when the settings say so."""
    include_test = settings.MCP_INCLUDE_TEST_VERBS
    return [v for v in REGISTRY.values() if include_test or not v.test_only]


def verb_for_tool(name: str) -> Verb | None:
    for verb in exposed_verbs():
        if verb.tool_name == name:
            return verb
    return None


def _accepts_confirmation(verb: Verb) -> bool:
    return verb.input is not None and "confirmation_token" in verb.input().fields


def _idempotency_text(verb: Verb) -> str:
    if verb.idempotency == "required":
        rule = "Required for this tool: a call without it is refused with error `idempotency_key_required`."
    elif callable(verb.idempotency):
        rule = ("Required when `confirmation_token` is sent." if _accepts_confirmation(verb)
                else "Required for some calls (error `idempotency_key_required` says when).")
    else:
        rule = "Optional."
    return (
        f"{rule} 1 to 255 printable ASCII characters, scoped to your workspace and kept at least 24 hours. "
        "Retrying with the same key and the same arguments replays the original result without charging again; "
        "the same key with other arguments is error `idempotency_key_reused`."
    )


def _description(verb: Verb) -> str:
    parts = []
    if verb.summary:
        parts.append(verb.summary.rstrip(".") + ".")
    if verb.description:
        parts.append(verb.description.strip())
    if verb.envelope:
        parts.append(
            "Returns `{result, service}`; `service.credits_charged` is the exact charge of this call "
            "(\"0\" for misses) and `service.credits_available` the balance left."
        )
    else:
        parts.append("Free. Returns the object itself (no billing envelope).")
    if verb.scope:
        parts.append(f"Needs an API key with the scope `{verb.scope}` (else error `insufficient_scope`).")
    if _accepts_confirmation(verb):
        parts.append(CONFIRMATION_GUIDANCE)
    parts.append("The input schema lists every argument as required so that strict function-calling modes accept "
                 "it; send null for an argument you leave out (it then takes its default).")
    parts.append(
        "Errors come back as a tool error whose content is the API's error envelope "
        "`{\"error\": {\"code\", \"message\", \"request_id\", \"details\"}}`; codes `rate_limited`, `internal` and "
        "`provider_unavailable` are safe to retry with the same idempotency_key."
    )
    return "\n\n".join(parts)


def rest_schema(verb: Verb) -> dict[str, Any]:
    """The JSON Schema of the REST body (as /openapi.json has it) plus `idempotency_key`."""
    schema = serializer_schema(verb.input, method=verb.method, path=verb.path)
    properties = dict(schema.get("properties") or {})
    if IDEMPOTENCY_ARG in properties:
        raise RuntimeError(f"verb {verb.name!r} has an input field named {IDEMPOTENCY_ARG!r}, which MCP reserves")
    properties[IDEMPOTENCY_ARG] = {
        "type": "string", "minLength": 1, "maxLength": 255, "description": _idempotency_text(verb),
    }
    schema["properties"] = properties
    # SPEC 4.11: every tool accepts an *optional* idempotency_key; a tool whose REST verb demands the key
    # answers `idempotency_key_required`, as its description says.
    return schema


def input_schema(verb: Verb) -> dict[str, Any]:
    """The tool's inputSchema: `rest_schema` in the form that OpenAI's strict function calling and Gemini's
    function declarations take as it is (mcpserver.schema.portable_schema): every argument is listed as required
    and an optional one accepts null, which means "not given" (`call_verb_sync` drops it)."""
    return portable_schema(rest_schema(verb))


_TOOL_CACHE: dict[int, tuple[Verb, types.Tool]] = {}
_REST_SCHEMA_CACHE: dict[int, tuple[Verb, dict[str, Any]]] = {}


def _cached_rest_schema(verb: Verb) -> dict[str, Any]:
    cached = _REST_SCHEMA_CACHE.get(id(verb))
    if cached is not None and cached[0] is verb:
        return cached[1]
    schema = rest_schema(verb)
    _REST_SCHEMA_CACHE[id(verb)] = (verb, schema)
    return schema


def tool_for(verb: Verb) -> types.Tool:
    """The MCP tool declaration of a verb (cached per Verb object: schema generation is not free)."""
    cached = _TOOL_CACHE.get(id(verb))
    if cached is not None and cached[0] is verb:
        return cached[1]
    read_only = verb.method == "GET"
    tool = types.Tool(
        name=verb.tool_name,
        title=verb.summary or None,
        description=_description(verb),
        input_schema=portable_schema(_cached_rest_schema(verb)),
        annotations=types.ToolAnnotations(
            title=verb.summary or None,
            read_only_hint=read_only,
            destructive_hint=False if read_only else None,
            idempotent_hint=True if read_only else None,
            open_world_hint=not read_only,
        ),
    )
    _TOOL_CACHE[id(verb)] = (verb, tool)
    return tool


def list_tools() -> list[types.Tool]:
    seen: set[str] = set()
    tools = []
    for verb in exposed_verbs():
        if verb.tool_name in seen:
            logger.error("two verbs share the MCP tool name %r; only the first is served", verb.tool_name)
            continue
        seen.add(verb.tool_name)
        tools.append(tool_for(verb))
    return tools


# --- calls ------------------------------------------------------------------------------------------
def _error(exc: BaseException, request_id: str) -> VerbResponse:
    err = errors.as_domain_error(exc, request_id)
    return VerbResponse(status=err.http_status, body=dumps(errors.error_body(err, request_id)), request_id=request_id)


def call_verb_sync(name: str, arguments: dict[str, Any] | None, *, api_key=None, bearer: str | None = None
                   ) -> VerbResponse:
    """Run the verb through `execute` exactly as the REST door does (channel "mcp").

    `api_key` is the key the bearer verifier resolved for this HTTP request (else `bearer` is authenticated
    here). Runs on an API worker thread (api.door.run_in_api_thread: sync ORM), whose database
    connection SQLite keeps and PostgreSQL returns to its pool after the call. Each call has its own request id.
    """
    from mcpserver.guard import current

    state = current.get()
    request_id = state.request_id if state is not None else new_id("req_")  # = the HTTP X-Request-Id
    try:
        key = api_key or key_authenticate(authorization=f"Bearer {bearer}" if bearer else None)
        verb = verb_for_tool(name)
        if verb is None:
            raise errors.NotFound(f"Unknown tool {name!r}.", details={"tool": name})
        raw = dict(arguments or {})
        idempotency_key = raw.pop(IDEMPOTENCY_ARG, None)
        raw = arguments_from_portable(_cached_rest_schema(verb), raw)
        if idempotency_key is not None and not isinstance(idempotency_key, str):
            raise errors.InvalidRequest(
                "idempotency_key must be a string.",
                details={"fields": {IDEMPOTENCY_ARG: ["1 to 255 printable ASCII characters."]}},
            )
    except Exception as exc:  # noqa: BLE001 - rendered as the error envelope
        return _error(exc, request_id)
    ctx = Context(workspace=key.workspace, api_key=key, request_id=request_id, channel="mcp",
                  rate=state.rate if state is not None and state.key is not None and state.key.pk == key.pk else None)
    return execute(verb, ctx=ctx, raw=raw, idempotency_key=idempotency_key)


def to_tool_result(resp: VerbResponse) -> types.CallToolResult:
    """The REST body as the structured result (and as JSON text for clients that only read text)."""
    data = json.loads(resp.body)
    meta = {f"{META_PREFIX}http_status": resp.status, f"{META_PREFIX}request_id": resp.request_id}
    if resp.replayed:
        meta[f"{META_PREFIX}idempotent_replayed"] = True
    if resp.headers:  # what REST sends as headers: RateLimit-*, Retry-After on 429, Idempotent-Replayed
        meta[f"{META_PREFIX}headers"] = dict(resp.headers)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=resp.body.decode())],
        structured_content=data,
        is_error=not resp.ok,
        _meta=meta,
    )

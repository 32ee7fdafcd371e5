"""Strict JSON request bodies (CONTRACT section 2): a JSON object, Content-Type application/json or */*+json.

Hostile but well-formed JSON is a 400 `invalid_request` naming the field, never a 500:
- nesting deeper than MAX_DEPTH levels (Python's parser and everything after it recurse);
- `NaN`, `Infinity`, `-Infinity` (not JSON, though Python's parser takes them) and numbers beyond the float
  range such as `1e400` (they would become infinity);
- integers outside the signed 64-bit range (no column or upstream can hold them);
- a NUL character in any string or key (PostgreSQL's text and jsonb cannot store it);
- a lone UTF-16 surrogate (`"\ud800"` unpaired) in any string or key: not a character, it cannot be encoded as
  UTF-8 (for the idempotency record's hash, the database, an upstream);
- more than MAX_KEYS keys in one object (a body of a million unknown keys was parsed, checked and listed back in
  a 29 MB error).
`check_json_value` applies the same rules to an already-parsed value (the MCP door's tool arguments).
"""

import json
import math
import re

from rest_framework.parsers import BaseParser

from core.errors import InvalidRequest, UnsupportedMediaType

MAX_DEPTH = 64
INT_MAX = 2**63 - 1
MAX_KEYS = 1000  # keys in one object
MAX_BODY_KEYS = 100_000  # keys in the whole body, counted before parsing ("...": is one per key)
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")  # a body that spells a surrogate (paired or not)
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # json.loads pairs a valid pair into one character
SURROGATE_MESSAGE = "Must not contain a lone UTF-16 surrogate (\\ud800-\\udfff unpaired)."


def is_json_content_type(content_type: str | None) -> bool:
    media = (content_type or "").split(";")[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


def _path(parent: str, key) -> str:
    if isinstance(key, int):
        return f"{parent}[{key}]"
    return f"{parent}.{key}" if parent else str(key)


def _problem(value) -> str | None:
    kind = type(value)
    if kind is str:  # (the exact types json.loads makes first: this runs for every value of every body)
        return "Must not contain NUL (\\u0000) characters." if "\x00" in value else None
    if kind is bool or value is None:
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return "Must be a finite number (NaN, Infinity and numbers beyond about 1.8e308 are refused)."
    if isinstance(value, int) and not isinstance(value, bool) and not -INT_MAX - 1 <= value <= INT_MAX:
        return "Integers must fit in 64 bits (-9223372036854775808 to 9223372036854775807)."
    if isinstance(value, str) and "\x00" in value:
        return "Must not contain NUL (\\u0000) characters."
    return None


def _render(node) -> str:
    """The field path of a node of check_json_value's walk: (parent node, key), or None for the body itself."""
    keys = []
    while node is not None:
        node, key = node
        keys.append(key)
    path = ""
    for key in reversed(keys):
        path = _path(path, key)
    return path


def check_json_value(data, *, surrogates: bool = True) -> None:
    """Raise InvalidRequest (with the field path) for any hostile shape listed in the module docstring.
    Iterative: a value nested beyond any recursion limit is walked without recursing. A field's path is only
    spelled out for a field that has a problem (building one for every value was most of the walk's cost)."""
    fields: dict[str, list[str]] = {}
    stack = [(None, data, 0)]
    while stack and len(fields) < 20:
        node, value, depth = stack.pop()
        if isinstance(value, dict | list):
            if depth >= MAX_DEPTH:
                fields.setdefault(_render(node) or "body", []).append(f"Nested too deeply (at most {MAX_DEPTH} levels).")
                continue
            if isinstance(value, dict) and len(value) > MAX_KEYS:
                fields.setdefault(_render(node) or "body", []).append(f"At most {MAX_KEYS} keys in one object.")
                continue
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                if surrogates and isinstance(key, str) and _LONE_SURROGATE.search(key):
                    fields.setdefault(_render(node) or "body", []).append("Keys: " + SURROGATE_MESSAGE)
                    continue
                if isinstance(key, str) and "\x00" in key:
                    fields.setdefault(_render((node, key)).replace("\x00", "\\u0000"), []).append(
                        "Keys must not contain NUL (\\u0000) characters.")
                    continue
                stack.append(((node, key), item, depth + 1))
        else:
            problem = _problem(value)
            if problem is None and surrogates and type(value) is str and _LONE_SURROGATE.search(value):
                problem = SURROGATE_MESSAGE
            if problem:
                fields.setdefault(_render(node) or "body", []).append(problem)
    if fields:
        raise InvalidRequest(details={"fields": fields})


def parse_json_object(body: bytes, content_type: str | None) -> dict:
    """The request body as a dict: empty body -> {}; non-JSON content type -> 415; anything else -> 400."""
    if not body or not body.strip():
        return {}
    if not is_json_content_type(content_type):
        raise UnsupportedMediaType()
    if body.count(b'":') > MAX_BODY_KEYS:  # refused before the parse pays for them
        raise InvalidRequest(f"The body has too many keys (at most {MAX_KEYS} in one object).",
                             details={"fields": {"body": [f"At most {MAX_KEYS} keys in one object."]}})
    try:
        data = json.loads(body)
    except RecursionError as exc:
        raise InvalidRequest(f"The body is nested too deeply (at most {MAX_DEPTH} levels).",
                             details={"fields": {"body": [f"Nested too deeply (at most {MAX_DEPTH} levels)."]}}) from exc
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidRequest(f"Malformed JSON body: {exc}") from exc
    if not isinstance(data, dict):
        raise InvalidRequest("The body must be a JSON object.")
    # strings are only searched for lone surrogates when the body spells one (\\udXXX): the common body costs nothing
    check_json_value(data, surrogates=bool(_SURROGATE_ESCAPE.search(body)))
    return data


class StrictJSONParser(BaseParser):
    media_type = "application/json"

    def parse(self, stream, media_type=None, parser_context=None):
        return parse_json_object(stream.read() if stream else b"", media_type or self.media_type)

"""Strict JSON request bodies (CONTRACT section 2): a JSON object, Content-Type application/json or */*+json."""

import json

from rest_framework.parsers import BaseParser

from core.errors import InvalidRequest, UnsupportedMediaType


def is_json_content_type(content_type: str | None) -> bool:
    media = (content_type or "").split(";")[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


def parse_json_object(body: bytes, content_type: str | None) -> dict:
    """The request body as a dict: empty body -> {}; non-JSON content type -> 415; anything else -> 400."""
    if not body or not body.strip():
        return {}
    if not is_json_content_type(content_type):
        raise UnsupportedMediaType()
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidRequest(f"Malformed JSON body: {exc}") from exc
    if not isinstance(data, dict):
        raise InvalidRequest("The body must be a JSON object.")
    return data


class StrictJSONParser(BaseParser):
    media_type = "application/json"

    def parse(self, stream, media_type=None, parser_context=None):
        return parse_json_object(stream.read() if stream else b"", media_type or self.media_type)

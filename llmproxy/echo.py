"""The built-in sandbox echo upstream: an OpenAI-style `/chat/completions` with deterministic usage.

It answers `echo: <the last user message>`. Tokens are whitespace-separated words:
- prompt_tokens = 3 + sum over messages of (4 + words in the message's text);
- completion_tokens = words in the answer, cut at `max_completion_tokens` / `max_tokens`
  (finish_reason `length` when cut, else `stop`).
Streaming sends one word per chunk (SSE), a final chunk with the finish_reason, the usage chunk when
`stream_options.include_usage` is set, then `data: [DONE]`, exactly like an OpenAI-style upstream.

Reached by `upstream_base_url: "sandbox://echo"`: `answer` runs it in process (no socket, no thread) for the
passthrough, and `EchoTransport`, an httpx transport, for the sync callers.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator

import httpx


def _text(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def _words(text: str) -> list[str]:
    return text.split()


def plan(body: dict) -> dict:
    """Everything the echo answer is made of, deterministically from the request body."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    prompt_tokens = 3 + sum(4 + len(_words(_text(m.get("content")))) for m in messages)
    last_user = next((_text(m.get("content")) for m in reversed(messages) if m.get("role") == "user"), "")
    words = ["echo:", *_words(last_user)]
    cap = body.get("max_completion_tokens") or body.get("max_tokens")
    finish = "stop"
    if isinstance(cap, int) and not isinstance(cap, bool) and 0 < cap < len(words):
        words, finish = words[:cap], "length"
    digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:24]
    return {
        "id": f"chatcmpl-echo{digest}", "created": int(time.time()), "model": str(body.get("model") or "echo"),
        "words": words, "finish_reason": finish,
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": len(words),
                  "total_tokens": prompt_tokens + len(words)},
    }


def completion(body: dict) -> dict:
    p = plan(body)
    return {
        "id": p["id"], "object": "chat.completion", "created": p["created"], "model": p["model"],
        "choices": [{"index": 0, "message": {"role": "assistant", "content": " ".join(p["words"])},
                     "logprobs": None, "finish_reason": p["finish_reason"]}],
        "usage": p["usage"], "system_fingerprint": "sandbox-echo",
    }


def stream_events(body: dict) -> Iterator[bytes]:
    p = plan(body)
    base = {"id": p["id"], "object": "chat.completion.chunk", "created": p["created"], "model": p["model"],
            "system_fingerprint": "sandbox-echo"}
    include_usage = bool((body.get("stream_options") or {}).get("include_usage"))

    def event(choices, usage=None) -> bytes:
        chunk = {**base, "choices": choices}
        if include_usage:
            chunk["usage"] = usage
        return b"data: " + json.dumps(chunk, separators=(",", ":")).encode() + b"\n\n"

    yield event([{"index": 0, "delta": {"role": "assistant", "content": ""}, "logprobs": None, "finish_reason": None}])
    last = len(p["words"]) - 1
    for i, word in enumerate(p["words"]):
        text = word if i == last else word + " "
        yield event([{"index": 0, "delta": {"content": text}, "logprobs": None, "finish_reason": None}])
    yield event([{"index": 0, "delta": {}, "logprobs": None, "finish_reason": p["finish_reason"]}])
    if include_usage:
        yield event([], p["usage"])
    yield b"data: [DONE]\n\n"


def _error(status: int, message: str) -> tuple[int, str, list[bytes]]:
    body = {"error": {"message": message, "type": "invalid_request_error", "code": None}}
    return status, "application/json", [json.dumps(body).encode()]


def answer(content: bytes, method: str = "POST", path: str = "/chat/completions") -> tuple[int, str, list[bytes]]:
    """The echo upstream's answer to one request: (status, content type, body parts; one part per SSE event
    when streaming)."""
    if method != "POST" or not path.endswith("/chat/completions"):
        return _error(404, "Unknown path.")
    try:
        body = json.loads(content or b"{}")
    except ValueError:
        return _error(400, "Malformed JSON.")
    if not isinstance(body, dict) or not body.get("messages"):
        return _error(400, "messages is required.")
    if body.get("stream"):
        return 200, "text/event-stream", list(stream_events(body))
    return 200, "application/json", [json.dumps(completion(body)).encode()]


def handle(request: httpx.Request) -> httpx.Response:
    status, content_type, parts = answer(request.content, request.method, request.url.path)
    return httpx.Response(status, headers={"content-type": content_type}, content=b"".join(parts))


class EchoTransport(httpx.AsyncBaseTransport, httpx.BaseTransport):
    """An httpx transport serving the echo upstream in process (sync and async clients)."""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        await request.aread()
        return handle(request)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        request.read()
        return handle(request)

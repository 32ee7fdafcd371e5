"""Token estimates, the hold, and the charge (CONTRACT 4.9). Pure functions, no I/O.

- Price is on prompt + completion tokens, exact to the token: `tokens * credits_per_1k_tokens / 1000`,
  rounded up to the next micro-credit.
- Hold before the upstream call: (prompt bound + the completion cap x `n`) at the model's price.
  The completion cap is `max_completion_tokens`, else `max_tokens`, else DEFAULT_MAX_TOKENS.
- Prompt bound (`prompt_bound`): an upper bound, not an estimate, so a settled charge cannot
  exceed the hold however the prompt is written: one token per byte of the whole request body as compact
  UTF-8 JSON, plus REMOTE_PART_TOKENS per content part that points at content elsewhere (an image URL).
  Why it holds: byte-level BPE tokenizers (the GPT, Llama 3, Mistral families) and SentencePiece with byte
  fallback never make more tokens than the UTF-8 bytes they read; everything a provider turns into prompt
  tokens (messages, tools, functions, response_format schemas) is in the body; and the JSON around each
  message (at least 24 bytes) exceeds the few tokens of the chat template (OpenAI: 3 per message + 3).
  An image given by URL is counted by its pixels, not its URL: the allowance covers the largest image
  the common providers count (OpenAI high detail ~1,445; patch-based models up to ~2,500 tokens).
  When a provider still reports more than was held (a remote file or tokenizer outside these
  assumptions), the excess is charged only as far as the available balance goes (never below zero;
  `billing.services._settle_above_hold`) and the usage recorded is the provider's.
- Prompt estimate (`prompt_estimate`): one token per 4 bytes (UTF-8) of the JSON of `messages` (plus
  `tools`/`functions`), rounded up; only for settling when a provider reports no usage.
- Settlement uses the upstream's `usage` when it reports one. Without it (an upstream that ignores
  `stream_options.include_usage`, or a stream cut by either side) the charge is the prompt estimate plus,
  for what was delivered, one token per 4 bytes of generated text and never fewer than one token per
  delivered content chunk (OpenAI-style upstreams stream one token per chunk).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from core import errors

DEFAULT_MAX_TOKENS = 4096
# Largest completion cap and `n` accepted: the hold is (prompt + cap * n) tokens at the model's price and must
# stay a sane integer (2^62 tokens overflowed the hold column: a 500 instead of a 400).
MAX_COMPLETION_TOKENS = 1_000_000
MAX_CHOICES = 128
BYTES_PER_TOKEN = 4


def estimate_text_tokens(n_bytes: int) -> int:
    return -(-n_bytes // BYTES_PER_TOKEN)


def prompt_estimate(body: dict) -> int:
    parts = {k: body[k] for k in ("messages", "tools", "functions") if body.get(k) is not None}
    blob = json.dumps(parts, ensure_ascii=False, separators=(",", ":")).encode()
    return estimate_text_tokens(len(blob))


REMOTE_PART_TOKENS = 2_500


def _remote_parts(body: dict) -> int:
    """Content parts whose tokens are not in the body's bytes: images (and anything else) given by URL."""
    count = 0
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            for part in content:
                if isinstance(part, dict) and part.get("type") not in (None, "text", "input_text"):
                    count += 1
    return count


def prompt_bound(body: dict) -> int:
    """An upper bound on the prompt tokens any supported provider can count for `body` (module docstring)."""
    blob = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
    return len(blob) + REMOTE_PART_TOKENS * _remote_parts(body)


def _positive_int(body: dict, name: str, fields: dict, maximum: int) -> int | None:
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= maximum:
        fields[name] = [f"Must be an integer from 1 to {maximum}."]
        return None
    return value


def validate_body(body: dict) -> None:
    """The few fields the service itself relies on; everything else passes through untouched."""
    fields: dict[str, list[str]] = {}
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        fields["messages"] = ["A non-empty list of {role, content} objects is required."]
    else:
        for i, message in enumerate(messages):
            if not isinstance(message, dict) or not isinstance(message.get("role"), str):
                fields[f"messages[{i}]"] = ["Each message is an object with a string role."]
    for name in ("max_tokens", "max_completion_tokens"):
        _positive_int(body, name, fields, MAX_COMPLETION_TOKENS)
    _positive_int(body, "n", fields, MAX_CHOICES)
    if "stream" in body and body["stream"] is not None and not isinstance(body["stream"], bool):
        fields["stream"] = ["Must be true or false."]
    if "stream_options" in body and body["stream_options"] is not None and not isinstance(body["stream_options"], dict):
        fields["stream_options"] = ["Must be an object."]
    if not isinstance(body.get("model"), str) or not body.get("model"):
        fields["model"] = ["An allowlisted model id (GET /v1/llm/models) is required."]
    if fields:
        raise errors.InvalidRequest(details={"fields": fields})


def completion_cap(body: dict) -> int:
    for name in ("max_completion_tokens", "max_tokens"):
        value = body.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return DEFAULT_MAX_TOKENS


def choices(body: dict) -> int:
    """How many choices the call asks for (`n`, default 1)."""
    n = body.get("n")
    return n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else 1


def hold_tokens(body: dict) -> int:
    return prompt_bound(body) + completion_cap(body) * choices(body)


def _text_of_delta(delta: dict) -> str:
    out = []
    for key in ("content", "refusal", "reasoning_content"):
        value = delta.get(key)
        if isinstance(value, str):
            out.append(value)
    for call in delta.get("tool_calls") or []:
        if isinstance(call, dict):
            fn = call.get("function") or {}
            out.append(str(fn.get("name") or "") + str(fn.get("arguments") or ""))
    fn = delta.get("function_call")
    if isinstance(fn, dict):
        out.append(str(fn.get("name") or "") + str(fn.get("arguments") or ""))
    return "".join(out)


def usage_tokens(usage) -> tuple[int, int] | None:
    """(prompt, completion) from an upstream usage object, or None if it is not usable."""
    if not isinstance(usage, dict):
        return None
    prompt, completion, total = usage.get("prompt_tokens"), usage.get("completion_tokens"), usage.get("total_tokens")
    ints = [isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in (prompt, completion)]
    if all(ints):
        return prompt, completion
    if isinstance(total, int) and not isinstance(total, bool) and total >= 0:
        p = prompt if ints[0] else 0
        return p, max(0, total - p)
    return None


@dataclass
class StreamMeter:
    """Counts what a stream delivered, for settlement when no usage arrives."""

    prompt_estimate: int
    chunks: int = 0
    text_bytes: int = 0
    usage: dict | None = None
    finished: set = field(default_factory=set)  # the indexes of the choices that have a finish_reason

    def observe(self, chunk: dict) -> None:
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, dict):
                continue
            text = _text_of_delta(choice.get("delta") or {})
            if text:
                self.chunks += 1
                self.text_bytes += len(text.encode())
            if choice.get("finish_reason"):
                index = choice.get("index", 0)
                self.finished.add(index if isinstance(index, int) else str(index))
        if usage_tokens(chunk.get("usage")) is not None:
            self.usage = chunk["usage"]

    def delivered_completion_estimate(self) -> int:
        return max(self.chunks, estimate_text_tokens(self.text_bytes))

    def settle_usage(self) -> dict:
        """Usage to charge and to record: the upstream's own when it sent one, else the estimate."""
        tokens = usage_tokens(self.usage)
        if tokens is not None:
            return usage_record(*tokens, estimated=False)
        return usage_record(self.prompt_estimate, self.delivered_completion_estimate(), estimated=True)


def completion_estimate_of_body(body: dict) -> int:
    total = 0
    for choice in body.get("choices") or []:
        if isinstance(choice, dict):
            total += estimate_text_tokens(len(_text_of_delta(choice.get("message") or {}).encode()))
    return total


def usage_record(prompt: int, completion: int, *, estimated: bool) -> dict:
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
            "estimated": estimated}

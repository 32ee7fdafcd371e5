"""The LLM stage for person-written replies: on by default whenever a live model is configured.

`REPLIES_LLM_MODEL` picks the model: `auto` (the default) is the first model of the LLM allowlist
(`LLM_MODELS_FILE`) that is not the sandbox echo, so a sandbox install (echo models only) never calls one; an
id uses that model; `off` (or empty) turns the stage off. Replies that the local model decided (rule `model`)
are shown to the LLM (new text only, quotes and signature stripped), which answers in JSON:
`{"label": ..., "language": ..., "confidence": ...}`. A usable answer wins; a timeout
(`REPLIES_LLM_TIMEOUT_SECONDS`), an HTTP error, a refusal or any unusable answer keeps the local model's
label. An `unsubscribe` found by the rules is never overridden, and bounces, automatic mail, delay notices and
receipts never reach the model. The call goes straight to the operator's upstream with the operator's key:
its cost is the operator's, logged per reply (tokens) and never charged to a workspace.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass

from django.conf import settings

logger = logging.getLogger("replies.llm")

LABELS = ("interested", "not_interested", "unsubscribe", "other")
RULES_IT_MAY_OVERRIDE = ("model",)
LANGUAGE_RE = re.compile(r"^[a-z]{2}$")
PROMPT = """You classify replies that people wrote to a B2B sales email. The reply may be in any language.
Answer with one JSON object and nothing else:
{"label": "<label>", "language": "<ISO 639-1 code of the reply's own text, or null>", "confidence": <0 to 1>}

Labels and rules:
- "unsubscribe": any request to stop contact or be removed, in any language, including "please don't follow
  up", "please stop", "do not email this address", GDPR/CCPA deletion requests. It wins over a decline in the
  same message.
- "interested": wants to talk, a demo, a trial, pricing or more information; proposes or accepts a time; asks
  a product question; refers the offer positively to a colleague who owns the topic; asks to be contacted
  later at a stated time.
- "not_interested": declines without asking to stop contact ("not a fit", "we already use X", "no budget",
  "not now" with no request to come back later).
- "other": neither interest nor a decline: who are you, a redirect to someone else with no interest signal, a
  forward without comment, an empty reply, an acknowledgement; and mail that does not answer the sales email: a
  newsletter or product update (its unsubscribe footer is the sender's, not a request), a calendar invitation,
  a message meant for someone else.
An absence sentence inside a reply about the offer does not change its label.

Examples:
"Sounds good, Tuesday at 2pm works." -> {"label": "interested", "language": "en", "confidence": 0.95}
"Wir nutzen bereits HubSpot, danke." -> {"label": "not_interested", "language": "de", "confidence": 0.9}
"Pas intéressé, merci de me retirer de votre liste." -> {"label": "unsubscribe", "language": "fr", "confidence": 0.95}
"担当ではありません。" -> {"label": "other", "language": "ja", "confidence": 0.8}
"Ahora no, pero escríbeme en marzo." -> {"label": "interested", "language": "es", "confidence": 0.8}"""
MAX_CHARS = 4000


@dataclass
class Answer:
    label: str
    language: str | None
    confidence: float | None
    model: str
    tokens: int | None


def active_model():
    """The allowlisted live model the stage uses, or None (off, unknown id, or only the sandbox echo)."""
    choice = (settings.REPLIES_LLM_MODEL or "").strip()
    if choice.lower() in ("", "off", "none", "0"):
        return None
    from llmproxy import catalog

    try:
        if choice.lower() == "auto":
            return next((m for m in catalog.models().values() if not m.is_echo), None)
        model = catalog.model_get(choice)
    except Exception as exc:  # noqa: BLE001 - an unreadable allowlist turns the stage off, never ingestion
        logger.warning("LLM allowlist unreadable for the reply classifier: %s", exc)
        return None
    if model is None:
        logger.warning("REPLIES_LLM_MODEL %r is not on the LLM allowlist", choice)
        return None
    return None if model.is_echo else model


def enabled() -> bool:
    return active_model() is not None


def parse_answer(content: str) -> tuple[str, str | None, float | None] | None:
    """(label, language, confidence) from the model's answer, or None when it is unusable."""
    text = (content or "").strip()
    match = re.search(r"\{.*\}", text, re.S)
    if not match:
        return None
    try:
        data = json.loads(match.group(0))
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    label = data.get("label")
    if not isinstance(label, str):
        return None
    label = label.strip().lower().replace("-", "_").replace(" ", "_")
    if label not in LABELS:
        return None
    language = data.get("language")
    language = language.strip().lower() if isinstance(language, str) else None
    if language is not None and not LANGUAGE_RE.match(language):
        language = None
    confidence = data.get("confidence")
    if isinstance(confidence, bool) or not isinstance(confidence, int | float) or not 0 <= confidence <= 1:
        confidence = None
    return label, language, (float(confidence) if confidence is not None else None)


def classify(*, text: str, subject: str, request_id: str = "replies-llm") -> Answer | None:
    """The model's answer for this reply, or None (off, upstream failure or timeout, unusable answer)."""
    model = active_model()
    if model is None:
        return None
    from llmproxy import upstream

    body = {"model": model.id, "temperature": 0, "max_tokens": 60, "messages": [
        {"role": "system", "content": PROMPT},
        {"role": "user", "content": f"Subject: {subject[:300]}\n\n{text[:MAX_CHARS]}"},
    ]}
    try:
        resp = upstream.sync_client(model).post(
            model.chat_url, content=upstream.request_body(model, body, stream=False),
            headers=upstream.request_headers(model, request_id),
            timeout=settings.REPLIES_LLM_TIMEOUT_SECONDS)
        if resp.status_code != 200:
            logger.warning("reply classifier model answered HTTP %s for %s", resp.status_code, request_id)
            return None
        data = resp.json()
        content = data["choices"][0]["message"]["content"] or ""
        usage = data.get("usage") or {}
    except Exception as exc:  # noqa: BLE001 - any failure (timeout included) keeps the local model's label
        logger.warning("reply classifier model failed for %s: %s", request_id, exc)
        return None
    tokens = usage.get("total_tokens") if isinstance(usage.get("total_tokens"), int) else None
    logger.info("reply classifier model %s used %s tokens for %s (operator cost)", model.id,
                json.dumps(tokens), request_id)
    parsed = parse_answer(content)
    if parsed is None:
        logger.warning("reply classifier model gave an unusable answer for %s", request_id)
        return None
    label, language, confidence = parsed
    return Answer(label=label, language=language, confidence=confidence, model=model.id, tokens=tokens)

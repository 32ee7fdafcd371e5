"""Optional LLM classifier for person-written replies, off by default (`REPLIES_LLM_MODEL` empty).

When set to an id of the LLM allowlist (`LLM_MODELS_FILE`), replies that the rules judged as a person's words
(`interested`, `not_interested`, `other`) are also shown to that model, whose one-word answer wins when it is
one of the labels; anything else (an error, a timeout, a rambling answer) keeps the rules' label. An
`unsubscribe` found by the rules is never overridden, and bounces, auto-replies, delay notices and receipts are
never sent to a model. The call goes straight to the operator's upstream: its cost is the operator's, never
charged to the customer's credits.
"""

from __future__ import annotations

import json
import logging
import re

from django.conf import settings

logger = logging.getLogger("replies.llm")

LABELS = ("interested", "not_interested", "unsubscribe", "other")
RULES_IT_MAY_OVERRIDE = ("model", "empty")
PROMPT = (
    "You classify replies to a B2B sales email. Answer with exactly one word from: interested, "
    "not_interested, unsubscribe, other.\n"
    "interested: wants a call, a demo, pricing or more information.\n"
    "not_interested: declines (no thanks, not a fit, already has a solution, no budget, not now).\n"
    "unsubscribe: asks to be removed or never contacted again.\n"
    "other: anything else (questions about who you are, referrals to a colleague, unclear)."
)
MAX_CHARS = 4000


def enabled() -> bool:
    return bool(getattr(settings, "REPLIES_LLM_MODEL", ""))


def classify(*, text: str, subject: str, request_id: str = "replies-llm") -> str | None:
    """The model's label for this reply, or None (disabled, unknown model, upstream failure, unusable answer)."""
    model_id = getattr(settings, "REPLIES_LLM_MODEL", "")
    if not model_id:
        return None
    from llmproxy import catalog, upstream

    model = catalog.model_get(model_id)
    if model is None:
        logger.warning("REPLIES_LLM_MODEL %r is not on the LLM allowlist", model_id)
        return None
    body = {"model": model.id, "temperature": 0, "max_tokens": 5, "messages": [
        {"role": "system", "content": PROMPT},
        {"role": "user", "content": f"Subject: {subject[:300]}\n\n{text[:MAX_CHARS]}"},
    ]}
    try:
        resp = upstream.sync_client(model).post(
            model.chat_url, content=upstream.request_body(model, body, stream=False),
            headers=upstream.request_headers(model, request_id),
            timeout=getattr(settings, "REPLIES_LLM_TIMEOUT_SECONDS", 20))
        if resp.status_code != 200:
            logger.warning("reply classifier model answered HTTP %s", resp.status_code)
            return None
        data = resp.json()
        answer = data["choices"][0]["message"]["content"] or ""
        usage = data.get("usage") or {}
    except Exception as exc:  # noqa: BLE001 - any failure keeps the rules' label
        logger.warning("reply classifier model failed: %s", exc)
        return None
    logger.info("reply classifier model %s used %s tokens (operator cost)", model.id,
                json.dumps(usage.get("total_tokens")))
    word = re.sub(r"[^a-z_]", "", answer.strip().split()[0].lower().replace("-", "_")) if answer.strip() else ""
    return word if word in LABELS else None

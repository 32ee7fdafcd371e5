"""The chat body draft_reply sends to an allowlisted model: the conversation (our steps, their replies, our answers),
the person's latest words and the caller's instructions. The model writes the body of an answer; nothing is sent.
Money and the model call are llmproxy's (`llmproxy.verbs.complete` under the pipeline's hold)."""

from __future__ import annotations

from django.conf import settings

from core import errors
from llmproxy import catalog
from replies import selectors

MAX_TOKENS = 600
MAX_THREAD_CHARS = 12_000
MAX_INSTRUCTIONS = 2_000
SYSTEM = (
    "You write the answer a salesperson sends to a person who replied to their outreach email. Write only the body "
    "of the email (no subject line, no headers), in the language the person wrote in, short, friendly and concrete; "
    "answer what they asked; propose a next step when they showed interest; never invent facts, prices or dates that "
    "the conversation does not give; sign with the sender's first name if it is known."
)


def default_model() -> str:
    """REPLIES_DRAFT_MODEL, else the first model of the allowlist."""
    wanted = (settings.REPLIES_DRAFT_MODEL or "").strip()
    if wanted:
        return wanted
    ids = list(catalog.models())
    if not ids:
        raise errors.ModelNotAllowed("No model is allowlisted for drafting.")
    return ids[0]


def chat_body(*, workspace, reply_id: str, instructions: str | None, model: str | None) -> dict:
    """The /v1/llm/chat body for this reply (404 for another workspace's)."""
    reply = selectors.reply_get(workspace=workspace, reply_id=reply_id)
    lines = []
    for item in selectors.thread(workspace=workspace, reply=reply):
        if item["kind"] == "answer" and item.get("state") != "sent":
            continue
        who = "THEM" if item["direction"] == "in" else "US"
        lines.append(f"--- {who} ({item['at'][:16].replace('T', ' ')} UTC), subject: {item['subject']}\n{item['text']}")
    conversation = "\n\n".join(lines)[-MAX_THREAD_CHARS:]
    mailbox = reply.mailbox
    sender = " ".join(p for p in (getattr(mailbox, "first_name", ""), getattr(mailbox, "last_name", "")) if p)
    user = (f"The conversation so far, oldest first:\n\n{conversation}\n\n"
            f"Write our answer to their latest message (from {reply.from_email}).")
    if sender:
        user += f" The sender is {sender}."
    if instructions:
        user += f"\n\nInstructions from the sender: {instructions[:MAX_INSTRUCTIONS]}"
    return {"model": model or default_model(), "max_tokens": MAX_TOKENS,
            "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]}


def body_of(completion: dict) -> str:
    try:
        text = completion["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        text = None
    if not isinstance(text, str) or not text.strip():
        raise errors.ProviderUnavailable("The model returned no text.")
    return text.strip()[:20_000]

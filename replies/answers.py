"""Answering a reply in its thread (CONTRACT 4.8c). Services write; `replies.selectors` reads.

Three ways in, one way out:
- an agent without the owner's policy: `answer_preview` stores the draft (`pending_approval`) and issues a 24-hour
  confirmation token; a human approves it in the console; `answer_approved` (the same call with the token)
  consumes the token and queues the draft;
- an agent whose key or OAuth connection may answer without approval (`ApiKey.answers_per_day`, a UTC-day count):
  `answer_direct` queues it at once while today's count is under the limit;
- a member in the console: `answer_direct` with `member`.
Then `answer_deliver` sends it, at most once: the row is claimed (`queued` -> `sending`, one conditional UPDATE,
suppression checked in the same transaction) before SMTP is spoken; a row left in `sending` is in doubt
(`send_unknown` once ANSWER_IN_DOUBT_AFTER has passed) and never sent again. A temporary failure goes back to
`queued` with a later `next_attempt_at` (the periodic `replies.tasks.answers_sweep` retries it); a permanent one is
`failed`.

The answer leaves from the mailbox that sent the lead's last campaign step (else the mailbox the reply reached),
through that mailbox's own transport (`sending.transport.send_message`: sandbox sink, password SMTP, XOAUTH2), DKIM
signed like campaign mail, with `In-Reply-To`, `References`, `Re: ` + the reply's subject and no List-Unsubscribe.
The `replied` suppression blocks campaigns, not answers to the person who wrote; `unsubscribed` and `bounced` do.
"""

from __future__ import annotations

import logging
from datetime import UTC, timedelta
from email.message import EmailMessage

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from accounts import services as accounts
from accounts.models import ApiKey
from campaigns import headers, messages
from campaigns.models import SentMessage, Suppression
from core import errors, events
from replies import classify as cl
from replies import selectors
from replies.models import Reply, ReplyAnswer
from sending.models import HealthState, Mailbox
from sending.transport import (
    MailboxAuthUnavailable,
    MailboxNeedsReconnect,
    PermanentSendError,
    TransientSendError,
    send_message,
    uses_sink,
)

logger = logging.getLogger("replies.answers")

MAX_BODY = 20_000
MAX_REFERENCES = 20
BLOCKING_REASONS = (Suppression.Reason.UNSUBSCRIBED, Suppression.Reason.BOUNCED)
RETRY_BASE = timedelta(minutes=5)
MAX_ATTEMPTS = 5
SINGLE_PART_HEADERS = ["Content-Type", "Content-Transfer-Encoding", "MIME-Version"]  # what set_content adds


# --- what an answer is made of -------------------------------------------------------------------------------
def body_clean(body) -> str:
    """The body as sent: line ends normalized; empty, over MAX_BODY characters, or holding control characters
    other than line breaks and tabs is 400."""
    if not isinstance(body, str):
        raise errors.InvalidRequest(details={"fields": {"body": ["A string."]}})
    body = body.replace("\r\n", "\n").replace("\r", "\n")
    if not body.strip():
        raise errors.InvalidRequest("The answer is empty.", details={"fields": {"body": ["Write something."]}})
    if len(body) > MAX_BODY:
        raise errors.InvalidRequest(f"The answer is longer than {MAX_BODY:,} characters.",
                                    details={"fields": {"body": [f"At most {MAX_BODY:,} characters."]}})
    if any((ord(ch) < 32 and ch not in "\n\t") or 0x7F <= ord(ch) < 0xA0 or 0xD800 <= ord(ch) < 0xE000 for ch in body):
        raise errors.InvalidRequest("The answer holds control characters.",
                                    details={"fields": {"body": ["No control characters besides line breaks and tabs."]}})
    return body


def answer_subject(reply: Reply) -> str:
    subject = (reply.subject or "").strip(" ")  # stored unfolded: a line break or control character left is hostile
    subject = subject if subject.lower().startswith("re:") else f"Re: {subject}".strip()
    problem = headers.header_text_problem(subject)
    if problem:
        raise errors.InvalidRequest(f"The reply's subject cannot be answered: it {problem}.",
                                    details={"fields": {"subject": [f"The subject {problem}."]}})
    return subject[:990]


def _ids(value: str) -> list[str]:
    return [m.strip("<>") for m in cl.message_ids(value or "") if m]


def threading(reply: Reply) -> tuple[str, list[str]]:
    """(In-Reply-To, References) of an answer: the reply's Message-ID, after the References it carried (or,
    when it carried none, our campaign messages to the lead), oldest first, at most MAX_REFERENCES."""
    msg = cl.parse(bytes(reply.inbound.raw))
    own = (reply.inbound.message_id or "").strip("<>")
    refs = _ids(" ".join(cl.header_all(msg, "References")))
    if not refs:
        refs = _ids(cl.header(msg, "In-Reply-To"))
    if not refs and reply.campaign_lead_id:
        refs = list(SentMessage.objects.filter(campaign_lead_id=reply.campaign_lead_id, state=SentMessage.State.SENT)
                    .order_by("step_index").values_list("message_id", flat=True))
    chain = [m for m in dict.fromkeys([*refs, own]) if m]
    if len(chain) > MAX_REFERENCES:  # RFC 5322 3.6.4: keep the first and the most recent
        chain = [chain[0], *chain[-(MAX_REFERENCES - 1):]]
    for mid in chain:
        headers.msg_id("References", mid)  # a malformed id from their mail: 400, never a broken header
    return own, chain


def answer_mailbox(reply: Reply) -> Mailbox | None:
    """The mailbox that sent the lead's last campaign step, else the one the reply reached."""
    if reply.campaign_lead_id:
        last = (SentMessage.objects.filter(campaign_lead_id=reply.campaign_lead_id, mailbox__isnull=False)
                .filter(Q(state=SentMessage.State.SENT) | Q(state=SentMessage.State.SENDING))
                .order_by("-step_index", "-claimed_at").select_related("mailbox").first())
        if last is not None:
            return last.mailbox
    return reply.mailbox


def mailbox_problem(mailbox: Mailbox | None) -> str | None:
    """Why this mailbox cannot send an answer (CONTRACT: `suspended`, `removed`, `needs_reconnect`, `paused`)."""
    if mailbox is None:
        return "removed"
    if mailbox.status == Mailbox.Status.ACTIVE:
        # a deliverability pause (docs/deliverability.md): never sent from until an owner or admin resumes it
        return "paused" if mailbox.health_state == HealthState.PAUSED else None
    if mailbox.status == Mailbox.Status.NEEDS_RECONNECT:
        return "needs_reconnect"
    if mailbox.status in (Mailbox.Status.REMOVED, Mailbox.Status.FAILED):
        return "removed"
    return "suspended"


def _check_mailbox(mailbox: Mailbox | None) -> Mailbox:
    problem = mailbox_problem(mailbox)
    if problem:
        raise errors.MailboxUnavailable(
            f"The mailbox that carried this conversation cannot send: {problem.replace('_', ' ')}.",
            details={"reason": problem, "mailbox_id": mailbox.pk if mailbox else None,
                     "email": mailbox.email if mailbox else None})
    return mailbox


def recipient(reply: Reply) -> str:
    return (reply.from_email or (reply.campaign_lead.email if reply.campaign_lead_id else "")).lower()


def _check_suppression(workspace, reply: Reply, to_email: str) -> None:
    addresses = {to_email}
    if reply.campaign_lead_id:
        addresses.add(reply.campaign_lead.email)
    blocked = (Suppression.objects.filter(workspace_id=getattr(workspace, "pk", workspace), email__in=list(addresses), reason__in=BLOCKING_REASONS)
               .order_by("email").first())
    if blocked is not None:
        raise errors.RecipientSuppressed(
            f"{blocked.email} is suppressed as {blocked.reason}: it cannot be answered.",
            details={"email": blocked.email, "reason": blocked.reason})


def _prepared(workspace, reply_id: str, body) -> dict:
    """Everything an answer needs, checked: 404, 400, 409 recipient_suppressed and mailbox_unavailable."""
    reply = selectors.reply_get(workspace=workspace, reply_id=reply_id)
    body = body_clean(body)
    subject = answer_subject(reply)
    to_email = recipient(reply)
    if not to_email or "@" not in to_email:
        raise errors.InvalidRequest("This reply has no address to answer.", details={"fields": {"reply_id": [
            "The reply has no sender address."]}})
    _check_suppression(workspace, reply, to_email)
    mailbox = _check_mailbox(answer_mailbox(reply))
    in_reply_to, references = threading(reply)
    return {"reply": reply, "body": body, "subject": subject, "to_email": to_email, "mailbox": mailbox,
            "in_reply_to": in_reply_to, "references": references}


def answer_check(*, workspace, reply: Reply) -> None:
    """Why this reply cannot be answered right now (raises the refusal), for the console's reply box."""
    answer_subject(reply)
    to_email = recipient(reply)
    _check_suppression(workspace, reply, to_email)
    _check_mailbox(answer_mailbox(reply))


def preview_record(answer: ReplyAnswer) -> dict:
    return {"status": "preview", "reply_id": answer.reply_id, "answer_id": answer.pk, "from": answer.from_email,
            "to": answer.to_email, "subject": answer.subject, "body": answer.body,
            "in_reply_to": answer.in_reply_to, "references": list(answer.references),
            "message_id": answer.message_id}


def _new_answer(*, workspace, p: dict, state: str, **extra) -> ReplyAnswer:
    mailbox = p["mailbox"]
    return ReplyAnswer.objects.create(
        workspace=workspace, reply=p["reply"], mailbox=mailbox, from_email=mailbox.email, to_email=p["to_email"],
        subject=p["subject"], body=p["body"], message_id=messages.new_message_id(mailbox.domain_name),
        in_reply_to=p["in_reply_to"], references=p["references"], state=state, **extra)


def _sent_by_key(api_key: ApiKey) -> str:
    grant = getattr(api_key, "oauth_grant", None)  # the reverse one-to-one: None for a console key
    name = grant.client_name if grant is not None else api_key.name
    return (name or api_key.display)[:254]


# --- the three ways in ---------------------------------------------------------------------------------------
def answer_preview(*, workspace, api_key, reply_id: str, body, request_id: str = "") -> dict:
    """No token: store the draft (`pending_approval`) and issue a 24-hour token for a human to approve."""
    p = _prepared(workspace, reply_id, body)
    reply = p["reply"]
    thread = selectors.thread(workspace=workspace, reply=reply)
    with transaction.atomic():
        summary = {
            "action": f"Answer {p['to_email']} from {p['mailbox'].email}: {answer_consequence(p['mailbox'])}",
            "from": p["mailbox"].email, "to": p["to_email"], "subject": p["subject"],
            "thread": [{"direction": i["direction"], "kind": i["kind"], "at": i["at"], "subject": i["subject"],
                        "text": i["text"][:5000]} for i in thread if i["kind"] != "answer" or i["state"] == "sent"],
            "draft": p["body"], "reply_id": reply.pk,
        }
        token, plaintext = accounts.token_issue(workspace=workspace, verb="send_reply",
                                                params={"reply_id": reply.pk, "body": p["body"]},
                                                ttl=accounts.LAUNCH_TTL, summary=summary, request_id=request_id)
        answer = _new_answer(workspace=workspace, p=p, state=ReplyAnswer.State.PENDING_APPROVAL, confirmation_token=token,
                             api_key=api_key, sent_by=_sent_by_key(api_key) if api_key else "", request_id=request_id)
    return {**preview_record(answer), **accounts.token_fields(token, plaintext)}


def answer_consequence(mailbox: Mailbox) -> str:
    """What approving does, as the approver's headline says it: the sandbox sink only when this mailbox's mail
    goes there (a connected mailbox on this machine sends for real even in sandbox mode)."""
    if uses_sink(mailbox):
        return "sandbox mode, the answer goes to the sandbox sink on this machine"
    return "a real email will be sent"


def answer_approved(*, workspace, api_key, reply_id: str, body, confirmation_token: str, request_id: str = "",
                    idempotency_key: str = "") -> ReplyAnswer:
    """The approved token: consume it and queue its draft, at most once. A retry of the same call (same
    Idempotency-Key) after the token was used finds the answer and queues nothing new."""
    p = _prepared(workspace, reply_id, body)
    token = accounts.token_lookup(plaintext=confirmation_token)
    if token is not None and token.workspace_id == workspace.pk and idempotency_key:
        earlier = ReplyAnswer.objects.filter(workspace=workspace, confirmation_token=token,
                                             idempotency_key=idempotency_key).first()
        if earlier is not None:
            return earlier
    with transaction.atomic():
        used = accounts.token_consume(workspace=workspace, verb="send_reply",
                                      params={"reply_id": p["reply"].pk, "body": p["body"]},
                                      plaintext=confirmation_token, request_id=request_id)
        # the suppression check again, in the transaction that queues it
        _check_suppression(workspace, p["reply"], p["to_email"])
        answer = ReplyAnswer.objects.select_for_update().filter(confirmation_token=used).first()
        if answer is None:  # the draft row is gone (never expected): make it from the approved parameters
            answer = _new_answer(workspace=workspace, p=p, state=ReplyAnswer.State.QUEUED, confirmation_token=used)
        answer.state = ReplyAnswer.State.QUEUED
        if answer.mailbox_id != p["mailbox"].pk:  # the conversation moved mailbox since the preview
            answer.message_id = messages.new_message_id(p["mailbox"].domain_name)
        answer.mailbox, answer.from_email = p["mailbox"], p["mailbox"].email
        answer.api_key = api_key
        answer.sent_by = _sent_by_key(api_key) if api_key else answer.sent_by
        answer.request_id, answer.idempotency_key = request_id, idempotency_key
        answer.next_attempt_at = timezone.now()
        answer.save()
    return answer


def _day_start(now):
    return now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


def answers_today(*, api_key) -> int:
    """Answers this key sent without approval today (UTC), failures (nothing delivered) not counted."""
    return (ReplyAnswer.objects.filter(api_key=api_key, without_approval=True, created_at__gte=_day_start(timezone.now()))
            .exclude(state=ReplyAnswer.State.FAILED).count())


def answer_direct(*, workspace, reply_id: str, body, api_key=None, member=None, request_id: str = "",
                  idempotency_key: str = "") -> ReplyAnswer | None:
    """Queue an answer without a token: a member in the console, or a key under its owner's `answers_per_day`.
    Returns None when the key may not (no policy, or today's count reached): the caller asks for approval."""
    p = _prepared(workspace, reply_id, body)
    if idempotency_key:
        earlier = ReplyAnswer.objects.filter(workspace=workspace, idempotency_key=idempotency_key).first()
        if earlier is not None:
            return earlier
    try:
        with transaction.atomic():
            if member is None:
                # the key row lock serializes this key's policy answers, so the count cannot be passed
                key = ApiKey.objects.select_for_update().get(pk=api_key.pk)
                if key.answers_per_day is None or answers_today(api_key=key) >= key.answers_per_day:
                    return None
            _check_suppression(workspace, p["reply"], p["to_email"])
            answer = _new_answer(
                workspace=workspace, p=p, state=ReplyAnswer.State.QUEUED, api_key=api_key, member=member,
                sent_by=(member.email if member is not None else _sent_by_key(api_key))[:254],
                without_approval=member is None, request_id=request_id, idempotency_key=idempotency_key,
                next_attempt_at=timezone.now())
    except IntegrityError:  # the same Idempotency-Key at once: the other call made it
        return ReplyAnswer.objects.get(workspace=workspace, idempotency_key=idempotency_key)
    return answer


# --- the way out ---------------------------------------------------------------------------------------------
def build_answer(answer: ReplyAnswer, mailbox: Mailbox) -> EmailMessage:
    """The message: headers checked one by one (`campaigns.headers`) and again once serialized."""
    fields = headers.campaign_headers(
        from_name=messages._mailbox_name(mailbox), from_email=mailbox.email, to_name="", to_email=answer.to_email,
        subject=answer.subject, message_id=answer.message_id, in_reply_to=answer.in_reply_to,
        references=list(answer.references), unsubscribe_urls=[])
    msg = EmailMessage(policy=headers.POLICY)
    for field_name, value in fields:
        msg.set_raw(field_name, value)
    msg.set_content(answer.body.rstrip("\n") + "\n")
    headers.check_serialized(msg.as_bytes(), [n for n, _ in fields] + SINGLE_PART_HEADERS)
    return msg


def _claim(answer_id: str) -> tuple[ReplyAnswer, Mailbox, EmailMessage] | str:
    """queued -> sending, in the transaction that checks suppression and the mailbox once more."""
    with transaction.atomic():
        answer = (ReplyAnswer.objects.select_for_update(of=("self",)).select_related("reply__campaign_lead")
                  .filter(pk=answer_id).first())
        if answer is None or answer.state != ReplyAnswer.State.QUEUED:
            return answer.state if answer else "missing"
        try:
            _check_suppression(answer.workspace_id, answer.reply, answer.to_email)
            mailbox = _check_mailbox(Mailbox.objects.filter(pk=answer.mailbox_id).first())
            email = build_answer(answer, mailbox)
        except (errors.RecipientSuppressed, errors.MailboxUnavailable, headers.UnsafeHeader) as exc:
            answer.state, answer.error = ReplyAnswer.State.FAILED, str(getattr(exc, "message", exc))[:2000]
            answer.save(update_fields=["state", "error"])
            return "failed"
        answer.state, answer.sending_at, answer.attempts = ReplyAnswer.State.SENDING, timezone.now(), answer.attempts + 1
        answer.save(update_fields=["state", "sending_at", "attempts"])
    return answer, mailbox, email


def answer_deliver(*, answer_id: str) -> str:
    """Send a queued answer, at most once. Returns the state it ends in."""
    claimed = _claim(answer_id)
    if isinstance(claimed, str):
        return claimed
    answer, mailbox, email = claimed
    try:
        send_message(mailbox=mailbox, message=email)
    except (TransientSendError, MailboxNeedsReconnect) as exc:
        # nothing was delivered: back to the queue, later (a reconnect needs a human: it waits for it)
        text = f"{getattr(exc, 'smtp_code', None) or ''} {getattr(exc, 'message', exc)}".strip()[:2000]
        retry = isinstance(exc, TransientSendError) and answer.attempts < MAX_ATTEMPTS
        when = getattr(exc, "retry_at", None) if isinstance(exc, MailboxAuthUnavailable) else None
        ReplyAnswer.objects.filter(pk=answer.pk, state=ReplyAnswer.State.SENDING).update(
            state=ReplyAnswer.State.QUEUED if retry else ReplyAnswer.State.FAILED, error=text,
            next_attempt_at=when or timezone.now() + RETRY_BASE * (2 ** (answer.attempts - 1)))
        return "queued" if retry else "failed"
    except PermanentSendError as exc:
        text = f"{exc.smtp_code or ''} {exc.message}".strip()[:2000]
        ReplyAnswer.objects.filter(pk=answer.pk, state=ReplyAnswer.State.SENDING).update(
            state=ReplyAnswer.State.FAILED, error=text)
        return "failed"
    # any other exception leaves the row in `sending`: in doubt, never sent again
    now = timezone.now()
    with transaction.atomic():
        ReplyAnswer.objects.filter(pk=answer.pk).update(state=ReplyAnswer.State.SENT, sent_at=now, error="")
        reply = Reply.objects.select_for_update().get(pk=answer.reply_id)
        reply.updated_at = max(now, reply.updated_at + timedelta(microseconds=1))
        reply.save(update_fields=["updated_at"])
        answer.refresh_from_db()
        events.emit(workspace=answer.workspace_id, type="reply.answered", data=selectors.answer_item(answer))
    return "sent"


def answers_due(*, limit: int = 100) -> list[str]:
    return list(ReplyAnswer.objects.filter(state=ReplyAnswer.State.QUEUED, next_attempt_at__lte=timezone.now())
                .order_by("next_attempt_at").values_list("pk", flat=True)[:limit])


def answers_report_in_doubt() -> int:
    """Answers left in `sending` past ANSWER_IN_DOUBT_AFTER (a worker died mid-send): marked `send_unknown` and
    logged, never sent again."""
    cutoff = timezone.now() - selectors.ANSWER_IN_DOUBT_AFTER
    stuck = list(ReplyAnswer.objects.filter(state=ReplyAnswer.State.SENDING, sending_at__lt=cutoff)
                 .values_list("pk", flat=True)[:500])
    for pk in stuck:
        logger.error("answer %s stuck in `sending`: outcome unknown, NOT re-sent", pk)
    return ReplyAnswer.objects.filter(pk__in=stuck, state=ReplyAnswer.State.SENDING).update(
        state=ReplyAnswer.State.SEND_UNKNOWN)

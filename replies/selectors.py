"""Reply reads. Every selector takes the workspace first: there is no unscoped path."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from django.db.models import Prefetch, Q, QuerySet
from django.utils import timezone

from accounts.models import ConfirmationToken
from campaigns.messages import render_step
from campaigns.models import SentMessage
from core import errors
from replies.content import ROW_TEXT_LIMIT
from replies.models import Reply, ReplyAnswer, ReplyCorrection

# an answer handed to SMTP this long ago without an outcome is in doubt: shown as `send_unknown`, never re-sent
ANSWER_IN_DOUBT_AFTER = timedelta(minutes=10)


def replies_list(*, workspace, campaign=None, since: datetime | None = None, before: datetime | None = None,
                 limit: int = 50) -> list[Reply]:
    """This workspace's replies, newest first by received_at; `since` is an exclusive bound on updated_at (new
    and changed replies), `before` an exclusive bound on received_at (paging back)."""
    qs: QuerySet[Reply] = Reply.objects.filter(workspace=workspace).select_related("campaign_lead")
    if campaign is not None:
        qs = qs.filter(campaign=campaign)
    if since is not None:
        qs = qs.filter(updated_at__gt=since)
    if before is not None:
        qs = qs.filter(received_at__lt=before)
    latest = Prefetch("corrections", queryset=ReplyCorrection.objects.order_by("-corrected_at", "-pk"),
                      to_attr="latest_fix")
    return list(qs.order_by("-received_at", "-id").prefetch_related(latest)[:limit])


def reply_get(*, workspace, reply_id: str) -> Reply:
    """One reply of this workspace; another workspace's (or an unknown id) is NotFound."""
    if len(str(reply_id)) > 40:
        raise errors.NotFound("No such reply in this workspace.")
    reply = (Reply.objects.filter(workspace=workspace, pk=str(reply_id))
             .select_related("campaign_lead", "campaign", "sent_message", "mailbox", "inbound").first())
    if reply is None:
        raise errors.NotFound("No such reply in this workspace.")
    return reply


def timestamp(value: datetime) -> str:
    """ISO 8601 in UTC with microseconds, so a client's `since` = the newest `updated_at` it has read skips
    exactly what it has read."""
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def reply_record(reply: Reply) -> dict:
    """A Reply of SPEC 2.8 (plus `lead_email`: the campaign lead it was attributed to, useful for bounces; `text`
    at most ROW_TEXT_LIMIT characters with `text_truncated`; `updated_at`)."""
    text = reply.text or reply.snippet
    return {
        "reply_id": reply.pk,
        "campaign_id": str(reply.campaign_id) if reply.campaign_id else None,
        "from_email": reply.from_email,
        "subject": reply.subject,
        "snippet": reply.snippet,
        "text": text[:ROW_TEXT_LIMIT],
        "text_truncated": len(text) > ROW_TEXT_LIMIT,
        "classification": reply.classification,
        "language": reply.language,
        "received_at": timestamp(reply.received_at),
        "updated_at": timestamp(reply.updated_at),
        "lead_email": reply.campaign_lead.email if reply.campaign_lead_id else None,
        "correction": _correction(reply),
    }


def _correction(reply: Reply) -> dict | None:
    """The latest human correction of the label (console), or None: {"from", "to", "by", "at"}."""
    fixes = getattr(reply, "latest_fix", None)
    if fixes is None:
        fixes = list(reply.corrections.order_by("-corrected_at", "-pk")[:1])
    return correction_record(fixes[0] if fixes else None)


def correction_record(c: ReplyCorrection | None) -> dict | None:
    if c is None:
        return None
    return {"from": c.from_label, "to": c.to_label, "by": c.corrected_by_email, "at": timestamp(c.corrected_at)}


# --- conversations (CONTRACT 4.8c) ------------------------------------------------------------------------
def answer_state(answer: ReplyAnswer, now: datetime | None = None) -> str:
    """The public state: a draft whose approval was denied or expired is `denied`; an answer handed to SMTP
    is `queued` until its outcome is known, and `send_unknown` once it has been in doubt too long."""
    now = now or timezone.now()
    state = answer.state
    if state == ReplyAnswer.State.PENDING_APPROVAL and answer.confirmation_token_id:
        token = answer.confirmation_token
        if token.status == ConfirmationToken.Status.DENIED or token.effective_status == ConfirmationToken.Status.EXPIRED:
            return ReplyAnswer.State.DENIED
    if state == ReplyAnswer.State.SENDING:
        in_doubt = answer.sending_at is None or answer.sending_at < now - ANSWER_IN_DOUBT_AFTER
        return ReplyAnswer.State.SEND_UNKNOWN if in_doubt else ReplyAnswer.State.QUEUED
    return state


def answer_item(answer: ReplyAnswer) -> dict:
    """An answer as a `thread` item (also the `reply.answered` webhook payload, with `reply_id`)."""
    return {
        "direction": "out", "kind": "answer", "message_id": answer.message_id,
        "at": timestamp(answer.sent_at or answer.created_at), "subject": answer.subject, "text": answer.body,
        "state": answer_state(answer), "sent_by": answer.sent_by, "answer_id": answer.pk, "reply_id": answer.reply_id,
        "from": answer.from_email, "to": answer.to_email,
    }


def conversation_replies(*, workspace, reply: Reply) -> list[Reply]:
    """Every reply of the conversation this reply belongs to: the same campaign lead, or (a reply that matched
    no lead) the same sender writing to the same mailbox."""
    qs = Reply.objects.filter(workspace=workspace)
    if reply.campaign_lead_id:
        qs = qs.filter(campaign_lead_id=reply.campaign_lead_id)
    else:
        qs = qs.filter(campaign_lead__isnull=True, from_email=reply.from_email, mailbox_id=reply.mailbox_id)
    return list(qs.select_related("inbound").order_by("received_at", "pk"))


def _step_text(reply: Reply, sent: SentMessage) -> str:
    try:
        if reply.campaign is not None and sent.step_index < len(reply.campaign.steps):
            return render_step(reply.campaign_lead, reply.campaign, sent.step_index)["body"]
    except Exception:  # noqa: BLE001 - a step that no longer renders: the subject alone
        return ""
    return ""


def thread(*, workspace, reply: Reply) -> list[dict]:
    """The conversation in time order: our campaign steps, their replies, our answers."""
    items: list[tuple[datetime, int, dict]] = []
    if reply.campaign_lead_id:
        for sent in (SentMessage.objects.filter(workspace=workspace, campaign_lead_id=reply.campaign_lead_id)
                     .filter(Q(state=SentMessage.State.SENT) | Q(state=SentMessage.State.SENDING))
                     .order_by("step_index")):
            at = sent.sent_at or sent.sending_at or sent.claimed_at
            items.append((at, 0, {"direction": "out", "kind": "step", "message_id": sent.message_id,
                                  "at": timestamp(at), "subject": sent.subject, "text": _step_text(reply, sent)}))
    replies = conversation_replies(workspace=workspace, reply=reply)
    for r in replies:
        items.append((r.received_at, 1, {"direction": "in", "kind": "reply", "message_id": r.inbound.message_id.strip("<>"),
                                         "at": timestamp(r.received_at), "subject": r.subject,
                                         "text": r.text or r.snippet, "reply_id": r.pk}))
    for answer in (ReplyAnswer.objects.filter(workspace=workspace, reply__in=replies)
                   .select_related("confirmation_token").order_by("created_at")):
        items.append((answer.sent_at or answer.created_at, 2, answer_item(answer)))
    items.sort(key=lambda item: (item[0], item[1]))
    return [item for _, _, item in items]


def reply_detail(*, workspace, reply_id: str) -> dict:
    """GET /v1/replies/:id: the get_replies row plus the whole text, the attachments and the thread."""
    reply = reply_get(workspace=workspace, reply_id=reply_id)
    return {**reply_record(reply),
            "full_text": reply.full_text or reply.text or reply.snippet, "attachments": list(reply.attachments or []),
            "answered": reply.answers.filter(state=ReplyAnswer.State.SENT).exists(),
            "thread": thread(workspace=workspace, reply=reply)}

"""Reply ingestion, threading, classification and its effects. Services write; selectors read.

Flow (both doors: the sandbox SMTP listener and the IMAP poll):

1. `inbound_store(mailbox=..., raw=..., source=...)` stores the raw bytes first, once per (workspace,
   Message-ID), and in the same transaction creates the `Reply` row (`classification = null`) threaded to the
   sent message, unless the message is the mailbox's own sent copy (stored `ignored`, never a reply) or a
   complaint feedback report (ARF: stored `processed`, counted as a complaint, replies.feedback). After
   commit it queues `replies.tasks.classify_inbound` (a sweeper task re-queues anything left unclassified).
2. `inbound_classify(inbound_id=...)` classifies (replies.classify), completes the threading with what a
   bounce reveals (returned Message-ID, failed recipient), and applies the effects of CONTRACT section 5: any
   reply (out-of-office and bounce included) stops the lead's sequence and suppresses the address (`bounced`,
   `unsubscribed` or `replied`); delay notices and read receipts stop and suppress nobody; a reply (not a
   bounce) is positive delivery evidence for the verifier. Safe to run twice (state checked under lock).
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from datetime import timedelta

from celery import current_app
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from campaigns import selectors as campaign_selectors
from campaigns import services as campaign_services
from campaigns.models import SentMessage
from core import events
from replies import classify as cl
from replies import content, feedback, llm, model_background, notices
from replies.models import InboundMessage, Reply, ReplyAnswer
from replies.selectors import reply_record
from sending.signals import mailbox_health_mark

logger = logging.getLogger("replies")

MAX_MESSAGE_BYTES = 25 * 1024 * 1024


@dataclass
class Stored:
    inbound: InboundMessage
    created: bool  # False: a duplicate of an already stored message (nothing new was written)


# --- threading ------------------------------------------------------------------------------------------
@dataclass
class Thread:
    sent_message: object = None
    campaign_lead: object = None
    campaign: object = None
    matched_by: str = ""


def _sent_message(workspace, message_id: str):
    sent = campaign_selectors.sent_message_by_message_id(message_id=message_id)
    if sent is not None and sent.workspace_id == workspace.pk:
        return sent
    return None


def _answered_reply(workspace, message_id: str):
    answer = (ReplyAnswer.objects.filter(workspace=workspace, message_id=message_id)
              .select_related("reply__campaign_lead", "reply__campaign", "reply__sent_message").first())
    return answer.reply if answer is not None else None


def thread_match(*, mailbox, workspace, in_reply_to: list[str], references: list[str], from_email: str,
                 returned_ids: list[str] = (), bounced: list[str] = ()) -> Thread:
    """The sent message (and so campaign and lead) this inbound message answers.

    By `In-Reply-To`, then `References` (newest first), then the Message-ID of a returned message quoted by a
    bounce; else by address among the mailbox's campaign leads (the sender, or a bounce's failed recipient)."""
    for how, ids in (("in_reply_to", in_reply_to), ("references", list(reversed(references))),
                     ("returned_message", list(returned_ids))):
        for mid in ids:
            sent = _sent_message(workspace, mid)
            if sent is not None:
                return Thread(sent, sent.campaign_lead, sent.campaign, how)
            answered = _answered_reply(workspace, mid)  # a reply to one of our answers: the same conversation
            if answered is not None:
                return Thread(answered.sent_message, answered.campaign_lead, answered.campaign, how)
    lead = None
    for addr in [*bounced, from_email]:
        lead = _lead_for_address(mailbox=mailbox, workspace=workspace, email=addr)
        if lead is not None:
            return Thread(None, lead, lead.campaign, "address")
    return Thread()


def _lead_for_address(*, mailbox, workspace, email: str):
    if not email:
        return None
    leads = list(campaign_selectors.leads_for_address(workspace=workspace, email=email)[:50])
    if mailbox is not None:
        # the mailbox's own campaign leads: the lead it sends to first, then leads of campaigns it is attached to
        for lead in leads:
            if lead.mailbox_id == mailbox.pk:
                return lead
        attached = set(mailbox.campaigns.values_list("pk", flat=True)) if leads else set()
        for lead in leads:
            if lead.campaign_id in attached:
                return lead
        return None
    return leads[0] if leads else None


# --- ingestion ------------------------------------------------------------------------------------------
def _text(value: str, limit: int) -> str:
    """Text a database column accepts: no NUL (PostgreSQL refuses it), no lone surrogates, bounded length."""
    value = (value or "").replace("\x00", "").encode("utf-8", "replace").decode("utf-8")
    return value[:limit]


def dedupe_key(msg, raw: bytes) -> tuple[str, str]:
    message_id = cl.normalize_message_id(cl.header(msg, "Message-ID"))
    if message_id:
        return _text(message_id.lower(), 300), _text(message_id, 998)
    return "sha256:" + hashlib.sha256(raw).hexdigest(), ""


def is_own_copy(*, mailbox, msg, message_id: str) -> bool:
    """The mailbox's own sent copy: it was sent by this service (its Message-ID is a SentMessage's) or it is
    From the mailbox's own address (a BYO mailbox also keeps what its owner sends by hand)."""
    if message_id and (_sent_message(mailbox.workspace, message_id) is not None
                       or ReplyAnswer.objects.filter(workspace=mailbox.workspace, message_id=message_id).exists()):
        return True
    return cl.address(cl.header(msg, "From")) == (mailbox.email or "").lower()


def inbound_store(*, mailbox, raw: bytes, source: str, envelope_from: str = "", envelope_to: str = "",
                  imap_uidvalidity: int | None = None, imap_uid: int | None = None, received_at=None) -> Stored:
    """Store one inbound message for `mailbox` (raw first) and its unclassified Reply. Idempotent per
    (workspace, Message-ID): a duplicate returns the stored row with `created=False`. Never raises on
    malformed MIME. `received_at`: when the mailbox server received it (IMAP INTERNALDATE), else now (the moment
    this service accepts it); the reply's received_at, which never changes afterwards."""
    raw = bytes(raw)[:MAX_MESSAGE_BYTES]
    workspace = mailbox.workspace
    msg = cl.parse(raw)
    key, message_id = dedupe_key(msg, raw)
    existing = InboundMessage.objects.filter(workspace=workspace, dedupe_key=key).first()
    if existing is not None:
        return Stored(existing, False)
    now = timezone.now()
    report = feedback.parse_report(msg)
    if report is not None:  # a complaint report (ARF): never a reply of a lead
        return _store_feedback_report(mailbox=mailbox, raw=raw, key=key, message_id=message_id, source=source,
                                      envelope_from=envelope_from, envelope_to=envelope_to, now=now, report=report,
                                      imap_uidvalidity=imap_uidvalidity, imap_uid=imap_uid)
    arrived = received_at if received_at is not None and received_at <= now else now
    own = is_own_copy(mailbox=mailbox, msg=msg, message_id=message_id)
    found = content.Content() if own else content.extract(raw)  # CPU: outside the transaction
    try:
        with transaction.atomic():
            inbound = InboundMessage.objects.create(
                workspace=workspace, mailbox=mailbox, source=source, dedupe_key=_text(key, 300),
                message_id=_text(message_id, 998), raw=raw, size=len(raw),
                envelope_from=_text(envelope_from, 998), envelope_to=_text(envelope_to, 998),
                imap_uidvalidity=imap_uidvalidity, imap_uid=imap_uid, received_at=now,
                state=InboundMessage.State.IGNORED if own else InboundMessage.State.RECEIVED,
                rule="own_sent_copy" if own else "", processed_at=now if own else None,
            )
            if not own:
                from_email = cl.address(cl.header(msg, "From"))
                thread = thread_match(mailbox=mailbox, workspace=workspace,
                                      in_reply_to=cl.message_ids(cl.header(msg, "In-Reply-To")),
                                      references=cl.message_ids(" ".join(cl.header_all(msg, "References"))),
                                      from_email=from_email)
                Reply.objects.create(
                    workspace=workspace, inbound=inbound, mailbox=mailbox, campaign=thread.campaign,
                    campaign_lead=thread.campaign_lead, sent_message=thread.sent_message,
                    matched_by=thread.matched_by, from_email=_text(from_email, 254),
                    subject=_text(cl.header(msg, "Subject"), 998), snippet=_text(cl.snippet(msg), 2000),
                    text=found.text, full_text=found.full_text, attachments=found.attachments,
                    received_at=arrived, updated_at=now,
                )
                transaction.on_commit(lambda: _queue_classify(inbound.pk))
    except IntegrityError:  # the same message arrived twice at once: the other writer stored it
        return Stored(InboundMessage.objects.get(workspace=workspace, dedupe_key=key), False)
    return Stored(inbound, True)


def _store_feedback_report(*, mailbox, raw: bytes, key: str, message_id: str, source: str, envelope_from: str,
                           envelope_to: str, now, report, imap_uidvalidity, imap_uid) -> Stored:
    """Store an ARF complaint report raw (state `processed`, rule `feedback_report`, no Reply) and record the
    complaint in the same transaction (replies.feedback)."""
    workspace = mailbox.workspace
    try:
        with transaction.atomic():
            inbound = InboundMessage.objects.create(
                workspace=workspace, mailbox=mailbox, source=source, dedupe_key=_text(key, 300),
                message_id=_text(message_id, 998), raw=raw, size=len(raw),
                envelope_from=_text(envelope_from, 998), envelope_to=_text(envelope_to, 998),
                imap_uidvalidity=imap_uidvalidity, imap_uid=imap_uid, received_at=now,
                state=InboundMessage.State.PROCESSED, rule="feedback_report", processed_at=now)
            inbound.detail = {"complaint": feedback.complaint_apply(inbound=inbound, report=report)}
            inbound.save(update_fields=["detail"])
    except IntegrityError:  # the same report arrived twice at once: the other writer stored it
        return Stored(InboundMessage.objects.get(workspace=workspace, dedupe_key=key), False)
    return Stored(inbound, True)


def _queue_classify(inbound_id: str) -> None:
    try:  # by the task's registered name: replies.tasks runs these services
        current_app.signature("replies.tasks.classify_inbound").delay(inbound_id)
    except Exception:  # noqa: BLE001 - the broker is down: the sweeper picks it up later
        logger.exception("could not queue classification of %s; the sweeper will", inbound_id)


# --- classification and effects -------------------------------------------------------------------------
def inbound_classify(*, inbound_id: str) -> InboundMessage | None:
    """Classify one stored message and apply its effects, at most once (safe to run twice)."""
    # classify outside any transaction: parsing is CPU and the optional model call is network, and neither
    # may hold a lock (on SQLite a write transaction locks the whole database)
    first = InboundMessage.objects.filter(pk=inbound_id).only("state", "raw").first()
    if first is None or first.state != InboundMessage.State.RECEIVED:
        return first
    if model_background.waiting():
        # a fresh instance still building its model beside the service: the message stays received (no attempt
        # counted) and the sweeper classifies it once the model is there
        logger.info("reply %s waits for the classifier's model, being built", inbound_id)
        return first
    # counted outside the transaction below, so a run that crashes still counts (the sweep gives up at last)
    InboundMessage.objects.filter(pk=inbound_id).update(attempts=F("attempts") + 1)
    raw = bytes(first.raw)
    msg = cl.parse(raw)
    verdict = cl.classify(raw)
    answer = None  # the LLM stage (on when a live model is configured), for what the local model decided
    if verdict.rule in llm.RULES_IT_MAY_OVERRIDE and llm.enabled():
        answer = llm.classify(text=cl.strip_quotes_and_signature(cl.body_text(msg)),
                              subject=cl.header(msg, "Subject"), request_id=f"reply-{inbound_id}")
    with transaction.atomic():
        inbound = (InboundMessage.objects.select_for_update(of=("self",)).select_related("mailbox", "workspace")
                   .filter(pk=inbound_id).first())
        if inbound is None or inbound.state != InboundMessage.State.RECEIVED:
            return inbound  # another worker got there first
        reply = Reply.objects.select_related("campaign_lead", "campaign").filter(inbound=inbound).first()
        effects = {}
        if reply is not None and verdict.label != cl.BOUNCE:
            lead = _mailto_unsubscribe(inbound=inbound, msg=msg, from_email=reply.from_email)
            if lead is not None:  # mail to a List-Unsubscribe mailto address: the signed token names the lead
                verdict = cl.Verdict(cl.UNSUBSCRIBE, "list_unsubscribe_mailto", language=verdict.language)
                reply.campaign, reply.campaign_lead, reply.matched_by = lead.campaign, lead, "mailto_token"
        llm_detail = {}
        if answer is not None and verdict.rule in llm.RULES_IT_MAY_OVERRIDE:
            llm_detail = {"llm": {"model": answer.model, "label": answer.label, "local_label": verdict.label,
                                  "confidence": answer.confidence, "tokens": answer.tokens}}
            verdict = cl.Verdict(answer.label, "llm", language=answer.language or verdict.language,
                                 confidence=answer.confidence)
        if reply is not None:
            if reply.campaign_lead_id is None and (verdict.returned_message_ids or verdict.bounced):
                thread = thread_match(mailbox=inbound.mailbox, workspace=inbound.workspace, in_reply_to=[],
                                      references=[], from_email="", returned_ids=verdict.returned_message_ids,
                                      bounced=verdict.bounced)
                if thread.campaign_lead is not None:
                    reply.campaign, reply.campaign_lead = thread.campaign, thread.campaign_lead
                    reply.sent_message, reply.matched_by = thread.sent_message, thread.matched_by
            reply.classification = verdict.label
            reply.language = verdict.language
            # updated_at moves forward to the moment the reply is final, so a client polling with `since` = the
            # newest updated_at it read sees the classified reply again instead of missing its label for good;
            # received_at (when the service accepted the message) never changes
            reply.updated_at = max(timezone.now(), reply.updated_at + timedelta(microseconds=1))
            reply.save(update_fields=["classification", "language", "campaign", "campaign_lead", "sent_message", "matched_by",
                                      "updated_at"])
            effects = _apply_effects(inbound=inbound, reply=reply, verdict=verdict, msg=msg)
            events.emit(workspace=inbound.workspace_id, type="reply.received", data=reply_record(reply))
            if reply.classification == cl.INTERESTED:
                reply_pk = reply.pk
                transaction.on_commit(lambda: notices.interested_notify(reply_id=reply_pk))
        inbound.state = InboundMessage.State.PROCESSED
        inbound.classification = verdict.label
        inbound.rule = verdict.rule[:40]
        inbound.detail = {"bounced": [_text(a, 254) for a in verdict.bounced],
                          "returned_message_ids": [_text(m, 998) for m in verdict.returned_message_ids],
                          "stops": verdict.stops, "language": verdict.language, **llm_detail, **effects}
        inbound.processed_at = timezone.now()
        inbound.save(update_fields=["state", "classification", "rule", "detail", "processed_at"])
    return inbound


def _apply_effects(*, inbound, reply, verdict: cl.Verdict, msg) -> dict:
    reason = verdict.suppression_reason
    if reason is None or reply.campaign_lead_id is None:
        # delay notices and read receipts stop nobody; mail that matches no campaign lead of this mailbox
        # (a stranger writing to it) is kept as a reply but suppresses nobody
        return {"stopped": [], "suppressed": []}
    lead = reply.campaign_lead
    workspace = inbound.workspace
    source = f"reply {reply.pk}"
    addresses = [lead.email]
    if verdict.label == cl.BOUNCE:
        addresses += verdict.bounced
        # the hard bounce counts against the mailbox that sent (deliverability): the threaded message, else the
        # last one delivered to this lead
        bounced = (SentMessage.objects.filter(pk=reply.sent_message_id) if reply.sent_message_id else
                   SentMessage.objects.filter(campaign_lead=lead, state=SentMessage.State.SENT).order_by("-claimed_at"))
        hit = bounced.values_list("pk", "mailbox_id").first()
        if hit is not None:
            SentMessage.objects.filter(pk=hit[0]).update(bounced=True)
            mailbox_health_mark(mailbox_id=hit[1])
    elif reply.from_email:
        addresses.append(reply.from_email)
    addresses = [a for a in dict.fromkeys(_text(a.strip().lower(), 254) for a in addresses if a and "@" in a)]
    colleagues = campaign_services.company_leads_to_stop(lead=lead, label=verdict.label)  # stop_on_company_reply
    campaign_services.leads_lock_for_stop(workspace=workspace, emails=addresses, lead_pk=lead.pk, lead_pks=colleagues)
    stopped = [lead.pk] if campaign_services.lead_stop(lead=lead, reason=reason) else []
    stopped += campaign_services.company_stop(lead_pks=colleagues)
    for addr in addresses:
        campaign_services.suppression_add(workspace=workspace, email=addr, reason=reason, source=source)
    if verdict.label != cl.BOUNCE:
        _record_evidence(addresses, workspace)
    return {"stopped": stopped, "suppressed": addresses, "reason": reason}


def _mailto_unsubscribe(*, inbound, msg, from_email: str):
    """The lead a `List-Unsubscribe` mailto message unsubscribes (campaigns checks the signed token and
    suppresses it), or None when the message is not one."""
    to_addresses = [inbound.envelope_to, *cl.addresses(cl.header_all(msg, "To"))]
    for to_address in dict.fromkeys(a for a in to_addresses if a):
        lead = campaign_services.unsubscribe_by_mailto(subject=cl.header(msg, "Subject"), to_address=to_address,
                                                       from_email=from_email)
        if lead is not None:
            return lead if lead.workspace_id == inbound.workspace_id else None
    return None


def _record_evidence(addresses: list[str], workspace) -> None:
    """A reply proves the address receives mail: the verifier may then say `catch_all_valid`."""
    try:
        from leads.verification.services import record_delivery_evidence
    except ImportError:  # the verifier is not installed in this build
        return
    for addr in addresses:
        record_delivery_evidence(email=addr, source="reply", workspace=workspace)


MAX_CLASSIFY_ATTEMPTS = 5


def inbound_pending(*, older_than_seconds: int = 60, limit: int = 200) -> list[str]:
    """Ids of messages still unclassified after `older_than_seconds` (their task was lost or failed), except
    those that already failed MAX_CLASSIFY_ATTEMPTS times: they stay unclassified (raw kept) for an operator."""
    cutoff = timezone.now() - timedelta(seconds=older_than_seconds)
    return list(InboundMessage.objects.filter(state=InboundMessage.State.RECEIVED, received_at__lte=cutoff,
                                              attempts__lt=MAX_CLASSIFY_ATTEMPTS)
                .order_by("received_at").values_list("pk", flat=True)[:limit])

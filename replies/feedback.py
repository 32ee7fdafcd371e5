"""Complaint feedback reports (ARF, RFC 5965): a mailbox provider telling the sender that a recipient marked one
of its messages as spam. Such a report arrives at a service mailbox through the same inbound paths as replies
(the sandbox SMTP listener, the IMAP poll) but is never a reply of a lead: it is stored raw (state `processed`,
rule `feedback_report`, no Reply row), counted as a complaint against the sending domain and the mailbox that
sent (deliverability), and the complaining recipient is suppressed (`unsubscribed`: they asked, in the strongest
way, not to be mailed) with their sequences stopped.

Shape: `multipart/report; report-type=feedback-report` with a human-readable part, a `message/feedback-report`
part (`Feedback-Type`, `Original-Mail-From`, `Original-Rcpt-To`, `Reported-Domain`, ...) and the original
message (`message/rfc822`) or its headers (`text/rfc822-headers`).
"""

from __future__ import annotations

import email.parser
import email.policy
from dataclasses import dataclass, field
from email.message import Message

from campaigns.selectors import sent_message_by_message_id
from campaigns.services import lead_stop, leads_lock_for_stop, suppression_add
from deliverability.services import complaint_record
from replies import classify as cl
from sending.models import Mailbox, SendingDomain


@dataclass
class FeedbackReport:
    feedback_type: str = ""
    original_mail_from: str = ""
    original_rcpt_to: list[str] = field(default_factory=list)
    reported_domains: list[str] = field(default_factory=list)
    original_message_ids: list[str] = field(default_factory=list)
    original_from: str = ""
    original_to: list[str] = field(default_factory=list)


def _headers_of(part: Message) -> Message | None:
    """The header block a `message/*` or `text/rfc822-headers` part carries."""
    try:
        if part.is_multipart():
            inner = part.get_payload(0)
            return inner if isinstance(inner, Message) else None
        payload = part.get_payload(decode=True) or b""
        text = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else str(payload)
        return email.parser.Parser(policy=email.policy.default).parsestr(text, headersonly=True)
    except Exception:  # noqa: BLE001 - a malformed part is simply not a source of facts
        return None


def parse_report(msg: Message) -> FeedbackReport | None:
    """The feedback report `msg` is, or None when it is not one (any other message, malformed MIME included)."""
    try:
        if msg.get_content_type() != "multipart/report":
            return None
        if (msg.get_param("report-type") or "").lower() != "feedback-report":
            return None
        parts = list(msg.iter_parts())
    except Exception:  # noqa: BLE001
        return None
    report = FeedbackReport()
    for part in parts:
        ctype = part.get_content_type()
        if ctype == "message/feedback-report":
            fields = _headers_of(part)
            if fields is None:
                continue
            report.feedback_type = cl.header(fields, "Feedback-Type").strip().lower()[:32]
            report.original_mail_from = cl.address(cl.header(fields, "Original-Mail-From"))
            report.original_rcpt_to = cl.addresses(cl.header_all(fields, "Original-Rcpt-To"))
            report.reported_domains = [d.strip().lower().strip(".") for v in cl.header_all(fields, "Reported-Domain")
                                       for d in v.split(",") if d.strip()]
        elif ctype in ("message/rfc822", "text/rfc822-headers"):
            original = _headers_of(part)
            if original is None:
                continue
            report.original_message_ids = cl.message_ids(cl.header(original, "Message-ID"))
            report.original_from = cl.address(cl.header(original, "From"))
            report.original_to = cl.addresses(cl.header_all(original, "To"))
    return report


def complaint_apply(*, inbound, report: FeedbackReport) -> dict:
    """Attribute the report to what this service sent and record it. By the original Message-ID (the
    SentMessage: its mailbox and recipient), else by the original sender address (one of the workspace's
    mailboxes), else by a reported domain that is one of the workspace's sending domains. Returns the detail
    stored on the inbound row."""
    workspace = inbound.workspace
    sent = None
    for mid in report.original_message_ids:
        candidate = sent_message_by_message_id(message_id=mid)
        if candidate is not None and candidate.workspace_id == workspace.pk:
            sent = candidate
            break
    mailbox = None
    if sent is not None and sent.mailbox_id:
        mailbox = Mailbox.objects.filter(pk=sent.mailbox_id).first()
    if mailbox is None:
        for addr in (report.original_from, report.original_mail_from):
            if addr:
                mailbox = Mailbox.objects.filter(workspace=workspace, email__iexact=addr).first()
                if mailbox is not None:
                    break
    domain_name = mailbox.domain_name if mailbox is not None else ""
    if not domain_name:
        for name in report.reported_domains:
            if SendingDomain.objects.filter(workspace=workspace, name=name).exists():
                domain_name = name
                break
    recipient = (sent.to_email if sent is not None else "") or next(iter(report.original_rcpt_to), "") \
        or (next(iter(report.original_to), "") if domain_name else "")
    detail = {"feedback_type": report.feedback_type, "domain": domain_name or None,
              "mailbox_id": mailbox.pk if mailbox else None, "recipient": recipient or None,
              "message_id": sent.message_id if sent else None}
    if not domain_name:
        detail["unmatched"] = True  # about mail this workspace did not send: kept raw, counted nowhere
        return detail
    complaint_record(workspace_id=workspace.pk, mailbox=mailbox, domain_name=domain_name,
                     feedback_type=report.feedback_type, recipient=recipient,
                     message_id=sent.message_id if sent else "", inbound_id=inbound.pk)
    if recipient and "@" in recipient:
        leads_lock_for_stop(workspace=workspace, emails=[recipient])
        suppression_add(workspace=workspace, email=recipient, reason="unsubscribed", source=f"complaint {inbound.pk}")
        if sent is not None:
            lead_stop(lead=sent.campaign_lead, reason="unsubscribed")
        detail["suppressed"] = [recipient.lower()]
    return detail

"""Human label corrections (console) and the labelled-data export. Services write; the export reads.

A correction is recorded (who, when, from, to), becomes the reply's `classification` (get_replies shows it and
its `correction`), and re-applies the suppression reason the new label implies (CONTRACT 4.8b, section 5):
`unsubscribe` -> `unsubscribed`, `bounce` -> `bounced`, any other label -> `replied`. It never lifts a
suppression: an address this reply suppressed stays suppressed, only its reason follows the label; an address
suppressed by something else (a link click, a manual addition, another reply) keeps its own reason; an address
the reply had not suppressed (a delay notice, a read receipt) is suppressed now, and its sequences stop.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from campaigns import services as campaign_services
from campaigns.models import CampaignLead, Suppression
from core import errors
from replies.models import Classification, InboundMessage, Reply, ReplyCorrection
from replies.selectors import correction_record, timestamp

REASON_OF_LABEL = {"unsubscribe": "unsubscribed", "bounce": "bounced"}
REWRITABLE_REASONS = {"replied", "unsubscribed", "bounced"}


def suppression_reason_for(label: str) -> str:
    return REASON_OF_LABEL.get(label, "replied")


def _sources(reply: Reply) -> set[str]:
    return {f"reply {reply.pk}", f"correction {reply.pk}"}


def reply_correct(*, workspace, reply_id: str, label: str, user) -> ReplyCorrection | None:
    """Correct a classified reply's label. Returns the recorded correction, or None when the label is already
    `label` (nothing to record). Unknown reply (or another workspace's): NotFound. Unclassified: InvalidRequest."""
    if label not in Classification.values:
        raise errors.InvalidRequest(details={"fields": {"label": [f"One of {', '.join(Classification.values)}."]}})
    with transaction.atomic():
        reply = (Reply.objects.select_for_update(of=("self",)).select_related("campaign_lead")
                 .filter(workspace=workspace, pk=reply_id).first())
        if reply is None:
            raise errors.NotFound("No such reply in this workspace.")
        if reply.classification is None:
            raise errors.InvalidRequest("This reply is not classified yet; correct it once it is.",
                                        details={"fields": {"label": ["The reply is not classified yet."]}})
        if reply.classification == label:
            return None
        reason = suppression_reason_for(label)
        correction = ReplyCorrection.objects.create(
            reply=reply, workspace=workspace, from_label=reply.classification, to_label=label, corrected_by=user,
            corrected_by_email=getattr(user, "email", "") or "", suppression_reason=reason)
        reply.classification = label
        # like a classification, a correction moves updated_at forward so a client polling get_replies with
        # `since` = the newest updated_at it read sees the corrected label
        reply.updated_at = max(timezone.now(), reply.updated_at + timedelta(microseconds=1))
        reply.save(update_fields=["classification", "updated_at"])

        lead = reply.campaign_lead
        if lead is None:
            return correction  # matched no campaign lead: it suppressed nobody, and a correction adds nobody
        addresses = [lead.email]
        if label != "bounce" and reply.from_email and "@" in reply.from_email:
            addresses.append(reply.from_email.lower())
        ours = _sources(reply)
        # the leads a new suppression may stop, and a company's other leads (stop_on_company_reply) when the
        # new label is a real answer; like a suppression, a company stop is never lifted by a correction
        colleagues = campaign_services.company_leads_to_stop(lead=lead, label=label)
        campaign_services.leads_lock_for_stop(workspace=workspace, emails=addresses, lead_pks=colleagues)
        campaign_services.company_stop(lead_pks=colleagues)
        for address in dict.fromkeys(addresses):
            existing = Suppression.objects.select_for_update().filter(workspace=workspace, email=address).first()
            if existing is None:
                campaign_services.suppression_add(workspace=workspace, email=address, reason=reason,
                                                  source=f"correction {reply.pk}")
                continue
            if existing.source in ours and existing.reason in REWRITABLE_REASONS and existing.reason != reason:
                old_reason = existing.reason
                existing.reason, existing.source = reason, f"correction {reply.pk}"
                existing.save(update_fields=["reason", "source"])
                # leads this reply stopped carry the old reason: they follow it (still stopped)
                CampaignLead.objects.filter(workspace=workspace, email=address, state=CampaignLead.State.STOPPED,
                                            stop_reason=old_reason).update(stop_reason=reason)
    return correction


def latest_corrections(reply_ids) -> dict[str, ReplyCorrection]:
    out: dict[str, ReplyCorrection] = {}
    for c in ReplyCorrection.objects.filter(reply_id__in=list(reply_ids)).order_by("corrected_at", "pk"):
        out[c.reply_id] = c
    return out


def labelled_export(*, workspace, everything: bool = False) -> Iterator[str]:
    """JSON Lines, one classified reply per line, newest first: the final label, the classifier's label, the
    correction (if any) and the raw message exactly as received (`raw_base64`; `raw` is the same decoded as
    UTF-8 with replacement characters, for reading). By default only corrected replies (the human-labelled
    data); `everything=True`: every classified reply."""
    qs = Reply.objects.filter(workspace=workspace).exclude(classification__isnull=True)
    if not everything:
        qs = qs.filter(corrections__isnull=False).distinct()
    ids = list(qs.order_by("-received_at", "-pk").values_list("pk", flat=True))
    for i in range(0, len(ids), 200):
        chunk = ids[i:i + 200]
        replies = {r.pk: r for r in Reply.objects.filter(pk__in=chunk).select_related("inbound")}
        fixes = latest_corrections(chunk)
        for pk in chunk:
            reply = replies[pk]
            inbound: InboundMessage = reply.inbound
            raw = bytes(inbound.raw)
            fix = fixes.get(pk)
            yield json.dumps({
                "reply_id": reply.pk,
                "label": reply.classification,
                "classifier_label": inbound.classification,
                "classifier_rule": inbound.rule,
                "corrected": fix is not None,
                "correction": correction_record(fix),
                "campaign_id": str(reply.campaign_id) if reply.campaign_id else None,
                "from_email": reply.from_email,
                "subject": reply.subject,
                "text": reply.text or reply.snippet,
                "received_at": timestamp(reply.received_at),
                "raw": raw.decode("utf-8", "replace"),
                "raw_base64": base64.b64encode(raw).decode("ascii"),
            }, ensure_ascii=False) + "\n"

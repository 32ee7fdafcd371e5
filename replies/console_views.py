"""Console Replies inbox: every reply across campaigns, newest first, filtered by classification, campaign and
whether it was answered, with the reply's own text and the message it answers; agents' drafts waiting for
approval on top. A reply opens as its conversation (the thread, the whole text, the attachments), where a member
answers it at once in the thread (replies.answers, as the signed-in member) and owners and admins correct a label
(replies.corrections). Owners and admins export the corrected (or all) labelled replies as JSON Lines with the raw
message."""

from __future__ import annotations

import uuid

from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import Exists, OuterRef
from django.http import Http404, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from accounts.console_views import console_context, console_page
from core import errors
from llmproxy import catalog
from replies import answers, corrections, notices, selectors
from replies.models import Classification, Reply, ReplyAnswer

ANSWERED_STATES = [ReplyAnswer.State.QUEUED, ReplyAnswer.State.SENDING, ReplyAnswer.State.SENT,
                   ReplyAnswer.State.SEND_UNKNOWN]


def _answered(reply: Reply) -> dict | None:
    """The message this reply answers: the sent step's subject and text as rendered for the lead."""
    sent = reply.sent_message
    if sent is None:
        return None
    from campaigns.messages import render_step

    body = ""
    try:
        if reply.campaign is not None and reply.campaign_lead is not None and sent.step_index < len(reply.campaign.steps):
            body = render_step(reply.campaign_lead, reply.campaign, sent.step_index)["body"]
    except Exception:  # noqa: BLE001 - a step that no longer renders: show the subject alone
        body = ""
    return {"subject": sent.subject, "step": sent.step_index + 1, "sent_at": sent.sent_at or sent.claimed_at,
            "to": sent.to_email, "body": body}


@console_page
@require_GET
def inbox(request, membership):
    from campaigns.models import Campaign

    workspace = membership.workspace
    label = request.GET.get("classification", "")
    if label not in Classification.values:
        label = ""
    campaign_id = request.GET.get("campaign", "")
    try:
        campaign_uuid = uuid.UUID(campaign_id) if campaign_id else None
    except ValueError:
        campaign_uuid = None
    unanswered = request.GET.get("unanswered") == "1"
    answered_q = ReplyAnswer.objects.filter(reply=OuterRef("pk"), state__in=ANSWERED_STATES)
    rows = (Reply.objects.filter(workspace=workspace).annotate(has_answer=Exists(answered_q))
            .select_related("campaign", "campaign_lead", "sent_message").order_by("-received_at", "-pk"))
    if label:
        rows = rows.filter(classification=label)
    if campaign_uuid:
        rows = rows.filter(campaign_id=campaign_uuid)
    if unanswered:
        rows = rows.filter(has_answer=False)
    page = Paginator(rows, 25).get_page(request.GET.get("page"))
    fixes = corrections.latest_corrections([r.pk for r in page])
    items = [{"reply": r, "answered": _answered(r), "correction": fixes.get(r.pk)} for r in page]
    campaigns = Campaign.objects.filter(workspace=workspace).order_by("-created_at").values_list("pk", "name")[:200]
    return render(request, "replies/inbox.html", {
        **console_context(request), "items": items, "page": page, "label": label,
        "labels": Classification.values, "campaign": str(campaign_uuid) if campaign_uuid else "",
        "unanswered": unanswered, "drafts": _drafts(workspace),
        "notify_on": notices.notice_on(workspace=workspace, user=request.user),
        "campaigns": [(str(pk), name) for pk, name in campaigns], "can_manage": membership.can_approve,
    })


def _drafts(workspace, reply=None) -> list[dict]:
    """Agents' answers waiting for a human's approval (denied and expired ones are left out)."""
    from accounts.services import approval_url

    qs = (ReplyAnswer.objects.filter(workspace=workspace, state=ReplyAnswer.State.PENDING_APPROVAL,
                                     confirmation_token__isnull=False)
          .select_related("confirmation_token", "reply").order_by("-created_at"))
    if reply is not None:
        qs = qs.filter(reply=reply)
    out = []
    for answer in qs[:50]:
        if selectors.answer_state(answer) != ReplyAnswer.State.PENDING_APPROVAL:
            continue
        out.append({"answer": answer, "approval_url": approval_url(answer.confirmation_token)})
    return out


@console_page
@require_GET
def conversation(request, membership, reply_id):
    try:
        detail = selectors.reply_detail(workspace=membership.workspace, reply_id=reply_id)
    except errors.NotFound:
        raise Http404 from None
    reply = Reply.objects.select_related("campaign", "campaign_lead").get(pk=detail["reply_id"])
    problem = None
    try:
        answers.answer_check(workspace=membership.workspace, reply=reply)
    except errors.DomainError as exc:
        problem = exc.message
    return render(request, "replies/conversation.html", {
        **console_context(request), "reply": reply, "detail": detail, "labels": Classification.values,
        "can_manage": membership.can_approve, "drafts": _drafts(membership.workspace, reply), "problem": problem,
        "body": request.session.pop(f"answer-draft-{reply.pk}", ""), "suggest_enabled": bool(catalog.models()),
    })


@console_page
@require_POST
def answer(request, membership, reply_id):
    """The reply box: a member's answer goes out at once, in the thread, recorded as sent by them."""
    body = request.POST.get("body", "")
    try:
        sent = answers.answer_direct(workspace=membership.workspace, reply_id=reply_id, body=body,
                                     member=request.user)
        state = answers.answer_deliver(answer_id=sent.pk)
    except errors.NotFound:
        raise Http404 from None
    except errors.DomainError as exc:
        request.session[f"answer-draft-{reply_id}"] = body[:answers.MAX_BODY]  # keep what was typed
        messages.error(request, exc.message)
    else:
        if state == "sent":
            messages.success(request, f"Answer sent to {sent.to_email} from {sent.from_email}.")
        elif state == "queued":
            messages.success(request, "The mail server could not take the answer right now; it is queued and retried.")
        else:
            messages.error(request, f"The answer could not be sent ({state}).")
    return redirect("replies_pages:conversation", reply_id=reply_id)


@console_page(approver=True)
@require_POST
def notify(request, membership):
    """Owners and admins: an email for every interested reply, on or off."""
    on = request.POST.get("on") == "1"
    notices.notice_set(workspace=membership.workspace, user=request.user, on=on)
    messages.success(request, "You will get an email for every interested reply." if on else
                     "You will no longer get an email for interested replies.")
    return redirect("replies_pages:inbox")


@console_page(approver=True)
@require_POST
def correct(request, membership, reply_id):
    label = request.POST.get("label", "")
    try:
        fix = corrections.reply_correct(workspace=membership.workspace, reply_id=reply_id, label=label,
                                        user=request.user)
    except errors.NotFound:
        raise Http404 from None
    except errors.DomainError as exc:
        messages.error(request, exc.message)
    else:
        if fix is None:
            messages.success(request, f"The label already was {label}.")
        else:
            messages.success(request, f"Label corrected from {fix.from_label} to {fix.to_label}; the address is "
                                      f"suppressed as {fix.suppression_reason}.")
    nxt = request.POST.get("next", "")
    return redirect(nxt if nxt.startswith("/console/replies/") and "//" not in nxt else "replies_pages:inbox")


@console_page(approver=True)
@require_GET
def export(request, membership):
    everything = request.GET.get("all") == "1"
    stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
    response = StreamingHttpResponse(
        corrections.labelled_export(workspace=membership.workspace, everything=everything),
        content_type="application/jsonl; charset=utf-8")
    kind = "all" if everything else "corrected"
    response["Content-Disposition"] = f'attachment; filename="replies-{kind}-{stamp}.jsonl"'
    response["Cache-Control"] = "no-store"
    return response

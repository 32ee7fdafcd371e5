"""Console pages for campaigns: a list and a detail page (stats, steps as rendered for a sample lead, the window
in its zone, mailboxes, why it waits in words, leads with search, Pause and Resume for owners and admins).

Reads go through the same selectors as GET /v1/campaigns(/:id)(/leads); Pause and Resume call the same services
as the pause_campaign / resume_campaign verbs."""

from __future__ import annotations

from zoneinfo import ZoneInfo

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from accounts.console_views import console_context, console_page
from campaigns import selectors, services, templating
from campaigns.models import Campaign, CampaignLead
from core import errors

WAITING_WORDS = {
    "outside_window": "Waiting for the sending window to open.",
    "daily_cap_reached": "Every mailbox has sent today's maximum; sending continues tomorrow inside the window.",
    "no_active_mailbox": "No active mailbox: none of this campaign's mailboxes can send (suspended, removed or failed).",
    "mailbox_needs_reconnect": "A mailbox needs reconnecting: its sign-in (OAuth consent) was revoked. Reconnect it "
                               "on the Mailboxes page.",
    "paused": "Paused: nothing is sent until it is resumed.",
    "completed": "Completed: every lead has finished its sequence or been stopped.",
}
STATUS_WORDS = {
    "queued": "Queued", "active": "In sequence", "finished": "Finished", "replied": "Replied", "bounced": "Bounced",
    "unsubscribed": "Unsubscribed", "suppressed_at_send": "Suppressed at send", "suppressed": "Suppressed",
    "send_unknown": "Outcome unknown", "stopped": "Stopped", "removed_at_launch": "Removed at launch",
}
DAY_WORDS = {"mon": "Mon", "tue": "Tue", "wed": "Wed", "thu": "Thu", "fri": "Fri", "sat": "Sat", "sun": "Sun"}


def _campaign_or_404(membership, campaign_id) -> Campaign:
    try:
        return selectors.campaign_get(workspace=membership.workspace, campaign_id=campaign_id)
    except errors.NotFound:
        raise Http404 from None


def window_text(window: dict) -> str:
    days = ", ".join(DAY_WORDS.get(d, d) for d in window.get("days", []))
    return f"{days}, {window['start_hour']:02d}:00–{window['end_hour']:02d}:00 ({window['timezone']})"


def _local(value, window):
    """Wall-clock time in the campaign's zone, naive so the template's `date` filter shows it as is (it would
    convert an aware value back to the console's UTC)."""
    return value.astimezone(ZoneInfo(window["timezone"])).replace(tzinfo=None) if value else None


@console_page
def campaign_list(request, membership):
    state = request.GET.get("state", "")
    if state not in Campaign.State.values:
        state = ""
    rows, next_cursor = selectors.campaigns_page(workspace=membership.workspace, state=state or None,
                                                 cursor=request.GET.get("cursor") or None, limit=25)
    items = selectors.campaign_list_items(rows)
    for item, campaign in zip(items, rows, strict=True):
        item["next_send_local"] = _local(item["next_send_at"], campaign.sending_window)
        item["waiting_words"] = WAITING_WORDS.get(item["waiting_reason"] or "", "")
    return render(request, "campaigns/campaigns.html", {
        **console_context(request), "items": items, "state": state, "states": Campaign.State.values,
        "next_cursor": next_cursor,
    })


def _sample(campaign: Campaign) -> tuple[CampaignLead | None, list[dict]]:
    lead = campaign.leads.order_by("pk").first()
    values = templating.lead_values(email=lead.email, first_name=lead.first_name, last_name=lead.last_name,
                                    company_name=lead.company_name, custom=lead.custom) if lead else {}
    first_subject = templating.render(campaign.steps[0].get("subject") or "", values) if campaign.steps else ""
    steps = []
    for i, step in enumerate(campaign.steps):
        subject = templating.render(step["subject"], values) if step.get("subject") else f"Re: {first_subject}"
        steps.append({"number": i + 1, "subject": subject, "threaded": not step.get("subject"),
                      "body": templating.render(step["body"], values), "wait_days": step.get("wait_days") or 0})
    return lead, steps


@console_page
@require_http_methods(["GET"])
def campaign_detail(request, membership, campaign_id):
    campaign = _campaign_or_404(membership, campaign_id)
    detail = selectors.campaign_detail(campaign)
    query = request.GET.get("q", "").strip()
    status = request.GET.get("status", "")
    if status not in selectors.LEAD_STATUSES:
        status = ""
    try:
        leads, next_cursor = selectors.campaign_leads_page(campaign=campaign, cursor=request.GET.get("cursor") or None,
                                                           limit=50, query=query, status=status)
    except errors.InvalidRequest:
        leads, next_cursor = selectors.campaign_leads_page(campaign=campaign, limit=50, query=query, status=status)
    window = campaign.sending_window
    for lead in leads:
        lead["status_words"] = STATUS_WORDS.get(lead["status"], lead["status"])
        lead["next_send_local"] = _local(lead["next_send_at"], window)
        lead["last_sent_local"] = _local(lead["last_sent_at"], window)
    in_doubt = selectors.campaign_leads_page(campaign=campaign, limit=20, status="send_unknown")[0]
    sample, steps = _sample(campaign)
    stats = detail["stats"]
    return render(request, "campaigns/campaign_detail.html", {
        **console_context(request), "campaign": campaign, "detail": detail, "stats": stats,
        "lead_counts": [(STATUS_WORDS[k], stats["leads"][k]) for k in selectors.LEAD_STATUSES if stats["leads"][k]],
        "window_text": window_text(window), "next_send_local": _local(detail["next_send_at"], window),
        "waiting_words": WAITING_WORDS.get(detail["waiting_reason"] or "", ""), "sample": sample, "steps": steps,
        "leads": leads, "next_cursor": next_cursor, "q": query, "status": status,
        "statuses": [(k, STATUS_WORDS[k]) for k in selectors.LEAD_STATUSES], "in_doubt": in_doubt,
        "can_manage": membership.can_approve,
        "bounce_rate": f"{stats['bounce_rate'] * 100:.1f}%" if stats["bounce_rate"] is not None else "—",
        "reply_rate": f"{stats['reply_rate'] * 100:.1f}%" if stats["reply_rate"] is not None else "—",
    })


@console_page(approver=True)
@require_POST
def campaign_pause(request, membership, campaign_id):
    campaign = _campaign_or_404(membership, campaign_id)
    try:
        services.campaign_pause(workspace=membership.workspace, campaign_id=campaign.pk)
        messages.success(request, "Campaign paused: nothing more is sent until you resume it.")
    except errors.DomainError as exc:
        messages.error(request, exc.message)
    return redirect("campaigns_pages:detail", campaign_id=campaign.pk)


@console_page(approver=True)
@require_POST
def campaign_resume(request, membership, campaign_id):
    campaign = _campaign_or_404(membership, campaign_id)
    try:
        services.campaign_resume(workspace=membership.workspace, campaign_id=campaign.pk)
        messages.success(request, "Campaign resumed: due messages go out at the next tick inside the window.")
    except errors.DomainError as exc:
        messages.error(request, exc.message)
    return redirect("campaigns_pages:detail", campaign_id=campaign.pk)

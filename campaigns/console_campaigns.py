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
from campaigns import messages as messages_lib
from campaigns import selectors, services, templating
from campaigns.models import Campaign, CampaignLead
from campaigns.verbs import CreateCampaignIn, run_create_args
from campaigns.window import for_lead, per_lead
from core import errors

WAITING_WORDS = {
    "outside_window": "Waiting for the sending window to open.",
    "daily_cap_reached": "Every mailbox has sent today's maximum; sending continues tomorrow inside the window.",
    "no_active_mailbox": "No active mailbox: none of this campaign's mailboxes can send (suspended, removed or failed).",
    "mailbox_needs_reconnect": "A mailbox needs reconnecting: its sign-in (OAuth consent) was revoked. Reconnect it "
                               "on the Mailboxes page.",
    "mailbox_paused": "Every mailbox of this campaign is paused for deliverability (bounces, complaints, DNS or a "
                      "blocklist). An owner or admin resumes them on the Deliverability page.",
    "paused": "Paused: nothing is sent until it is resumed.",
    "completed": "Completed: every lead has finished its sequence or been stopped.",
}
STATUS_WORDS = {
    "queued": "Queued", "active": "In sequence", "finished": "Finished", "replied": "Replied", "bounced": "Bounced",
    "unsubscribed": "Unsubscribed", "suppressed_at_send": "Suppressed at send", "suppressed": "Suppressed",
    "send_unknown": "Outcome unknown", "stopped_company_replied": "Stopped: a colleague replied", "stopped": "Stopped", "removed_at_launch": "Removed at launch",
}
DAY_WORDS = {"mon": "Mon", "tue": "Tue", "wed": "Wed", "thu": "Thu", "fri": "Fri", "sat": "Sat", "sun": "Sun"}


def _campaign_or_404(membership, campaign_id) -> Campaign:
    try:
        return selectors.campaign_get(workspace=membership.workspace, campaign_id=campaign_id)
    except errors.NotFound:
        raise Http404 from None


def window_text(window: dict) -> str:
    days = ", ".join(DAY_WORDS.get(d, d) for d in window.get("days", []))
    return f"{days}, {window['start_hour']:02d}:00–{window['end_hour']:02d}:00 ({zone_words(window)})"


def _local(value, window):
    """Wall-clock time in the campaign's zone (the fallback zone of a window in each lead's zone), naive so the
    template's `date` filter shows it as is (it would convert an aware value back to the console's UTC)."""
    return value.astimezone(ZoneInfo(for_lead(window)["timezone"])).replace(tzinfo=None) if value else None


def zone_words(window: dict) -> str:
    if per_lead(window):
        return f"each lead's own zone; {window['fallback_timezone']} for leads without one"
    return window["timezone"]


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
        item["display_zone"] = for_lead(campaign.sending_window)["timezone"]
        item["waiting_words"] = WAITING_WORDS.get(item["waiting_reason"] or "", "")
    return render(request, "campaigns/campaigns.html", {
        **console_context(request), "items": items, "state": state, "states": Campaign.State.values,
        "next_cursor": next_cursor,
    })


VARIANT_LETTERS = "ABCDE"
METRIC_WORDS = {"interested_rate": "interested rate", "reply_rate": "reply rate"}


def _pct(x) -> str:
    return f"{x * 100:.1f}%"


def winner_words(campaign: Campaign, step_index: int) -> str:
    """Why a variant won, in words, from the figures recorded with the choice."""
    record = (campaign.winners or {}).get(str(step_index))
    if not record:
        return ""
    best = record["variant"]
    others = [f"{VARIANT_LETTERS[j]} {_pct(rate)} (p = {record['p_values'][j]:.4f})"
              for j, rate in enumerate(record["rates"]) if j != best]
    k = len(record["rates"])
    return (f"Variant {VARIANT_LETTERS[best]} won on {record['chosen_at'][:16].replace('T', ' ')} UTC: "
            f"{METRIC_WORDS.get(record['metric'], record['metric'])} {_pct(record['rates'][best])} over "
            f"{record['sent'][best]} sends, against {', '.join(others)}; each p-value (one-sided two-proportion "
            f"z-test) is below {record['alpha']} / {k - 1}. Only variant {VARIANT_LETTERS[best]} is sent to the "
            f"leads still to reach this step.")


def _sample(campaign: Campaign, step_stats: list[dict]) -> tuple[CampaignLead | None, list[dict]]:
    """Every step as the first lead gets it; a step with variants shows each variant side by side with its
    figures (sends, replies, interested, bounces and rates), the winner and why."""
    lead = campaign.leads.order_by("pk").first()
    steps = []
    first_subject = ""
    for i, step in enumerate(campaign.steps):
        k = templating.step_variant_count(step)
        figures = step_stats[i]["variants"] if i < len(step_stats) else []
        texts = []
        for v in (range(k) if k else [None]):
            text = (messages_lib.render_text(lead, campaign, i, v) if lead
                    else templating.step_text(step, v))
            threaded = not (templating.step_text(step, v).get("subject") or "").strip()
            if i == 0 and not first_subject:
                first_subject = text["subject"]
            item = {"label": VARIANT_LETTERS[v] if v is not None else "", "threaded": threaded,
                    "subject": f"Re: {first_subject}" if threaded else text["subject"], "body": text["body"],
                    "winner": step_stats[i]["winner"] == v if v is not None and i < len(step_stats) else False}
            if v is not None and v < len(figures):
                f = figures[v]
                item["figures"] = {**f, "reply_rate": _pct(f["replies"] / f["sent"]) if f["sent"] else "—",
                                   "interested_rate": _pct(f["interested"] / f["sent"]) if f["sent"] else "—"}
            texts.append(item)
        steps.append({"number": i + 1, "wait_days": step.get("wait_days") or 0, "variants": texts,
                      "has_variants": bool(k), "winner_words": winner_words(campaign, i),
                      "subject": texts[0]["subject"], "body": texts[0]["body"], "threaded": texts[0]["threaded"]})
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
    stats = detail["stats"]
    sample, steps = _sample(campaign, stats["steps"])
    return render(request, "campaigns/campaign_detail.html", {
        **console_context(request), "campaign": campaign, "detail": detail, "stats": stats,
        "lead_counts": [(STATUS_WORDS[k], stats["leads"][k]) for k in selectors.LEAD_STATUSES if stats["leads"][k]],
        "window_text": window_text(window), "display_zone": for_lead(window)["timezone"], "next_send_local": _local(detail["next_send_at"], window),
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


# --- create a draft from the console: the API's serializer, so the same rules and the same messages -------
LEAD_COLUMNS = ("email", "first_name", "last_name", "company_name", "timezone")
FORM_DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
STEPS_EXAMPLE = """[
  {"variants": [
     {"subject": "{{RANDOM | Quick question | A thought}} for {{company_name|your team}}",
      "body": "{{RANDOM | Hi | Hello}} {{first_name|there}}, ..."},
     {"subject": "{{first_name|Hi}}, 15 minutes?", "body": "..."}],
   "wait_days": 0},
  {"body": "Following up, {{first_name|there}}.", "wait_days": 3}
]"""


def _form_body(post) -> tuple[dict, dict[str, list[str]]]:
    """The create_campaign body the form describes, and what could not even be read (CSV, JSON, numbers)."""
    import csv
    import io
    import json

    problems: dict[str, list[str]] = {}
    leads = []
    rows = list(csv.DictReader(io.StringIO(post.get("leads", "").strip())))
    for row in rows:
        lead = {k: (row.get(k) or "").strip() for k in LEAD_COLUMNS if (row.get(k) or "").strip()}
        lead.setdefault("email", "")
        custom = {k.strip(): (v or "").strip() for k, v in row.items()
                  if k and k.strip() not in LEAD_COLUMNS and (v or "").strip()}
        if custom:
            lead["custom"] = custom
        leads.append(lead)
    try:
        steps = json.loads(post.get("steps", "") or "null")
    except ValueError as exc:
        steps = None
        problems["steps"] = [f"Not valid JSON: {exc}."]
    window = {"timezone": post.get("timezone", "").strip() or "UTC",
              "days": [d for d in FORM_DAYS if post.get(f"day_{d}")]}
    if post.get("fallback_timezone", "").strip():
        window["fallback_timezone"] = post["fallback_timezone"].strip()
    for field in ("start_hour", "end_hour"):
        value = post.get(field, "").strip()
        if value:
            window[field] = value
    body = {"name": post.get("name", ""), "leads": leads, "steps": steps, "sending_window": window,
            "stop_on_company_reply": bool(post.get("stop_on_company_reply")),
            "match_mailbox_provider": bool(post.get("match_mailbox_provider")),
            "verify_leads": bool(post.get("verify_leads"))}
    if post.get("metric"):
        body["auto_winner"] = {"metric": post["metric"], "min_sends_per_variant": post.get("min_sends", "").strip()}
    return body, problems


@console_page(approver=True)
@require_http_methods(["GET", "POST"])
def campaign_new(request, membership):
    """A draft campaign from a form (leads as CSV with a header row, steps as the API's JSON). Validated by the
    create_campaign verb's own serializer, so the console refuses exactly what the API refuses, with the same
    messages under the same field paths. Drafts never send; launching still needs an approved launch."""
    fields: dict[str, list[str]] = {}
    if request.method == "POST":
        body, fields = _form_body(request.POST)
        if not fields:
            serializer = CreateCampaignIn(data=body)
            if serializer.is_valid():
                campaign = services.campaign_create(workspace=membership.workspace,
                                                    **run_create_args(**serializer.validated_data))
                messages.success(request, f"Draft \u201c{campaign.name}\u201d created: {campaign.leads_accepted} "
                                          f"leads accepted, {campaign.leads_suppressed} filtered out.")
                return redirect("campaigns_pages:detail", campaign_id=campaign.pk)
            fields = errors.flatten_validation_errors(serializer.errors)
    post = request.POST
    return render(request, "campaigns/campaign_new.html", {
        **console_context(request), "errors": sorted(fields.items()), "post": post,
        "days": [(d, DAY_WORDS[d], (post.get(f"day_{d}") if request.method == "POST" else d in FORM_DAYS[:5]))
                 for d in FORM_DAYS],
        "steps_example": STEPS_EXAMPLE, "lead_columns": ",".join(LEAD_COLUMNS),
    }, status=400 if fields else 200)

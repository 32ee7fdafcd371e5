"""Campaign reads. Selectors take the workspace first where a caller could otherwise cross workspaces."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db.models import QuerySet

from campaigns.models import Campaign, CampaignLead, SentMessage, Suppression
from core import errors
from core.emails import normalize_address  # noqa: F401 - re-exported for campaigns callers
from core.money import format_credits
from leads.verification.models import Status, Verification
from leads.verification.verbs import PRICE
from sending import capacity
from sending.models import HealthState, Mailbox


def normalize_message_id(message_id: str) -> str:
    """`<abc@host>` or `abc@host` -> `abc@host` (how SentMessage.message_id is stored)."""
    return (message_id or "").strip().strip("<>").strip()


def sent_message_by_message_id(*, message_id: str) -> SentMessage | None:
    """The message this service sent with that Message-ID (angle brackets optional), or None.

    Used by reply threading (In-Reply-To / References). Message-IDs are globally unique, so no workspace is
    needed; the returned row carries `workspace`, `campaign` and `campaign_lead`."""
    mid = normalize_message_id(message_id)
    if not mid:
        return None
    return SentMessage.objects.select_related("campaign_lead", "campaign", "workspace").filter(message_id=mid).first()


def leads_for_address(*, workspace, email: str) -> QuerySet[CampaignLead]:
    """Every campaign lead of this workspace with this address (any campaign, any state), newest first."""
    return (CampaignLead.objects.filter(workspace=workspace, email=normalize_address(email))
            .select_related("campaign").order_by("-id"))


def suppression_get(*, workspace, email: str) -> Suppression | None:
    return Suppression.objects.filter(workspace=workspace, email=normalize_address(email)).first()


def suppressions_list(*, workspace) -> QuerySet[Suppression]:
    return Suppression.objects.filter(workspace=workspace).order_by("-created_at")


def campaign_get(*, workspace, campaign_id) -> Campaign:
    """This workspace's campaign, or 404 (another workspace's id is 404 too: never reveal it exists)."""
    campaign = Campaign.objects.filter(workspace=workspace, pk=campaign_id).first()
    if campaign is None:
        raise errors.NotFound("No such campaign in this workspace.")
    return campaign


def campaigns_list(*, workspace) -> QuerySet[Campaign]:
    return Campaign.objects.filter(workspace=workspace).order_by("-created_at")


# --- campaign reads (CONTRACT 4.10b) ------------------------------------------------------------------
# Every count below is one GROUP BY over a composite index of the campaign's rows (campaignlead_camp_stats_idx and
# sentmessage_camp_stats_idx cover their columns: index-only on PostgreSQL; replies use replies_camp_recv_idx).
# Replies are read through the `replies` relation that replies' rows declare on campaigns and leads: the replies app
# sits above this one and is not imported here.

LEAD_STATUSES = ("queued", "active", "finished", "replied", "bounced", "unsubscribed", "suppressed_at_send",
                 "suppressed", "send_unknown", "stopped_company_replied", "stopped", "removed_at_launch")
OWN_STATUS_REASONS = ("replied", "bounced", "unsubscribed", "suppressed_at_send", "send_unknown",
                      "stopped_company_replied")  # stop reasons that are a status of their own
SUPPRESSED_REASONS = {"manual", "invalid_email", "duplicate"}


def lead_status(*, state: str, stop_reason: str, current_step: int) -> str:
    """One word for where a lead stands (the `status` of GET /v1/campaigns/:id/leads and the stats keys).

    queued: not contacted yet (draft, or launched and waiting for its first step); active: mid-sequence;
    finished: every step sent; replied / bounced / unsubscribed: stopped for that reason; suppressed_at_send:
    the send claim found the address suppressed; suppressed: stopped because the address was suppressed
    elsewhere (a manual addition); send_unknown: a message was mid-send at a crash, its outcome is unknown and it
    was NOT re-sent (an operator decides); stopped_company_replied: a colleague at the same company domain
    replied (stop_on_company_reply); stopped: any other stop (send_failed, mailbox_gone, invalid_message);
    removed_at_launch: suppressed between drafting and launch, never contacted."""
    if state in (CampaignLead.State.PENDING, CampaignLead.State.ACTIVE):
        return "queued" if state == CampaignLead.State.PENDING or current_step == 0 else "active"
    if state == CampaignLead.State.FINISHED:
        return "finished"
    if state == CampaignLead.State.REMOVED:
        return "removed_at_launch"
    if stop_reason in OWN_STATUS_REASONS:
        return stop_reason
    if stop_reason in SUPPRESSED_REASONS:
        return "suppressed"
    return "stopped"


def campaign_stats(campaign: Campaign) -> dict:
    from django.db.models import Count

    leads = {name: 0 for name in LEAD_STATUSES}
    total = 0
    for row in (CampaignLead.objects.filter(campaign=campaign).values("state", "stop_reason")
                .annotate(n=Count("pk")).order_by()):
        if row["state"] == CampaignLead.State.ACTIVE:
            continue  # split by step below
        leads[lead_status(state=row["state"], stop_reason=row["stop_reason"], current_step=0)] += row["n"]
        total += row["n"]
    for row in (CampaignLead.objects.filter(campaign=campaign, state=CampaignLead.State.ACTIVE)
                .values("current_step").annotate(n=Count("pk")).order_by()):
        leads["queued" if row["current_step"] == 0 else "active"] += row["n"]
        total += row["n"]
    leads["total"] = total

    steps = len(campaign.steps)
    sent = [0] * steps
    bounced = attempts = sending = 0
    for row in (SentMessage.objects.filter(campaign=campaign).values("state", "step_index", "bounced")
                .annotate(n=Count("pk")).order_by()):
        if row["state"] == SentMessage.State.SENT and 0 <= row["step_index"] < steps:
            sent[row["step_index"]] += row["n"]
        if row["bounced"]:
            bounced += row["n"]
        if row["state"] == SentMessage.State.SENT or row["bounced"]:  # delivered or bounced: a real attempt
            attempts += row["n"]
        if row["state"] == SentMessage.State.SENDING:
            sending += row["n"]
    replies = {c: 0 for c in ("interested", "not_interested", "out_of_office", "unsubscribe", "bounce", "other")}
    replied_leads = 0
    for row in (campaign.replies.exclude(classification__isnull=True)
                .values("classification").annotate(n=Count("pk"), leads=Count("campaign_lead", distinct=True))
                .order_by()):
        replies[row["classification"]] = replies.get(row["classification"], 0) + row["n"]
        if row["classification"] not in ("bounce", "out_of_office"):
            replied_leads += row["leads"]
    contacted = sent[0] if steps else 0
    return {
        "leads": leads,
        "messages": {
            "sent": sum(sent),
            "sent_per_step": [{"step": i + 1, "sent": n} for i, n in enumerate(sent)],
            "bounced": bounced,
            "in_doubt": sending,
        },
        "replies": replies,
        "leads_contacted": contacted,
        "bounce_rate": round(bounced / attempts, 4) if attempts else None,
        "reply_rate": round(min(replied_leads, contacted) / contacted, 4) if contacted else None,
        "steps": step_stats(campaign),
    }


def campaign_mailboxes(campaign: Campaign) -> list:
    return list(campaign.mailboxes.order_by("email"))


def campaign_sends_in_flight(campaign: Campaign) -> int:
    """Messages of the campaign already handed to SMTP and not finished: a pause does not stop these (they go out
    within the SMTP conversation's time), so the pause answer says how many there are."""
    return SentMessage.objects.filter(campaign=campaign, state=SentMessage.State.SENDING).count()


def sends_today(mailbox_ids, now: datetime) -> dict:
    """{mailbox_id: messages counted against today's cap}: claimed, sending, sent, and bounced attempts."""
    from django.db.models import Count, Q

    rows = (SentMessage.objects.filter(mailbox_id__in=list(mailbox_ids), claimed_at__gte=capacity.day_start(now))
            .filter(~Q(state=SentMessage.State.FAILED) | Q(bounced=True))
            .values("mailbox_id").annotate(n=Count("id")))
    return {r["mailbox_id"]: r["n"] for r in rows}


def campaign_schedule(campaign: Campaign, *, now=None, mailboxes: list | None = None) -> tuple:
    """(next_send_at, waiting_reason) of CONTRACT 4.10b.

    next_send_at: the next moment a message is due inside the sending window (now, when leads are due and
    nothing blocks them), or null when nothing can be scheduled. waiting_reason says why nothing is being
    sent right now: `paused`, `completed`, `no_active_mailbox`, `mailbox_needs_reconnect` (an OAuth mailbox
    whose consent must be renewed), `mailbox_paused` (every active mailbox paused by the deliverability rules),
    `outside_window` (with the window's next opening as next_send_at) or `daily_cap_reached` (with tomorrow's
    opening), else null."""
    from django.db.models import Count, Min
    from django.utils import timezone

    from campaigns.window import for_lead, in_window, next_open, per_lead

    now = now or timezone.now()
    if campaign.state == Campaign.State.DRAFT:
        return None, None
    if campaign.state == Campaign.State.COMPLETED:
        return None, "completed"
    if campaign.state == Campaign.State.PAUSED:
        return None, "paused"
    mailboxes = campaign_mailboxes(campaign) if mailboxes is None else mailboxes
    usable = [m for m in mailboxes if m.status == Mailbox.Status.ACTIVE]
    if not usable:
        if any(m.status == getattr(Mailbox.Status, "NEEDS_RECONNECT", "needs_reconnect") for m in mailboxes):
            return None, "mailbox_needs_reconnect"
        return None, "no_active_mailbox"
    if all(m.health_state == HealthState.PAUSED for m in usable):
        return None, "mailbox_paused"  # deliverability: every mailbox paused until an owner or admin resumes one
    usable = [m for m in usable if m.health_state != HealthState.PAUSED]
    agg = CampaignLead.objects.filter(campaign=campaign, state=CampaignLead.State.ACTIVE).aggregate(
        earliest=Min("next_send_at"), n=Count("pk"))
    earliest = agg["earliest"]
    if earliest is None:
        return None, None  # nothing waiting: messages in flight, or the campaign is about to complete
    window = campaign.sending_window
    if per_lead(window):  # the window of every zone an active lead is in (the fallback for leads without one)
        zones = set(CampaignLead.objects.filter(campaign=campaign, state=CampaignLead.State.ACTIVE)
                    .values_list("timezone", flat=True).distinct().order_by())
        windows = [for_lead(window, zone) for zone in sorted(zones)]
    else:
        windows = [window]
    opening = min(next_open(w, now) for w in windows)
    if not any(in_window(w, now) for w in windows) and earliest <= opening:
        return opening, "outside_window"
    if earliest > now:
        return min(next_open(w, earliest) for w in windows), None
    used = sends_today([m.pk for m in usable], now)
    if all(used.get(m.pk, 0) >= capacity.daily_cap(m, now) for m in usable):
        tomorrow = capacity.day_start(now) + timedelta(days=1)
        return min(next_open(w, tomorrow) for w in windows), "daily_cap_reached"
    return now, None


def campaign_record(campaign: Campaign) -> dict:
    """The Campaign record of SPEC 2.7 (plus the normalized window and step count)."""
    return {
        "campaign_id": str(campaign.id),
        "name": campaign.name,
        "state": campaign.state,
        "leads_accepted": campaign.leads_accepted,
        "leads_suppressed": campaign.leads_suppressed,
        "suppressed_reasons": campaign.suppressed_reasons,
        "created_at": campaign.created_at,
        "steps": len(campaign.steps),
        "sending_window": campaign.sending_window,
        "stop_on_reply": True,
        "auto_winner": campaign.auto_winner,
        "stop_on_company_reply": campaign.stop_on_company_reply,
        "match_mailbox_provider": campaign.match_mailbox_provider,
        "verify_leads": campaign.verify_leads,
    }


def campaign_detail(campaign: Campaign, *, now=None) -> dict:
    """GET /v1/campaigns/:id: the SPEC 2.7 record plus state, timing, mailboxes and stats."""
    mailboxes = campaign_mailboxes(campaign)
    next_send_at, reason = campaign_schedule(campaign, now=now, mailboxes=mailboxes)
    return {
        **campaign_record(campaign),
        "launched_at": campaign.launched_at,
        "paused_at": campaign.paused_at,
        "completed_at": campaign.completed_at,
        "next_send_at": next_send_at,
        "waiting_reason": reason,
        "mailboxes": [{"mailbox_id": m.pk, "email": m.email, "status": m.status} for m in mailboxes],
        "stats": campaign_stats(campaign),
    }


def encode_cursor(*parts) -> str:
    import base64

    return base64.urlsafe_b64encode("|".join(str(p) for p in parts).encode()).decode().rstrip("=")


def decode_cursor(cursor: str, n: int) -> list[str]:
    import base64
    import binascii

    try:
        parts = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode().split("|")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        parts = []
    if len(parts) != n:
        raise errors.InvalidRequest("This cursor is not valid: pass next_cursor from the previous page.",
                                    details={"fields": {"cursor": ["Not a cursor this endpoint issued."]}})
    return parts


def campaigns_page(*, workspace, state: str | None = None, cursor: str | None = None,
                   limit: int = 50) -> tuple[list[Campaign], str | None]:
    """Newest first (created_at, then id), keyset pagination through the (workspace, -created_at) index."""
    import uuid
    from datetime import datetime

    from django.db.models import Q

    qs = Campaign.objects.filter(workspace=workspace)
    if state:
        qs = qs.filter(state=state)
    if cursor:
        created, pk = decode_cursor(cursor, 2)
        try:
            created_at, pk = datetime.fromisoformat(created), uuid.UUID(pk)
        except ValueError:
            raise errors.InvalidRequest("This cursor is not valid: pass next_cursor from the previous page.",
                                        details={"fields": {"cursor": ["Not a cursor this endpoint issued."]}}
                                        ) from None
        qs = qs.filter(Q(created_at__lt=created_at) | Q(created_at=created_at, pk__lt=pk))
    rows = list(qs.order_by("-created_at", "-pk")[:limit + 1])
    more = len(rows) > limit
    rows = rows[:limit]
    return rows, (encode_cursor(rows[-1].created_at.isoformat(), rows[-1].pk) if more else None)


def campaign_list_item(campaign: Campaign, *, sent: int = 0, replies: int = 0) -> dict:
    next_send_at, reason = campaign_schedule(campaign)
    return {**campaign_record(campaign), "launched_at": campaign.launched_at, "paused_at": campaign.paused_at,
            "completed_at": campaign.completed_at, "next_send_at": next_send_at, "waiting_reason": reason,
            "messages_sent": sent, "replies": replies}


def campaign_list_items(campaigns: list[Campaign]) -> list[dict]:
    from django.db.models import Count

    ids = [c.pk for c in campaigns]
    sent = dict(SentMessage.objects.filter(campaign_id__in=ids, state=SentMessage.State.SENT)
                .values("campaign_id").annotate(n=Count("pk")).order_by().values_list("campaign_id", "n"))
    replies = dict(Campaign.objects.filter(pk__in=ids, replies__classification__isnull=False)
                   .values("pk").annotate(n=Count("replies")).order_by().values_list("pk", "n"))
    return [campaign_list_item(c, sent=sent.get(c.pk, 0), replies=replies.get(c.pk, 0)) for c in campaigns]


def campaign_leads_page(*, campaign: Campaign, cursor: str | None = None, limit: int = 50, query: str = "",
                        status: str = "") -> tuple[list[dict], str | None]:
    """This campaign's leads in the order they were given (keyset on id), each with where it stands: status,
    last step sent and when, next step due, the newest reply, and a message whose outcome is in doubt (mid-send
    at a crash: `send_in_doubt`, never re-sent; an operator decides)."""
    qs = CampaignLead.objects.filter(campaign=campaign)
    if query:
        qs = qs.filter(email__contains=query.strip().lower())
    if status:
        qs = _filter_status(qs, status)
    if cursor:
        (pk,) = decode_cursor(cursor, 1)
        if not pk.isdigit():
            raise errors.InvalidRequest("This cursor is not valid: pass next_cursor from the previous page.",
                                        details={"fields": {"cursor": ["Not a cursor this endpoint issued."]}})
        qs = qs.filter(pk__gt=int(pk))
    leads = list(qs.order_by("pk")[:limit + 1])
    more = len(leads) > limit
    leads = leads[:limit]
    pks = [lead.pk for lead in leads]
    last_sent: dict[int, SentMessage] = {}
    in_doubt: dict[int, SentMessage] = {}
    for msg in (SentMessage.objects.filter(campaign_lead_id__in=pks,
                                           state__in=[SentMessage.State.SENT, SentMessage.State.SENDING])
                .order_by("step_index")):
        if msg.state == SentMessage.State.SENT:
            last_sent[msg.campaign_lead_id] = msg
        else:
            in_doubt[msg.campaign_lead_id] = msg
    reply_of: dict[int, str] = {}
    for lead_id, reply_id in (CampaignLead.objects.filter(pk__in=pks, replies__isnull=False)
                              .order_by("replies__received_at", "replies__pk").values_list("pk", "replies__pk")):
        reply_of[lead_id] = reply_id  # the newest wins
    steps = len(campaign.steps)
    out = []
    for lead in leads:
        sent = last_sent.get(lead.pk)
        doubt = in_doubt.get(lead.pk)
        active = lead.state == CampaignLead.State.ACTIVE and lead.current_step < steps
        out.append({
            "email": lead.email,
            "first_name": lead.first_name,
            "last_name": lead.last_name,
            "company_name": lead.company_name,
            "status": lead_status(state=lead.state, stop_reason=lead.stop_reason, current_step=lead.current_step),
            "state": lead.state,
            "stop_reason": lead.stop_reason or None,
            "stopped_at": lead.stopped_at,
            "mailbox_id": lead.mailbox_id,
            "timezone": lead.timezone or None,
            "recipient_provider": lead.recipient_provider or None,
            "variants": lead.variants or [],
            "last_step_sent": sent.step_index + 1 if sent else None,
            "last_sent_at": sent.sent_at if sent else None,
            "next_step": lead.current_step + 1 if active else None,
            "next_send_at": lead.next_send_at if active else None,
            "reply_id": reply_of.get(lead.pk),
            "send_in_doubt": {
                "message_id": doubt.message_id, "step": doubt.step_index + 1, "sending_since": doubt.sending_at,
                "reported_at": doubt.stuck_reported_at,
            } if doubt else None,
        })
    return out, (encode_cursor(leads[-1].pk) if more else None)


def _filter_status(qs, status: str):
    from django.db.models import Q

    S = CampaignLead.State
    if status == "queued":
        return qs.filter(Q(state=S.PENDING) | Q(state=S.ACTIVE, current_step=0))
    if status == "active":
        return qs.filter(state=S.ACTIVE, current_step__gt=0)
    if status == "finished":
        return qs.filter(state=S.FINISHED)
    if status == "removed_at_launch":
        return qs.filter(state=S.REMOVED)
    if status in OWN_STATUS_REASONS:
        return qs.filter(state=S.STOPPED, stop_reason=status)
    if status == "suppressed":
        return qs.filter(state=S.STOPPED, stop_reason__in=SUPPRESSED_REASONS)
    if status == "stopped":
        return qs.filter(state=S.STOPPED).exclude(stop_reason__in={*OWN_STATUS_REASONS, *SUPPRESSED_REASONS})
    raise errors.InvalidRequest(details={"fields": {"status": [f"One of {', '.join(LEAD_STATUSES)}."]}})


# --- verify_leads at launch (CONTRACT 4.13): what verifying a draft's leads involves -------------------------
VERIFICATION_RECENT = timedelta(days=30)  # `verify_leads`: a conclusive result this recent is not verified again
VERIFICATION_CATCH_ALL = {Status.CATCH_ALL_VALID, Status.CATCH_ALL_UNKNOWN}


@dataclass
class VerificationPlan:
    to_verify: list[str] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)
    catch_all: int = 0
    risky: int = 0

    @property
    def credits_max(self) -> int:
        return len(self.to_verify) * PRICE


def verification_plan(campaign: Campaign, *, now=None) -> VerificationPlan:
    """What verifying this draft's pending leads involves, from the newest conclusive result of each address in
    the last 30 days (any workspace's: a verification describes the address, not who asked)."""
    from django.utils import timezone

    now = now or timezone.now()
    emails = list(campaign.leads.filter(state=CampaignLead.State.PENDING).order_by("position")
                  .values_list("email", flat=True))
    latest: dict[str, str] = {}
    for i in range(0, len(emails), 900):
        for email, status in (Verification.objects.filter(email__in=emails[i:i + 900],
                                                          checked_at__gte=now - VERIFICATION_RECENT)
                              .exclude(status=Status.UNKNOWN).order_by("email", "checked_at")
                              .values_list("email", "status")):
            latest[email] = status
    plan = VerificationPlan(to_verify=[e for e in emails if e not in latest])
    plan.invalid = [e for e, s in latest.items() if s == Status.INVALID]
    plan.catch_all = sum(1 for s in latest.values() if s in VERIFICATION_CATCH_ALL)
    plan.risky = sum(1 for s in latest.values() if s == Status.RISKY)
    return plan


def verification_preview_fields(campaign: Campaign) -> dict:
    """The launch preview's verification figures (empty unless the campaign has `verify_leads`)."""
    if not campaign.verify_leads:
        return {}
    plan = verification_plan(campaign)
    return {"leads_to_verify": len(plan.to_verify), "verification_credits_max": format_credits(plan.credits_max),
            "leads_catch_all": plan.catch_all, "leads_risky": plan.risky}



# --- variants and the winner (CONTRACT 4.6b) --------------------------------------------------------------
WINNER_ALPHA = 0.05  # family-wise: each of the k-1 comparisons is tested at WINNER_ALPHA / (k - 1) (Bonferroni)
NOT_REPLIES = ("out_of_office", "bounce")


def variant_figures(campaign: Campaign) -> dict[tuple[int, int | None], dict]:
    """{(step index, variant): {"sent", "bounced", "replied": {lead ids}, "interested": {lead ids}}}.

    Sends and bounces are one GROUP BY over the campaign's messages. A reply counts for the message it answers
    (threading), else for the lead's latest message sent before it; out-of-office notices and bounces are not
    replies. Replies and interested are counted once per lead."""
    from django.db.models import Count, Q

    figures: dict = {}

    def cell(key):
        return figures.setdefault(key, {"sent": 0, "bounced": 0, "replied": set(), "interested": set()})

    for row in (SentMessage.objects.filter(campaign=campaign)
                .filter(Q(state=SentMessage.State.SENT) | Q(bounced=True))
                .values("step_index", "variant", "state", "bounced").annotate(n=Count("pk")).order_by()):
        key = (row["step_index"], row["variant"])
        if row["state"] == SentMessage.State.SENT:
            cell(key)["sent"] += row["n"]
        if row["bounced"]:
            cell(key)["bounced"] += row["n"]
    replies = list(campaign.replies.filter(campaign_lead__isnull=False)
                   .exclude(classification__isnull=True).exclude(classification__in=NOT_REPLIES)
                   .values_list("campaign_lead_id", "classification", "sent_message__step_index",
                                "sent_message__variant", "received_at"))
    unthreaded = {lead for lead, _, step, _, _ in replies if step is None}
    history: dict[int, list] = {}
    if unthreaded:
        for lead, step, variant, at in (SentMessage.objects.filter(campaign_lead_id__in=unthreaded,
                                                                   state=SentMessage.State.SENT)
                                        .order_by("sent_at").values_list("campaign_lead_id", "step_index",
                                                                         "variant", "sent_at")):
            history.setdefault(lead, []).append((at, step, variant))
    for lead, label, step, variant, received_at in replies:
        if step is None:
            before = [h for h in history.get(lead, []) if h[0] is None or h[0] <= received_at] or history.get(lead)
            if not before:
                continue
            _, step, variant = before[-1]
        cell((step, variant))["replied"].add(lead)
        if label == "interested":
            cell((step, variant))["interested"].add(lead)
    return figures


def winner_test(*, sent: list[int], successes: list[int]) -> tuple[int | None, list[float | None]]:
    """The documented winner rule: the variant with the highest rate wins when, for every other variant, a
    one-sided two-proportion z-test (pooled) says its rate is higher with p < WINNER_ALPHA / (k - 1).
    Returns (winner index or None, p-value of the leader against each variant, None for the leader itself)."""
    import math

    k = len(sent)
    rates = [s / n if n else 0.0 for s, n in zip(successes, sent, strict=True)]
    best = max(range(k), key=lambda i: rates[i])
    p_values: list[float | None] = []
    for j in range(k):
        if j == best:
            p_values.append(None)
            continue
        n1, n2 = sent[best], sent[j]
        pooled = (successes[best] + successes[j]) / (n1 + n2) if n1 + n2 else 0.0
        se = math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2)) if n1 and n2 else 0.0
        if se == 0:
            p_values.append(1.0)  # no difference to measure (both rates 0, or both 1)
            continue
        z = (rates[best] - rates[j]) / se
        p_values.append(round(0.5 * math.erfc(z / math.sqrt(2)), 6))
    threshold = WINNER_ALPHA / (k - 1)
    if k < 2 or any(p is not None and p >= threshold for p in p_values):
        return None, p_values
    return best, p_values


def step_stats(campaign: Campaign, figures: dict | None = None) -> list[dict]:
    """`stats.steps` of GET /v1/campaigns/:id: per step its sends and, for a step with variants, each
    variant's sends, replies, interested replies and bounces, and the chosen winner (0-based index)."""
    from datetime import datetime

    from campaigns.templating import step_variant_count

    figures = variant_figures(campaign) if figures is None else figures
    out = []
    for i, step in enumerate(campaign.steps):
        k = step_variant_count(step)
        variants = []
        for v in range(k):
            f = figures.get((i, v)) or {"sent": 0, "bounced": 0, "replied": set(), "interested": set()}
            variants.append({"variant": v, "sent": f["sent"], "replies": len(f["replied"]),
                             "interested": len(f["interested"]), "bounced": f["bounced"]})
        winner = (campaign.winners or {}).get(str(i))
        out.append({"step": i + 1, "sent": sum(f["sent"] for (s, _), f in figures.items() if s == i),
                    "variants": variants, "winner": winner["variant"] if winner else None,
                    "winner_chosen_at": datetime.fromisoformat(winner["chosen_at"]) if winner else None})
    return out

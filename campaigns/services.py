"""Campaign services: suppression, lead stops, create, launch, unsubscribe. Services write; selectors read."""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from campaigns import selectors
from campaigns.models import Campaign, CampaignLead, Suppression
from campaigns.selectors import normalize_address
from core import events
from core.emails import parse_address
from sending.selectors import mailboxes_active
from sending.transport import uses_sink

logger = logging.getLogger("campaigns")

SUPPRESSION_REASONS = {c.value for c in Suppression.Reason}


# --- suppression --------------------------------------------------------------------------------------
def suppression_add(*, workspace, email: str, reason: str, source: str = "") -> Suppression:
    """Suppress `email` in `workspace` for good (there is no removal path). Idempotent: if the address is
    already suppressed the existing row is returned unchanged (the first reason wins).

    `reason` is one of `unsubscribed`, `bounced`, `replied`, `manual`; `source` is free text for humans
    (e.g. "reply <message-id>", "link", "mailto", "console:alice@example.com").
    Every active lead of that address in this workspace is stopped (reason = the suppression reason), so
    nothing further is sent; draft leads are removed at launch by the launch re-check."""
    if reason not in SUPPRESSION_REASONS:
        raise ValueError(f"unknown suppression reason {reason!r}")
    address = normalize_address(email)
    if not address:
        raise ValueError("empty address")
    existing = Suppression.objects.filter(workspace=workspace, email=address).first()
    if existing is None:
        try:
            with transaction.atomic():
                existing = Suppression.objects.create(workspace=workspace, email=address, reason=reason,
                                                      source=(source or "")[:200])
        except IntegrityError:  # a concurrent writer won: same outcome
            existing = Suppression.objects.get(workspace=workspace, email=address)
    for lead in CampaignLead.objects.filter(workspace=workspace, email=address, state=CampaignLead.State.ACTIVE):
        lead_stop(lead=lead, reason=existing.reason)
    return existing


# --- leads ------------------------------------------------------------------------------------------
def lead_stop(*, lead: CampaignLead, reason: str) -> bool:
    """Stop this lead's sequence: no further step is sent. Safe to repeat; returns True if it moved.

    A message already handed to SMTP cannot be recalled; a message claimed but not yet handed over is
    dropped (the sender re-reads the lead state under lock right before speaking SMTP)."""
    now = timezone.now()
    with transaction.atomic():  # the stop and the completion check commit together: no crash between them
        moved = CampaignLead.objects.filter(
            pk=lead.pk, state__in=[CampaignLead.State.ACTIVE, CampaignLead.State.PENDING]
        ).update(state=CampaignLead.State.STOPPED, stop_reason=(reason or "")[:32], next_send_at=None, stopped_at=now)
        if moved:
            lead.state, lead.stop_reason, lead.next_send_at, lead.stopped_at = (CampaignLead.State.STOPPED, reason,
                                                                                None, now)
            campaign_maybe_complete(campaign_id=lead.campaign_id)
    return bool(moved)


def leads_lock_for_stop(*, workspace, emails, lead_pk=None, lead_pks=()) -> None:
    """Lock, in primary-key order, every lead a transaction may stop: the workspace's active or pending leads
    at these addresses (and lead `lead_pk`, and leads `lead_pks`). Call it first in a transaction that stops several leads (a reply's
    effects, a correction): two of them stopping each other's leads then queue up instead of deadlocking, and
    campaign rows are locked only after, in campaign_maybe_complete (the lock order described there)."""
    match = Q(workspace=workspace, email__in=list(dict.fromkeys(emails)))
    if lead_pk is not None:
        match |= Q(pk=lead_pk)
    if lead_pks:
        match |= Q(pk__in=list(lead_pks))
    list(CampaignLead.objects.select_for_update().filter(
        match, state__in=[CampaignLead.State.ACTIVE, CampaignLead.State.PENDING]).order_by("pk").values_list("pk", flat=True))


# --- mailbox matching (CONTRACT 4.6b) -----------------------------------------------------------------
GOOGLE_MX = ("google.com", "googlemail.com")  # aspmx.l.google.com, gmail-smtp-in.l.google.com, smtp.google.com
MICROSOFT_MX = ("outlook.com", "hotmail.com", "office365.com")  # *.mail.protection.outlook.com and consumer hosts
PROVIDER_CACHE_SECONDS = 24 * 3600
PROVIDER_CACHE_FAILURE_SECONDS = 600


def recipient_provider(domain: str) -> str:
    """`google`, `microsoft` or `other`: who hosts mail for `domain`, from its MX hosts (looked up through
    VERIFIER_NAMESERVERS like every DNS-based signal, cached a day; a lookup that fails is `other` for ten
    minutes)."""
    from django.core.cache import cache

    from leads.verification import dnslayer

    domain = (domain or "").lower().rstrip(".")
    key = f"campaigns:mx-provider:{domain}"
    known = cache.get(key)
    if known:
        return known
    try:
        hosts = dnslayer.mx_hosts(domain)
    except (dnslayer.DnsFailure, dnslayer.DomainNotFound):
        cache.set(key, "other", PROVIDER_CACHE_FAILURE_SECONDS)
        return "other"
    except Exception:  # noqa: BLE001 - resolver errors of any kind must not stop a send
        logger.warning("MX lookup of %s failed", domain, exc_info=True)
        return "other"
    kind = "other"
    for host in hosts:
        if any(host == s or host.endswith("." + s) for s in GOOGLE_MX):
            kind = "google"
            break
        if any(host == s or host.endswith("." + s) for s in MICROSOFT_MX):
            kind = "microsoft"
            break
    cache.set(key, kind, PROVIDER_CACHE_SECONDS)
    return kind


def lead_resolve_provider(*, lead_id: int) -> str:
    """With `match_mailbox_provider`, record the lead's `recipient_provider` before its first send (the DNS
    lookup runs outside any transaction). Returns it, or "" when the campaign does not match providers."""
    row = (CampaignLead.objects.filter(pk=lead_id, campaign__match_mailbox_provider=True)
           .values_list("email", "recipient_provider").first())
    if row is None:
        return ""
    if row[1]:
        return row[1]
    kind = recipient_provider(row[0].rpartition("@")[2])
    CampaignLead.objects.filter(pk=lead_id, recipient_provider="").update(recipient_provider=kind)
    return kind


# --- stop the company (CONTRACT 4.6b) ------------------------------------------------------------------
COMPANY_STOP_REASON = "stopped_company_replied"
COMPANY_STOP_IGNORES = ("out_of_office", "bounce")  # automatic mail says nothing about the company's interest


def company_domain(email: str) -> str | None:
    """The company domain of an address, or None for a free-mail provider's (gmail.com…: not a company)."""
    from leads.verification.lists import is_free_provider

    domain = (email or "").rpartition("@")[2].lower().rstrip(".")
    if not domain or is_free_provider(domain):
        return None
    return domain


def company_leads_to_stop(*, lead: CampaignLead, label: str) -> list[int]:
    """With `stop_on_company_reply`, the other active or pending leads of this lead's campaign at the same
    company domain, when a reply labelled `label` (anything but out-of-office or a bounce) came from it."""
    if label in COMPANY_STOP_IGNORES or not Campaign.objects.filter(pk=lead.campaign_id,
                                                                   stop_on_company_reply=True).exists():
        return []
    domain = company_domain(lead.email)
    if domain is None:
        return []
    return list(CampaignLead.objects.filter(
        campaign_id=lead.campaign_id, email__endswith=f"@{domain}",
        state__in=[CampaignLead.State.ACTIVE, CampaignLead.State.PENDING]).exclude(pk=lead.pk)
        .order_by("pk").values_list("pk", flat=True))


def company_stop(*, lead_pks: list[int]) -> list[int]:
    """Stop these leads (`stopped_company_replied`): a colleague answered. They are not suppressed: the
    company's answer is not theirs, and other campaigns may still write to them. Returns those that moved."""
    stopped = []
    for lead in CampaignLead.objects.filter(pk__in=list(lead_pks)).order_by("pk"):
        if lead_stop(lead=lead, reason=COMPANY_STOP_REASON):
            stopped.append(lead.pk)
    return stopped


def campaigns_complete_finished(*, limit: int = 100) -> int:
    """Safety net run by the scheduler tick: complete launched or paused campaigns that have no active lead
    left (a worker that died between a lead's last change and the completion check would otherwise leave its
    campaign `launched` for ever). Returns how many it completed."""
    active = CampaignLead.objects.filter(campaign=OuterRef("pk"), state=CampaignLead.State.ACTIVE)
    stale = (Campaign.objects.filter(state__in=[Campaign.State.LAUNCHED, Campaign.State.PAUSED])
             .filter(~Exists(active)).values_list("pk", flat=True)[:limit])
    return sum(campaign_maybe_complete(campaign_id=pk) for pk in list(stale))


def _campaign_event(campaign: Campaign) -> dict:
    """A campaign event's payload (webhooks): the object GET /v1/campaigns/:id returns."""
    campaign.refresh_from_db()
    return selectors.campaign_detail(campaign)


def campaign_maybe_complete(*, campaign_id) -> bool:
    """launched (or paused) -> completed once no lead is active any more: every lead has finished its
    sequence, replied, bounced or been suppressed or stopped. Safe to repeat.

    Two workers finishing a campaign's last two leads at once must not each see the other's lead still active
    (on PostgreSQL neither would complete it). So the campaign row is locked before leads are counted: the
    second checker waits for the first one's transaction to commit, and under READ COMMITTED its count, a new
    statement, then sees that lead finished. Lock order: lead rows (in primary-key order when a transaction
    stops several: replies' effects and corrections lock them all first), then campaign rows; no path locks a campaign and
    then waits for a lead (resume stops its suppressed leads after its commit, the scheduler tick moves leads
    whose mailbox is gone after its own transaction)."""
    with transaction.atomic():
        locked = (Campaign.objects.select_for_update(no_key=True)  # inserts that reference it (claims) go on
                  .filter(pk=campaign_id, state__in=[Campaign.State.LAUNCHED, Campaign.State.PAUSED]).first())
        if locked is None:
            return False
        if CampaignLead.objects.filter(campaign_id=campaign_id, state=CampaignLead.State.ACTIVE).exists():
            return False
        done = bool(Campaign.objects.filter(
            pk=campaign_id, state__in=[Campaign.State.LAUNCHED, Campaign.State.PAUSED]).update(
            state=Campaign.State.COMPLETED, completed_at=timezone.now()))
    if done:
        campaign = Campaign.objects.get(pk=campaign_id)
        events.emit(workspace=campaign.workspace_id, type="campaign.completed", data=lambda: _campaign_event(campaign))
    return done


# --- the winner of a step's variants (CONTRACT 4.6b) --------------------------------------------------
def campaign_pick_winners(*, campaign_id) -> list[int]:
    """With `auto_winner`, choose the winner of every step with variants that has none yet, once each of its
    variants has `min_sends_per_variant` sends and the leader passes `selectors.winner_test`. The choice, its
    time and the figures behind it are recorded in `Campaign.winners`; from then on only the winner is sent
    to leads still to reach that step (`messages.variant_for`). A choice is never revised. Returns the step
    indexes chosen now. Run by the scheduler tick for launched campaigns."""
    from campaigns.templating import step_variant_count

    chosen = []
    with transaction.atomic():
        campaign = (Campaign.objects.select_for_update(no_key=True)  # sends that reference it (claims) go on
                    .filter(pk=campaign_id, state=Campaign.State.LAUNCHED)
                    .exclude(auto_winner__isnull=True).first())
        if campaign is None or not campaign.auto_winner:
            return []
        open_steps = [i for i, step in enumerate(campaign.steps)
                      if step_variant_count(step) and str(i) not in (campaign.winners or {})]
        if not open_steps:
            return []
        metric = campaign.auto_winner["metric"]
        need = int(campaign.auto_winner["min_sends_per_variant"])
        figures = selectors.variant_figures(campaign)
        winners = dict(campaign.winners or {})
        for i in open_steps:
            cells = [figures.get((i, v)) or {"sent": 0, "replied": set(), "interested": set()}
                     for v in range(step_variant_count(campaign.steps[i]))]
            sent = [c["sent"] for c in cells]
            if min(sent) < need:
                continue
            successes = [len(c["interested"] if metric == "interested_rate" else c["replied"]) for c in cells]
            winner, p_values = selectors.winner_test(sent=sent, successes=successes)
            if winner is None:
                continue
            winners[str(i)] = {
                "variant": winner, "chosen_at": timezone.now().isoformat(), "metric": metric, "sent": sent,
                "successes": successes, "rates": [round(x / n, 4) for x, n in zip(successes, sent, strict=True)],
                "p_values": p_values, "alpha": selectors.WINNER_ALPHA,
            }
            chosen.append(i)
        if chosen:
            campaign.winners = winners
            campaign.save(update_fields=["winners"])
    for i in chosen:
        logger.info("campaign %s step %s: variant %s chosen as the winner", campaign_id, i + 1, winners[str(i)]["variant"])
    return chosen


def campaigns_pick_winners(*, limit: int = 200) -> int:
    """The scheduler tick's pass over launched campaigns with `auto_winner` and a step still without a winner."""
    from campaigns.templating import step_variant_count

    picked = 0
    for pk, steps, winners in (Campaign.objects.filter(state=Campaign.State.LAUNCHED, auto_winner__isnull=False)
                               .values_list("pk", "steps", "winners")[:limit]):
        if any(step_variant_count(step) and str(i) not in (winners or {}) for i, step in enumerate(steps)):
            picked += len(campaign_pick_winners(campaign_id=pk))
    return picked


# --- pause and resume (CONTRACT 4.10b) --------------------------------------------------------------
def campaign_pause(*, workspace, campaign_id) -> Campaign:
    """launched -> paused. Once this returns nothing more is claimed for sending: the scheduler skips paused
    campaigns, the send claim re-reads the campaign's state under the lead lock, and the hand-over to SMTP
    (one conditional UPDATE) requires the campaign to be launched. A message already handed to SMTP finishes.
    Leads keep their state and due times. Pausing a paused campaign is a no-op; a draft or completed campaign
    is 409 `campaign_not_launched`."""
    from core import errors

    with transaction.atomic():
        campaign = Campaign.objects.select_for_update().filter(workspace=workspace, pk=campaign_id).first()
        if campaign is None:
            raise errors.NotFound("No such campaign in this workspace.")
        if campaign.state == Campaign.State.PAUSED:
            return campaign
        if campaign.state != Campaign.State.LAUNCHED:
            raise errors.CampaignNotLaunched(details={"state": campaign.state})
        campaign.state, campaign.paused_at = Campaign.State.PAUSED, timezone.now()
        campaign.save(update_fields=["state", "paused_at"])
        events.emit(workspace=campaign.workspace_id, type="campaign.paused", data=lambda: _campaign_event(campaign))
    return campaign


def campaign_resume(*, workspace, campaign_id) -> Campaign:
    """paused -> launched, without a new approval (the launch was approved). Leads due while paused are due at
    the next scheduler tick inside the window. Suppression is re-checked here (active leads whose address is
    suppressed are stopped) and, as always, again in every send claim. Anything but a paused campaign is 409
    `campaign_not_paused`."""
    from core import errors

    with transaction.atomic():
        campaign = Campaign.objects.select_for_update().filter(workspace=workspace, pk=campaign_id).first()
        if campaign is None:
            raise errors.NotFound("No such campaign in this workspace.")
        if campaign.state != Campaign.State.PAUSED:
            raise errors.CampaignNotPaused(details={"state": campaign.state})
        campaign.state, campaign.paused_at = Campaign.State.LAUNCHED, None
        campaign.save(update_fields=["state", "paused_at"])
        events.emit(workspace=campaign.workspace_id, type="campaign.resumed", data=lambda: _campaign_event(campaign))
    # after the commit, so no lead lock is awaited while the campaign row is held (a sender finishing a lead
    # holds that lead's row and then waits for the campaign's in campaign_maybe_complete); a send claimed
    # meanwhile re-checks suppression under its own lead lock anyway
    suppressed = CampaignLead.objects.filter(
        campaign=campaign, state=CampaignLead.State.ACTIVE,
        email__in=Suppression.objects.filter(workspace_id=campaign.workspace_id).values("email"))
    reasons = dict(Suppression.objects.filter(workspace_id=campaign.workspace_id,
                                              email__in=suppressed.values("email")).values_list("email", "reason"))
    for lead in list(suppressed):
        lead_stop(lead=lead, reason=reasons.get(lead.email, "manual"))
    campaign_maybe_complete(campaign_id=campaign.pk)
    campaign.refresh_from_db()
    return campaign


# --- create (SPEC 4.6, CONTRACT 4.6) ----------------------------------------------------------------
CREATE_REASONS = ("unsubscribed", "bounced", "replied", "invalid_email", "duplicate")


def email_syntax_normalize(email) -> str | None:
    """A syntactically valid address, normalized (lower-case), or None. Nothing is looked up. The same rule as
    the verifier's (`core.emails.parse_address`)."""
    if not isinstance(email, str) or not email.strip() or len(email) > 254:
        return None
    parsed = parse_address(email)
    return parsed.normalized if parsed else None


def campaign_create(*, workspace, name: str, leads: list[dict], steps: list[dict], sending_window: dict,
                    auto_winner: dict | None = None, stop_on_company_reply: bool = False,
                    match_mailbox_provider: bool = False, verify_leads: bool = False) -> Campaign:
    """Create a draft campaign. Leads are normalized; invalid syntax, duplicates and suppressed addresses are
    filtered out and counted by reason. Each accepted lead gets its variant of every step with variants
    (`templating.assign_variants`: balanced and deterministic). Nothing is contacted: drafts never send."""
    import uuid

    from campaigns.models import Suppression as S
    from campaigns.templating import assign_variants

    reasons = {r: 0 for r in CREATE_REASONS}
    candidates: list[tuple[str, dict]] = []
    seen: set[str] = set()
    for lead in leads:
        address = email_syntax_normalize(lead.get("email"))
        if address is None:
            reasons["invalid_email"] += 1
        elif address in seen:
            reasons["duplicate"] += 1
        else:
            seen.add(address)
            candidates.append((address, lead))
    suppressed: dict[str, str] = {}
    addresses = [a for a, _ in candidates]
    for i in range(0, len(addresses), 900):
        suppressed.update(S.objects.filter(workspace=workspace, email__in=addresses[i:i + 900])
                          .values_list("email", "reason"))
    accepted = []
    for address, lead in candidates:
        if address in suppressed:
            reason = suppressed[address]
            reasons[reason] = reasons.get(reason, 0) + 1
            continue
        accepted.append((address, lead))
    campaign_id = uuid.uuid4()
    variants = assign_variants(campaign_id, steps, [address for address, _ in accepted])
    with transaction.atomic():
        campaign = Campaign.objects.create(
            id=campaign_id, workspace=workspace, name=name, steps=steps, sending_window=sending_window,
            leads_accepted=len(accepted), leads_suppressed=sum(reasons.values()), suppressed_reasons=reasons,
            auto_winner=auto_winner, stop_on_company_reply=stop_on_company_reply,
            match_mailbox_provider=match_mailbox_provider,
            verify_leads=verify_leads,
        )
        CampaignLead.objects.bulk_create([
            CampaignLead(campaign=campaign, workspace=workspace, email=address, position=i,
                         first_name=lead.get("first_name") or "", last_name=lead.get("last_name") or "",
                         company_name=lead.get("company_name") or "", custom=lead.get("custom") or {},
                         timezone=lead.get("timezone") or "", variants=variants[i])
            for i, (address, lead) in enumerate(accepted)
        ], batch_size=500)
    return campaign


# --- launch (SPEC 4.7, CONTRACT 4.7) ----------------------------------------------------------------
def _suppressed_pending(campaign: Campaign):
    """Draft leads of this campaign whose address is now on the workspace's suppression list."""
    return CampaignLead.objects.filter(
        campaign=campaign, state=CampaignLead.State.PENDING,
        email__in=Suppression.objects.filter(workspace_id=campaign.workspace_id).values("email"),
    )


def _remove_leads(*, pks: list[int], reason: str, now) -> int:
    """Mark these draft leads removed; returns how many rows moved (the launch checks the count)."""
    moved = 0
    for i in range(0, len(pks), 500):
        moved += CampaignLead.objects.filter(pk__in=pks[i:i + 500], state=CampaignLead.State.PENDING).update(
            state=CampaignLead.State.REMOVED, stop_reason=reason, stopped_at=now, next_send_at=None)
    return moved


def launch_recheck(*, campaign: Campaign) -> int:
    """Remove every draft lead suppressed since drafting; returns how many. Fails closed: if the removals
    cannot be confirmed (an error, a count that does not match, a suppressed lead still pending) it raises
    LaunchAborted, and the caller's transaction rolls back so the campaign stays a draft."""
    from core import errors

    now = timezone.now()
    try:
        rows = list(_suppressed_pending(campaign).values_list("pk", "email"))
        if rows:
            reason_of = dict(Suppression.objects.filter(
                workspace_id=campaign.workspace_id, email__in={e for _, e in rows}).values_list("email", "reason"))
            by_reason: dict[str, list[int]] = {}
            for pk, email in rows:
                by_reason.setdefault(reason_of.get(email, "manual"), []).append(pk)
            removed = sum(_remove_leads(pks=pks, reason=reason, now=now) for reason, pks in by_reason.items())
        else:
            removed = 0
        if removed != len(rows) or _suppressed_pending(campaign).exists():
            raise errors.LaunchAborted(details={"campaign_id": str(campaign.id), "to_remove": len(rows),
                                                "removed": removed})
        return removed
    except errors.LaunchAborted:
        raise
    except Exception as exc:
        logger.exception("launch re-check failed for campaign %s", campaign.id)
        raise errors.LaunchAborted(details={"campaign_id": str(campaign.id)}) from exc


def _window_text(window: dict) -> str:
    days = ",".join(window["days"])
    zone = window["timezone"]
    if zone == "lead":
        zone = f"in each lead's time zone (else {window.get('fallback_timezone')})"
    return f"{days} {window['start_hour']:02d}:00-{window['end_hour']:02d}:00 {zone}"


SINK_CONSEQUENCE = "sandbox mode, the email goes to the sandbox sink on this machine"


def launch_consequence(mailboxes=None) -> str:
    """What approving a launch does, as the approver's headline (and the approval mail) says it, from where the
    campaign's mailboxes really deliver (sending.transport.uses_sink): sandbox mailboxes, and in sandbox mode
    mailboxes whose server is not on this machine, write to the sink; a connected mailbox that sends over SMTP
    sends real email, and the headline must not say otherwise. Without mailboxes: from the mode alone."""
    if mailboxes is None:
        return SINK_CONSEQUENCE if settings.SANDBOX else "real email will be sent"
    real = [m.email for m in mailboxes if not uses_sink(m)]
    if not real:
        return SINK_CONSEQUENCE
    if len(real) == len(mailboxes):
        return "real email will be sent"
    return (f"real email will be sent from {', '.join(real)}; the other mailboxes' email goes to the sandbox sink "
            "on this machine")


def launch_preview(*, workspace, campaign_id, request_id: str = "") -> dict:
    """No token: what a launch would do, and a 24-hour confirmation token for a human to approve."""
    from accounts import services as accounts
    from campaigns import messages
    from core import errors

    campaign = selectors.campaign_get(workspace=workspace, campaign_id=campaign_id)
    if campaign.state != Campaign.State.DRAFT:
        raise errors.CampaignNotDraft(details={"state": campaign.state})
    mailboxes = list(mailboxes_active(workspace=workspace))
    if not mailboxes:
        raise errors.SendingCapacityRequired()
    pending = campaign.leads.filter(state=CampaignLead.State.PENDING)
    since_draft = _suppressed_pending(campaign).count()
    active = pending.count() - since_draft
    firsts = list(pending.exclude(pk__in=_suppressed_pending(campaign).values("pk")).order_by("position")[:3])
    first = firsts[0] if firsts else None
    samples = [messages.sample_first_message(lead, campaign) for lead in firsts]
    summary = {
        "action": f"Launch campaign \u201c{campaign.name}\u201d: {launch_consequence(mailboxes)}",
        "campaign_id": str(campaign.id),
        "leads_to_contact": active,
        "leads_suppressed_since_draft": since_draft,
        "mailboxes": ", ".join(m.email for m in mailboxes),
        "steps": len(campaign.steps),
        "sending_window": _window_text(campaign.sending_window),
        "first_step_to": first.email if first else "",
        "first_step_subject": samples[0]["subject"] if samples else "",
        "first_step_body": samples[0]["body"][:1000] if samples else "",
    }
    verification = selectors.verification_preview_fields(campaign)
    if verification:  # the cost the approver accepts: at most 1 credit per lead verified at launch
        summary["verification"] = (f"{verification['leads_to_verify']} leads verified at launch, at most "
                                   f"{verification['verification_credits_max']} credits (unknown results free)")
    token, plaintext = accounts.token_issue(workspace=workspace, verb="launch_campaign",
                                            params={"campaign_id": str(campaign.id)}, ttl=accounts.LAUNCH_TTL,
                                            summary=summary, request_id=request_id)
    return {
        "status": "preview",
        "campaign_id": str(campaign.id),
        "mailboxes_active": len(mailboxes),
        "leads_active": active,
        "leads_suppressed_since_draft": since_draft,
        "samples": samples,
        **verification,
        **accounts.token_fields(token, plaintext),
    }


def campaign_launch(*, workspace, campaign_id, confirmation_token: str, request_id: str = "") -> dict:
    """Launch with an approved token, at most once: in one transaction, lock the campaign, check it is a draft
    with sending capacity, consume the token, remove leads suppressed since drafting (fail closed), attach
    every active mailbox, give each lead a sticky mailbox (round robin) and its first send time."""
    from accounts import services as accounts
    from campaigns.window import add_local_days, for_lead, next_open, per_lead
    from core import errors

    with transaction.atomic():
        campaign = Campaign.objects.select_for_update().filter(workspace=workspace, pk=campaign_id).first()
        if campaign is None:
            raise errors.NotFound("No such campaign in this workspace.")
        if campaign.state != Campaign.State.DRAFT:
            raise errors.CampaignNotDraft(details={"state": campaign.state})
        mailboxes = list(mailboxes_active(workspace=workspace))
        if not mailboxes:
            raise errors.SendingCapacityRequired()
        accounts.token_consume(workspace=workspace, verb="launch_campaign", params={"campaign_id": str(campaign.id)},
                               plaintext=confirmation_token, request_id=request_id)
        removed = launch_recheck(campaign=campaign)
        now = timezone.now()
        window = campaign.sending_window
        wait = int(campaign.steps[0].get("wait_days") or 0)
        rows = list(campaign.leads.filter(state=CampaignLead.State.PENDING).order_by("position")
                    .values_list("pk", "timezone"))
        pks = [pk for pk, _ in rows]
        first_at: dict[str, object] = {}  # per lead zone when the window is the lead's own (else one entry)
        by_mailbox: dict[tuple[int, str], list[int]] = {}
        # leads go round robin to the mailboxes that may send (a mailbox paused by the deliverability rules gets
        # none while another can send; all paused: the campaign waits, `mailbox_paused`)
        senders = [m for m in mailboxes if m.health_state != "paused"] or mailboxes
        for i, (pk, zone) in enumerate(rows):
            zone = zone if per_lead(window) else ""
            if zone not in first_at:
                lead_window = for_lead(window, zone)
                first_at[zone] = next_open(lead_window, add_local_days(lead_window, now, wait))
            by_mailbox.setdefault((i % len(senders), zone), []).append(pk)
        for (index, zone), lead_pks in by_mailbox.items():
            for j in range(0, len(lead_pks), 500):
                CampaignLead.objects.filter(pk__in=lead_pks[j:j + 500], state=CampaignLead.State.PENDING).update(
                    state=CampaignLead.State.ACTIVE, mailbox=senders[index], current_step=0,
                    next_send_at=first_at[zone])
        campaign.mailboxes.set(mailboxes)
        campaign.state = Campaign.State.LAUNCHED
        campaign.launched_at = now
        campaign.mailboxes_attached = len(mailboxes)
        campaign.leads_suppressed_at_launch = removed
        campaign.launch_request_id = request_id
        campaign.save(update_fields=["state", "launched_at", "mailboxes_attached", "leads_suppressed_at_launch",
                                     "launch_request_id"])
        events.emit(workspace=campaign.workspace_id, type="campaign.launched", data=lambda: _campaign_event(campaign))
        if not pks:
            campaign_maybe_complete(campaign_id=campaign.id)
    return {
        "status": "launched",
        "campaign_id": str(campaign.id),
        "mailboxes_attached": len(mailboxes),
        "leads_active": len(pks),
        "leads_suppressed_at_launch": removed,
    }


# --- unsubscribe (CONTRACT section 5) ----------------------------------------------------------------
def unsubscribe_by_token(*, token: str, source: str = "link") -> CampaignLead | None:
    """One-click unsubscribe: suppress the address the signed token names (reason `unsubscribed`) and stop
    its sequences. Returns the lead, or None for a token that does not verify. Safe to repeat."""
    from campaigns.messages import unsubscribe_lead_pk

    pk = unsubscribe_lead_pk(token)
    lead = CampaignLead.objects.select_related("workspace").filter(pk=pk).first() if pk else None
    if lead is None:
        return None
    suppression_add(workspace=lead.workspace, email=lead.email, reason="unsubscribed", source=source)
    lead_stop(lead=lead, reason="unsubscribed")
    return lead


def unsubscribe_by_mailto(*, subject: str = "", to_address: str = "", from_email: str = "") -> CampaignLead | None:
    """Mail sent to a message's `List-Unsubscribe` mailto address unsubscribes. The mailto is
    `mailto:<sending mailbox>?subject=unsubscribe <token>`; the token is taken from the subject (any
    `unsubscribe <token>` in it), or from a `+unsubscribe-<token>` tag on the recipient address.

    For the replies ingestion: call it for every inbound message; it returns the unsubscribed lead (the message
    is then an unsubscribe request, classification `unsubscribe`) or None (not an unsubscribe mailto; handle
    as a normal reply). `from_email` is accepted for logging; the signed token alone decides."""
    import re

    candidates = re.findall(r"unsubscribe[\s:+\-]+([0-9]+\.[A-Za-z0-9_\-]{20,})", subject or "", flags=re.I)
    local = (to_address or "").strip("<> ").partition("@")[0]
    tag = re.search(r"\+unsubscribe-([0-9]+\.[A-Za-z0-9_\-]{20,})$", local, flags=re.I)
    if tag:
        candidates.append(tag.group(1))
    for token in candidates:
        lead = unsubscribe_by_token(token=token, source=f"mailto {from_email}".strip())
        if lead is not None:
            return lead
    return None

"""The sender: one step to one lead, at most once.

1. claim: in one transaction, lock the lead, check it is still due (the scheduler's lease), its campaign
   launched (not paused), inside its
   sending window, its sticky mailbox active (not suspended, not `needs_reconnect`, not paused by the deliverability
   rules: a lead not contacted yet then moves to a healthy mailbox) and under its daily cap, and its address not
   suppressed; then
   create the `SentMessage` row (`claimed`) and park the lead (`next_send_at = NULL`).
2. hand over: flip the row to `sending` in one conditional UPDATE that requires the lead to be still active
   (a reply or unsubscribe may have stopped it meanwhile) and its campaign still launched (a pause wins here). From here on the outcome belongs to SMTP.
3. SMTP via `sending.transport.send_message`; then `sent` (and schedule the next step), or `failed` on a
   temporary error (retried with backoff) or a bounce (address suppressed as `bounced`).

A row left in `claimed` never reached SMTP and is released by `sweep_stuck`; a row left in `sending` is
reported and its lead stopped (`send_unknown`), never re-sent. The database's partial unique constraint on
(lead, step) backs all of this.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from campaigns import messages, services
from campaigns.models import Campaign, CampaignLead, SentMessage, Suppression
from campaigns.selectors import sends_today
from campaigns.window import add_local_days, for_lead, in_window, next_open
from sending import transport
from sending.capacity import WARMUP_START, daily_cap, day_start  # noqa: F401 - named for callers too
from sending.models import Mailbox
from sending.selectors import mailbox_provider_kind, mailboxes_active
from sending.signals import mailbox_health_mark

logger = logging.getLogger("campaigns.sender")

MAX_ATTEMPTS = 5  # temporary failures of one step before the lead is stopped (`send_failed`)
RETRY_BASE = timedelta(minutes=5)  # backoff: 5, 10, 20, 40 minutes
MAILBOX_WAIT = timedelta(hours=1)  # a lead whose mailbox is not active is looked at again after this
CLAIM_RELEASE_AFTER = timedelta(seconds=settings.CAMPAIGNS_CLAIM_RELEASE_SECONDS)
STUCK_AFTER = timedelta(seconds=settings.CAMPAIGNS_STUCK_SECONDS)
MAILBOX_GONE = {"removed", "failed"}
MAILBOX_PAUSED = "paused"  # Mailbox.health_state set by the deliverability rules (docs/deliverability.md)
BOUNCE_CODES = {521, 550, 551, 552, 553, 554, 556}  # recipient-level permanent failures


def _now() -> datetime:
    return timezone.now()


def _reschedule(lead_pk: int, when: datetime) -> None:
    CampaignLead.objects.filter(pk=lead_pk, state=CampaignLead.State.ACTIVE).update(next_send_at=when)


def _stop(lead: CampaignLead, reason: str) -> None:
    services.lead_stop(lead=lead, reason=reason)


def _relaxed_commit() -> None:
    """PostgreSQL: this transaction's commit need not wait for its WAL flush. Used for the claim and the
    `sent` mark only: the hand-over to `sending` stays synchronous, and its flush covers the claim before it
    (WAL is sequential). A crash that loses an unflushed claim loses nothing that happened; one that loses an
    unflushed `sent` leaves the row `sending`, which is reported and never re-sent. At-most-once holds."""
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit TO OFF")


def send_lead_step(*, lead_id: int, step: int, lease: datetime | None = None) -> str:
    """Send `step` to this lead if it is still due under `lease` (the next_send_at the scheduler set when it
    dispatched). Returns what happened (for logs, tests and the benchmark)."""
    if step == 0:  # match_mailbox_provider: the recipient's MX is looked up here, outside any transaction
        services.lead_resolve_provider(lead_id=lead_id)
    # 1. claim ---------------------------------------------------------------------------------------
    with transaction.atomic():
        _relaxed_commit()
        lead = (CampaignLead.objects.select_for_update(of=("self",)).select_related("campaign")
                .annotate(already_sent=Exists(SentMessage.objects.filter(campaign_lead=OuterRef("pk"), step_index=step)
                                              .exclude(state=SentMessage.State.FAILED)))
                .filter(pk=lead_id).first())
        if lead is None or lead.state != CampaignLead.State.ACTIVE or lead.current_step != step:
            return "not_due"
        if lease is not None and lead.next_send_at != lease:
            return "stale"  # rescheduled or claimed since this task was queued
        if lease is None and (lead.next_send_at is None or lead.next_send_at > _now()):
            return "not_due"
        campaign: Campaign = lead.campaign
        now = _now()
        if campaign.state != Campaign.State.LAUNCHED:
            # paused (or no longer launched): the lead stays due. A task dispatched before the pause holds the
            # scheduler's lease (next_send_at moved LEASE ahead): give it back, or a resume would wait for it
            if lease is not None:
                CampaignLead.objects.filter(pk=lead.pk).update(next_send_at=min(lease, now))
            return "paused"
        window = for_lead(campaign.sending_window, lead.timezone)
        if not in_window(window, now):
            _reschedule(lead.pk, next_open(window, now))
            return "outside_window"
        suppression = Suppression.objects.filter(workspace_id=lead.workspace_id, email=lead.email).first()
        if suppression is not None:
            _stop(lead, "suppressed_at_send")  # the suppression row keeps its own reason
            return "suppressed"
        mailbox_id = lead.mailbox_id
        if campaign.match_mailbox_provider and step == 0:
            mailbox_id = _matching_mailbox(lead, campaign, now)
        mailbox = Mailbox.objects.select_for_update().filter(pk=mailbox_id).first()
        if mailbox is None or mailbox.status != Mailbox.Status.ACTIVE:
            # sticky: wait for it (never sent from while suspended, or while its OAuth consent needs reconnecting)
            _reschedule(lead.pk, now + MAILBOX_WAIT)
            if mailbox is not None and mailbox.status == Mailbox.Status.NEEDS_RECONNECT:
                return "mailbox_needs_reconnect"
            return "mailbox_inactive"
        if mailbox.health_state == MAILBOX_PAUSED:
            return _route_around_paused(lead, now)  # deliverability pause: never sent from, like suppression
        if sends_today([mailbox.pk], now).get(mailbox.pk, 0) >= daily_cap(mailbox, now):
            _reschedule(lead.pk, next_open(window, day_start(now) + timedelta(days=1)))
            return "capped"
        rendered = messages.render_step(lead, campaign, step)
        try:  # build before claiming: a message that cannot be built must never leave a row in `sending`
            email = messages.build_message(lead=lead, campaign=campaign, mailbox=mailbox, rendered=rendered,
                                           message_id=messages.new_message_id(mailbox.domain_name))
        except Exception:
            logger.exception("lead %s step %s: the message cannot be built; lead stopped", lead.pk, step)
            _stop(lead, "invalid_message")
            return "invalid_message"
        message_id = email["Message-ID"].strip("<>")
        # the lead row lock and the lease serialize claimers of this lead, so check-then-insert is safe here;
        # the partial unique constraint is the last line of defence (an IntegrityError rolls the claim back)
        if lead.already_sent:
            logger.error("lead %s step %s already has a message: not sending again", lead.pk, step)
            CampaignLead.objects.filter(pk=lead.pk).update(next_send_at=None)
            return "duplicate"
        sent = SentMessage.objects.create(
            workspace_id=lead.workspace_id, campaign=campaign, campaign_lead=lead, step_index=step,
            mailbox=mailbox, message_id=message_id, to_email=lead.email, variant=rendered["variant"],
            subject=rendered["subject"][:998], in_reply_to=rendered["in_reply_to"],
            state=SentMessage.State.CLAIMED, claimed_at=now)
        CampaignLead.objects.filter(pk=lead.pk).update(next_send_at=None, mailbox=mailbox)  # sticky from here on

    # 2. hand over ----------------------------------------------------------------------------------
    handed = _hand_over(lead, sent)
    if handed != "sending":
        return handed

    # 3. SMTP ---------------------------------------------------------------------------------------
    try:
        transport.send_message(mailbox=mailbox, message=email)
    except transport.TransientSendError as exc:
        return _after_failure(lead, sent, exc, temporary=True)
    except transport.PermanentSendError as exc:
        return _after_failure(lead, sent, exc, temporary=False)
    # any other exception leaves the row in `sending`: outcome unknown, reported by sweep_stuck, never re-sent
    return _after_sent(lead, campaign, sent)


def _matching_mailbox(lead: CampaignLead, campaign: Campaign, now: datetime):
    """match_mailbox_provider, first step: a mailbox of the campaign hosted by the recipient's provider
    (Google to Google, Microsoft to Microsoft) with capacity left today (the lead's own if it is one, else the
    least used); with none, the lead's own mailbox, or if that one has no capacity left today any mailbox of
    the campaign that has (the least used)."""
    kind = lead.recipient_provider
    mailboxes = [m for m in campaign.mailboxes.filter(status=Mailbox.Status.ACTIVE).order_by("pk")
                 if getattr(m, "health_state", "") != "paused"]  # a deliverability pause: never chosen
    used = sends_today([m.pk for m in mailboxes], now)
    open_ = [m for m in mailboxes if used.get(m.pk, 0) < daily_cap(m, now)]
    matching = [m for m in open_ if kind in ("google", "microsoft") and mailbox_provider_kind(m) == kind]
    for choice in (matching, open_):
        if any(m.pk == lead.mailbox_id for m in choice):
            return lead.mailbox_id
        if choice:
            return min(choice, key=lambda m: used.get(m.pk, 0)).pk
    return lead.mailbox_id


def _hand_over(lead: CampaignLead, sent: SentMessage) -> str:
    """Flip the claimed row to `sending` if the lead is still active and its campaign still launched (not
    paused), in one statement (the last point a stop or a pause can win: one committed before it is seen; one
    committed after it is too late for this message)."""
    still_active = CampaignLead.objects.filter(pk=lead.pk, state=CampaignLead.State.ACTIVE)
    still_launched = Campaign.objects.filter(pk=lead.campaign_id, state=Campaign.State.LAUNCHED)
    if SentMessage.objects.filter(pk=sent.pk, state=SentMessage.State.CLAIMED).filter(
            Exists(still_active), Exists(still_launched)).update(state=SentMessage.State.SENDING, sending_at=_now()):
        return "sending"
    paused = not still_launched.exists()
    error = "campaign paused" if paused else "lead stopped"
    if not SentMessage.objects.filter(pk=sent.pk, state=SentMessage.State.CLAIMED).update(
            state=SentMessage.State.FAILED, error=f"{error} before the message was handed to SMTP"):
        return "claim_lost"  # released by the sweeper meanwhile: someone else will send it
    # a lead still active keeps its step and is due again (a paused campaign sends it once resumed; a pause
    # and a resume both committed between the two statements above leave it active in a launched campaign):
    # nothing else would ever give back the NULL due time the claim set
    CampaignLead.objects.filter(pk=lead.pk, state=CampaignLead.State.ACTIVE, current_step=sent.step_index,
                                next_send_at__isnull=True).update(next_send_at=_now())
    return "paused" if paused else "stopped"


def _after_sent(lead: CampaignLead, campaign: Campaign, sent: SentMessage) -> str:
    now = _now()
    with transaction.atomic():
        _relaxed_commit()
        SentMessage.objects.filter(pk=sent.pk).update(state=SentMessage.State.SENT, sent_at=now)
        next_step = sent.step_index + 1
        if next_step >= len(campaign.steps):
            done = CampaignLead.objects.filter(pk=lead.pk, state=CampaignLead.State.ACTIVE).update(
                state=CampaignLead.State.FINISHED, current_step=next_step, next_send_at=None, attempts=0,
                last_error="")
            if done:
                services.campaign_maybe_complete(campaign_id=campaign.pk)
            return "sent"
        window = for_lead(campaign.sending_window, lead.timezone)
        wait = int(campaign.steps[next_step].get("wait_days") or 0)
        moved = CampaignLead.objects.filter(pk=lead.pk, state=CampaignLead.State.ACTIVE).update(
            current_step=next_step, next_send_at=next_open(window, add_local_days(window, now, wait)), attempts=0,
            last_error="")
        if not moved:  # stopped while SMTP was running: keeps its stop; only its step counter records the send
            CampaignLead.objects.filter(pk=lead.pk).update(current_step=next_step)
    return "sent"


def _after_failure(lead: CampaignLead, sent: SentMessage, exc, *, temporary: bool) -> str:
    now = _now()
    code = getattr(exc, "smtp_code", None)
    text = f"{code or ''} {getattr(exc, 'message', exc)}".strip()[:2000]
    if isinstance(exc, transport.MailboxNeedsReconnect | transport.MailboxAuthUnavailable):
        # an OAuth mailbox had no usable token: nothing reached SMTP, and it is no fault of this lead, so the
        # step is not counted as an attempt; the lead waits for the reconnect (or the token backoff)
        SentMessage.objects.filter(pk=sent.pk).update(state=SentMessage.State.FAILED, error=text)
        retry_at = getattr(exc, "retry_at", None) or now + RETRY_BASE
        when = now + MAILBOX_WAIT if isinstance(exc, transport.MailboxNeedsReconnect) else max(retry_at, now)
        CampaignLead.objects.filter(pk=lead.pk, state=CampaignLead.State.ACTIVE).update(
            next_send_at=next_open(for_lead(lead.campaign.sending_window, lead.timezone), when), last_error=text)
        reconnect = isinstance(exc, transport.MailboxNeedsReconnect)
        return "mailbox_needs_reconnect" if reconnect else "mailbox_auth_retry"
    bounce = not temporary and code in BOUNCE_CODES
    SentMessage.objects.filter(pk=sent.pk).update(state=SentMessage.State.FAILED, error=text, bounced=bounce)
    if bounce:
        services.suppression_add(workspace=lead.workspace, email=lead.email, reason="bounced", source=f"smtp {code}")
        mailbox_health_mark(mailbox_id=sent.mailbox_id)  # a hard bounce counts against the mailbox that sent
        _stop(lead, "bounced")
        return "bounced"
    # temporary failure, or a permanent one that is about the mailbox/session (auth, not active, TLS): retry
    with transaction.atomic():
        current = CampaignLead.objects.select_for_update().get(pk=lead.pk)
        if current.state != CampaignLead.State.ACTIVE:
            return "stopped"
        current.attempts += 1
        current.last_error = text
        if current.attempts >= MAX_ATTEMPTS:
            current.save(update_fields=["attempts", "last_error"])
            _stop(current, "send_failed")
            return "gave_up"
        delay = RETRY_BASE * (2 ** (current.attempts - 1))
        current.next_send_at = next_open(for_lead(current.campaign.sending_window, current.timezone), now + delay)
        current.save(update_fields=["attempts", "last_error", "next_send_at"])
    return "retry"


def healthy_mailboxes(campaign_ids) -> dict:
    """{campaign_id: [mailbox ids]}: the campaigns' attached mailboxes that may send now (active, not paused by
    the deliverability rules), oldest first."""
    through = Campaign.mailboxes.through
    out: dict = {}
    for campaign_id, mailbox_id in (through.objects.filter(campaign_id__in=list(campaign_ids),
                                                           mailbox__status="active")
                                    .exclude(mailbox__health_state=MAILBOX_PAUSED)
                                    .order_by("mailbox__activated_at", "mailbox_id")
                                    .values_list("campaign_id", "mailbox_id")):
        out.setdefault(campaign_id, []).append(mailbox_id)
    return out


def _route_around_paused(lead: CampaignLead, now: datetime) -> str:
    """The lead's mailbox is paused (deliverability). A lead not contacted yet (step 0: nothing delivered) moves to
    a healthy mailbox of its campaign and stays due; a lead mid-thread cannot change identity and waits for the
    resume, as does every lead when the campaign has no healthy mailbox left (`waiting_reason: mailbox_paused`)."""
    healthy = healthy_mailboxes([lead.campaign_id]).get(lead.campaign_id, [])
    if lead.current_step == 0 and healthy:
        CampaignLead.objects.filter(pk=lead.pk).update(mailbox_id=healthy[lead.pk % len(healthy)], next_send_at=now)
        return "rerouted"
    _reschedule(lead.pk, now + MAILBOX_WAIT)
    return "mailbox_paused"


def leads_mailbox_back(*, mailbox_id, now: datetime | None = None) -> int:
    """The mailbox can send again (reconnected, or reactivated): its leads that were put off waiting for it
    (MAILBOX_WAIT) are due at the next tick instead of up to an hour later. Each lead keeps its own schedule
    (the previous step's send, or the launch, plus the step's wait_days, at the window's next opening): only the
    time added for the mailbox is taken back, so nothing is sent earlier than it would have been. Leads in a
    retry backoff (attempts > 0) keep it. Returns how many leads were moved."""
    from django.db.models import Max

    now = now or _now()
    leads = list(CampaignLead.objects.filter(mailbox_id=mailbox_id, state=CampaignLead.State.ACTIVE, attempts=0,
                                             next_send_at__gt=now, campaign__state=Campaign.State.LAUNCHED)
                 .select_related("campaign").only("pk", "current_step", "next_send_at", "timezone", "campaign__steps",
                                                  "campaign__sending_window", "campaign__launched_at"))
    if not leads:
        return 0
    last_sent = dict(SentMessage.objects.filter(campaign_lead__in=[lead.pk for lead in leads],
                                                state=SentMessage.State.SENT)
                     .values("campaign_lead").annotate(at=Max("sent_at")).values_list("campaign_lead", "at"))
    moved = 0
    for lead in leads:
        campaign = lead.campaign
        base = last_sent.get(lead.pk) if lead.current_step > 0 else campaign.launched_at
        if base is None or lead.current_step >= len(campaign.steps):
            continue
        window = for_lead(campaign.sending_window, lead.timezone)
        wait = int(campaign.steps[lead.current_step].get("wait_days") or 0)
        own = next_open(window, add_local_days(window, base, wait))
        if own < lead.next_send_at:
            # conditional on the due time read: a send or a lease that moved it since is left alone
            moved += CampaignLead.objects.filter(pk=lead.pk, state=CampaignLead.State.ACTIVE,
                                                 next_send_at=lead.next_send_at).update(next_send_at=max(own, now))
    return moved


def lead_mailbox_gone(*, lead_id: int, now: datetime) -> str:
    """The lead's sticky mailbox was removed or failed for good. Before any message went out the lead moves to
    another active mailbox of the workspace; after, its thread cannot continue from another identity, so the
    lead stops (`mailbox_gone`). With no active mailbox left it waits."""
    with transaction.atomic():
        lead = CampaignLead.objects.select_for_update().filter(pk=lead_id, state=CampaignLead.State.ACTIVE).first()
        if lead is None:
            return "not_active"
        if SentMessage.objects.filter(campaign_lead=lead).exclude(state=SentMessage.State.FAILED).exists():
            _stop(lead, "mailbox_gone")
            return "stopped"
        active = list(mailboxes_active(workspace=lead.workspace_id))
        if not active:
            _reschedule(lead.pk, now + MAILBOX_WAIT)
            return "waiting"
        CampaignLead.objects.filter(pk=lead.pk).update(mailbox=active[lead.pk % len(active)])
        return "reassigned"


def sweep_stuck(*, now: datetime | None = None) -> dict:
    """Release claims that never reached SMTP; report (and stop the lead of) rows stuck in `sending`."""
    now = now or _now()
    released = 0
    for sent in SentMessage.objects.filter(state=SentMessage.State.CLAIMED, claimed_at__lt=now - CLAIM_RELEASE_AFTER):
        with transaction.atomic():
            if SentMessage.objects.filter(pk=sent.pk, state=SentMessage.State.CLAIMED).update(
                    state=SentMessage.State.FAILED, error="claim released: never handed to SMTP"):
                CampaignLead.objects.filter(pk=sent.campaign_lead_id, state=CampaignLead.State.ACTIVE,
                                            current_step=sent.step_index, next_send_at__isnull=True
                                            ).update(next_send_at=now)
                released += 1
    reported = 0
    for sent in SentMessage.objects.filter(state=SentMessage.State.SENDING, sending_at__lt=now - STUCK_AFTER,
                                           stuck_reported_at__isnull=True).select_related("campaign_lead"):
        logger.error("message %s (lead %s, step %s) stuck in `sending` since %s: outcome unknown, NOT re-sent",
                     sent.message_id, sent.campaign_lead_id, sent.step_index, sent.sending_at)
        SentMessage.objects.filter(pk=sent.pk).update(stuck_reported_at=now)
        _stop(sent.campaign_lead, "send_unknown")
        reported += 1
    return {"released": released, "reported": reported}


def tick_batch() -> int:
    return int(settings.CAMPAIGNS_TICK_BATCH)

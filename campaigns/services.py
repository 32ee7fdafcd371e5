"""Campaign services: suppression, lead stops, create, launch, unsubscribe. Services write; selectors read."""

from __future__ import annotations

import logging

from django.db import IntegrityError, transaction
from django.utils import timezone

from campaigns.models import Campaign, CampaignLead, Suppression
from campaigns.selectors import normalize_address

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
    moved = CampaignLead.objects.filter(
        pk=lead.pk, state__in=[CampaignLead.State.ACTIVE, CampaignLead.State.PENDING]
    ).update(state=CampaignLead.State.STOPPED, stop_reason=(reason or "")[:32], next_send_at=None, stopped_at=now)
    if moved:
        lead.state, lead.stop_reason, lead.next_send_at, lead.stopped_at = CampaignLead.State.STOPPED, reason, None, now
        campaign_maybe_complete(campaign_id=lead.campaign_id)
    return bool(moved)


def campaign_maybe_complete(*, campaign_id) -> bool:
    """launched -> completed once no lead is active any more. Safe to repeat."""
    if CampaignLead.objects.filter(campaign_id=campaign_id, state=CampaignLead.State.ACTIVE).exists():
        return False
    return bool(Campaign.objects.filter(pk=campaign_id, state=Campaign.State.LAUNCHED).update(
        state=Campaign.State.COMPLETED, completed_at=timezone.now()))

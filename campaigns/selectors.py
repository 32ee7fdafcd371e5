"""Campaign reads. Selectors take the workspace first where a caller could otherwise cross workspaces."""

from __future__ import annotations

from django.db.models import QuerySet

from campaigns.models import Campaign, CampaignLead, SentMessage, Suppression
from core import errors
from core.emails import normalize_address  # noqa: F401 - re-exported for campaigns callers


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

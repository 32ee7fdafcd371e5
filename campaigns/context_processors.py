"""Console-wide notice: OAuth mailboxes that need reconnecting, and the campaigns waiting for them."""

from __future__ import annotations

from campaigns.models import Campaign, CampaignLead
from sending.models import Mailbox


def mailbox_alerts(request) -> dict:
    membership = getattr(request, "membership", None)
    if membership is None:
        return {}
    emails = list(Mailbox.objects.filter(workspace_id=membership.workspace_id,
                                         status=Mailbox.Status.NEEDS_RECONNECT)
                  .order_by("email").values_list("email", flat=True))
    if not emails:
        return {}
    waiting = (Campaign.objects.filter(workspace_id=membership.workspace_id, state=Campaign.State.LAUNCHED,
                                       leads__state=CampaignLead.State.ACTIVE,
                                       leads__mailbox__status=Mailbox.Status.NEEDS_RECONNECT)
               .distinct().order_by("name").values_list("name", flat=True))
    return {"mailboxes_need_reconnect": emails, "campaigns_waiting_for_reconnect": list(waiting[:10])}

"""`verify_leads: true` (CONTRACT 4.13): verify a campaign's leads at launch, so that known-invalid addresses are
never sent to.

- The launch preview counts the leads without a conclusive verification from the last 30 days
  (`leads_to_verify`, an `unknown` result is not conclusive), what verifying them costs at most
  (`verification_credits_max`, 1 credit each) and, from the recent results, how many are catch-all
  (`leads_catch_all`) or risky (`leads_risky`). The approver sees the cost before approving.
- The launch holds that maximum (the verb's `max_charge`, after the token has been checked), verifies those leads
  through the verify_email service (`leads.verification.services.verification_run`), and settles the exact
  charge: 1 credit per result, `unknown` free. Every lead verified `invalid` (now or within the 30 days) is
  suppressed as `invalid_email`, so the launch's suppression re-check removes it from the campaign.

The plan (what verifying involves, and the preview's figures) is a read, in `campaigns.selectors`; this module
holds, verifies and suppresses.
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor

from django.conf import settings
from django.db import close_old_connections, connection

from campaigns import selectors
from campaigns.models import Campaign
from campaigns.services import suppression_add
from core import errors
from leads.verification.models import Status
from leads.verification.services import verification_run
from leads.verification.verbs import PRICE

logger = logging.getLogger("campaigns.verify_leads")


def launch_token_precheck(*, workspace, campaign_id, plaintext: str) -> None:
    """The confirmation_* error the launch would raise, without consuming anything: a hold is never placed (nor a
    lead verified) for a token that is not approved."""
    from accounts import services as accounts
    from accounts.models import ConfirmationToken

    token = accounts.token_lookup(plaintext=plaintext)
    if (token is None or token.workspace_id != workspace.pk or token.verb != "launch_campaign"
            or token.params_hash != accounts.params_canonical_hash({"campaign_id": str(campaign_id)})):
        raise errors.ConfirmationInvalid("Unknown confirmation token, or one for another call.")
    if token.status == ConfirmationToken.Status.DENIED:
        raise errors.ConfirmationDenied()
    if token.status == ConfirmationToken.Status.USED:
        raise errors.ConfirmationUsed()
    if token.status == ConfirmationToken.Status.EXPIRED or token.is_expired:
        raise errors.ConfirmationExpired()
    if token.status != ConfirmationToken.Status.APPROVED:
        raise errors.ConfirmationPending()


def launch_hold(ctx, data: dict) -> int:
    """launch_campaign's `max_charge`: 0 for a preview or a campaign without `verify_leads`; else 1 credit per
    lead to verify, once the token is known to be approved."""
    if data.get("confirmation_token") is None:
        return 0
    campaign = Campaign.objects.filter(workspace=ctx.workspace, pk=data["campaign_id"]).first()
    if campaign is None or not campaign.verify_leads or campaign.state != Campaign.State.DRAFT:
        return 0
    launch_token_precheck(workspace=ctx.workspace, campaign_id=campaign.pk, plaintext=data["confirmation_token"])
    return selectors.verification_plan(campaign).credits_max


def verify_at_launch(*, workspace, campaign_id, request_id: str = "", hold=None) -> tuple[int, dict]:
    """Verify the campaign's leads without a recent verification (no more than `hold` pays for) and suppress every
    invalid one as `invalid_email`. Returns (the exact charge in micro-credits, counts). Runs before the launch
    transaction: verification is network work and must not hold the campaign lock."""
    from billing.services import hold_extend

    campaign = Campaign.objects.filter(workspace=workspace, pk=campaign_id).first()
    if campaign is None or not campaign.verify_leads or campaign.state != Campaign.State.DRAFT:
        return 0, {}
    plan = selectors.verification_plan(campaign)
    # never more than the hold pays for (none held: nothing to verify when the hold was computed)
    todo = plan.to_verify[:(hold.amount_micros // PRICE) if hold is not None else 0]

    def one(email: str) -> tuple[str, str]:
        try:
            return email, verification_run(email=email, workspace=workspace, request_id=request_id).status
        finally:
            if workers > 1:
                close_old_connections()

    workers = 1 if connection.vendor == "sqlite" else max(1, int(settings.CAMPAIGNS_VERIFY_CONCURRENCY))
    results: dict[str, str] = {}
    if workers == 1:
        for i, email in enumerate(todo):
            results.update([one(email)])
            if hold is not None and i % 50 == 49:
                hold_extend(hold=hold)  # a long list must not let the crashed-request sweep release the hold
    else:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="verify-leads") as pool:
            for i, (email, status) in enumerate(pool.map(one, todo)):
                results[email] = status
                if hold is not None and i % 50 == 49:
                    hold_extend(hold=hold)
    charge = sum(PRICE for status in results.values() if status != Status.UNKNOWN)
    invalid = list(dict.fromkeys(plan.invalid + [e for e, s in results.items() if s == Status.INVALID]))
    for email in invalid:
        suppression_add(workspace=workspace, email=email, reason="invalid_email", source="verify_leads at launch")
    counts = {"leads_verified": len(results), "leads_invalid": len(invalid),
              "leads_unknown": sum(1 for s in results.values() if s == Status.UNKNOWN)}
    return charge, counts

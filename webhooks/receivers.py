"""Domain signals that become webhook events: every app's `core.events.event`, and the few signals that carry
more than an event (an email beside it, a payload built here)."""

import logging

from django.conf import settings
from django.core.mail import send_mail
from django.dispatch import receiver

from accounts.selectors import workspace_approver_emails
from accounts.services import approval_render
from accounts.signals import approval_requested
from billing.signals import balance_low, key_budget_alert
from core import events
from core.money import format_credits

logger = logging.getLogger("webhooks")


@receiver(events.event, dispatch_uid="webhooks-events")
def _event(sender, workspace, type, data, **kwargs):
    """An event announced by a service, inside that service's transaction (core.events.emit)."""
    from webhooks.services import event_emit_safely

    event_emit_safely(workspace=workspace, type=type, data=data)


@receiver(approval_requested)
def _approval_requested(sender, token, **kwargs):
    from webhooks.services import event_emit_safely

    event_emit_safely(workspace=token.workspace_id, type="approval.requested", data=approval_render(token))


def key_limits_url(key_id) -> str:
    """The console's limit form for one key (the API keys page, opened at that key's form)."""
    return f"{settings.BASE_URL}/console/keys/?limits={key_id}#limits-{key_id}"


@receiver(key_budget_alert, dispatch_uid="webhooks-key-budget")
def _key_budget_alert(sender, workspace_id, api_key_id, key_name, kind, period, limit, spent, resets_at, **kwargs):
    """`key.budget_warning` (80%) / `key.budget_exceeded` (100% or a refusal), each at most once per key and period
    (billing marks it); at 80% also one email to the workspace's owners and admins, linking the key's limit form."""
    from webhooks.services import event_emit_safely

    data = {"key_id": str(api_key_id), "name": key_name, "period": period, "limit": format_credits(limit),
            "spent": format_credits(spent), "resets_at": resets_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "limits_url": key_limits_url(api_key_id)}
    event_emit_safely(workspace=workspace_id, type=f"key.budget_{kind}", data=data)
    if kind != "warning":
        return
    recipients = workspace_approver_emails(workspace_id=workspace_id)
    if not recipients:
        return
    word = "daily" if period == "day" else "monthly"
    name = "".join(c for c in " ".join(str(key_name).split()) if c.isprintable())[:100]
    try:
        send_mail(f"Key {name} has used 80% of its {word} budget",
                  f"The key {name} has spent (or holds for calls in flight) {data['spent']} of its {word} limit of "
                  f"{data['limit']} credits. Calls that would pass the limit are refused with 402 "
                  f"key_budget_exceeded until it resets at {data['resets_at']}.\n\n"
                  f"Change the limit:\n{data['limits_url']}\n",
                  settings.DEFAULT_FROM_EMAIL, recipients)
    except Exception:  # noqa: BLE001 - a mail outage never fails the call that crossed the line
        logger.exception("could not email the budget warning of key %s", api_key_id)


@receiver(balance_low, dispatch_uid="webhooks-balance-low")
def _balance_low(sender, workspace_id, **kwargs):
    from webhooks.services import balance_low_emit

    balance_low_emit(workspace_id=workspace_id)

"""Domain signals that become webhook events (the rest are emitted from the services that change state)."""

from django.dispatch import receiver

from accounts.signals import approval_requested


@receiver(approval_requested)
def _approval_requested(sender, token, **kwargs):
    from webhooks.services import approval_render, event_emit_safely

    event_emit_safely(workspace=token.workspace_id, type="approval.requested", data=approval_render(token))

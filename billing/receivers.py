"""What billing does when other apps' domain signals fire."""

from django.dispatch import receiver

from accounts.signals import workspace_created
from billing.services import account_open


@receiver(workspace_created, dispatch_uid="billing-account-open")
def _workspace_created(sender, workspace, **kwargs):
    """Every new workspace gets its credit account and the signup grant, in the transaction that creates it."""
    account_open(workspace=workspace)

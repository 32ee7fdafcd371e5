from accounts.models import ConfirmationToken, Membership, User, Workspace


def membership_get(*, user: User, workspace: Workspace) -> Membership | None:
    return Membership.objects.filter(user=user, workspace=workspace).first()


def workspaces_for_user(*, user: User):
    return Workspace.objects.filter(memberships__user=user).order_by("created_at")


def token_get_for_user(*, user: User, token_id) -> ConfirmationToken | None:
    """A token the user may see: one of a workspace they belong to. Anything else is None (404)."""
    return ConfirmationToken.objects.filter(pk=token_id, workspace__memberships__user=user).select_related("workspace").first()


def workspace_approver_emails(*, workspace_id) -> list[str]:
    """The addresses to tell when a workspace needs a human: its active owners and admins (approvals waiting,
    a mailbox suspended or needing reconnection)."""
    return list(Membership.objects.filter(
        workspace_id=workspace_id, role__in=[Membership.Role.OWNER, Membership.Role.ADMIN], user__is_active=True,
    ).order_by("user__email").values_list("user__email", flat=True))

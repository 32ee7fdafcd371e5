from accounts.models import ConfirmationToken, Membership, User, Workspace


def membership_get(*, user: User, workspace: Workspace) -> Membership | None:
    return Membership.objects.filter(user=user, workspace=workspace).first()


def workspaces_for_user(*, user: User):
    return Workspace.objects.filter(memberships__user=user).order_by("created_at")


def token_get_for_user(*, user: User, token_id) -> ConfirmationToken | None:
    """A token the user may see: one of a workspace they belong to. Anything else is None (404)."""
    return ConfirmationToken.objects.filter(pk=token_id, workspace__memberships__user=user).select_related("workspace").first()

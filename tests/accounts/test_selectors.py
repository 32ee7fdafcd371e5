"""Who is told when a workspace needs a human: one selector for approvals, suspended and reconnect-needed
mailboxes (its active owners and admins, never a plain member or a deactivated user)."""

from accounts.models import Membership
from accounts.selectors import workspace_approver_emails
from tests.factories import UserFactory


def test_approver_emails_are_active_owners_and_admins(workspace, owner):
    admin = UserFactory(email="admin@example.com")
    member = UserFactory(email="member@example.com")
    gone = UserFactory(email="gone@example.com", is_active=False)
    Membership.objects.create(user=admin, workspace=workspace, role=Membership.Role.ADMIN)
    Membership.objects.create(user=member, workspace=workspace, role=Membership.Role.MEMBER)
    Membership.objects.create(user=gone, workspace=workspace, role=Membership.Role.ADMIN)
    assert workspace_approver_emails(workspace_id=workspace.pk) == sorted([owner.email, admin.email])


def test_a_deactivated_owner_is_not_told_of_a_suspended_mailbox(workspace, owner, mailoutbox):
    from sending.models import Mailbox
    from sending.services import _notify_suspended

    admin = UserFactory(email="admin@example.com")
    Membership.objects.create(user=admin, workspace=workspace, role=Membership.Role.ADMIN)
    owner.is_active = False
    owner.save(update_fields=["is_active"])
    mailbox = Mailbox(workspace=workspace, email="ann@acmehq.example")
    _notify_suspended(mailbox)
    assert [m.to for m in mailoutbox] == [[admin.email]]

import pytest
from django.test import Client

from accounts.models import Membership
from accounts.services import workspace_create
from tests.factories import UserFactory


@pytest.fixture
def console(db, owner, workspace):
    """A Client signed in as the workspace owner."""
    c = Client()
    c.force_login(owner)
    return c


@pytest.fixture
def member_of(db):
    """member_of(workspace, role) -> (user, signed-in Client)."""

    def _make(workspace, role=Membership.Role.MEMBER, email=None):
        user = UserFactory(**({"email": email} if email else {}))
        Membership.objects.create(user=user, workspace=workspace, role=role)
        c = Client()
        c.force_login(user)
        return user, c

    return _make


@pytest.fixture
def stranger(db):
    """Someone with a workspace of their own, signed in."""
    user = UserFactory()
    ws = workspace_create(owner=user)
    c = Client()
    c.force_login(user)
    return user, ws, c


@pytest.fixture(autouse=True)
def _mail_to_sink(settings):
    """pytest-django swaps in the locmem backend; the console tests read the real sandbox Maildir sink."""
    settings.EMAIL_BACKEND = "core.mail.MaildirEmailBackend"

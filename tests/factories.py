import factory

from accounts.models import User


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = User
        django_get_or_create = ("email",)

    email = factory.Sequence(lambda n: f"user{n}@example.com")


def make_workspace(*, email=None, name=None, scopes="all", extra_credits=0):
    """A workspace (300 signup credits, plus `extra_credits` micro-credits) and an API key; returns
    (workspace, owner, plaintext key)."""
    from accounts.services import key_create, workspace_create
    from billing.services import credits_grant

    owner = UserFactory(**({"email": email} if email else {}))
    workspace = workspace_create(owner=owner, name=name)
    if extra_credits:
        credits_grant(workspace=workspace, amount=extra_credits, memo="test")
    _, plaintext = key_create(workspace=workspace, name="test", scopes=scopes, created_by=owner)
    return workspace, owner, plaintext

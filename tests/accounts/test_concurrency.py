"""Races on workspace membership (PostgreSQL, real threads, real row locks)."""


import pytest
from django.db import connection
from django.test import Client

from accounts import console_auth, console_views
from accounts.models import Membership, Workspace
from tests.factories import UserFactory, make_workspace
from tests.rendezvous import Rendezvous, in_threads


def _needs_postgresql():
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL row locks (SQLite serializes the two writers instead)")


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("actions", [("role", "role"), ("remove", "remove"), ("role", "remove")])
def test_two_owners_demoting_or_removing_each_other_leave_one_owner(monkeypatch, actions):
    """Each owner demotes or removes the other at the same moment. Each request locks only its target's row, so
    without the workspace row lock both count two owners before either commits, both go ahead, and the
    workspace is left without an owner. With it, the second request counts after the first committed."""
    _needs_postgresql()
    ws, first, _ = make_workspace()
    second = UserFactory()
    Membership.objects.create(user=second, workspace=ws, role=Membership.Role.OWNER)
    members = {u.pk: Membership.objects.get(user=u, workspace=ws) for u in (first, second)}
    rendezvous = Rendezvous(2)
    real_owners = console_views._owners

    def owners_then_meet(workspace):
        n = real_owners(workspace)
        rendezvous.wait()  # both counted before either writes (unless one is blocked on the workspace lock)
        return n

    monkeypatch.setattr(console_views, "_owners", owners_then_meet)

    def act(user, target, action):
        def run():
            c = Client()
            c.force_login(user)
            if action == "role":
                r = c.post(f"/console/members/{target.pk}/role/", {"role": "admin"})
            else:
                r = c.post(f"/console/members/{target.pk}/remove/")
            # 404: the other owner removed this one first (its request is then refused like any non-member's)
            assert r.status_code in (302, 404), r.status_code
        return run

    assert in_threads(act(first, members[second.pk], actions[0]), act(second, members[first.pk], actions[1])) == []
    assert Membership.objects.filter(workspace=ws, role=Membership.Role.OWNER).count() == 1


@pytest.mark.django_db(transaction=True)
def test_first_console_requests_at_once_create_one_workspace(monkeypatch):
    """A new user's first two console requests arrive together: each finds no membership and, without the user
    row lock, each creates a workspace (and grants the signup credits twice)."""
    _needs_postgresql()
    user = UserFactory()
    rendezvous = Rendezvous(2)
    import accounts.services

    real_create = accounts.services.workspace_create

    def meet_then_create(**kwargs):
        rendezvous.wait()  # both checked "no membership" before either creates (unless one waits on the lock)
        return real_create(**kwargs)

    monkeypatch.setattr(accounts.services, "workspace_create", meet_then_create)

    def first_page():
        c = Client()
        c.force_login(user)
        assert c.get("/console/").status_code == 200

    assert in_threads(first_page, first_page) == []
    assert Membership.objects.filter(user=user).count() == 1
    assert Workspace.objects.count() == 1  # no second workspace, no second signup grant
    console_auth.ensure_workspace(user=user)  # a later call changes nothing
    assert Workspace.objects.count() == 1

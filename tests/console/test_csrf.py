"""CSRF is enforced on every console form (a browser-like client that does not skip the check)."""

import pytest
from django.test import Client

from accounts.console_auth import signin_link_issue
from accounts.models import ApiKey, ConfirmationToken, Invitation, Membership, SignInLink
from accounts.services import QUOTE_TTL, token_issue
from billing.models import CreditAccount

pytestmark = pytest.mark.django_db


def _forms(workspace, owner, member):
    token, _ = token_issue(workspace=workspace, verb="setup_sending", params={"emails_per_week": 500}, ttl=QUOTE_TTL)
    key = ApiKey.objects.get(workspace=workspace)
    inv = Invitation.objects.create(workspace=workspace, email="inv@example.com")
    return [
        ("/console/keys/", {"name": "csrf", "scopes": ["campaign:write"]}),
        (f"/console/keys/{key.pk}/revoke/", {}),
        (f"/console/approvals/{token.pk}/", {"decision": "approve"}),
        ("/console/topups/", {"mode": "sandbox", "credits": "1000"}),
        ("/console/members/", {"email": "new@example.com", "role": "member"}),
        (f"/console/members/{member.pk}/role/", {"role": "admin"}),
        (f"/console/members/{member.pk}/remove/", {}),
        (f"/console/invitations/{inv.pk}/revoke/", {}),
        ("/console/switch/", {"workspace": str(workspace.pk)}),
        ("/console/auth/logout/", {}),
    ]


def _state(workspace):
    return (
        list(ApiKey.objects.values_list("name", "revoked_at")),
        list(ConfirmationToken.objects.values_list("status", flat=True)),
        CreditAccount.objects.get(pk=workspace.pk).balance_micros,
        list(Membership.objects.values_list("role", flat=True)),
        list(Invitation.objects.values_list("email", "revoked_at")),
    )


def test_every_signed_in_form_rejects_a_post_without_token(workspace, owner, member_of):
    member_user, _ = member_of(workspace)
    member = Membership.objects.get(user=member_user)
    forms = _forms(workspace, owner, member)
    before = _state(workspace)
    c = Client(enforce_csrf_checks=True)
    c.force_login(owner)
    for path, data in forms:
        resp = c.post(path, data)
        assert resp.status_code == 403, path
    assert _state(workspace) == before
    assert c.get("/console/").status_code == 200  # logout did not happen either


def test_forms_work_with_the_token(workspace, owner):
    c = Client(enforce_csrf_checks=True)
    c.force_login(owner)
    c.get("/console/keys/")
    resp = c.post("/console/keys/", {"name": "ok", "csrfmiddlewaretoken": c.cookies["csrftoken"].value})
    assert resp.status_code == 302 and ApiKey.objects.filter(name="ok").exists()


def test_sign_in_forms_reject_a_post_without_token(owner):
    c = Client(enforce_csrf_checks=True)
    assert c.post("/console/auth/login/", {"login": owner.email}).status_code == 403
    assert c.post("/console/auth/signup/", {"email": "someone@example.com"}).status_code == 403
    url = signin_link_issue(user=owner, email=owner.email)
    path = "/" + url.split("://", 1)[1].split("/", 1)[1]
    assert c.post(path).status_code == 403
    assert SignInLink.objects.get().used_at is None
    assert c.get("/console/").status_code == 302

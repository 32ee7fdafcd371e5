"""Keys, ledger (+CSV), members and invitations, the workspace switcher, overview."""

import csv
import io

import pytest
from django.test import Client
from django.utils.html import escape

from accounts.models import ApiKey, Invitation, Membership
from billing.models import LedgerEntry
from billing.services import credits_grant
from core.money import credits
from tests.conftest import Api
from tests.console.helpers import body, last_code, messages_to

pytestmark = pytest.mark.django_db


# --- keys -------------------------------------------------------------------------------------------
def test_create_key_shown_once_then_call_api_and_revoke(console, workspace):
    resp = console.post("/console/keys/", {"name": "agent", "scopes": ["campaign:write", "assets:purchase"]})
    assert resp.status_code == 302 and resp["Location"] == "/console/keys/"  # POST/redirect/GET
    resp = console.get(resp["Location"])
    assert resp.status_code == 200 and "no-store" in resp["Cache-Control"]
    html = resp.content.decode()
    key = ApiKey.objects.get(workspace=workspace, name="agent")
    assert key.scopes == ["assets:purchase", "campaign:write"]
    start = html.index('id="new-key"')
    plaintext = html[start:].split('value="', 1)[1].split('"', 1)[0]
    assert plaintext.startswith("service_sk_live_") and plaintext.endswith(key.last4)
    listing = console.get("/console/keys/").content.decode()
    assert plaintext not in listing and f"{key.prefix}…{key.last4}" in listing
    usage = Api(plaintext).get("/v1/usage")
    assert usage.status_code == 200 and usage.json()["credits_available"] == "300"
    assert "Copy" in html
    console.post(f"/console/keys/{key.pk}/revoke/")
    assert Api(plaintext).get("/v1/usage").status_code == 401


def test_reloading_the_page_that_shows_a_new_key_creates_no_second_key(console, workspace):
    """Issue 14.5: the browser's reload repeats the GET it was redirected to, never the POST."""
    first = console.post("/console/keys/", {"name": "agent", "scopes": ["campaign:write"]}, follow=True)
    assert 'id="new-key"' in first.content.decode()
    again = console.get("/console/keys/")  # the reload
    assert 'id="new-key"' not in again.content.decode()  # shown once
    assert ApiKey.objects.filter(workspace=workspace, name="agent").count() == 1


def test_key_create_rejects_unknown_scope(console, workspace):
    resp = console.post("/console/keys/", {"name": "x", "scopes": ["root"]})
    assert resp.status_code == 200 and not ApiKey.objects.filter(name="x").exists()


def test_member_cannot_create_or_revoke_keys(workspace, member_of):
    _, c = member_of(workspace)
    assert c.post("/console/keys/", {"name": "sneaky"}).status_code == 404
    key = ApiKey.objects.filter(workspace=workspace).first()
    assert c.post(f"/console/keys/{key.pk}/revoke/").status_code == 404
    key.refresh_from_db()
    assert key.revoked_at is None


def test_cannot_revoke_another_workspaces_key(console, make_api):
    _, other_ws, _ = make_api()
    other = ApiKey.objects.get(workspace=other_ws)
    assert console.post(f"/console/keys/{other.pk}/revoke/").status_code == 404
    other.refresh_from_db()
    assert other.revoked_at is None


# --- overview ---------------------------------------------------------------------------------------
def test_overview_shows_balances_chart_and_recent_requests(console, api):
    api.post("/v1/test_echo", {"charge": "1.5"})
    api.post("/v1/test_echo", {"charge": "0.25"})
    html = console.get("/console/").content.decode()
    assert "298.25" in html  # available after two charges
    assert "test_echo" in html and "1.75" in html  # chart: credits per verb over 30 days
    assert "1.5" in html and "0.25" in html  # recent requests with their charges
    assert html.count("<rect ") == 30 and "1.75 credits in total" in html  # the per-day SVG


# --- ledger -----------------------------------------------------------------------------------------
def test_ledger_filter_pagination_and_csv(console, workspace, owner, make_api):
    for i in range(60):
        credits_grant(workspace=workspace, amount=credits(1), memo=f"grant {i}", created_by=owner)
    other_api, other_ws, _ = make_api()
    credits_grant(workspace=other_ws, amount=credits(5), memo="not yours")
    page1 = console.get("/console/ledger/").content.decode()
    assert "Page 1 of 2" in page1 and "grant 59" in page1 and "not yours" not in page1
    page2 = console.get("/console/ledger/?page=2").content.decode()
    assert "Free signup credits" in page2
    only_signup = console.get("/console/ledger/?kind=signup_grant").content.decode()
    assert "Free signup credits" in only_signup and "grant 3" not in only_signup
    resp = console.get("/console/ledger.csv?kind=grant")
    assert resp["Content-Type"].startswith("text/csv") and "attachment" in resp["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(b"".join(resp.streaming_content).decode())))
    assert len(rows) == 60 and {r["kind"] for r in rows} == {"grant"}
    assert rows[0]["amount_credits"] == "1" and rows[0]["balance_after_credits"] == "360"
    assert rows[0]["created_by"] == owner.email
    full = list(csv.DictReader(io.StringIO(b"".join(console.get("/console/ledger.csv").streaming_content).decode())))
    assert len(full) == LedgerEntry.objects.filter(account_id=workspace.pk).count() == 61


# --- members ----------------------------------------------------------------------------------------
def test_invite_then_sign_up_joins_the_workspace(console, workspace):
    resp = console.post("/console/members/", {"email": "Teammate@Example.com", "role": "admin"})
    assert resp.status_code == 302
    invite = messages_to("teammate@example.com")
    assert len(invite) == 1 and workspace.name in body(invite[0])
    c = Client()
    r = c.post("/console/auth/signup/", {"email": "teammate@example.com"})
    # Not yet proven: no membership until the code is confirmed.
    assert not Membership.objects.filter(user__email="teammate@example.com").exists()
    c.post(r["Location"], {"code": last_code("teammate@example.com")})
    m = Membership.objects.get(user__email="teammate@example.com")
    assert m.workspace == workspace and m.role == "admin"  # joined; no extra workspace of their own
    assert Invitation.objects.get().accepted_at is not None
    assert c.get("/console/members/").status_code == 200


def test_existing_user_invited_joins_at_next_sign_in(console, workspace, stranger):
    user, own_ws, _ = stranger
    console.post("/console/members/", {"email": user.email, "role": "member"})
    c = Client()
    c.post("/console/auth/login/", {"login": user.email})
    c.post("/console/auth/login/code/confirm/", {"code": last_code(user.email)})
    assert set(Membership.objects.filter(user=user).values_list("workspace_id", flat=True)) == {own_ws.pk, workspace.pk}
    # The switcher appears and switches.
    html = c.get("/console/").content.decode()
    assert 'name="workspace"' in html
    c.post("/console/switch/", {"workspace": str(workspace.pk), "next": "/console/members/"})
    assert f"Overview <span class=\"muted small\">{escape(workspace.name)}" in c.get("/console/").content.decode()


def test_switch_to_foreign_workspace_is_404(console, stranger):
    _, other_ws, _ = stranger
    assert console.post("/console/switch/", {"workspace": str(other_ws.pk)}).status_code == 404


def test_roles_last_owner_and_member_limits(console, workspace, owner, member_of):
    admin, admin_client = member_of(workspace, Membership.Role.ADMIN)
    member, member_client = member_of(workspace, Membership.Role.MEMBER)
    own = Membership.objects.get(user=owner, workspace=workspace)
    # An admin cannot create owners or demote the owner; a member can do nothing.
    admin_client.post(f"/console/members/{Membership.objects.get(user=member).pk}/role/", {"role": "owner"})
    assert Membership.objects.get(user=member).role == "member"
    admin_client.post(f"/console/members/{own.pk}/role/", {"role": "member"})
    assert Membership.objects.get(pk=own.pk).role == "owner"
    assert member_client.post("/console/members/", {"email": "x@example.com", "role": "member"}).status_code == 404
    # The last owner cannot be demoted or removed.
    console.post(f"/console/members/{own.pk}/role/", {"role": "admin"})
    assert Membership.objects.get(pk=own.pk).role == "owner"
    # The owner promotes the admin, then can step down.
    console.post(f"/console/members/{Membership.objects.get(user=admin).pk}/role/", {"role": "owner"})
    console.post(f"/console/members/{own.pk}/role/", {"role": "admin"})
    assert Membership.objects.get(pk=own.pk).role == "admin"
    admin_client.post(f"/console/members/{Membership.objects.get(user=member).pk}/remove/")
    assert not Membership.objects.filter(user=member).exists()


def test_invitation_revoke(console, workspace):
    console.post("/console/members/", {"email": "later@example.com", "role": "member"})
    inv = Invitation.objects.get()
    console.post(f"/console/invitations/{inv.pk}/revoke/")
    inv.refresh_from_db()
    assert inv.revoked_at is not None


def test_csv_neutralises_formulas_in_free_text(console, workspace):
    credits_grant(workspace=workspace, amount=credits(1), memo="=HYPERLINK(\"http://evil\")")
    rows = list(csv.DictReader(io.StringIO(b"".join(console.get("/console/ledger.csv").streaming_content).decode())))
    assert rows[0]["memo"] == "'=HYPERLINK(\"http://evil\")" and rows[1]["amount_credits"] == "300"

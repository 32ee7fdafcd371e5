"""The console's suppression list: manual additions by owners/admins, visible to members, permanent."""

from django.test import Client

from accounts.models import Membership
from campaigns.models import CampaignLead, Suppression
from campaigns.services import suppression_add
from tests.factories import UserFactory, make_workspace

URL = "/console/suppressions/"


def signed_in(user):
    c = Client()
    c.force_login(user)
    return c


def test_owner_adds_addresses_as_manual(workspace, owner):
    c = signed_in(owner)
    r = c.post(URL, {"addresses": "Ann@Example.com, bob@example.com\n\nann@example.com"}, follow=True)
    assert r.status_code == 200 and "2 addresses suppressed" in r.content.decode()
    rows = {s.email: s for s in Suppression.objects.filter(workspace=workspace)}
    assert set(rows) == {"ann@example.com", "bob@example.com"}
    assert {s.reason for s in rows.values()} == {"manual"}
    assert rows["ann@example.com"].source == f"console:{owner.email}"
    page = c.get(URL).content.decode()
    assert "ann@example.com" in page and "bob@example.com" in page and "(2)" in page


def test_existing_reason_is_kept(workspace, owner):
    suppression_add(workspace=workspace, email="cy@example.com", reason="bounced")
    r = signed_in(owner).post(URL, {"addresses": "cy@example.com"}, follow=True)
    assert "0 addresses suppressed (1 already were)" in r.content.decode()
    assert Suppression.objects.get(email="cy@example.com").reason == "bounced"


def test_invalid_addresses_add_nothing(workspace, owner):
    r = signed_in(owner).post(URL, {"addresses": "good@example.com\nnot-an-address"})
    assert r.status_code == 400 and "not-an-address" in r.content.decode()
    assert not Suppression.objects.exists()
    assert signed_in(owner).post(URL, {"addresses": "  "}).status_code == 400


def test_manual_suppression_stops_active_leads(api, owner, workspace, launched):
    lead = CampaignLead.objects.filter(campaign=launched[0]).first()
    r = signed_in(owner).post(URL, {"addresses": lead.email})
    assert r.status_code == 302, r.content.decode()[:500]
    lead.refresh_from_db()
    assert lead.state == CampaignLead.State.STOPPED


def test_members_see_but_cannot_add(workspace):
    member = UserFactory()
    Membership.objects.create(user=member, workspace=workspace, role="member")
    suppression_add(workspace=workspace, email="dee@example.com", reason="replied")
    c = signed_in(member)
    page = c.get(URL).content.decode()
    assert "dee@example.com" in page and 'name="addresses"' not in page
    assert c.post(URL, {"addresses": "eve@example.com"}).status_code == 404
    assert not Suppression.objects.filter(email="eve@example.com").exists()


def test_other_workspaces_are_invisible(workspace):
    suppression_add(workspace=workspace, email="secret@example.com", reason="replied")
    _, stranger, _ = make_workspace()
    assert "secret@example.com" not in signed_in(stranger).get(URL).content.decode()


def test_filters(workspace, owner):
    suppression_add(workspace=workspace, email="fay@example.com", reason="bounced")
    suppression_add(workspace=workspace, email="gus@example.com", reason="unsubscribed")
    c = signed_in(owner)
    by_reason = c.get(URL, {"reason": "bounced"}).content.decode()
    assert "fay@example.com" in by_reason and "gus@example.com" not in by_reason
    by_text = c.get(URL, {"q": "GUS"}).content.decode()
    assert "gus@example.com" in by_text and "fay@example.com" not in by_text


def test_csrf_is_enforced(owner):
    c = Client(enforce_csrf_checks=True)
    c.force_login(owner)
    assert c.post(URL, {"addresses": "x@example.com"}).status_code == 403
    assert not Suppression.objects.exists()


def test_requires_sign_in(db):
    r = Client().get(URL)
    assert r.status_code == 302


def test_there_is_no_removal_path(workspace, owner):
    suppression_add(workspace=workspace, email="hal@example.com", reason="manual")
    c = signed_in(owner)
    for path in (URL + "delete/", URL + "hal@example.com/remove/"):
        assert c.post(path).status_code == 404
    assert Suppression.objects.filter(email="hal@example.com").exists()

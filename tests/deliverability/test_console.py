"""The console's Deliverability page: states, reasons, rates, checks and history; Resume for owners and admins
only, recorded with their address."""

from __future__ import annotations

import pytest
from django.test import Client

from accounts.models import Membership, User
from deliverability import services as health
from deliverability.models import HealthEvent
from sending.testing import make_active_mailbox
from tests.deliverability.conftest import add_sends

pytestmark = pytest.mark.django_db


@pytest.fixture
def paused(workspace):
    mb = make_active_mailbox(workspace, email="alex@console-mail.test")
    add_sends(mb, sent=19, bounced=1)
    assert health.mailbox_evaluate(mailbox_id=mb.pk) == "paused"
    return mb


def test_owner_sees_the_page_and_resumes_a_mailbox(owner, paused):
    c = Client()
    c.force_login(owner)
    html = c.get("/console/deliverability/").content.decode()
    for text in ("Deliverability", "console-mail.test", "paused", "bounce_rate", "1 of 20", f"Resume {paused.email}",
                 "healthy → paused", "not checked yet"):
        assert text in html, text
    r = c.post(f"/console/deliverability/mailboxes/{paused.pk}/resume/", follow=True)
    assert "resumed" in r.content.decode()
    paused.refresh_from_db()
    assert paused.health_state == "healthy"
    assert HealthEvent.objects.filter(mailbox=paused, to_state="healthy", actor=owner.email).exists()


def test_a_member_sees_no_resume_button_and_cannot_resume(workspace, paused):
    member = User.objects.create_user(email="member@example.test")
    Membership.objects.create(user=member, workspace=workspace, role=Membership.Role.MEMBER)
    c = Client()
    c.force_login(member)
    html = c.get("/console/deliverability/").content.decode()
    assert "paused" in html and "Resume" not in html.split("What each reason means")[0]
    assert c.post(f"/console/deliverability/mailboxes/{paused.pk}/resume/").status_code == 404
    assert c.post(f"/console/deliverability/domains/{paused.domain_id}/resume/").status_code == 404
    paused.refresh_from_db()
    assert paused.health_state == "paused"


def test_the_page_requires_sign_in(db):
    assert Client().get("/console/deliverability/").status_code == 302

"""Owners and admins may choose an email for every `interested` reply: its text and a link to the conversation."""

from __future__ import annotations

import email
import email.policy
from pathlib import Path

import pytest
from django.test import Client

from accounts.models import Membership
from core import errors
from replies import notices, services
from tests.factories import UserFactory
from tests.replies.conftest import make_world, reply_bytes

pytestmark = pytest.mark.django_db(transaction=True)  # the email leaves when the classification commits


@pytest.fixture(autouse=True)
def _mail_to_sink(settings):
    settings.EMAIL_BACKEND = "core.mail.MaildirEmailBackend"


def _mails(settings):
    new = Path(settings.MAIL_SINK_DIR) / "new"
    out = [email.message_from_bytes(p.read_bytes(), policy=email.policy.default)
           for p in sorted(new.iterdir())] if new.exists() else []
    return [m for m in out if str(m["Subject"]).startswith("Interested reply")]


def _arrive(world, mid, body):
    stored = services.inbound_store(mailbox=world.mailbox, source="smtp", raw=reply_bytes(
        message_id=mid, in_reply_to="<msg-0@outreach-sbx.test>", body=body))
    services.inbound_classify(inbound_id=stored.inbound.pk)
    return stored.inbound.reply


def test_opted_in_owners_and_admins_get_interested_replies(workspace, owner, settings):
    world = make_world(workspace)
    admin, member = UserFactory(email="adm@example.com"), UserFactory(email="mem@example.com")
    Membership.objects.create(user=admin, workspace=workspace, role=Membership.Role.ADMIN)
    Membership.objects.create(user=member, workspace=workspace, role=Membership.Role.MEMBER)
    c = Client()
    c.force_login(owner)
    assert "Email me interested replies" in c.get("/console/replies/").content.decode()
    c.post("/console/replies/notify", {"on": "1"})
    assert "Stop these emails" in c.get("/console/replies/").content.decode()
    notices.notice_set(workspace=workspace, user=admin, on=True)
    m = Client()
    m.force_login(member)
    assert m.post("/console/replies/notify", {"on": "1"}).status_code == 404  # members cannot opt in
    with pytest.raises(errors.NotFound):
        notices.notice_set(workspace=workspace, user=member, on=True)

    _arrive(world, "<no@acme.com>", "No thanks, not a fit for us.")
    assert _mails(settings) == []
    reply = _arrive(world, "<yes@acme.com>", "Yes, let's talk Thursday at 10 about pricing.")
    (mail,) = _mails(settings)
    assert sorted(a.strip() for a in str(mail["To"]).split(",")) == sorted([owner.email, "adm@example.com"])
    text = mail.get_content()
    assert "Yes, let's talk Thursday at 10 about pricing." in text
    assert f"{settings.BASE_URL}/console/replies/{reply.pk}/" in text

    c.post("/console/replies/notify", {"on": "0"})
    Membership.objects.filter(user=admin).update(role=Membership.Role.MEMBER)  # no longer an admin: nothing
    _arrive(world, "<yes2@acme.com>", "Interested, send me a demo link please.")
    assert len(_mails(settings)) == 1

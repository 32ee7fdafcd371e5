"""Label corrections in the console (issue 19): recorded, re-apply the suppression reason, never lift a
suppression, visible in get_replies, exportable as JSON Lines with the raw message."""

import base64
import json

from django.test import Client

from accounts.models import Membership
from campaigns.models import CampaignLead, SentMessage, Suppression
from replies import services
from replies.models import Reply, ReplyCorrection
from tests.campaigns.conftest import clock as clock  # noqa: F401 - fixtures
from tests.campaigns.conftest import launched as launched  # noqa: F401
from tests.campaigns.conftest import run_tick
from tests.factories import UserFactory, make_workspace


def signed_in(user):
    c = Client()
    c.force_login(user)
    return c


def receive(mb, to_email, text, mid):
    sent = SentMessage.objects.get(to_email=to_email, step_index=0)
    raw = (f"From: Someone <{to_email}>\r\nTo: {mb.email}\r\nSubject: Re: {sent.subject}\r\n"
           f"Message-ID: <{mid}@x.test>\r\nIn-Reply-To: <{sent.message_id}>\r\n"
           f"Content-Type: text/plain; charset=utf-8\r\n\r\n{text}\r\n").encode()
    stored = services.inbound_store(mailbox=mb, raw=raw, source="smtp")
    services.inbound_classify(inbound_id=stored.inbound.pk)
    return Reply.objects.get(inbound=stored.inbound), raw


def test_correction_recorded_reapplies_reason_and_shows_in_get_replies(launched, api, owner, workspace):  # noqa: F811
    campaign, mb = launched
    run_tick()
    reply, raw = receive(mb, "ann@acme.test", "Please remove me from your list.", "r1")
    assert reply.classification == "unsubscribe"
    assert Suppression.objects.get(email="ann@acme.test").reason == "unsubscribed"
    c = signed_in(owner)
    inbox = c.get("/console/replies/").content.decode()
    assert "Please remove me from your list." in inbox and "Hello Ann at Acme" in inbox  # the message it answers
    resp = c.post(f"/console/replies/{reply.pk}/correct", {"label": "not_interested"})
    assert resp.status_code == 302
    fix = ReplyCorrection.objects.get()
    assert (fix.from_label, fix.to_label, fix.corrected_by, fix.suppression_reason) == (
        "unsubscribe", "not_interested", owner, "replied")
    reply.refresh_from_db()
    assert reply.classification == "not_interested"
    sup = Suppression.objects.get(email="ann@acme.test")
    assert sup.reason == "replied"  # re-applied, still suppressed
    lead = CampaignLead.objects.get(email="ann@acme.test")
    assert (lead.state, lead.stop_reason) == ("stopped", "replied")
    got = api.post("/v1/get_replies", {}).json()["result"]["replies"][0]
    assert got["classification"] == "not_interested"
    assert got["correction"]["from"] == "unsubscribe" and got["correction"]["to"] == "not_interested"
    assert got["correction"]["by"] == owner.email and got["correction"]["at"].endswith("Z")
    # and back: unsubscribed again; stats follow
    c.post(f"/console/replies/{reply.pk}/correct", {"label": "unsubscribe"})
    assert Suppression.objects.get(email="ann@acme.test").reason == "unsubscribed"
    assert CampaignLead.objects.get(email="ann@acme.test").stop_reason == "unsubscribed"
    assert ReplyCorrection.objects.count() == 2
    stats = api.get(f"/v1/campaigns/{campaign.pk}").json()["stats"]
    assert stats["leads"]["unsubscribed"] == 1 and stats["replies"]["unsubscribe"] == 1
    # the page says who corrected it
    assert f"corrected from not_interested by {owner.email}" in c.get("/console/replies/").content.decode()

    # export: JSON Lines with the raw message, exactly
    export = c.get("/console/replies/export.jsonl")
    assert export.status_code == 200 and export["Content-Type"].startswith("application/jsonl")
    lines = b"".join(export.streaming_content).decode().splitlines()
    row = json.loads(lines[0])
    assert len(lines) == 1 and row["reply_id"] == reply.pk and row["label"] == "unsubscribe"
    assert row["classifier_label"] == "unsubscribe" and row["corrected"] is True
    assert base64.b64decode(row["raw_base64"]) == raw and "Please remove me" in row["raw"]


def test_correction_never_lifts_a_suppression_it_did_not_make(launched, owner, workspace):  # noqa: F811
    campaign, mb = launched
    run_tick()
    # Bob clicked unsubscribe first, then replied: his suppression is the link's, and stays so
    from campaigns.services import suppression_add

    suppression_add(workspace=workspace, email="bob@beta.test", reason="unsubscribed", source="link")
    reply, _ = receive(mb, "bob@beta.test", "Sounds interesting, can we talk on Tuesday?", "r2")
    assert reply.classification == "interested"
    signed_in(owner).post(f"/console/replies/{reply.pk}/correct", {"label": "other"})
    sup = Suppression.objects.get(email="bob@beta.test")
    assert (sup.reason, sup.source) == ("unsubscribed", "link")
    assert Reply.objects.get(pk=reply.pk).classification == "other"


def test_correcting_a_delay_notice_suppresses_now(launched, owner, workspace):  # noqa: F811
    """A reply that suppressed nobody (classification `other` of a delay notice) corrected to a person's label
    now suppresses the address and stops the lead."""
    campaign, mb = launched
    run_tick()
    reply, _ = receive(mb, "bob@beta.test", "Sounds interesting, can we talk on Tuesday?", "r3")
    # simulate what a delay notice leaves behind: a reply that stopped and suppressed nobody
    Suppression.objects.filter(email="bob@beta.test").delete()
    CampaignLead.objects.filter(email="bob@beta.test").update(state="active", stop_reason="")
    Reply.objects.filter(pk=reply.pk).update(classification="other")
    signed_in(owner).post(f"/console/replies/{reply.pk}/correct", {"label": "unsubscribe"})
    assert Suppression.objects.get(email="bob@beta.test").reason == "unsubscribed"
    lead = CampaignLead.objects.get(email="bob@beta.test")
    assert (lead.state, lead.stop_reason) == ("stopped", "unsubscribed")


def test_only_owners_and_admins_correct_and_export(launched, workspace):  # noqa: F811
    campaign, mb = launched
    run_tick()
    reply, _ = receive(mb, "ann@acme.test", "Sounds interesting, can we talk on Tuesday?", "r4")
    member = UserFactory()
    Membership.objects.create(workspace=workspace, user=member, role="member")
    c = signed_in(member)
    page = c.get("/console/replies/").content.decode()
    assert "Sounds interesting" in page and "Save label" not in page and "export.jsonl" not in page
    assert c.post(f"/console/replies/{reply.pk}/correct", {"label": "other"}).status_code == 404
    assert c.get("/console/replies/export.jsonl").status_code == 404
    assert not ReplyCorrection.objects.exists()
    _, stranger, _ = make_workspace()
    s = signed_in(stranger)
    assert "Sounds interesting" not in s.get("/console/replies/").content.decode()
    assert s.post(f"/console/replies/{reply.pk}/correct", {"label": "other"}).status_code == 404
    assert Reply.objects.get(pk=reply.pk).classification == "interested"


def test_inbox_filters(launched, owner):  # noqa: F811
    campaign, mb = launched
    run_tick()
    receive(mb, "ann@acme.test", "Please remove me from your list.", "r5")
    receive(mb, "bob@beta.test", "Sounds interesting, can we talk on Tuesday?", "r6")
    c = signed_in(owner)
    only = c.get("/console/replies/?classification=interested").content.decode()
    assert "Sounds interesting" in only and "Please remove me" not in only
    assert "Please remove me" in c.get(f"/console/replies/?campaign={campaign.pk}").content.decode()
    bad = c.post(f"/console/replies/{Reply.objects.first().pk}/correct", {"label": "nonsense"})
    assert bad.status_code == 302 and not ReplyCorrection.objects.exists()


def test_export_command_writes_the_corrected_labels(launched, owner, workspace, tmp_path):  # noqa: F811
    from django.core.management import call_command

    campaign, mb = launched
    run_tick()
    reply, raw = receive(mb, "ann@acme.test", "Please remove me from your list.", "r7")
    receive(mb, "bob@beta.test", "Sounds interesting, can we talk on Tuesday?", "r8")
    signed_in(owner).post(f"/console/replies/{reply.pk}/correct", {"label": "other"})
    out = tmp_path / "labels.jsonl"
    call_command("export_reply_labels", "--workspace", str(workspace.pk), "--output", str(out))
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["reply_id"], r["label"], r["classifier_label"]) for r in rows] == [(reply.pk, "other", "unsubscribe")]
    assert base64.b64decode(rows[0]["raw_base64"]) == raw
    call_command("export_reply_labels", "--all", "--output", str(out))
    assert len(out.read_text().splitlines()) == 2

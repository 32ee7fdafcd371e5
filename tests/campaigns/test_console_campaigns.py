"""Console Campaigns pages: list, detail (stats, steps, window, waiting reason, leads), Pause and Resume."""

from django.test import Client

from accounts.models import Membership
from campaigns.models import Campaign, SentMessage
from tests.campaigns.conftest import run_tick
from tests.factories import UserFactory, make_workspace


def signed_in(user):
    c = Client()
    c.force_login(user)
    return c


def test_list_and_detail(launched, owner):
    campaign, mb = launched
    run_tick()
    c = signed_in(owner)
    page = c.get("/console/campaigns/").content.decode()
    assert "Q3 outreach" in page and f"/console/campaigns/{campaign.pk}/" in page and "launched" in page
    detail = c.get(f"/console/campaigns/{campaign.pk}/")
    assert detail.status_code == 200
    html = detail.content.decode()
    assert "Hi Ann" in html and "Hello Ann at Acme" in html  # steps rendered for a sample lead
    assert "Re: Hi Ann" in html and "alex@out-mail.test" in html
    assert "Mon, Tue, Wed, Thu, Fri, Sat, Sun, 00:00–24:00 (UTC)" in html
    assert "ann@acme.test" in html and "In sequence" in html
    assert ">Pause</button>" in html
    assert "Friday 2026-11-20 10:00 (UTC)" in html  # next send: step 2, two days after step 1
    searched = c.get(f"/console/campaigns/{campaign.pk}/?q=bob").content.decode()
    assert "bob@beta.test" in searched and "ann@acme.test</span><div" not in searched


def test_times_are_shown_in_the_campaigns_zone(api, owner, workspace, clock):
    from sending.testing import make_active_mailbox
    from tests.campaigns.helpers import create, launch

    make_active_mailbox(workspace)
    window = {"timezone": "Asia/Tokyo", "days": ["mon", "tue", "wed", "thu", "fri"], "start_hour": 9, "end_hour": 17}
    cid = create(api, sending_window=window).json()["result"]["campaign_id"]
    launch(api, cid, owner)
    html = signed_in(owner).get(f"/console/campaigns/{cid}/").content.decode()
    # 10:00 UTC Wednesday is 19:00 in Tokyo: outside the window, next opening Thursday 09:00 Tokyo
    assert "Thursday 2026-11-19 09:00 (Asia/Tokyo)" in html and "Waiting for the sending window to open." in html
    page = signed_in(owner).get("/console/campaigns/").content.decode()
    assert "Thu 2026-11-19 09:00" in page


def test_pause_and_resume_buttons(launched, owner, clock):
    campaign, _ = launched
    c = signed_in(owner)
    resp = c.post(f"/console/campaigns/{campaign.pk}/pause")
    assert resp.status_code == 302
    campaign.refresh_from_db()
    assert campaign.state == "paused"
    html = c.get(f"/console/campaigns/{campaign.pk}/").content.decode()
    assert "Paused: nothing is sent until it is resumed." in html and ">Resume</button>" in html
    assert run_tick()["dispatched"] == 0 and not SentMessage.objects.exists()
    c.post(f"/console/campaigns/{campaign.pk}/resume")
    campaign.refresh_from_db()
    assert campaign.state == "launched"
    assert run_tick()["dispatched"] == 2


def test_members_see_but_cannot_pause_and_strangers_get_404(launched, workspace):
    campaign, _ = launched
    member = UserFactory()
    Membership.objects.create(workspace=workspace, user=member, role="member")
    c = signed_in(member)
    html = c.get(f"/console/campaigns/{campaign.pk}/").content.decode()
    assert "Q3 outreach" in html and ">Pause</button>" not in html
    assert c.post(f"/console/campaigns/{campaign.pk}/pause").status_code == 404
    assert Campaign.objects.get(pk=campaign.pk).state == "launched"
    _, stranger, _ = make_workspace()
    s = signed_in(stranger)
    assert s.get(f"/console/campaigns/{campaign.pk}/").status_code == 404
    assert s.post(f"/console/campaigns/{campaign.pk}/pause").status_code == 404
    assert "Q3 outreach" not in s.get("/console/campaigns/").content.decode()
    assert Client().get("/console/campaigns/").status_code == 302  # sign-in required


def test_send_in_doubt_is_shown(launched, owner, clock, monkeypatch):
    """Issue 15.9: the console shows a lead whose message was mid-send at a crash."""
    import pytest

    campaign, _ = launched

    def crash(**kw):
        raise SystemExit("killed mid-send")

    monkeypatch.setattr("sending.transport.send_message", crash)
    with pytest.raises(SystemExit):
        run_tick()
    c = signed_in(owner)
    html = c.get(f"/console/campaigns/{campaign.pk}/").content.decode()
    assert "being handed to the mail server (step 1) since 10:00 UTC" in html
    assert "Messages with an unknown outcome" not in html
    monkeypatch.undo()
    from datetime import timedelta

    from campaigns import sender

    clock.shift(sender.STUCK_AFTER + timedelta(minutes=1))
    run_tick()  # the sweeper reports it; never re-sent
    html = c.get(f"/console/campaigns/{campaign.pk}/").content.decode()
    assert "Messages with an unknown outcome" in html and "mid-send at a crash (step 1)" in html
    assert "Outcome unknown" in html
    msg = SentMessage.objects.get(state="sending")
    assert msg.message_id in html

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


def _new_campaign_form(**over):
    import json

    form = {"name": "Console draft", "leads": "email,first_name,company_name,timezone,city\n"
            "ann@acme.test,Ann,Acme,Europe/Oslo,Oslo\nbob@beta.test,,Beta,,\n",
            "steps": json.dumps([{"variants": [{"subject": "{{RANDOM | Hi | Hello}} {{first_name|there}}",
                                                "body": "About {{city|your city}}"},
                                               {"subject": "Quick one", "body": "B"}], "wait_days": 0}]),
            "timezone": "lead", "fallback_timezone": "Europe/Berlin", "day_mon": "1", "day_tue": "1",
            "start_hour": "9", "end_hour": "17", "metric": "reply_rate", "min_sends": "20",
            "stop_on_company_reply": "1"}
    form.update(over)
    return form


def test_console_creates_a_draft_with_the_apis_rules(owner, api):
    import json

    from tests.campaigns.helpers import create

    c = signed_in(owner)
    assert c.get("/console/campaigns/new").status_code == 200
    resp = c.post("/console/campaigns/new", _new_campaign_form())
    assert resp.status_code == 302, resp.content.decode()[:2000]
    campaign = Campaign.objects.get(name="Console draft")
    assert campaign.state == "draft" and campaign.leads_accepted == 2 and campaign.stop_on_company_reply
    assert campaign.auto_winner == {"metric": "reply_rate", "min_sends_per_variant": 20}
    assert campaign.sending_window == {"timezone": "lead", "fallback_timezone": "Europe/Berlin",
                                       "days": ["mon", "tue"], "start_hour": 9, "end_hour": 17}
    ann = campaign.leads.get(email="ann@acme.test")
    assert ann.timezone == "Europe/Oslo" and ann.custom == {"city": "Oslo"}
    assert "Variant A" in c.get(f"/console/campaigns/{campaign.pk}/").content.decode()

    # the same broken input through the form and through the API: the same field paths and messages
    bad_steps = [{"subject": "ok", "body": "ok"},
                 {"variants": [{"subject": "{{RANDOM | a | }}", "body": "x"}, {"body": "{{nope}}"}]}]
    from django.utils.html import escape

    for form, body, paths in (
            ({"steps": json.dumps(bad_steps)}, {"steps": bad_steps},
             {"steps.1.variants.0.subject", "steps.1.variants.1.body"}),
            ({"fallback_timezone": ""}, {"sending_window": {"timezone": "lead"}}, {"sending_window.fallback_timezone"})):
        resp = c.post("/console/campaigns/new", _new_campaign_form(**form))
        assert resp.status_code == 400
        html = resp.content.decode()
        api_fields = create(api, leads=[{"email": "ann@acme.test", "custom": {"city": "Oslo"}}],
                            **body).json()["error"]["details"]["fields"]
        assert set(api_fields) == paths, api_fields
        for path, msgs in api_fields.items():
            for m in msgs:
                assert f'<span class="mono">{path}</span>: {escape(m)}' in html, (path, m)
    assert Campaign.objects.filter(name="Console draft").count() == 1

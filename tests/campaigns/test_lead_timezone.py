"""`sending_window.timezone: "lead"`: each lead is mailed inside the window in its own zone, with an injected
clock (time-machine) across daylight-saving changes (US 2026-03-08, EU 2026-03-29)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import time_machine

from campaigns.window import for_lead, in_window, next_open
from tests.campaigns.conftest import run_tick, sink_messages
from tests.campaigns.helpers import create, launch

pytestmark = pytest.mark.django_db

LEAD_WINDOW = {"timezone": "lead", "fallback_timezone": "Asia/Tokyo", "days": ["mon", "tue", "wed", "thu", "fri"],
               "start_hour": 9, "end_hour": 17}
LEADS = [{"email": "ny@ny.test", "timezone": "America/New_York"},
         {"email": "be@be.test", "timezone": "Europe/Berlin"},
         {"email": "tk@tk.test"}]  # no zone: the fallback (Tokyo)


def utc(*args):
    return datetime(*args, tzinfo=UTC)


def fields(r):
    assert r.status_code == 400, r.json()
    return r.json()["error"]["details"]["fields"]


def test_rules(api):
    assert "sending_window.fallback_timezone" in fields(create(api, sending_window={"timezone": "lead"}))
    assert "sending_window.fallback_timezone" in fields(create(api, sending_window={
        "timezone": "UTC", "fallback_timezone": "Europe/Oslo"}))
    assert "sending_window.fallback_timezone" in fields(create(api, sending_window={
        "timezone": "lead", "fallback_timezone": "Mars/Olympus"}))
    got = fields(create(api, leads=[{"email": "a@b.test", "timezone": "Europe/Atlantis"}]))
    assert got == {"leads.0.timezone": ["Unknown IANA time zone 'Europe/Atlantis'."]}
    r = create(api, leads=LEADS, sending_window=LEAD_WINDOW)
    assert r.status_code == 200, r.json()
    assert r.json()["result"]["sending_window"] == LEAD_WINDOW


def test_for_lead_across_the_eu_change():
    london = for_lead(LEAD_WINDOW, "Europe/London")
    assert london["timezone"] == "Europe/London" and for_lead(LEAD_WINDOW, "")["timezone"] == "Asia/Tokyo"
    assert not in_window(london, utc(2026, 3, 27, 8, 30))  # Fri 08:30 GMT
    assert in_window(london, utc(2026, 3, 30, 8, 30))  # Mon 09:30 BST: the same UTC hour is now inside
    assert next_open(london, utc(2026, 3, 27, 17, 0)) == utc(2026, 3, 30, 8, 0)  # Mon 09:00 BST
    assert for_lead({"timezone": "UTC", "days": ["mon"], "start_hour": 9, "end_hour": 17}, "Europe/Oslo")[
        "timezone"] == "UTC"  # a campaign-wide window ignores the lead's zone


def test_each_lead_in_its_own_hours_across_the_us_change(api, owner, workspace, settings):
    from campaigns.models import CampaignLead
    from sending.testing import make_active_mailbox

    steps = [{"subject": "Hi", "body": "One", "wait_days": 0}, {"body": "Two", "wait_days": 3}]
    with time_machine.travel(utc(2026, 3, 6, 13, 0), tick=False) as clock:  # Friday; New York still on EST
        make_active_mailbox(workspace, email="alex@tz-mail.test")
        cid = create(api, leads=LEADS, steps=steps, sending_window=LEAD_WINDOW).json()["result"]["campaign_id"]
        assert launch(api, cid, owner).status_code == 200
        due = dict(CampaignLead.objects.filter(campaign_id=cid).values_list("email", "next_send_at"))
        assert due == {"be@be.test": utc(2026, 3, 6, 13, 0),  # 14:00 in Berlin: inside now
                       "ny@ny.test": utc(2026, 3, 6, 14, 0),  # 08:00 EST now: opens at 09:00 EST
                       "tk@tk.test": utc(2026, 3, 9, 0, 0)}  # 22:00 Friday in Tokyo: Monday 09:00 JST
        detail = api.get(f"/v1/campaigns/{cid}").json()
        assert detail["waiting_reason"] is None

        run_tick()
        assert [m["To"].addresses[0].addr_spec for m in sink_messages(settings)] == ["be@be.test"]
        detail = api.get(f"/v1/campaigns/{cid}").json()
        assert detail["next_send_at"] == "2026-03-06T14:00:00Z" and detail["waiting_reason"] is None

        clock.move_to(utc(2026, 3, 6, 13, 59))
        run_tick()
        assert len(sink_messages(settings)) == 1
        clock.move_to(utc(2026, 3, 6, 14, 0))
        run_tick()
        assert sorted(m["To"].addresses[0].addr_spec for m in sink_messages(settings)) == ["be@be.test",
                                                                                          "ny@ny.test"]
        due = dict(CampaignLead.objects.filter(campaign_id=cid).values_list("email", "next_send_at"))
        # three local days later at the same wall-clock time: New York is on EDT by then (one hour less to UTC)
        assert due["ny@ny.test"] == utc(2026, 3, 9, 13, 0)  # Monday 09:00 EDT
        assert due["be@be.test"] == utc(2026, 3, 9, 13, 0)  # Monday 14:00 CET

        clock.move_to(utc(2026, 3, 9, 0, 0))  # Monday 09:00 in Tokyo, Sunday evening elsewhere
        run_tick()
        assert "tk@tk.test" in [m["To"].addresses[0].addr_spec for m in sink_messages(settings)]
        assert CampaignLead.objects.get(campaign_id=cid, email="tk@tk.test").next_send_at == utc(2026, 3, 12, 0, 0)

        clock.move_to(utc(2026, 3, 9, 13, 0))
        run_tick()
        follow_ups = [m["To"].addresses[0].addr_spec for m in sink_messages(settings) if m["Subject"] == "Re: Hi"]
        assert sorted(follow_ups) == ["be@be.test", "ny@ny.test"]


def test_outside_every_lead_window_waits_for_the_first_opening(api, owner, workspace):
    from sending.testing import make_active_mailbox

    with time_machine.travel(utc(2026, 3, 7, 12, 0), tick=False):  # Saturday everywhere
        make_active_mailbox(workspace, email="sam@tz-mail.test")
        cid = create(api, leads=LEADS, sending_window=LEAD_WINDOW).json()["result"]["campaign_id"]
        assert launch(api, cid, owner).status_code == 200
        detail = api.get(f"/v1/campaigns/{cid}").json()
        assert detail["waiting_reason"] == "outside_window"
        assert detail["next_send_at"] == "2026-03-09T00:00:00Z"  # Monday 09:00 in Tokyo comes first

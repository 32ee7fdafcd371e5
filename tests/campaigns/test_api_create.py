import pytest

from campaigns import services
from campaigns.models import Campaign, CampaignLead
from tests.campaigns.helpers import campaign_body, create


def fields(resp):
    assert resp.status_code == 400, resp.json()
    err = resp.json()["error"]
    assert err["code"] == "invalid_request"
    return err["details"]["fields"]


def test_create_returns_campaign_record_free(api, workspace):
    from billing.services import account_get

    before = account_get(workspace=workspace).available_micros
    resp = create(api)
    assert resp.status_code == 200, resp.json()
    data = resp.json()
    r = data["result"]
    assert r["state"] == "draft" and r["name"] == "Q3 outreach"
    assert r["leads_accepted"] == 2 and r["leads_suppressed"] == 0
    assert r["suppressed_reasons"] == {"unsubscribed": 0, "bounced": 0, "replied": 0, "invalid_email": 0,
                                       "duplicate": 0}
    assert r["sending_window"] == {"timezone": "UTC", "days": ["mon", "tue", "wed", "thu", "fri"],
                                   "start_hour": 9, "end_hour": 17}
    assert data["service"]["credits_charged"] == "0"
    assert account_get(workspace=workspace).available_micros == before
    c = Campaign.objects.get(pk=r["campaign_id"])
    assert c.workspace == workspace
    assert sorted(c.leads.values_list("email", flat=True)) == ["ann@acme.test", "bob@beta.test"]
    assert set(c.leads.values_list("state", flat=True)) == {"pending"}


def test_leads_filtered_and_counted_by_reason(api, workspace):
    services.suppression_add(workspace=workspace, email="unsub@x.test", reason="unsubscribed")
    services.suppression_add(workspace=workspace, email="bounce@x.test", reason="bounced")
    services.suppression_add(workspace=workspace, email="rep@x.test", reason="replied")
    leads = [{"email": e} for e in ["ok@x.test", "OK@X.test ", "not-an-email", "", "a@@b", "Unsub@x.test",
                                   "bounce@x.test", "rep@x.test", "rep@x.test", "second@x.test"]]
    r = create(api, leads=leads).json()["result"]
    assert r["leads_accepted"] == 2
    assert r["suppressed_reasons"] == {"unsubscribed": 1, "bounced": 1, "replied": 1, "invalid_email": 3,
                                       "duplicate": 2}
    assert r["leads_suppressed"] == 8


def test_idempotency_key_required_and_replayed(api):
    resp = api.post("/v1/campaigns", campaign_body())
    assert resp.status_code == 428 and resp.json()["error"]["code"] == "idempotency_key_required"
    a = create(api, key="same")
    b = create(api, key="same")
    assert b.headers["Idempotent-Replayed"] == "true" and a.content == b.content
    assert Campaign.objects.count() == 1
    c = create(api, key="same", name="other")
    assert c.status_code == 409 and c.json()["error"]["code"] == "idempotency_key_reused"


def test_scope_required(make_api):
    api, _, _ = make_api(scopes=["campaign:launch"])
    resp = create(api)
    assert resp.status_code == 403
    assert resp.json()["error"]["code"] == "insufficient_scope"
    assert resp.json()["error"]["details"]["required_scope"] == "campaign:write"


@pytest.mark.parametrize("n, ok", [(1, True), (5000, True), (0, False), (5001, False)])
def test_lead_count_limits(api, n, ok):
    resp = create(api, leads=[{"email": f"p{i}@x.test"} for i in range(n)])
    if ok:
        assert resp.status_code == 200 and resp.json()["result"]["leads_accepted"] == n
    else:
        assert "leads" in fields(resp)


@pytest.mark.parametrize("n, ok", [(1, True), (8, True), (0, False), (9, False)])
def test_step_count_limits(api, n, ok):
    steps = [{"subject": "s", "body": "b", "wait_days": 1} for _ in range(n)]
    resp = create(api, steps=steps)
    if ok:
        assert resp.status_code == 200 and resp.json()["result"]["steps"] == n
    else:
        assert "steps" in fields(resp)


@pytest.mark.parametrize("n, ok", [(120, True), (121, False)])
def test_name_limit(api, n, ok):
    resp = create(api, name="x" * n)
    assert (resp.status_code == 200) is ok
    if not ok:
        assert "name" in fields(resp)


def test_first_step_needs_subject(api):
    f = fields(create(api, steps=[{"body": "hi"}]))
    assert f == {"steps.0.subject": ["The first step needs a subject."]}
    f = fields(create(api, steps=[{"subject": "  ", "body": "hi"}]))
    assert "steps.0.subject" in f


def test_unknown_variable_refused_custom_allowed(api):
    f = fields(create(api, steps=[{"subject": "Hi {{first_name}}", "body": "About {{job_title}} {{city}}"}]))
    assert list(f) == ["steps.0.body"] and "{{job_title}}" in f["steps.0.body"][0]
    assert "{{city}}" not in f["steps.0.body"][0]  # a custom key of one lead is a known variable
    f = fields(create(api, steps=[{"subject": "Hi {{ First Name }}", "body": "x"}]))
    assert "steps.0.subject" in f
    ok = create(api, key="k2", steps=[{"subject": "{{ first_name | there }}", "body": "{{email}} {{last_name}} {{city|x}}"}])
    assert ok.status_code == 200, ok.json()


@pytest.mark.parametrize("window, field", [
    ({"timezone": "Mars/Olympus"}, "sending_window.timezone"),
    ({"timezone": "../../etc/passwd"}, "sending_window.timezone"),
    ({"days": ["monday"]}, "sending_window.days.0"),
    ({"days": []}, "sending_window.days"),
    ({"start_hour": 17, "end_hour": 9}, "sending_window.end_hour"),
    ({"start_hour": 9, "end_hour": 9}, "sending_window.end_hour"),
    ({"start_hour": -1}, "sending_window.start_hour"),
    ({"end_hour": 25}, "sending_window.end_hour"),
    ({"colour": "blue"}, "sending_window.colour"),
])
def test_sending_window_rules(api, window, field):
    assert field in fields(create(api, sending_window=window))


def test_sending_window_normalized(api):
    r = create(api, sending_window={"timezone": "America/New_York", "days": ["sun", "mon", "mon"],
                                    "start_hour": 0, "end_hour": 24}).json()["result"]
    assert r["sending_window"] == {"timezone": "America/New_York", "days": ["mon", "sun"], "start_hour": 0,
                                   "end_hour": 24}


def test_stop_on_reply(api):
    assert "stop_on_reply" in fields(create(api, stop_on_reply=False))
    assert create(api, key="k2", stop_on_reply=True).status_code == 200


def test_unknown_fields_and_types(api):
    assert "colour" in fields(create(api, colour="x"))
    assert "leads.0.phone" in fields(create(api, leads=[{"email": "a@b.test", "phone": "1"}]))
    assert "leads.0.email" in fields(create(api, leads=[{"first_name": "x"}]))
    assert "leads.0.custom" in fields(create(api, leads=[{"email": "a@b.test", "custom": {"a": {"b": 1}}}]))
    assert "steps.0.body" in fields(create(api, steps=[{"subject": "s", "body": "  "}]))
    assert "steps.0.wait_days" in fields(create(api, steps=[{"subject": "s", "body": "b", "wait_days": -1}]))


def test_nothing_contacted_on_create(api, settings):
    create(api)
    assert not (settings.MAIL_SINK_DIR / "new").exists() or not list((settings.MAIL_SINK_DIR / "new").iterdir())
    assert CampaignLead.objects.filter(next_send_at__isnull=False).count() == 0

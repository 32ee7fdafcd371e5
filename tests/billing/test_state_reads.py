import time_machine
from django.utils import timezone


def test_usage_shape_and_last_30_days(api):
    api.post("/v1/test_echo", {"charge": "0.2"})
    api.post("/v1/test_echo", {"charge": "0.4"})
    api.post("/v1/test_echo", {"fail": "provider_unavailable"})
    r = api.get("/v1/usage")
    assert r.status_code == 200
    body = r.json()
    assert body["credits_balance"] == "299.4" and body["credits_reserved"] == "0" and body["credits_available"] == "299.4"
    assert body["last_30_days"] == [{"verb": "test_echo", "calls": 3, "credits_charged": "0.6"}]
    assert "result" not in body and "service" not in body


def test_usage_excludes_calls_older_than_30_days(api):
    with time_machine.travel(timezone.now() - timezone.timedelta(days=31)):
        api.post("/v1/test_echo", {"charge": "1"})
    api.post("/v1/test_echo", {"charge": "2"})
    rows = api.get("/v1/usage").json()["last_30_days"]
    assert rows == [{"verb": "test_echo", "calls": 1, "credits_charged": "2"}]


def test_reserved_shows_holds_in_flight(api, workspace):
    from billing.services import hold_place

    hold_place(workspace=workspace, amount=12_500_000)
    body = api.get("/v1/usage").json()
    assert body["credits_reserved"] == "12.5" and body["credits_available"] == "287.5" and body["credits_balance"] == "300"


def test_get_request(api):
    r = api.post("/v1/test_echo", {"charge": "1.5"})
    rid = r["X-Request-Id"]
    got = api.get(f"/v1/requests/{rid}")
    assert got.status_code == 200
    body = got.json()
    assert body["request_id"] == rid and body["verb"] == "test_echo" and body["status"] == "succeeded"
    assert body["credits_charged"] == "1.5" and body["completed_at"] and body["created_at"]
    assert "error" not in body


def test_get_failed_request_shows_error(api):
    r = api.post("/v1/test_echo", {"fail": "provider_unavailable"})
    body = api.get(f"/v1/requests/{r['X-Request-Id']}").json()
    assert body["status"] == "failed" and body["credits_charged"] == "0"
    assert body["error"]["code"] == "provider_unavailable"


def test_another_workspaces_request_is_404(api, make_api):
    other, _, _ = make_api()
    rid = other.post("/v1/test_echo", {})["X-Request-Id"]
    r = api.get(f"/v1/requests/{rid}")
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
    assert api.get("/v1/requests/req_unknown").status_code == 404


def test_another_member_of_same_workspace_sees_it(api, workspace):
    from accounts.services import key_create
    from tests.conftest import Api

    _, second = key_create(workspace=workspace, name="second")
    rid = api.post("/v1/test_echo", {})["X-Request-Id"]
    assert Api(second).get(f"/v1/requests/{rid}").status_code == 200

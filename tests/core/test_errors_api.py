"""Every error code of the foundation through the HTTP API: envelope, status, X-Request-Id."""

import json

import pytest

from accounts.models import ApiKey
from accounts.services import key_revoke


def assert_error(r, status, code):
    assert r.status_code == status, (r.status_code, r.content)
    body = r.json()
    assert set(body) == {"error"}
    err = body["error"]
    assert err["code"] == code
    assert isinstance(err["message"], str) and err["message"]
    assert err["request_id"] == r["X-Request-Id"] and r["X-Request-Id"].startswith("req_")
    return err


class TestAuthentication:
    @pytest.mark.parametrize("header", [
        None, "", "Bearer", "Bearer ", "Basic abc", "Bearer service_sk_live_short",
        "Bearer service_sk_live_" + "x" * 43, "Token service_sk_live_" + "x" * 43, "Bearer sk_live_" + "x" * 43,
    ])
    def test_missing_malformed_or_unknown_key_is_401(self, api, header):
        api.key = None
        headers = {"Authorization": header} if header is not None else {}
        assert_error(api.get("/v1/usage", headers=headers), 401, "unauthenticated")
        assert_error(api.post("/v1/test_echo", {}, headers=headers), 401, "unauthenticated")

    def test_revoked_key_is_401(self, api):
        key_revoke(key=ApiKey.objects.get())
        assert_error(api.get("/v1/usage"), 401, "unauthenticated")

    def test_key_with_one_character_changed_is_401(self, api):
        api.key = api.key[:-1] + ("A" if api.key[-1] != "A" else "B")
        assert_error(api.get("/v1/usage"), 401, "unauthenticated")

    def test_last_used_is_recorded(self, api):
        assert api.get("/v1/usage").status_code == 200
        assert ApiKey.objects.get().last_used_at is not None


class TestBodies:
    def test_malformed_json(self, api):
        err = assert_error(api.post("/v1/test_echo", raw="{not json"), 400, "invalid_request")
        assert "JSON" in err["message"]

    @pytest.mark.parametrize("raw", ["[]", '"x"', "3", "null"])
    def test_non_object_json(self, api, raw):
        assert_error(api.post("/v1/test_echo", raw=raw), 400, "invalid_request")

    def test_unknown_field(self, api):
        err = assert_error(api.post("/v1/test_echo", {"nope": 1}), 400, "invalid_request")
        assert err["details"]["fields"] == {"nope": ["Unknown field."]}

    def test_wrong_type_names_the_field(self, api):
        err = assert_error(api.post("/v1/test_echo", {"charge": "1e3"}), 400, "invalid_request")
        assert "charge" in err["details"]["fields"]

    @pytest.mark.parametrize("ctype", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"])
    def test_non_json_content_type_is_415(self, api, ctype):
        assert_error(api.post("/v1/test_echo", raw="{}", content_type=ctype), 415, "unsupported_media_type")

    def test_plus_json_content_type_is_accepted(self, api):
        assert api.post("/v1/test_echo", raw="{}", content_type="application/merge-patch+json").status_code == 200

    def test_json_with_charset_is_accepted(self, api):
        assert api.post("/v1/test_echo", raw="{}", content_type="application/json; charset=utf-8").status_code == 200

    def test_empty_body_is_an_empty_object(self, api):
        assert api.post("/v1/test_echo", raw="").status_code == 200

    def test_body_over_16_mib_is_413(self, api):
        big = json.dumps({"payload": "x" * (16 * 1024 * 1024)})
        assert_error(api.post("/v1/test_echo", raw=big), 413, "payload_too_large")

    def test_body_just_under_16_mib_is_accepted(self, api):
        body = '{"payload":"' + "x" * (16 * 1024 * 1024 - 20) + '"}'
        assert len(body) <= 16 * 1024 * 1024
        assert api.post("/v1/test_echo", raw=body).status_code == 200


class TestRoutes:
    def test_unknown_path_is_404_envelope(self, api):
        assert_error(api.get("/v1/does-not-exist"), 404, "not_found")
        assert_error(api.post("/nowhere", {}), 404, "not_found")

    def test_wrong_method_is_405(self, api):
        assert_error(api.post("/v1/usage", {}), 405, "method_not_allowed")
        assert_error(api.get("/v1/test_echo"), 405, "method_not_allowed")
        r = api.client.delete("/v1/test_echo", headers={"Authorization": f"Bearer {api.key}"})
        assert_error(r, 405, "method_not_allowed")

    def test_server_fault_is_500_without_internals(self, api, caplog):
        err = assert_error(api.post("/v1/test_echo", {"fail": "crash"}), 500, "internal")
        assert "boom" not in json.dumps(err) and "Traceback" not in json.dumps(err)
        assert any("boom" in (r.exc_text or "") or (r.exc_info and "boom" in str(r.exc_info[1])) for r in caplog.records)
        assert any(err["request_id"] in r.getMessage() for r in caplog.records)


class TestScopesAndCredits:
    def test_insufficient_scope(self, make_api):
        api, _, _ = make_api(scopes=["campaign:write"])
        err = assert_error(api.post("/v1/test_confirm", {"amount": 1}), 403, "insufficient_scope")
        assert err["details"] == {"required_scope": "assets:purchase"}

    def test_scoped_key_passes(self, make_api):
        api, _, _ = make_api(scopes=["assets:purchase"])
        assert api.post("/v1/test_confirm", {"amount": 1}).status_code == 200

    def test_insufficient_credits(self, api):
        assert_error(api.post("/v1/test_echo", {"charge": "301"}), 402, "insufficient_credits")

    @pytest.mark.parametrize("code,status", [
        ("spend_ceiling_exceeded", 402), ("provider_unavailable", 502), ("operation_unknown_state", 502),
        ("sending_capacity_required", 409), ("launch_aborted", 409), ("model_not_allowed", 400),
    ])
    def test_domain_errors_render_with_their_status(self, api, code, status):
        assert_error(api.post("/v1/test_echo", {"fail": code}), status, code)


def test_rate_limit_headers_on_success_and_error(api):
    ok = api.get("/v1/usage")
    assert ok["RateLimit-Limit"] == "300" and ok["RateLimit-Remaining"] == "299"
    bad = api.post("/v1/test_echo", {"nope": 1})
    assert bad["RateLimit-Remaining"] == "298"


@pytest.mark.parametrize("method,path", [
    ("get", "/v1/usage"), ("post", "/v1/find_leads"), ("get", "/v1/campaigns"), ("get", "/v1/llm/models"),
    ("post", "/v1/llm/chat/completions"),
])
@pytest.mark.django_db
def test_401_carries_the_bearer_challenge_and_the_common_serialization(client, method, path):
    # Issue 14: 401s on /v1 had no WWW-Authenticate and were serialized differently ({"error": {…}} with
    # spaces) from the verb pipeline's errors ({"error":{…}}, compact, UTF-8).
    for headers in ({}, {"HTTP_AUTHORIZATION": "Bearer service_sk_live_" + "x" * 43}):
        if method == "post":
            r = client.post(path, data="{}", content_type="application/json", **headers)
        else:
            r = client.get(path, **headers)
        assert r.status_code == 401, (path, r.content)
        assert r["WWW-Authenticate"] == "Bearer"
        assert r.content.startswith(b'{"error":{"code":"unauthenticated","message":"A valid API key is required')
        assert "…".encode() in r.content  # UTF-8, not \\u2026
        assert r.content == json.dumps(r.json(), ensure_ascii=False, separators=(",", ":")).encode()


@pytest.mark.django_db
def test_other_envelope_errors_use_the_same_serialization(client):
    r = client.get("/v1/no-such-route")
    assert r.status_code == 404 and r.content.startswith(b'{"error":{"code":"not_found"')

"""A key past its budget over MCP: a tool error carrying the same envelope as REST's 402."""

import pytest

from accounts.models import ApiKey
from billing import services as billing
from billing.models import RequestRecord
from core.money import credits
from tests.mcpserver.test_mcp_live import balance_micros, call, error_of

pytestmark = pytest.mark.django_db(transaction=True)


def test_key_budget_exceeded_is_a_tool_error_with_the_rest_envelope(live, api, api_key, workspace):
    key = ApiKey.objects.get(workspace=workspace)
    billing.key_limits_set(api_key=key, daily=credits(5))
    ok = call(live, api_key, "test_echo", {"charge": "4"})
    assert not ok.is_error
    refused = call(live, api_key, "test_echo", {"charge": "2"})
    err = error_of(refused)
    assert (err["code"], refused.meta["service/http_status"]) == ("key_budget_exceeded", 402)
    rest = api.post("/v1/test_echo", {"charge": "2"}).json()["error"]
    assert {k: v for k, v in err.items() if k != "request_id"} == {k: v for k, v in rest.items() if k != "request_id"}
    assert err["details"]["period"] == "day" and err["details"]["limit"] == "5" and err["details"]["spent"] == "4"
    assert balance_micros(workspace) == credits(296)
    assert RequestRecord.objects.get(pk=err["request_id"]).status == "failed"
    usage = call(live, api_key, "get_usage").structured_content
    assert usage["key"]["limits"]["day"]["remaining"] == "1"

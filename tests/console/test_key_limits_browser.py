"""The limit form of a key and the spend-per-key chart, in Debian's chromium driven by Playwright; and the
ledger CSV naming the key, and a member (not owner or admin) being refused the form."""

import csv
import io

import pytest

from accounts.models import ApiKey, Membership
from billing.models import KeyBudget
from tests.console.test_e2e_browser import CHROMIUM, browser, playwright_api  # noqa: F401 - the browser fixture

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.skipif(not __import__("shutil").which(CHROMIUM), reason="Debian chromium is not installed")
def test_owner_sets_a_daily_limit_from_the_warning_link_and_sees_spend_per_key(live_server, browser, owner,  # noqa: F811
                                                                              workspace, api, settings):
    from django.test import Client

    key = ApiKey.objects.get(workspace=workspace)
    assert api.post("/v1/test_echo", {"charge": "4.5"}).status_code == 200
    client = Client()
    client.force_login(owner)
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    context = browser.new_context()
    context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": live_server.url}])
    page = context.new_page()
    try:
        page.goto(f"{live_server.url}/console/keys/?limits={key.pk}#limits-{key.pk}")  # the email's link
        row = page.locator(f"#limits-{key.pk}")
        assert row.is_visible()
        row.locator("input[name=daily]").fill("10")
        row.locator("input[name=monthly]").fill("250")
        row.get_by_role("button", name=f"Save limits of {key.name}").click()
        page.wait_for_load_state()
        assert "Spend limits" in page.content()
        row = page.locator(f"#limits-{key.pk}")
        assert "4.5 of 10" in row.inner_text() and "4.5 of 250" in row.inner_text()
        budget = KeyBudget.objects.get(pk=key.pk)
        assert (budget.daily_limit_micros, budget.monthly_limit_micros) == (10_000_000, 250_000_000)
        assert api.post("/v1/test_echo", {"charge": "6"}).json()["error"]["code"] == "key_budget_exceeded"
        page.goto(f"{live_server.url}/console/")
        chart = page.get_by_test_id("by-key-chart")
        assert key.name in chart.inner_text() and "4.5" in chart.inner_text()
        assert page.evaluate("[...document.scripts].every(s => !s.src || s.src.startsWith(location.origin))")
    finally:
        context.close()


def test_ledger_csv_names_the_key_and_members_cannot_set_limits(api, workspace, owner, member_of):
    from django.test import Client

    key = ApiKey.objects.get(workspace=workspace)
    assert api.post("/v1/test_echo", {"charge": "2"}).status_code == 200
    client = Client()
    client.force_login(owner)
    body = b"".join(client.get("/console/ledger.csv").streaming_content).decode()
    rows = list(csv.DictReader(io.StringIO(body)))
    charge = next(r for r in rows if r["kind"] == "charge")
    assert (charge["key_id"], charge["key_name"]) == (str(key.pk), key.name)
    _, other = member_of(workspace, role=Membership.Role.MEMBER)
    assert other.post(f"/console/keys/{key.pk}/limits/", {"daily": "1"}).status_code == 404
    assert not KeyBudget.objects.filter(pk=key.pk).exists()

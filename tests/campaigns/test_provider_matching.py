"""`match_mailbox_provider`: Google-hosted recipients from a Google mailbox, Microsoft-hosted from a Microsoft
one, when the campaign has one with capacity left today, else any. MX answers come from a dnslib server."""

from __future__ import annotations

import pytest

from tests.campaigns.conftest import ALWAYS, run_tick
from tests.campaigns.helpers import create, launch
from tests.verification.conftest import dns_peer  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db


@pytest.fixture
def mx_map(dns_peer, settings):  # noqa: F811
    from django.core.cache import cache

    from leads.verification import dnslayer

    settings.VERIFIER_NAMESERVERS = [dns_peer.nameserver]
    settings.VERIFIER_TIMEOUT_SECONDS = 3
    zone = dns_peer.zone
    zone.clear()
    dnslayer.reset()
    cache.clear()
    zone.mx("g-co.test", (1, "aspmx.l.google.com"), (5, "alt1.aspmx.l.google.com"))
    zone.mx("gmail-like.test", (5, "gmail-smtp-in.l.google.com"))
    zone.mx("m-co.test", (0, "m-co-test.mail.protection.outlook.com"))
    zone.mx("o-co.test", (10, "mx.o-co.test"))
    yield zone
    zone.clear()
    dnslayer.reset()
    cache.clear()


def _mailboxes(workspace, google_limit=25):
    from sending.testing import make_active_mailbox

    return {
        "google": make_active_mailbox(workspace, email="g@send-g.test", oauth_provider="google",
                                      daily_limit=google_limit),
        "microsoft": make_active_mailbox(workspace, email="m@send-m.test", oauth_provider="microsoft"),
        "other": make_active_mailbox(workspace, email="o@send-o.test"),
    }


def test_provider_kind_of_mailboxes(workspace):
    from sending.selectors import mailbox_provider_kind
    from sending.testing import make_active_mailbox

    kinds = [mailbox_provider_kind(make_active_mailbox(workspace, **fields)) for fields in (
        {"oauth_provider": "google"}, {"oauth_provider": "google_workspace"}, {"oauth_provider": "microsoft"},
        {"oauth_provider": "microsoft365"}, {"smtp_host": "smtp.gmail.com"}, {"smtp_host": "smtp.office365.com"},
        {"smtp_host": "mail.example.test"}, {})]
    assert kinds == ["google", "google", "microsoft", "microsoft", "google", "microsoft", "other", "other"]


def test_recipient_provider_from_mx_and_cached(mx_map):
    from campaigns.services import recipient_provider

    assert [recipient_provider(d) for d in ("g-co.test", "gmail-like.test", "m-co.test", "o-co.test",
                                            "missing.test")] == ["google", "google", "microsoft", "other", "other"]
    queries = mx_map.queries
    assert recipient_provider("m-co.test") == "microsoft" and mx_map.queries == queries  # cached


def test_leads_go_from_a_mailbox_of_their_provider(api, owner, workspace, mx_map, clock):
    from campaigns.models import SentMessage

    boxes = _mailboxes(workspace)
    emails = ["a@g-co.test", "b@g-co.test", "c@m-co.test", "d@m-co.test", "e@o-co.test", "f@gmail-like.test"]
    cid = create(api, leads=[{"email": e} for e in emails], sending_window=ALWAYS, match_mailbox_provider=True,
                 steps=[{"subject": "Hi", "body": "One"}]).json()["result"]["campaign_id"]
    assert api.get(f"/v1/campaigns/{cid}").json()["match_mailbox_provider"] is True
    assert launch(api, cid, owner).status_code == 200
    before = {lead["email"]: lead["mailbox_id"] for lead in api.get(f"/v1/campaigns/{cid}/leads").json()["leads"]}
    run_tick()
    sent_from = dict(SentMessage.objects.filter(campaign_id=cid, state="sent").values_list("to_email", "mailbox_id"))
    assert sent_from["a@g-co.test"] == sent_from["b@g-co.test"] == sent_from["f@gmail-like.test"] == boxes["google"].pk
    assert sent_from["c@m-co.test"] == sent_from["d@m-co.test"] == boxes["microsoft"].pk
    assert sent_from["e@o-co.test"] == before["e@o-co.test"]  # other: its own round-robin mailbox
    leads = {lead["email"]: lead for lead in api.get(f"/v1/campaigns/{cid}/leads").json()["leads"]}
    assert {e: leads[e]["recipient_provider"] for e in emails} == {
        "a@g-co.test": "google", "b@g-co.test": "google", "c@m-co.test": "microsoft", "d@m-co.test": "microsoft",
        "e@o-co.test": "other", "f@gmail-like.test": "google"}
    assert leads["a@g-co.test"]["mailbox_id"] == boxes["google"].pk  # sticky from the first send on


def test_without_capacity_any_mailbox_sends(api, owner, workspace, mx_map, clock):
    from campaigns.models import SentMessage

    boxes = _mailboxes(workspace, google_limit=1)
    emails = ["a@g-co.test", "b@g-co.test", "c@g-co.test"]
    cid = create(api, leads=[{"email": e} for e in emails], sending_window=ALWAYS, match_mailbox_provider=True,
                 steps=[{"subject": "Hi", "body": "One"}]).json()["result"]["campaign_id"]
    assert launch(api, cid, owner).status_code == 200
    run_tick()
    sent_from = list(SentMessage.objects.filter(campaign_id=cid, state="sent").values_list("mailbox_id", flat=True))
    assert len(sent_from) == 3
    assert sent_from.count(boxes["google"].pk) == 1  # its one send of the day; the others went from any other


def test_without_the_option_nothing_is_looked_up(api, owner, workspace, mx_map, clock):
    _mailboxes(workspace)
    cid = create(api, leads=[{"email": "a@g-co.test"}], sending_window=ALWAYS).json()["result"]["campaign_id"]
    assert launch(api, cid, owner).status_code == 200
    run_tick()
    assert mx_map.queries == 0
    assert api.get(f"/v1/campaigns/{cid}/leads").json()["leads"][0]["recipient_provider"] is None

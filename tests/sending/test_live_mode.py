"""Live mode (SANDBOX=0) never reaches the sandbox provider (CONTRACT 4.14): with SENDING_PROVIDER unset (or set
to `sandbox`) a quote and a purchase are 502 provider_unavailable naming the setting, nothing is charged (no
hold left, the request record failed, nothing created), and a sandbox mailbox is neither sending capacity nor
ever "sends" into the sink."""

from email.message import EmailMessage

import pytest

from billing.models import CreditAccount, Hold, RequestRecord
from sending.models import Mailbox, Operation, SendingDomain
from sending.selectors import mailboxes_active
from sending.testing import make_active_mailbox
from sending.transport import PermanentSendError, send_message
from tests.sending.conftest import approve

BODY = {"emails_per_week": 500, "brand_hint": "Acme"}


def _refused(r):
    assert r.status_code == 502, r.content
    err = r.json()["error"]
    assert err["code"] == "provider_unavailable" and err["details"]["setting"] == "SENDING_PROVIDER"
    assert "SENDING_PROVIDER" in err["message"]
    rec = RequestRecord.objects.get(pk=r["X-Request-Id"])
    assert rec.status == "failed" and rec.credits_charged_micros == 0
    return err


@pytest.mark.parametrize("provider", ["", "sandbox"])
def test_quote_in_live_mode_without_a_live_provider_is_refused(rich_api, rich, settings, provider):
    settings.SANDBOX = False
    settings.SENDING_PROVIDER = provider
    r = rich_api.post("/v1/setup_sending", BODY)
    _refused(r)
    assert "confirmation_token" not in r.content.decode()


def test_purchase_approved_in_live_mode_charges_nothing_and_buys_nothing(rich_api, rich, settings):
    ws, owner, _ = rich
    token = rich_api.post("/v1/setup_sending", BODY).json()["result"]["confirmation_token"]  # quoted in sandbox
    approve(token, owner)
    before = CreditAccount.objects.get(pk=ws.pk)
    settings.SANDBOX = False
    settings.SENDING_PROVIDER = ""
    r = rich_api.post("/v1/setup_sending", {**BODY, "confirmation_token": token}, headers={"Idempotency-Key": "p1"})
    _refused(r)
    after = CreditAccount.objects.get(pk=ws.pk)
    assert (after.balance_micros, after.reserved_micros) == (before.balance_micros, before.reserved_micros)
    assert not Hold.objects.filter(status="pending").exists()
    assert not Operation.objects.exists() and not Mailbox.objects.exists() and not SendingDomain.objects.exists()


def test_sandbox_mailbox_is_no_capacity_and_never_sinks_mail_in_live_mode(workspace, settings):
    box = make_active_mailbox(workspace)
    assert box.provider == "sandbox" and list(mailboxes_active(workspace=workspace)) == [box]
    settings.SANDBOX = False
    assert list(mailboxes_active(workspace=workspace)) == []
    msg = EmailMessage()
    msg["To"], msg["Subject"] = "lead@example.com", "hi"
    msg.set_content("hello")
    with pytest.raises(PermanentSendError, match="SANDBOX=0"):
        send_message(mailbox=box, message=msg)
    sunk = settings.MAIL_SINK_DIR / "new"
    assert not sunk.exists() or not any(sunk.iterdir())


def test_launch_in_live_mode_with_only_sandbox_mailboxes_needs_capacity(api, workspace, settings):
    make_active_mailbox(workspace)
    campaign = api.post("/v1/campaigns", {"name": "c", "steps": [{"subject": "s", "body": "b"}],
                                          "leads": [{"email": "a@example.com"}]},
                        headers={"Idempotency-Key": "c1"})
    assert campaign.status_code == 200, campaign.content
    settings.SANDBOX = False
    r = api.post("/v1/launch_campaign", {"campaign_id": campaign.json()["result"]["campaign_id"]})
    assert r.status_code == 409 and r.json()["error"]["code"] == "sending_capacity_required"


def test_connected_mailbox_in_live_mode_never_uses_the_sink(workspace, settings):
    from sending.models import Provider
    from sending.transport import uses_sink

    settings.SANDBOX = False
    for host in ("127.0.0.1", "smtp.example.com"):
        box = make_active_mailbox(workspace, provider=Provider.BYO, smtp_host=host)
        assert uses_sink(box) is False, host

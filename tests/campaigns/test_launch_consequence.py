"""The launch approval (its headline, the approval mail and the approval page) says where the campaign's mail
really goes: the sandbox sink for sandbox mailboxes, real email for a connected mailbox that sends over SMTP
(never "goes to the sandbox sink" for it), and both, named, when the campaign has both."""

from __future__ import annotations

import pytest
from django.core import mail as djmail
from django.test import Client

from accounts import services as accounts
from campaigns.services import launch_consequence
from sending.models import Provider
from sending.testing import make_active_mailbox
from tests.campaigns.helpers import create

pytestmark = pytest.mark.django_db(transaction=True)  # approval mail is sent on commit

SINK = "the email goes to the sandbox sink on this machine"


def _connected(workspace, email="ann@acme-real.test"):
    """A bring-your-own mailbox whose SMTP server is on this machine: in sandbox mode it sends for real."""
    return make_active_mailbox(workspace, email=email, provider=Provider.BYO, smtp_host="127.0.0.1", smtp_port=2587)


def _preview(api, owner):
    cid = create(api, leads=[{"email": "lead0@corp.test", "first_name": "L0"}]).json()["result"]["campaign_id"]
    r = api.post("/v1/launch_campaign", {"campaign_id": cid})
    assert r.status_code == 200, r.content
    token = accounts.token_lookup(plaintext=r.json()["result"]["confirmation_token"])
    mail = next(m.body for m in reversed(djmail.outbox) if owner.email in m.to and "launch_campaign" in m.subject)
    c = Client()
    c.force_login(owner)
    page = c.get(f"/console/approvals/{token.pk}/").content.decode()
    return token.summary["action"], mail, page


def test_connected_mailbox_that_sends_for_real_is_never_called_the_sink(api, owner, workspace):
    _connected(workspace)  # sandbox mode (the tests' default)
    action, mail, page = _preview(api, owner)
    assert action.endswith("real email will be sent"), action
    assert "sandbox sink" not in mail and "real email will be sent" in mail
    assert 'data-testid="sandbox-sink"' not in page and "sandbox sink" not in page


def test_sandbox_mailbox_goes_to_the_sink(api, owner, workspace):
    make_active_mailbox(workspace)
    action, mail, page = _preview(api, owner)
    assert action.endswith(SINK) and SINK in mail
    assert 'data-testid="sandbox-sink"' in page


def test_mixed_mailboxes_name_the_one_that_sends_for_real(workspace):
    real = _connected(workspace)
    sink = make_active_mailbox(workspace)
    text = launch_consequence([real, sink])
    assert text.startswith(f"real email will be sent from {real.email};") and "sandbox sink" in text
    assert sink.email not in text

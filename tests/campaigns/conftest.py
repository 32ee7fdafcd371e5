"""Campaign test fixtures: a frozen clock and a launched campaign sending into the Maildir sink."""

import email
import email.policy
import mailbox as mailbox_lib
from datetime import UTC, datetime

import pytest
import time_machine

from campaigns import scheduler
from campaigns.models import Campaign
from sending.testing import make_active_mailbox
from tests.campaigns.helpers import create, launch

ALWAYS = {"timezone": "UTC", "days": ["mon", "tue", "wed", "thu", "fri", "sat", "sun"], "start_hour": 0,
          "end_hour": 24}
T0 = datetime(2026, 11, 18, 10, 0, tzinfo=UTC)  # a Wednesday


@pytest.fixture
def clock():
    with time_machine.travel(T0, tick=False) as traveller:
        yield traveller


def sink_messages(settings):
    path = settings.MAIL_SINK_DIR
    if not (path / "new").exists():
        return []
    box = mailbox_lib.Maildir(str(path), create=False)
    return sorted((email.message_from_bytes(bytes(m), policy=email.policy.default) for m in box),
                  key=lambda m: (m["To"], m["Date"]))


def run_tick(**kw):
    return scheduler.tick(dispatch=scheduler.run_inline, **kw)


@pytest.fixture
def launched(api, owner, workspace, clock):
    """A launched campaign: 2 leads, 2 steps (the second a threaded follow-up after 2 days), one mailbox."""
    mb = make_active_mailbox(workspace, email="alex@out-mail.test")
    cid = create(api, sending_window=ALWAYS).json()["result"]["campaign_id"]
    assert launch(api, cid, owner).status_code == 200
    return Campaign.objects.get(pk=cid), mb



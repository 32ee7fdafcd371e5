"""Console mail whose Subject carries a user-chosen workspace name (approval requests, invitations): no RFC
2047 encoded-word in it may decode to a line break (issue 15.1, the rule campaign mail follows). Read raw from
the Maildir sink with the same RFC 5322 reader as tests/campaigns/test_headers.py."""

from pathlib import Path

import pytest

from tests.campaigns.test_headers import EVIL, decode_words, raw_fields

pytestmark = pytest.mark.django_db(transaction=True)  # approval mail is sent on commit


def _raw_mails(settings) -> list[bytes]:
    new = Path(settings.MAIL_SINK_DIR) / "new"
    files = [p.read_bytes() for p in sorted(new.iterdir())] if new.exists() else []
    return [f.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n") for f in files]


def _check(raw: bytes) -> dict:
    fields = raw_fields(raw)
    names = [n.lower() for n, _ in fields]
    assert "reply-to" not in names and names.count("from") == 1 and names.count("subject") == 1
    return {n: decode_words(v) for n, v in fields}  # asserts no encoded-word hides a control character


def test_workspace_name_in_console_mail_subjects_cannot_hide_a_line_break(api, console, workspace, settings):
    workspace.name = "Acme " + EVIL
    workspace.save()
    assert api.post("/v1/test_confirm", {"amount": 7}).status_code == 200  # approval mail to the owner
    assert console.post("/console/members/", {"email": "mate@example.com", "role": "member"}).status_code == 302
    raws = _raw_mails(settings)
    assert len(raws) == 2
    subjects = sorted(_check(raw)["Subject"] for raw in raws)
    assert subjects[0].startswith("Approval needed: test_confirm in Acme")
    assert subjects[1].startswith("You're invited to Acme")

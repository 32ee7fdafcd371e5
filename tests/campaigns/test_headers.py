"""Every header of campaign mail, read raw from what reaches the Maildir sink and a real SMTP peer (aiosmtpd):
exactly the fields it should carry, ASCII, folded (never a bare CR or LF), List-Unsubscribe as two plain
`<...>` URIs (RFC 2369; issue 14.2), and no RFC 2047 encoded-word that could smuggle a line break into a
header (CVE-2024-6923; issue 15.1), refused at campaign creation (400 naming the field) and again when the
message is built.

The parser here is deliberately not Python's `email` policy: it splits the bytes as a receiving RFC 5322 /
RFC 2369 parser does."""

from __future__ import annotations

import base64
import quopri
import re
import socket
from pathlib import Path

import pytest
from aiosmtpd.controller import Controller

from campaigns import headers
from campaigns.models import CampaignLead, SentMessage
from sending.testing import make_active_mailbox
from tests.campaigns.conftest import ALWAYS, run_tick
from tests.campaigns.helpers import create, launch

EVIL = "=?utf-8?q?x=0D=0AReply-To:_evil@attacker.test?="
FIRST = ["From", "To", "Subject", "Date", "Message-ID", "List-Unsubscribe", "List-Unsubscribe-Post",
         "MIME-Version", "Content-Type"]
FOLLOW_UP = ["From", "To", "Subject", "Date", "Message-ID", "In-Reply-To", "References", "List-Unsubscribe",
             "List-Unsubscribe-Post", "MIME-Version", "Content-Type"]
LIST_UNSUBSCRIBE_RE = re.compile(r"^<(https?://[\x21-\x3b\x3d\x3f-\x7e]+)>,[ \t]*<(mailto:[\x21-\x3b\x3d\x3f-\x7e]+)>$")
MSGID_RE = re.compile(r"^<[\x21-\x3b\x3d\x3f-\x7e]+@[A-Za-z0-9.-]+>$")


# --- a raw RFC 5322 header reader --------------------------------------------------------------------
def raw_fields(raw: bytes) -> list[tuple[str, str]]:
    assert b"\r\n\r\n" in raw, "no header/body separator"
    head = raw.split(b"\r\n\r\n", 1)[0]
    assert head.isascii(), "header block is not ASCII"
    lines = head.split(b"\r\n")
    for line in lines:
        assert b"\r" not in line and b"\n" not in line, f"bare CR/LF in {line!r}"
        assert len(line) <= 998, f"line of {len(line)} characters"
        assert all(0x20 <= b < 0x7F or b == 0x09 for b in line), f"control character in {line!r}"
    fields: list[tuple[str, str]] = []
    for line in lines:
        text = line.decode("ascii")
        if text[:1] in (" ", "\t"):
            assert fields, "continuation line first"
            fields[-1] = (fields[-1][0], fields[-1][1] + text)  # unfold: drop the CRLF, keep the WSP
        else:
            name, colon, value = text.partition(":")
            assert colon and re.match(r"^[\x21-\x39\x3b-\x7e]+$", name), f"not a header field: {text!r}"
            fields.append((name, value.strip(" \t")))
    return fields


def decode_words(value: str) -> str:
    """RFC 2047 decoding (whitespace between adjacent encoded-words dropped, as 6.2 says)."""
    value = re.sub(r"(\?=)[ \t]+(=\?)", r"\1\2", value)

    def one(m):
        charset, enc, text = m.groups()
        raw = (quopri.decodestring(text.replace("_", " ").encode(), header=True) if enc.lower() == "q"
               else base64.b64decode(text + "=" * (-len(text) % 4)))
        assert not any(b < 0x20 or b == 0x7F for b in raw), f"encoded-word hides a control character: {m.group(0)}"
        return raw.decode(charset)

    return re.sub(r"=\?([^?]+)\?([qQbB])\?([^?]*)\?=", one, value)


def check_message(raw: bytes, *, follow_up: bool = False) -> dict[str, str]:
    fields = raw_fields(raw)
    names = [n for n, _ in fields if n != "DKIM-Signature"]
    assert names == (FOLLOW_UP if follow_up else FIRST), names
    values = dict(fields)
    m = LIST_UNSUBSCRIBE_RE.match(values["List-Unsubscribe"])
    assert m, values["List-Unsubscribe"]
    assert "=?" not in values["List-Unsubscribe"]
    token = m.group(1).rsplit("/", 1)[1]
    assert m.group(2).endswith("?subject=unsubscribe%20" + token)
    assert values["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert MSGID_RE.match(values["Message-ID"])
    if follow_up:
        assert MSGID_RE.match(values["In-Reply-To"])
        assert all(MSGID_RE.match(x) for x in values["References"].split())
    for name, value in fields:
        decoded = decode_words(value)
        assert not any(ord(c) < 0x20 or ord(c) == 0x7F for c in decoded), (name, decoded)
    assert values["MIME-Version"] == "1.0" and values["Content-Type"].startswith("multipart/alternative;")
    return {k: decode_words(v) for k, v in values.items()}


def sink_raw(settings) -> list[bytes]:
    """The sink's files as sent: a Maildir stores lines ending in LF (Python's `mailbox` writes them so), so
    a file must hold no CR at all, and its LFs are the CRLFs of the message."""
    new = Path(settings.MAIL_SINK_DIR) / "new"
    files = [p.read_bytes() for p in sorted(new.iterdir())] if new.exists() else []
    assert all(b"\r" not in f for f in files)
    return [f.replace(b"\n", b"\r\n") for f in files]


LEADS = [{"email": "joerg@acme.test", "first_name": "Jörg", "last_name": "Müller (CEO)", "company_name": "Acme, Inc."},
         {"email": "plain@beta.test", "first_name": "Pat", "last_name": "Lee"}]
STEPS = [{"subject": "Hi {{first_name}}, a question about {{company_name}} and its Q3 outreach plans for München",
          "body": "Hello {{first_name}}"},
         {"body": "Following up", "wait_days": 0}]


def test_every_sent_message_has_exactly_its_headers_in_the_sink(api, owner, workspace, clock, settings):
    make_active_mailbox(workspace, email="alex@out-mail.test", display_name="Alex Ström, Sales")
    cid = create(api, leads=LEADS, steps=STEPS, sending_window=ALWAYS).json()["result"]["campaign_id"]
    assert launch(api, cid, owner).status_code == 200
    run_tick()
    run_tick()
    raws = sink_raw(settings)
    assert len(raws) == 4
    seen = []
    for raw in raws:
        follow_up = b"\r\nIn-Reply-To:" in raw
        values = check_message(raw, follow_up=follow_up)
        seen.append((values["To"], values["Subject"], follow_up))
        assert values["From"] == "Alex Ström, Sales <alex@out-mail.test>"
    subject_j = "Hi Jörg, a question about Acme, Inc. and its Q3 outreach plans for München"
    subject_p = "Hi Pat, a question about and its Q3 outreach plans for München"
    assert sorted(seen) == sorted([
        ("Jörg Müller (CEO) <joerg@acme.test>", subject_j, False),
        ("Jörg Müller (CEO) <joerg@acme.test>", "Re: " + subject_j, True),
        ("Pat Lee <plain@beta.test>", subject_p, False),
        ("Pat Lee <plain@beta.test>", "Re: " + subject_p, True),
    ])


class RawPeer:
    def __init__(self):
        self.raw: list[bytes] = []

    async def handle_DATA(self, server, session, envelope):
        self.raw.append(envelope.original_content)
        return "250 2.0.0 queued"


@pytest.fixture
def raw_peer():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    handler = RawPeer()
    controller = Controller(handler, hostname="127.0.0.1", port=port)
    controller.start()
    handler.port = port
    yield handler
    controller.stop()


def test_every_message_reaching_a_real_smtp_peer_has_exactly_its_headers(api, owner, workspace, clock, raw_peer):
    make_active_mailbox(workspace, email="sam@byo-mail.test", provider="byo", smtp_host="127.0.0.1",
                        smtp_port=raw_peer.port, smtp_security="none")
    cid = create(api, leads=LEADS, steps=STEPS, sending_window=ALWAYS).json()["result"]["campaign_id"]
    assert launch(api, cid, owner).status_code == 200
    run_tick()
    run_tick()
    assert len(raw_peer.raw) == 4
    for raw in raw_peer.raw:
        values = check_message(raw, follow_up=b"\r\nIn-Reply-To:" in raw)
        assert values["From"] == "Alex Sender <sam@byo-mail.test>"
    assert SentMessage.objects.filter(state="sent").count() == 4


# --- injection ---------------------------------------------------------------------------------------

def _fields(resp):
    assert resp.status_code == 400, resp.content
    assert resp.json()["error"]["code"] == "invalid_request"
    return {re.sub(r"\[(\d+)\]", r".\1", k): v for k, v in resp.json()["error"]["details"]["fields"].items()}




@pytest.mark.parametrize("value", [EVIL, "=?utf-8?b?eA0KUmVwbHktVG86IGV2aWxAYS50ZXN0?=", "Hi\r\nBcc: x@y.test",
                                   "a\x00b", "a\u2028b", "=?utf-8?q?=3D=3Futf-8=3Fq=3Fx=3D0A=3F=3D?="])
def test_step_subject_with_a_line_break_is_refused_at_creation(api, value):
    assert "steps.0.subject" in _fields(create(api, steps=[{"subject": "Hi " + value, "body": "b"}]))



@pytest.mark.parametrize("field", ["first_name", "last_name", "company_name"])
def test_lead_field_hiding_a_line_break_is_refused_at_creation(api, field):
    f = _fields(create(api, leads=[{"email": "a@x.test", field: "Ann " + EVIL}]))
    assert any(k.endswith(f"0.{field}") for k in f), f


def test_custom_value_hiding_a_line_break_is_refused_at_creation(api):
    f = _fields(create(api, leads=[{"email": "a@x.test", "custom": {"v": EVIL}}],
                       steps=[{"subject": "Hi {{v}}", "body": "b"}]))
    assert any(k.endswith("0.custom.v") for k in f), f


def test_plain_line_breaks_in_lead_values_are_folded_not_refused(api):
    assert create(api, leads=[{"email": "a@x.test", "first_name": "Ann\r\nMarie"}]).status_code == 200


def test_hostile_value_already_stored_is_stopped_when_the_message_is_built(api, owner, workspace, clock, settings):
    """Values stored before the creation check (or by any other path) are checked again at build time: the
    lead is stopped as `invalid_message` and nothing is sent (before the fix a Reply-To was injected)."""
    make_active_mailbox(workspace, email="alex@out-mail.test")
    cid = create(api, leads=[{"email": "a@x.test", "first_name": "Ann"}, {"email": "b@x.test", "first_name": "Bo"}],
                 steps=[{"subject": "Hi {{first_name}}", "body": "b"}], sending_window=ALWAYS).json()["result"]["campaign_id"]
    CampaignLead.objects.filter(campaign_id=cid, email="a@x.test").update(first_name="Ann " + EVIL)
    assert launch(api, cid, owner).status_code == 200
    run_tick()
    bad = CampaignLead.objects.get(campaign_id=cid, email="a@x.test")
    assert (bad.state, bad.stop_reason) == ("stopped", "invalid_message")
    raws = sink_raw(settings)
    assert len(raws) == 1 and b"Reply-To" not in raws[0]
    assert check_message(raws[0])["To"] == "Bo <b@x.test>"


@pytest.mark.parametrize("value, problem", [
    ("plain", None), ("Caf\u00e9 =?utf-8?q?Caf=C3=A9?=", None), ("a\rb", "control"), ("a\tb", "control"),
    (EVIL, "encoded-word"), ("=?utf-8?B?YQpi?=", "encoded-word"), ("=?x-unknown?q?a=0Ab?=", "encoded-word"),
    ("a\x85b", "control"), ("a\u2029b", "control"),
])
def test_header_text_problem(value, problem):
    found = headers.header_text_problem(value)
    assert (found is None) if problem is None else (problem in found)


def test_campaign_headers_refuse_what_cannot_be_written_safely():
    base = dict(from_name="A", from_email="a@x.test", to_name="B", to_email="b@y.test", subject="s",
                message_id="id@x.test", unsubscribe_urls=["https://h.test/u/1", "mailto:a@x.test?subject=u"])
    headers.campaign_headers(**base)
    # raw line breaks and tabs in text are folded to a space (neutralised), never written
    folded = dict(headers.campaign_headers(**{**base, "subject": "s\r\nBcc: c@z.test", "from_name": "A\nB\tC"}))
    assert folded["Subject"] == "s Bcc: c@z.test" and folded["From"] == "A B C <a@x.test>"
    for over in ({"subject": "s " + EVIL}, {"to_name": EVIL}, {"from_name": "A\x00B"}, {"subject": "a\x1bb"},
                 {"to_email": "b\r\n@y.test"}, {"message_id": "a>b@x.test"}, {"unsubscribe_urls": ["https://h.test/u 1"]},
                 {"unsubscribe_urls": ["https://h.test/u>1"]}, {"in_reply_to": "x\n@y", "references": ["x\n@y"]}):
        with pytest.raises(headers.UnsafeHeader):
            headers.campaign_headers(**{**base, **over})

"""SMTP reply classification: code + enhanced status code + text, with replies seen in the wild."""

import pytest

from leads.verification import smtpclient as sc


def reply(line: str) -> sc.Reply:
    code, _, text = line.partition(" ")
    return sc.Reply(int(code), [text])


@pytest.mark.parametrize("line,kind", [
    ("250 2.1.5 OK", sc.ACCEPTED),
    ("251 User not local; will forward", sc.ACCEPTED),
    ("550 5.1.1 The email account that you tried to reach does not exist.", sc.USER_UNKNOWN),
    ("550 5.1.1 <x@y.com>: Recipient address rejected: User unknown in virtual mailbox table", sc.USER_UNKNOWN),
    ("550 5.2.1 The email account that you tried to reach is disabled.", sc.USER_UNKNOWN),
    ("550 5.4.1 Recipient address rejected: Access denied. AS(201806281)", sc.USER_UNKNOWN),
    ("550 No such user here", sc.USER_UNKNOWN),
    ("550 Requested action not taken: mailbox unavailable", sc.USER_UNKNOWN),
    ("553 5.7.1 <x@y.com>: unknown user", sc.USER_UNKNOWN),
    ("550 Requested action not taken", sc.REJECTED),
    ("452 4.2.2 The email account that you tried to reach is over quota.", sc.MAILBOX_FULL),
    ("552 5.2.2 Mailbox full", sc.MAILBOX_FULL),
    ("452 Insufficient system storage", sc.MAILBOX_FULL),
    ("452 4.5.3 Too many recipients", sc.TEMPORARY),
    ("550 5.7.1 Service unavailable; Client host [1.2.3.4] blocked using zen.spamhaus.org", sc.BLOCKED),
    ("550 5.7.606 Access denied, banned sending IP [1.2.3.4]", sc.BLOCKED),
    ("554 5.7.1 <x@y.com>: Relay access denied", sc.BLOCKED),
    ("550 5.1.8 Sender address domain does not exist", sc.BLOCKED),
    ("550 Message rejected due to poor reputation of your IP", sc.BLOCKED),
    ("451 4.7.1 Greylisting in action, please come back later", sc.GREYLISTED),
    ("450 4.2.0 <x@y.com>: Recipient address rejected: Greylisted", sc.GREYLISTED),
    ("421 4.7.0 Try again later, closing connection.", sc.GREYLISTED),
    ("450 4.2.1 The user you are trying to contact is receiving mail at a rate that prevents additional "
     "messages from being delivered.", sc.TEMPORARY),
])
def test_classify_rcpt(line, kind):
    assert sc.classify_rcpt(reply(line)) == kind


def test_enhanced_code_and_multiline_text():
    r = sc.Reply(550, ["5.1.1 The email account that you tried to reach does not exist. Please try",
                       "5.1.1 double-checking the recipient's email address for typos."])
    assert r.enhanced == "5.1.1"
    assert r.summary.startswith("550 5.1.1 The email account")
    assert sc.Reply(250, ["OK"]).enhanced is None


def test_ehlo_features():
    r = sc.Reply(250, ["mx.example.com Hello", "PIPELINING", "SIZE 35882577", "STARTTLS", "8BITMIME"])
    assert sc.ehlo_features(r) == {"PIPELINING", "SIZE", "STARTTLS", "8BITMIME"}

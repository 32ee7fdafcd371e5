import mailbox as maildir_lib
from email.message import EmailMessage

import pytest

from sending.models import Mailbox
from sending.selectors import mailboxes_active
from sending.testing import make_active_mailbox
from sending.transport import PermanentSendError, send_message


def _msg(to="lead@example.org"):
    m = EmailMessage()
    m["To"] = to
    m["Subject"] = "Hello"
    m.set_content("Hi there")
    return m


def test_sandbox_mailbox_sends_into_the_sink(workspace, settings):
    mbx = make_active_mailbox(workspace, email="ann.lee@brand-mail.test", first_name="Ann", last_name="Lee")
    send_message(mailbox=mbx, message=_msg())
    box = maildir_lib.Maildir(str(settings.MAIL_SINK_DIR), create=False)
    [stored] = list(box)
    assert stored["From"] == "Ann Lee <ann.lee@brand-mail.test>"
    assert stored["To"] == "lead@example.org"
    assert stored["Message-ID"].endswith("@brand-mail.test>")
    assert stored["Date"]


def test_only_active_mailboxes_count_and_send(workspace, make_api):
    active = make_active_mailbox(workspace)
    suspended = make_active_mailbox(workspace, status=Mailbox.Status.SUSPENDED)
    make_active_mailbox(workspace, status=Mailbox.Status.PROVISIONING)
    _, other_ws, _ = make_api()
    make_active_mailbox(other_ws)
    assert list(mailboxes_active(workspace=workspace)) == [active]
    with pytest.raises(PermanentSendError) as exc:
        send_message(mailbox=suspended, message=_msg())
    assert exc.value.smtp_code is None


def test_mailbox_for_address_is_case_insensitive_and_skips_removed(workspace):
    from sending.selectors import mailbox_for_address

    mbx = make_active_mailbox(workspace, email="dana@getnorthwind.com")
    assert mailbox_for_address(address=" Dana@GetNorthwind.com ") == mbx
    mbx.status = Mailbox.Status.REMOVED
    mbx.save()
    assert mailbox_for_address(address="dana@getnorthwind.com") is None
    assert mailbox_for_address(address="") is None


def test_sandbox_ready_estimate(settings):
    from sending.providers.sandbox import SandboxProvider

    settings.SANDBOX_PROVISION_SECONDS = 2.0
    assert SandboxProvider().ready_estimate == "about 6 seconds (sandbox)"


def test_demo_seed_is_idempotent(workspace):
    from sending import demo

    demo.seed(workspace=workspace)
    demo.seed(workspace=workspace)
    assert [m.email for m in mailboxes_active(workspace=workspace)] == [demo.DEMO_EMAIL]



def test_messages_from_a_domain_with_a_key_carry_a_valid_dkim_signature(workspace, settings):
    import dkim

    from sending.dkim_keys import dkim_key_generate, dns_records

    mbx = make_active_mailbox(workspace, email="dana@getnorthwind.com", first_name="Dana", last_name="Reyes")
    domain = mbx.domain
    dkim_key_generate(domain)
    domain.save()
    [dkim_record, dmarc] = dns_records(domain)
    assert dkim_record["name"] == f"{domain.dkim_selector}._domainkey.getnorthwind.com"
    assert dmarc == {"type": "TXT", "name": "_dmarc.getnorthwind.com", "value": "v=DMARC1; p=none"}
    mbx.refresh_from_db()
    send_message(mailbox=mbx, message=_msg())
    [stored] = list(maildir_lib.Maildir(str(settings.MAIL_SINK_DIR), create=False))
    raw = stored.as_bytes()
    assert b"DKIM-Signature:" in raw and b"d=getnorthwind.com" in raw

    def dnsfunc(name, timeout=5):
        assert name == dkim_record["name"].encode() + b"."
        return dkim_record["value"].encode()

    assert dkim.verify(raw, dnsfunc=dnsfunc)
    tampered = raw.replace(b"Hi there", b"Hi their")
    assert not dkim.verify(tampered, dnsfunc=dnsfunc)


def test_no_key_no_signature(workspace, settings):
    mbx = make_active_mailbox(workspace)
    send_message(mailbox=mbx, message=_msg())
    [stored] = list(maildir_lib.Maildir(str(settings.MAIL_SINK_DIR), create=False))
    assert "DKIM-Signature" not in stored

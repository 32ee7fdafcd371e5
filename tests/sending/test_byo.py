"""Bring-your-own mailboxes against real peers: aiosmtpd (STARTTLS + AUTH, verified certificate) and Dovecot."""

import shutil
import tempfile
from email import message_from_bytes
from email.message import EmailMessage
from pathlib import Path

import pytest
from django.test import Client

from sending import crypto
from sending.byo import ByoSettings, ConnectionTestFailed, connection_test, mailbox_byo_register
from sending.models import Mailbox
from sending.selectors import mailboxes_active
from sending.transport import PermanentSendError, TransientSendError, send_message
from tests.sending import peers


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    return peers.self_signed(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def smtp_peer(certs):
    controller, handler = peers.start_smtp(*certs)
    yield controller, handler
    controller.stop()


@pytest.fixture(scope="module")
def imap_peer(certs):
    # Dovecot's auth process runs as its own user: its folder must be traversable (pytest's tmp dirs are 0700)
    workdir = Path(tempfile.mkdtemp(prefix="dovecot-"))
    workdir.chmod(0o755)
    started = peers.start_dovecot(workdir, *certs)
    if started is None:
        shutil.rmtree(workdir, ignore_errors=True)
        pytest.skip("Dovecot is not installed or did not start")
    proc, imap_port, imaps_port = started
    yield imap_port, imaps_port
    proc.terminate()
    proc.wait(timeout=10)
    shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture
def trust(settings, certs):
    settings.SENDING_TLS_CA_FILE = str(certs[0])
    settings.SENDING_ALLOW_PRIVATE_NETWORKS = True  # the peers listen on loopback


@pytest.fixture
def live_mode(settings):
    settings.SANDBOX = False  # SANDBOX=1 sends everything to the sink, BYO mailboxes included


@pytest.fixture
def cfg(smtp_peer, imap_peer, trust):
    controller, _ = smtp_peer
    _, imaps_port = imap_peer
    return ByoSettings(email="ann@byo.test", smtp_host="localhost", smtp_port=controller.port, smtp_security="starttls",
                       smtp_username="ann@byo.test", imap_host="localhost", imap_port=imaps_port, imap_security="ssl",
                       imap_username="ann@byo.test", secret="s3cret", first_name="Ann", last_name="Byo")


def _form(cfg, **over):
    data = {k: getattr(cfg, k) for k in ("email", "first_name", "last_name", "smtp_host", "smtp_port", "smtp_security",
                                         "smtp_username", "imap_host", "imap_port", "imap_security", "imap_username",
                                         "secret")}
    data.update(over)
    return data


def _msg(to):
    m = EmailMessage()
    m["To"] = to
    m["Subject"] = "Quick question"
    m.set_content("Hello from a BYO mailbox")
    return m


def test_console_registers_a_tested_mailbox_that_sends_over_starttls(workspace, owner, cfg, smtp_peer, live_mode):
    client = Client()
    client.force_login(owner)
    page = client.get("/console/mailboxes/add/")
    assert page.status_code == 200 and b'type="password"' in page.content
    r = client.post("/console/mailboxes/add/", _form(cfg))
    assert r.status_code == 302, r.context["form"].errors if r.context else r.status_code
    mbx = Mailbox.objects.get(email="ann@byo.test")
    assert (mbx.workspace, mbx.provider, mbx.status) == (workspace, "byo", "active")
    assert mbx.renews_at is None  # no upkeep for your own mailbox
    assert "s3cret" not in mbx.secret_encrypted and crypto.decrypt(mbx.secret_encrypted) == "s3cret"
    assert list(mailboxes_active(workspace=workspace)) == [mbx]
    listing = client.get("/console/mailboxes/")
    assert b"ann@byo.test" in listing.content and b"s3cret" not in listing.content

    _, handler = smtp_peer
    handler.messages.clear()
    send_message(mailbox=mbx, message=_msg("lead@example.org"))
    [got] = handler.messages
    assert got["mail_from"] == "ann@byo.test" and got["rcpt_tos"] == ["lead@example.org"]
    assert got["tls"] and got["authenticated"]
    parsed = message_from_bytes(got["data"])
    assert parsed["From"] == "Ann Byo <ann@byo.test>" and parsed["Subject"] == "Quick question"
    assert parsed["Message-ID"].endswith("@byo.test>")


def test_wrong_password_is_refused_at_smtp_and_nothing_stored(owner, cfg):
    client = Client()
    client.force_login(owner)
    r = client.post("/console/mailboxes/add/", _form(cfg, secret="wrong"))
    assert r.status_code == 400
    assert b"Connection test failed at SMTP" in r.content
    assert not Mailbox.objects.exists()


def test_imap_login_is_tested_too(cfg):
    cfg.secret = "smtp-only"  # SMTP accepts it, Dovecot does not
    with pytest.raises(ConnectionTestFailed) as exc:
        connection_test(cfg)
    assert exc.value.step == "IMAP"


def test_imap_starttls_on_the_plain_port(cfg, imap_peer):
    cfg.imap_port, cfg.imap_security = imap_peer[0], "starttls"
    connection_test(cfg)


def test_untrusted_certificate_is_refused(cfg, settings):
    settings.SENDING_TLS_CA_FILE = ""
    with pytest.raises(ConnectionTestFailed) as exc:
        connection_test(cfg)
    assert exc.value.step == "SMTP"


def test_smtp_refusals_map_to_permanent_and_transient(workspace, cfg, live_mode):
    mbx = mailbox_byo_register(workspace=workspace, cfg=cfg)
    with pytest.raises(PermanentSendError) as perm:
        send_message(mailbox=mbx, message=_msg("reject550@example.org"))
    assert perm.value.smtp_code == 550
    with pytest.raises(TransientSendError) as temp:
        send_message(mailbox=mbx, message=_msg("defer451@example.org"))
    assert temp.value.smtp_code == 451


def test_unreachable_server_is_transient(workspace, cfg, live_mode):
    mbx = mailbox_byo_register(workspace=workspace, cfg=cfg)
    mbx.smtp_port = peers.free_port()
    with pytest.raises(TransientSendError) as exc:
        send_message(mailbox=mbx, message=_msg("lead@example.org"))
    assert exc.value.smtp_code is None


def test_duplicate_and_removed_then_re_added(workspace, owner, cfg):
    client = Client()
    client.force_login(owner)
    assert client.post("/console/mailboxes/add/", _form(cfg)).status_code == 302
    dup = client.post("/console/mailboxes/add/", _form(cfg))
    assert dup.status_code == 400 and b"already registered" in dup.content
    mbx = Mailbox.objects.get()
    assert client.post(f"/console/mailboxes/{mbx.pk}/test/").status_code == 302
    assert client.post(f"/console/mailboxes/{mbx.pk}/remove/").status_code == 302
    mbx.refresh_from_db()
    assert mbx.status == "removed" and mbx.secret_encrypted == ""
    assert list(mailboxes_active(workspace=workspace)) == []
    assert client.post("/console/mailboxes/add/", _form(cfg)).status_code == 302
    assert Mailbox.objects.get().status == "active"


def test_console_is_workspace_scoped_and_admin_only(workspace, owner, make_api, cfg):
    from accounts.models import Membership
    from tests.factories import UserFactory

    mbx = mailbox_byo_register(workspace=workspace, cfg=cfg)
    _, _, stranger = make_api()
    c = Client()
    c.force_login(stranger)
    for path in (f"/console/mailboxes/{mbx.pk}/remove/", f"/console/mailboxes/{mbx.pk}/renew/"):
        assert c.post(path).status_code == 404
    assert b"ann@byo.test" not in c.get("/console/mailboxes/").content
    member = UserFactory()
    Membership.objects.create(user=member, workspace=workspace, role="member")
    m = Client()
    m.force_login(member)
    m.post("/console/switch/", {"workspace": str(workspace.pk)})
    assert m.get("/console/mailboxes/add/").status_code == 404
    assert m.post(f"/console/mailboxes/{mbx.pk}/remove/").status_code == 404
    mbx.refresh_from_db()
    assert mbx.status == "active"


def test_sandbox_mode_keeps_byo_mail_on_the_machine(workspace, cfg, smtp_peer, settings):
    import mailbox as maildir_lib

    settings.SANDBOX = True
    _, handler = smtp_peer
    handler.messages.clear()
    # a server on this machine still gets the message (nothing leaves the machine) ...
    local = mailbox_byo_register(workspace=workspace, cfg=cfg)
    send_message(mailbox=local, message=_msg("lead@example.org"))
    assert len(handler.messages) == 1
    # ... any other server does not: the message goes to the sink (TEST-NET address: never contacted)
    cfg.email, cfg.smtp_host = "ann@elsewhere.test", "192.0.2.1"
    remote = mailbox_byo_register(workspace=workspace, cfg=cfg, test=False)
    send_message(mailbox=remote, message=_msg("lead@example.org"))
    assert len(handler.messages) == 1
    [stored] = list(maildir_lib.Maildir(str(settings.MAIL_SINK_DIR), create=False))
    assert stored["From"] == "Ann Byo <ann@elsewhere.test>"


def test_private_addresses_are_refused_unless_allowed(workspace, cfg, settings, live_mode):
    settings.SENDING_ALLOW_PRIVATE_NETWORKS = False
    with pytest.raises(ConnectionTestFailed) as exc:
        connection_test(cfg)
    assert exc.value.step == "SMTP" and "non-public address" in exc.value.message
    settings.SENDING_ALLOW_PRIVATE_NETWORKS = True
    mbx = mailbox_byo_register(workspace=workspace, cfg=cfg)
    settings.SENDING_ALLOW_PRIVATE_NETWORKS = False
    with pytest.raises(PermanentSendError) as send:
        send_message(mailbox=mbx, message=_msg("lead@example.org"))
    assert "non-public address" in send.value.message
    from sending.byo import imap_test
    with pytest.raises(ConnectionTestFailed) as imap:
        imap_test(cfg)
    assert imap.value.step == "IMAP"

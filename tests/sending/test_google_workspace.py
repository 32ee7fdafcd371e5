"""setup_sending in live mode with the Google Workspace provider, end to end against local fakes of Google's
token endpoint (JWT bearer with signature check), Directory API, Site Verification API and Namecheap's XML API
(tests/sending/google_fake.py), with exact refunds in the ledger on every failure path."""

import json
from datetime import timedelta

import httpx
import pytest
import time_machine
from django.utils import timezone

from billing.models import LedgerEntry
from billing.services import account_get
from core.money import credits
from sending import services, tasks
from sending.dkim_keys import dkim_public_record
from sending.models import Mailbox, Operation, SendingDomain
from sending.providers import google_workspace as gw
from sending.providers.base import DnsRecord, OutcomeUnknown, ProviderError
from sending.providers.namecheap import NamecheapProvider
from tests.sending import google_fake
from tests.sending.conftest import approve
from tests.sending.test_namecheap import REGISTRANT


@pytest.fixture
def fake(settings, tmp_path, monkeypatch):
    vendors = google_fake.FakeVendors()
    key_file = tmp_path / "service-account.json"
    key_file.write_text(json.dumps(google_fake.SERVICE_ACCOUNT))
    settings.SANDBOX = False
    settings.SENDING_PROVIDER = "google_workspace"
    settings.GOOGLE_WORKSPACE_SERVICE_ACCOUNT_FILE = str(key_file)
    settings.GOOGLE_WORKSPACE_ADMIN_EMAIL = google_fake.ADMIN
    settings.GOOGLE_WORKSPACE_DMARC_RUA = "dmarc@operator.example"
    settings.NAMECHEAP_BASE_URL = google_fake.NAMECHEAP
    settings.NAMECHEAP_API_USER = settings.NAMECHEAP_USERNAME = "apiexample"
    settings.NAMECHEAP_API_KEY = "52b4c87ef7fd49cb96a915c0db68124"
    settings.NAMECHEAP_CLIENT_IP = "192.0.2.10"
    settings.NAMECHEAP_REGISTRANT = REGISTRANT
    transport = vendors.transport()
    monkeypatch.setattr(gw.GoogleWorkspaceProvider, "transport", transport)
    monkeypatch.setattr(NamecheapProvider, "transport", transport)
    gw._token_cache.clear()
    yield vendors
    gw._token_cache.clear()


def _purchase(api, owner, *, emails_per_week=625, sender=None):
    body = {"emails_per_week": emails_per_week, "brand_hint": "Acme",
            "sender": sender or {"first_name": "Ann", "last_name": "Lee"}}
    token = api.post("/v1/setup_sending", body).json()["result"]["confirmation_token"]
    approve(token, owner)
    r = api.post("/v1/setup_sending", {**body, "confirmation_token": token}, headers={"Idempotency-Key": "gw-1"})
    assert r.status_code == 200, r.content
    return r.json()["result"]


def _run(op_id, traveller, *, api=None, max_steps=60, step=timedelta(minutes=61)):
    seen = []
    for _ in range(max_steps):
        status = tasks.operation_advance(op_id)
        if api is not None:
            seen.append(api.get(f"/v1/operations/{op_id}").json())
        if status in Operation.FINAL:
            return status, seen
        traveller.shift(step)
    return status, seen


def test_purchase_delivers_verified_domain_and_workspace_mailboxes(rich_api, rich, fake):
    ws, owner, _ = rich
    before = account_get(workspace=ws).available_micros
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        quote = rich_api.post("/v1/setup_sending", {"emails_per_week": 625, "brand_hint": "Acme"}).json()
        assert "Google" in quote["result"]["quote"]["ready_estimate"]
        result = _purchase(rich_api, owner)  # 5 mailboxes on 1 domain: 1500 + 5 x 750
        status, seen = _run(result["operation_id"], traveller, api=rich_api)
    assert status == "succeeded"
    [name] = result["domains"]
    # the operation said what it was waiting for while it waited
    waits = [d.get("waiting_for", "") for s in seen if s.get("status") == "waiting_external"
             for d in s["result"]["domains"]]
    assert any("not yet verified" in w for w in waits), waits
    # DNS written through Namecheap: parking records kept, Google's MX, SPF, DMARC and the verification token
    hosts = {(h["Name"], h["Type"], h["Address"], h["MXPref"] if h["Type"] == "MX" else "")
             for h in fake.registered[name]["hosts"]}
    assert ("www", "CNAME", "parkingpage.namecheap.com.", "") in hosts
    assert ("@", "MX", "smtp.google.com", "1") in hosts
    assert ("@", "TXT", "v=spf1 include:_spf.google.com ~all", "") in hosts
    assert ("_dmarc", "TXT", "v=DMARC1; p=none; rua=mailto:dmarc@operator.example", "") in hosts
    assert any(h[1] == "TXT" and h[2].startswith("google-site-verification=") for h in hosts)
    domain = SendingDomain.objects.get(name=name)  # the service's DKIM key is published before activation
    assert (f"{domain.dkim_selector}._domainkey", "TXT", dkim_public_record(domain), "") in hosts
    assert fake.domains[name]["verified"]
    # five Workspace users with the sender's name, a client reference, and no password kept anywhere
    users = sorted(fake.users.values(), key=lambda u: u["primaryEmail"])
    assert [u["primaryEmail"] for u in users] == sorted(result["mailboxes"])
    assert all(u["name"]["givenName"] == "Ann" and u["name"]["familyName"] == "Lee" for u in users)
    assert all(e["customType"] == gw.EXTERNAL_ID_TYPE for u in users for e in u["externalIds"])
    mailboxes = Mailbox.objects.filter(workspace=ws).order_by("email")
    assert all(m.status == "active" and m.secret_encrypted == "" for m in mailboxes)
    assert all(m.smtp_host == "smtp.gmail.com" and m.smtp_port == 587 and m.smtp_security == "starttls"
               and m.imap_host == "imap.gmail.com" and m.imap_port == 993 for m in mailboxes)
    assert all(m.auth == "oauth2" and m.oauth_provider == "google_workspace" for m in mailboxes)
    assert [m.vendor_ref for m in mailboxes] == [u["id"] for u in users]
    # the day each mailbox reaches full volume (warm-up ramp from activation)
    final = rich_api.get(f"/v1/operations/{result['operation_id']}").json()
    assert all(m["full_volume_on"] for m in final["result"]["mailboxes"])
    m0 = mailboxes[0]
    assert final["result"]["mailboxes"][0]["full_volume_on"] == (m0.activated_at + timedelta(days=10)).date().isoformat()
    # nothing created twice; charged exactly setup + first month, nothing refunded
    assert [c[0] for c in fake.calls].count("namecheap.domains.create") == 1
    assert [c[0] for c in fake.calls].count("domains.insert") == 1
    assert [c[0] for c in fake.calls].count("users.insert") == 5
    assert account_get(workspace=ws).available_micros == before - credits("1500") - 5 * credits("750")
    assert not LedgerEntry.objects.filter(account__workspace=ws, kind=LedgerEntry.Kind.REFUND).exists()


def test_mailbox_token_source_is_a_delegated_mail_token(rich_api, rich, fake):
    ws, owner, _ = rich
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        result = _purchase(rich_api, owner, emails_per_week=125)
        assert _run(result["operation_id"], traveller)[0] == "succeeded"
    mailbox = Mailbox.objects.get(workspace=ws)
    token, expires_at = gw.mailbox_access_token(mailbox)
    assert fake.valid_mail_token(mailbox.email, token)
    assert not fake.valid_mail_token("someone@else.example", token)
    assert gw.mailbox_access_token(mailbox)[0] == token  # cached until shortly before it expires


def test_verification_that_never_succeeds_fails_at_the_deadline_and_refunds_everything(rich_api, rich, fake):
    fake.never_verify = True
    ws, owner, _ = rich
    before = account_get(workspace=ws).available_micros
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        result = _purchase(rich_api, owner)
        status, seen = _run(result["operation_id"], traveller, max_steps=200)
    assert status == "failed"
    polls = [c for c in fake.calls if c[0] == "webResource.insert"]
    assert 3 < len(polls) < 200 / 2  # re-checked on a backoff, not every five minutes for three days
    assert not fake.users  # no mailbox is ever created on an unverified domain
    op = Operation.objects.get(pk=result["operation_id"])
    assert op.error["code"] == "provisioning_failed"
    assert op.refunded_micros == op.charged_micros == credits("1500") + 5 * credits("750")
    assert account_get(workspace=ws).available_micros == before
    assert LedgerEntry.objects.filter(account__workspace=ws, kind=LedgerEntry.Kind.REFUND).count() == 1


def test_license_refused_after_two_of_five_users_is_partial_with_exact_refund(rich_api, rich, fake):
    fake.user_limit = 2
    ws, owner, _ = rich
    before = account_get(workspace=ws).available_micros
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        result = _purchase(rich_api, owner)
        status, _ = _run(result["operation_id"], traveller)
    assert status == "partially_succeeded"
    statuses = sorted(Mailbox.objects.filter(workspace=ws).values_list("status", flat=True))
    assert statuses == ["active", "active", "failed", "failed", "failed"]
    op = Operation.objects.get(pk=result["operation_id"])
    assert op.error["code"] == "provisioning_incomplete"
    assert op.refunded_micros == 3 * credits("750")
    assert account_get(workspace=ws).available_micros == before - credits("1500") - 2 * credits("750")
    assert [c[0] for c in fake.calls].count("users.insert") == 5  # each refused once, permanently


def test_lost_answer_to_users_insert_is_read_back_not_repeated(rich_api, rich, fake):
    fake.lose_next = {"users.insert"}
    ws, owner, _ = rich
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        result = _purchase(rich_api, owner, emails_per_week=125)
        op_id = result["operation_id"]
        status, seen = _run(op_id, traveller, api=rich_api)
    assert status == "succeeded"
    assert any(s.get("error", {}).get("code") == "operation_unknown_state" for s in seen)  # said while reading back
    assert [c[0] for c in fake.calls].count("users.insert") == 1
    assert len(fake.users) == 1
    mailbox = Mailbox.objects.get(workspace=ws)
    assert mailbox.status == "active" and mailbox.vendor_ref == next(iter(fake.users))


def test_lost_answer_to_domains_insert_is_read_back(rich_api, rich, fake):
    fake.lose_next = {"domains.insert"}
    ws, owner, _ = rich
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        result = _purchase(rich_api, owner, emails_per_week=125)
        assert _run(result["operation_id"], traveller)[0] == "succeeded"
    assert [c[0] for c in fake.calls].count("domains.insert") == 1


def test_address_taken_by_someone_else_gets_the_next_free_variant(rich, fake):
    provider = gw.GoogleWorkspaceProvider()
    fake.domains["acmehq.com"] = {"domainName": "acmehq.com", "verified": True}
    fake.users["1"] = {"id": "1", "primaryEmail": "ann@acmehq.com", "suspended": False, "isMailboxSetup": True,
                       "externalIds": [], "name": {}, "_reads": 0}
    ext = provider.mailbox_create(domain_ref="acmehq.com", email="ann@acmehq.com", first_name="Ann", last_name="Lee",
                                  client_ref="op_1:ann@acmehq.com")
    assert ext.email == "ann2@acmehq.com"
    assert fake.users[ext.ref]["primaryEmail"] == "ann2@acmehq.com"


def test_collision_resolved_address_is_stored_on_the_mailbox(rich_api, rich, fake, monkeypatch):
    real_create = gw.GoogleWorkspaceProvider.mailbox_create

    def squatted(self, **kw):  # someone took ann@ before us
        domain = kw["email"].partition("@")[2]
        if kw["email"].startswith("ann@") and not any(u["primaryEmail"] == kw["email"] for u in fake.users.values()):
            fake.users["9"] = {"id": "9", "primaryEmail": kw["email"], "suspended": False, "isMailboxSetup": True,
                               "externalIds": [], "name": {}, "_reads": 0}
        assert domain
        return real_create(self, **kw)

    monkeypatch.setattr(gw.GoogleWorkspaceProvider, "mailbox_create", squatted)
    ws, owner, _ = rich
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        result = _purchase(rich_api, owner, emails_per_week=125)
        assert _run(result["operation_id"], traveller)[0] == "succeeded"
    mailbox = Mailbox.objects.get(workspace=ws)
    assert mailbox.email.startswith("ann2@") and mailbox.status == "active"


def test_unpaid_upkeep_suspends_in_workspace_and_renewal_resumes(rich_api, rich, fake):
    ws, owner, _ = rich
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        result = _purchase(rich_api, owner, emails_per_week=125)
        assert _run(result["operation_id"], traveller)[0] == "succeeded"
        mailbox = Mailbox.objects.get(workspace=ws)
        user = fake.users[mailbox.vendor_ref]
        # drain the balance, then let the month pass: upkeep cannot be charged
        from billing import services as billing

        billing.credits_debit(workspace=ws, amount=account_get(workspace=ws).available_micros,
                              kind=LedgerEntry.Kind.UPKEEP, verb="test", memo="drain", external_ref="drain")
        traveller.shift(timedelta(days=32))
        tasks.upkeep_sweep()
        mailbox.refresh_from_db()
        assert mailbox.status == "suspended" and mailbox.vendor_suspended
        assert user["suspended"] is True
        tasks.upkeep_sweep()  # nothing more to do: not suspended twice
        assert [c[0] for c in fake.calls].count("users.update") == 1
        billing.credits_grant(workspace=ws, amount=credits("1000"), memo="top-up")
        tasks.upkeep_sweep()
        mailbox.refresh_from_db()
        assert mailbox.status == "active" and not mailbox.vendor_suspended
        assert user["suspended"] is False


def test_removed_capacity_is_deleted_after_the_grace_period(rich_api, rich, fake, settings):
    from sending import byo

    settings.GOOGLE_WORKSPACE_DELETE_GRACE_DAYS = 30
    ws, owner, _ = rich
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        result = _purchase(rich_api, owner, emails_per_week=125)
        assert _run(result["operation_id"], traveller)[0] == "succeeded"
        mailbox = Mailbox.objects.get(workspace=ws)
        byo.mailbox_remove(mailbox=mailbox)
        assert services.mailbox_vendor_sync(mailbox_id=mailbox.id) == "waiting"
        traveller.shift(timedelta(days=29))
        tasks.upkeep_sweep()
        assert mailbox.vendor_ref in fake.users
        traveller.shift(timedelta(days=2))
        tasks.upkeep_sweep()
        assert mailbox.vendor_ref not in fake.users
        mailbox.refresh_from_db()
        assert mailbox.vendor_deleted_at is not None
        assert services.mailbox_vendor_sync(mailbox_id=mailbox.id) == "in_sync"
        assert [c[0] for c in fake.calls].count("users.delete") == 1


def test_token_refused_for_a_wrong_key_is_transient(fake, settings, tmp_path):
    other = dict(google_fake.SERVICE_ACCOUNT)
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    other["private_key"] = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
    path = tmp_path / "wrong.json"
    path.write_text(json.dumps(other))
    settings.GOOGLE_WORKSPACE_SERVICE_ACCOUNT_FILE = str(path)
    with pytest.raises(ProviderError) as exc:
        gw.delegated_token(subject=google_fake.ADMIN, scopes=gw.ADMIN_SCOPES, transport=fake.transport())
    assert not exc.value.permanent and "invalid_grant" in exc.value.message


def test_scope_not_delegated_is_refused_by_the_token_endpoint(fake):
    with pytest.raises(ProviderError) as exc:
        gw.delegated_token(subject=google_fake.ADMIN, scopes="https://www.googleapis.com/auth/drive",
                           transport=fake.transport())
    assert "unauthorized_client" in exc.value.message


def test_unconfigured_provider_is_transient(settings, fake):
    settings.GOOGLE_WORKSPACE_SERVICE_ACCOUNT_FILE = ""
    with pytest.raises(ProviderError) as exc:
        gw.delegated_token(subject=google_fake.ADMIN, scopes=gw.ADMIN_SCOPES)
    assert not exc.value.permanent


def test_server_error_on_a_write_is_an_unknown_outcome(fake, monkeypatch):
    def broken(request):
        if request.method == "POST" and "/users" in str(request.url):
            return httpx.Response(503, json={"error": {"code": 503, "message": "Backend Error",
                                                       "errors": [{"reason": "backendError"}]}})
        return fake(request)

    provider = gw.GoogleWorkspaceProvider(transport=httpx.MockTransport(broken))
    with pytest.raises(OutcomeUnknown):
        provider.mailbox_create(domain_ref="a.com", email="ann@a.com", first_name="Ann", last_name="Lee",
                                client_ref="op:ann@a.com")


def test_merge_keeps_other_records_and_replaces_mail_policy():
    existing = [DnsRecord("@", "A", "1.2.3.4"), DnsRecord("@", "MX", "eforward1.registrar-servers.com", 10),
                DnsRecord("@", "TXT", "v=spf1 include:spf.efwd.registrar-servers.com ~all"),
                DnsRecord("_dmarc", "TXT", "v=DMARC1; p=reject"), DnsRecord("@", "TXT", "keep-me")]
    wanted = [DnsRecord("@", "MX", "smtp.google.com", 1), DnsRecord("@", "TXT", "v=spf1 include:_spf.google.com ~all")]
    merged = gw.merge_records(existing, wanted)
    assert merged == [DnsRecord("@", "A", "1.2.3.4"), DnsRecord("@", "TXT", "keep-me"), *wanted]
    assert gw.merge_records(merged, wanted) == merged  # idempotent


def test_domain_status_writes_dns_once_and_is_idempotent(rich, fake):
    provider = gw.GoogleWorkspaceProvider()
    provider.registrar.domain_register(name="acmehq.com", client_ref="r")
    assert provider.domain_status(ref="acmehq.com").status == "pending"  # first verification attempt: not visible
    sets = [c for c in fake.calls if c[0] == "namecheap.domains.dns.setHosts"]
    assert provider.domain_status(ref="acmehq.com").status == "active"
    assert provider.domain_status(ref="acmehq.com").status == "active"
    assert [c for c in fake.calls if c[0] == "namecheap.domains.dns.setHosts"] == sets == sets[:1]
    assert SendingDomain.objects.count() == 0  # the provider itself writes nothing of ours


# --- the whole loop: a campaign sends through a bought Workspace mailbox with XOAUTH2, replies are read over IMAP


class Introspection:
    """RFC 7662 introspection in front of the fake Google token store, for the XOAUTH2 SMTP peer and Dovecot's
    `passdb oauth2` (tests/sending/oauth_mail_peers.py): active only for a live delegated mail token."""

    def __init__(self, vendors):
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        from urllib.parse import parse_qs

        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's name
                form = parse_qs(self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode())
                token = form.get("token", [""])[0]
                grant = vendors.tokens.get(token) or {}
                active = vendors.valid_mail_token(grant.get("sub", ""), token)
                outer.checked += 1
                body = json.dumps({"active": active, **({"email": grant["sub"], "sub": grant["sub"]} if active else {})})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body.encode())

            def log_message(self, *args):
                pass

        self.checked = 0
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/introspect"

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def workspace_peers(fake, settings, tmp_path):
    import shutil
    import tempfile
    from pathlib import Path

    from tests.sending import peers
    from tests.sending.oauth_env import DOVECOT_MISSING
    from tests.sending.oauth_mail_peers import OAuthDovecot, start_smtp_xoauth2

    if DOVECOT_MISSING:
        pytest.skip("Debian dovecot-imapd is not installed (make test / .ci/run install it)")
    introspection = Introspection(fake)
    (tmp_path / "tls").mkdir()
    cert, key = peers.self_signed(tmp_path / "tls")
    controller, handler = start_smtp_xoauth2([introspection.url], cert, key)
    root = Path(tempfile.mkdtemp(prefix="gw-dovecot-"))
    root.chmod(0o755)
    imap = OAuthDovecot(root=root, introspect_urls=[introspection.url]).start()
    settings.SENDING_TLS_CA_FILE = str(cert)
    settings.SENDING_ALLOW_PRIVATE_NETWORKS = True
    settings.GOOGLE_SMTP_HOST, settings.GOOGLE_SMTP_PORT, settings.GOOGLE_SMTP_SECURITY = "127.0.0.1", controller.port, "starttls"
    settings.GOOGLE_IMAP_HOST, settings.GOOGLE_IMAP_PORT, settings.GOOGLE_IMAP_SECURITY = imap.host, imap.port, "none"
    try:
        yield handler, imap, introspection
    finally:
        controller.stop()
        imap.stop()
        introspection.stop()
        shutil.rmtree(root, ignore_errors=True)


def test_campaign_sends_and_reads_through_a_bought_workspace_mailbox_with_xoauth2(rich_api, rich, fake,
                                                                                   workspace_peers):
    from campaigns.models import CampaignLead, SentMessage
    from replies.imap import mailbox_poll
    from replies.models import InboundMessage
    from sending import oauth
    from tests.campaigns.conftest import ALWAYS, run_tick
    from tests.campaigns.helpers import create, launch

    handler, imap, introspection = workspace_peers
    ws, owner, _ = rich
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        result = _purchase(rich_api, owner, emails_per_week=125)
        assert _run(result["operation_id"], traveller)[0] == "succeeded"
    mailbox = Mailbox.objects.get(workspace=ws)
    assert (mailbox.auth, mailbox.oauth_provider, mailbox.secret_encrypted) == ("oauth2", "google_workspace", "")
    # launch a campaign of two leads; the tick sends each first step once, authenticated with XOAUTH2 only
    cid = create(rich_api, sending_window=ALWAYS).json()["result"]["campaign_id"]
    assert launch(rich_api, cid, owner).status_code == 200
    run_tick()
    assert len(handler.messages) == 2
    assert all(m["authenticated"] and m["tls"] and m["mail_from"] == mailbox.email for m in handler.messages)
    assert handler.xoauth2_logins and all(login == (mailbox.email, True) for login in handler.xoauth2_logins)
    assert SentMessage.objects.filter(state="sent").count() == 2
    run_tick()
    assert len(handler.messages) == 2  # nothing sent twice
    # the mail token is refused once (say, the user was re-provisioned): dropped and a new grant signed
    fake.tokens.clear()
    oauth.token_invalidate(mailbox)
    # a prospect replies into the Workspace mailbox; the poller reads it over IMAP with XOAUTH2 and classifies it
    sent = SentMessage.objects.filter(state="sent").order_by("pk").first()
    lead = CampaignLead.objects.get(pk=sent.campaign_lead_id)
    token, _ = gw.mailbox_access_token(mailbox)
    raw = (f"From: {lead.email}\r\nTo: {mailbox.email}\r\nSubject: Re: hello\r\n"
           f"Message-ID: <reply-1@prospect.test>\r\nIn-Reply-To: {sent.message_id}\r\n\r\n"
           "Sounds interesting, can we talk on Thursday?\r\n").encode()
    imap.append(mailbox.email, token, raw)
    assert mailbox_poll(mailbox=mailbox) == 1
    stored = InboundMessage.objects.get(mailbox=mailbox)
    assert stored.source == "imap" and "reply-1@prospect.test" in stored.message_id
    assert mailbox_poll(mailbox=mailbox) == 0  # the same message is not read twice
    from replies.services import inbound_classify

    classified = inbound_classify(inbound_id=stored.pk)
    assert classified.classification == "interested"
    lead.refresh_from_db()
    assert lead.state != "active"  # a reply stops the sequence
    assert introspection.checked >= 2  # both peers asked the token server; no password was ever offered


def test_console_shows_bought_workspace_mailboxes_and_their_warm_up(rich_api, rich, fake):
    from django.test import Client

    ws, owner, _ = rich
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        result = _purchase(rich_api, owner, emails_per_week=125)
        assert _run(result["operation_id"], traveller)[0] == "succeeded"
        client = Client()
        client.force_login(owner)
        page = client.get("/console/mailboxes/").content.decode()
    mailbox = Mailbox.objects.get(workspace=ws)
    assert "bought (Google Workspace)" in page
    assert f"full volume from {(mailbox.activated_at + timedelta(days=10)).date().isoformat()}" in page
    assert f"Reconnect {mailbox.email}" not in page  # nothing to reconnect: no consent was given by a person

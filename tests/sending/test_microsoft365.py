"""setup_sending with `provider: "microsoft"` in live mode, end to end against local fakes of Microsoft's token
endpoint (client credentials), Microsoft Graph (domains, users, licences, mailbox settings) and Namecheap's XML API
(tests/sending/microsoft_fake.py), with exact refunds in the ledger on every failure path, and a campaign sent
through an XOAUTH2-only SMTP peer with the app-only token."""

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
from sending.providers import microsoft365 as ms
from sending.providers.base import DnsRecord, OutcomeUnknown, ProviderError
from sending.providers.namecheap import NamecheapProvider
from tests.sending import google_fake, microsoft_fake
from tests.sending.conftest import approve
from tests.sending.test_namecheap import REGISTRANT


@pytest.fixture
def fake(settings, monkeypatch):
    vendors = microsoft_fake.FakeMicrosoft()
    settings.SANDBOX = False
    settings.SENDING_PROVIDER = "google_workspace"  # the operator's default is Google; callers may ask for Microsoft
    settings.GOOGLE_WORKSPACE_SERVICE_ACCOUNT_FILE = ""
    settings.MICROSOFT365_TENANT_ID = microsoft_fake.TENANT
    settings.MICROSOFT365_CLIENT_ID = microsoft_fake.CLIENT_ID
    settings.MICROSOFT365_CLIENT_SECRET = microsoft_fake.CLIENT_SECRET
    settings.MICROSOFT365_LICENSE_SKU = microsoft_fake.SKU
    settings.MICROSOFT365_DMARC_RUA = "dmarc@operator.example"
    settings.NAMECHEAP_BASE_URL = google_fake.NAMECHEAP
    settings.NAMECHEAP_API_USER = settings.NAMECHEAP_USERNAME = "apiexample"
    settings.NAMECHEAP_API_KEY = "52b4c87ef7fd49cb96a915c0db68124"
    settings.NAMECHEAP_CLIENT_IP = "192.0.2.10"
    settings.NAMECHEAP_REGISTRANT = REGISTRANT
    transport = vendors.transport()
    monkeypatch.setattr(ms.Microsoft365Provider, "transport", transport)
    monkeypatch.setattr(NamecheapProvider, "transport", transport)
    ms._token_cache.clear()
    yield vendors
    ms._token_cache.clear()


BODY = {"emails_per_week": 625, "brand_hint": "Acme", "sender": {"first_name": "Ann", "last_name": "Lee"},
        "provider": "microsoft"}


def _purchase(api, owner, *, emails_per_week=625, key="ms-1"):
    body = {**BODY, "emails_per_week": emails_per_week}
    quote = api.post("/v1/setup_sending", body)
    assert quote.status_code == 200, quote.content
    token = quote.json()["result"]["confirmation_token"]
    approve(token, owner)
    r = api.post("/v1/setup_sending", {**body, "confirmation_token": token}, headers={"Idempotency-Key": key})
    assert r.status_code == 200, r.content
    return r.json()["result"]


def _run(op_id, traveller, *, api=None, max_steps=60, step=timedelta(minutes=61)):
    seen = []
    status = None
    for _ in range(max_steps):
        status = tasks.operation_advance(op_id)
        if api is not None:
            seen.append(api.get(f"/v1/operations/{op_id}").json())
        if status in Operation.FINAL:
            return status, seen
        traveller.shift(step)
    return status, seen


def _count(fake, kind):
    return [c[0] for c in fake.calls].count(kind)


def test_purchase_delivers_verified_domain_and_microsoft_mailboxes(rich_api, rich, fake):
    ws, owner, _ = rich
    before = account_get(workspace=ws).available_micros
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        quote = rich_api.post("/v1/setup_sending", BODY).json()["result"]
        assert quote["quote"]["provider"] == "microsoft" and "Microsoft" in quote["quote"]["ready_estimate"]
        result = _purchase(rich_api, owner)  # 5 mailboxes on 1 domain: 1500 + 5 x 750
        status, seen = _run(result["operation_id"], traveller, api=rich_api)
    assert status == "succeeded"
    [name] = result["domains"]
    waits = [d.get("waiting_for", "") for s in seen if s.get("status") == "waiting_external"
             for d in s["result"]["domains"]]
    assert any("not yet verified by Microsoft" in w for w in waits), waits
    # DNS through Namecheap: the parking CNAME kept, Microsoft's verification TXT, its mail records, DMARC, DKIM
    hosts = {(h["Name"], h["Type"], h["Address"], h["MXPref"] if h["Type"] == "MX" else "")
             for h in fake.registered[name]["hosts"]}
    code = fake.ms_domains[name]["_code"]
    assert ("www", "CNAME", "parkingpage.namecheap.com.", "") in hosts
    assert ("@", "TXT", f"MS={code}", "") in hosts
    assert ("@", "MX", f"{name.replace('.', '-')}.mail.protection.outlook.com", "0") in hosts
    assert ("@", "TXT", "v=spf1 include:spf.protection.outlook.com -all", "") in hosts
    assert ("autodiscover", "CNAME", "autodiscover.outlook.com", "") in hosts
    assert ("_dmarc", "TXT", "v=DMARC1; p=none; rua=mailto:dmarc@operator.example", "") in hosts
    assert not any(h[1] == "MX" and h[2].endswith(".msv1.invalid") for h in hosts)  # the verification MX is not used
    domain = SendingDomain.objects.get(name=name)
    assert (f"{domain.dkim_selector}._domainkey", "TXT", dkim_public_record(domain), "") in hosts
    assert fake.ms_domains[name]["isVerified"] and fake.ms_domains[name]["supportedServices"] == ["Email"]
    # five licensed users with the sender's name, a usage location and the client reference
    users = sorted(fake.ms_users.values(), key=lambda u: u["userPrincipalName"])
    assert [u["userPrincipalName"] for u in users] == sorted(result["mailboxes"])
    assert all(u["givenName"] == "Ann" and u["surname"] == "Lee" and u["usageLocation"] == "US" for u in users)
    assert all(u["assignedLicenses"] == [{"disabledPlans": [], "skuId": microsoft_fake.SKU}] for u in users)
    assert all(u["onPremisesExtensionAttributes"]["extensionAttribute15"].startswith(result["operation_id"])
               for u in users)
    mailboxes = Mailbox.objects.filter(workspace=ws).order_by("email")
    assert all(m.status == "active" and m.secret_encrypted == "" for m in mailboxes)
    assert all(m.smtp_host == "smtp.office365.com" and m.smtp_port == 587 and m.smtp_security == "starttls"
               and m.imap_host == "outlook.office365.com" and m.imap_port == 993 for m in mailboxes)
    assert all(m.auth == "oauth2" and m.oauth_provider == "microsoft365" for m in mailboxes)
    assert [m.vendor_ref for m in mailboxes] == [u["id"] for u in users]
    listed = rich_api.get("/v1/mailboxes").json()["mailboxes"]
    assert {m["mail_provider"] for m in listed} == {"microsoft"}
    assert Operation.objects.get(pk=result["operation_id"]).provider == "microsoft365"
    # nothing created twice; charged exactly setup + first month
    assert _count(fake, "namecheap.domains.create") == 1
    assert _count(fake, "graph.domains.create") == 1
    assert _count(fake, "graph.users.create") == 5
    assert account_get(workspace=ws).available_micros == before - credits("1500") - 5 * credits("750")
    assert not LedgerEntry.objects.filter(account__workspace=ws, kind=LedgerEntry.Kind.REFUND).exists()


def test_token_approved_for_one_provider_cannot_buy_the_other(rich_api, rich, fake):
    ws, owner, _ = rich
    token = rich_api.post("/v1/setup_sending", BODY).json()["result"]["confirmation_token"]
    approve(token, owner)
    r = rich_api.post("/v1/setup_sending", {**BODY, "provider": None, "confirmation_token": token},
                      headers={"Idempotency-Key": "swap"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "confirmation_invalid"
    assert r.json()["error"]["details"]["approved_params"]["provider"] == "microsoft"


def test_a_kind_the_operator_has_not_set_up_is_provider_unavailable(rich_api, rich, fake, settings):
    ws, _, _ = rich
    before = account_get(workspace=ws).available_micros
    r = rich_api.post("/v1/setup_sending", {**BODY, "provider": "google"})  # Google's key file is not configured
    assert r.status_code == 502 and r.json()["error"]["code"] == "provider_unavailable"
    assert "Google Workspace" in r.json()["error"]["message"]
    settings.MICROSOFT365_CLIENT_SECRET = ""
    r = rich_api.post("/v1/setup_sending", BODY)
    assert r.status_code == 502 and "Microsoft 365" in r.json()["error"]["message"]
    assert account_get(workspace=ws).available_micros == before


def test_verification_that_never_succeeds_fails_at_the_deadline_and_refunds_everything(rich_api, rich, fake):
    fake.never_verify = True
    ws, owner, _ = rich
    before = account_get(workspace=ws).available_micros
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        result = _purchase(rich_api, owner)
        status, _ = _run(result["operation_id"], traveller, max_steps=200)
    assert status == "failed"
    assert 3 < _count(fake, "graph.domains.verify") < 100  # re-checked on the operation's backoff
    assert not fake.ms_users  # no mailbox is ever created on an unverified domain
    op = Operation.objects.get(pk=result["operation_id"])
    assert op.error["code"] == "provisioning_failed"
    assert op.refunded_micros == op.charged_micros == credits("1500") + 5 * credits("750")
    assert account_get(workspace=ws).available_micros == before
    assert LedgerEntry.objects.filter(account__workspace=ws, kind=LedgerEntry.Kind.REFUND).count() == 1


def test_licence_refused_after_two_of_five_users_is_partial_with_exact_refund(rich_api, rich, fake):
    fake.license_limit = 2
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
    assert _count(fake, "graph.users.create") == 5  # each refused once, permanently
    assert len(fake.ms_users) == 2  # the three unlicensed users were deleted again
    assert _count(fake, "graph.users.delete") == 3


def test_lost_answer_to_users_create_is_read_back_not_repeated(rich_api, rich, fake):
    fake.lose_next = {"graph.users.create"}
    ws, owner, _ = rich
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        result = _purchase(rich_api, owner, emails_per_week=125)
        status, seen = _run(result["operation_id"], traveller, api=rich_api)
    assert status == "succeeded"
    assert any(s.get("error", {}).get("code") == "operation_unknown_state" for s in seen)
    assert _count(fake, "graph.users.create") == 1
    [user] = fake.ms_users.values()
    assert user["assignedLicenses"]  # licensed when read back, since the create's own licence step never ran
    mailbox = Mailbox.objects.get(workspace=ws)
    assert mailbox.status == "active" and mailbox.vendor_ref == user["id"]


def test_lost_answer_to_domains_create_is_read_back(rich_api, rich, fake):
    fake.lose_next = {"graph.domains.create"}
    ws, owner, _ = rich
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        result = _purchase(rich_api, owner, emails_per_week=125)
        assert _run(result["operation_id"], traveller)[0] == "succeeded"
    assert _count(fake, "graph.domains.create") == 1


def test_address_taken_by_someone_else_gets_the_next_free_variant(rich, fake):
    provider = ms.Microsoft365Provider()
    fake.ms_domains["acmehq.com"] = {"id": "acmehq.com", "isVerified": True, "supportedServices": ["Email"],
                                     "_code": "ms1"}
    fake.ms_users["u1"] = {"id": "u1", "userPrincipalName": "ann@acmehq.com", "accountEnabled": True,
                           "assignedLicenses": [], "onPremisesExtensionAttributes": {}, "_reads": 0}
    ext = provider.mailbox_create(domain_ref="acmehq.com", email="ann@acmehq.com", first_name="Ann", last_name="Lee",
                                  client_ref="op_1:ann@acmehq.com")
    assert ext.email == "ann2@acmehq.com"
    assert fake.ms_users[ext.ref]["userPrincipalName"] == "ann2@acmehq.com"


def test_unpaid_upkeep_disables_the_user_and_renewal_enables_it(rich_api, rich, fake):
    from billing import services as billing

    ws, owner, _ = rich
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        result = _purchase(rich_api, owner, emails_per_week=125)
        assert _run(result["operation_id"], traveller)[0] == "succeeded"
        mailbox = Mailbox.objects.get(workspace=ws)
        user = fake.ms_users[mailbox.vendor_ref]
        billing.credits_debit(workspace=ws, amount=account_get(workspace=ws).available_micros,
                              kind=LedgerEntry.Kind.UPKEEP, verb="test", memo="drain", external_ref="drain")
        traveller.shift(timedelta(days=32))
        tasks.upkeep_sweep()
        mailbox.refresh_from_db()
        assert mailbox.status == "suspended" and mailbox.vendor_suspended
        assert user["accountEnabled"] is False
        tasks.upkeep_sweep()
        assert _count(fake, "graph.users.update") == 1
        billing.credits_grant(workspace=ws, amount=credits("1000"), memo="top-up")
        tasks.upkeep_sweep()
        mailbox.refresh_from_db()
        assert mailbox.status == "active" and user["accountEnabled"] is True


def test_removed_capacity_is_deleted_after_the_grace_period(rich_api, rich, fake, settings):
    from sending import byo

    settings.MICROSOFT365_DELETE_GRACE_DAYS = 30
    ws, owner, _ = rich
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        result = _purchase(rich_api, owner, emails_per_week=125)
        assert _run(result["operation_id"], traveller)[0] == "succeeded"
        mailbox = Mailbox.objects.get(workspace=ws)
        byo.mailbox_remove(mailbox=mailbox)
        traveller.shift(timedelta(days=29))
        tasks.upkeep_sweep()
        assert mailbox.vendor_ref in fake.ms_users
        traveller.shift(timedelta(days=2))
        tasks.upkeep_sweep()
        assert mailbox.vendor_ref not in fake.ms_users
        assert services.mailbox_vendor_sync(mailbox_id=mailbox.id) == "in_sync"


def test_wrong_client_secret_is_transient_and_names_the_error(fake, settings):
    settings.MICROSOFT365_CLIENT_SECRET = "wrong"
    with pytest.raises(ProviderError) as exc:
        ms.app_token(scope=ms.GRAPH_SCOPE, transport=fake.transport())
    assert not exc.value.permanent and "invalid_client" in exc.value.message


def test_server_error_on_a_write_is_an_unknown_outcome(fake):
    def broken(request):
        if request.method == "POST" and str(request.url).endswith("/users"):
            return httpx.Response(503, json={"error": {"code": "serviceNotAvailable", "message": "try later"}})
        return fake(request)

    provider = ms.Microsoft365Provider(transport=httpx.MockTransport(broken))
    with pytest.raises(OutcomeUnknown):
        provider.mailbox_create(domain_ref="a.com", email="ann@a.com", first_name="Ann", last_name="Lee",
                                client_ref="op:ann@a.com")


def test_graph_records_become_registrar_hosts_and_merge_keeps_the_rest():
    records = [{"recordType": "Mx", "label": "acme.com", "mailExchange": "acme-com.mail.protection.outlook.com",
                "preference": 0, "ttl": 3600},
               {"recordType": "CName", "label": "autodiscover.acme.com", "canonicalName": "autodiscover.outlook.com",
                "ttl": 3600},
               {"recordType": "Srv", "label": "_sip._tls.acme.com", "nameTarget": "sipdir.online.lync.com"}]
    wanted = ms.graph_records(records, name="acme.com")
    assert wanted == [DnsRecord("@", "MX", "acme-com.mail.protection.outlook.com", 0, 3600),
                      DnsRecord("autodiscover", "CNAME", "autodiscover.outlook.com", None, 3600)]
    existing = [DnsRecord("@", "A", "1.2.3.4"), DnsRecord("@", "MX", "eforward1.registrar-servers.com", 10),
                DnsRecord("autodiscover", "A", "5.6.7.8"), DnsRecord("@", "TXT", "keep-me")]
    merged = ms.merge_records(existing, wanted)
    assert merged == [DnsRecord("@", "A", "1.2.3.4"), DnsRecord("@", "TXT", "keep-me"), *wanted]
    assert ms.merge_records(merged, wanted) == merged


def test_sandbox_purchase_may_choose_microsoft_and_labels_its_mailboxes(rich_api, rich, settings):
    settings.SANDBOX = True
    settings.SENDING_PROVIDER = "sandbox"
    ws, owner, _ = rich
    api = rich_api
    quote = api.post("/v1/setup_sending", {"emails_per_week": 125, "provider": "microsoft"}).json()["result"]
    assert quote["quote"]["provider"] == "microsoft" and "(sandbox)" in quote["quote"]["ready_estimate"]
    approve(quote["confirmation_token"], owner)
    r = api.post("/v1/setup_sending", {"emails_per_week": 125, "provider": "microsoft",
                                       "confirmation_token": quote["confirmation_token"]},
                 headers={"Idempotency-Key": "sb-ms"})
    assert r.status_code == 200, r.content
    mailbox = Mailbox.objects.get(workspace=ws)
    assert mailbox.provider == "sandbox" and mailbox.mail_provider == "microsoft"
    assert api.get("/v1/mailboxes").json()["mailboxes"][0]["mail_provider"] == "microsoft"
    default = api.post("/v1/setup_sending", {"emails_per_week": 125}).json()["result"]
    assert default["quote"]["provider"] == "sandbox"


# --- the whole loop: a campaign sends through a bought Microsoft 365 mailbox with an app-only XOAUTH2 token ---


@pytest.fixture
def app_only_smtp(fake, settings, tmp_path):
    from tests.sending import peers
    from tests.sending.oauth_mail_peers import XOAuth2Handler, refuse_passwords

    class AppOnlyHandler(XOAuth2Handler):
        """Exchange Online's check of an app-only XOAUTH2 login: a live token for outlook.office365.com and a
        licensed, enabled mailbox of the `user=` address (the token itself names no user)."""

        async def auth_XOAUTH2(self, server, args):
            import base64

            from aiosmtpd.smtp import MISSING, AuthResult

            blob = base64.b64decode(args[1]) if len(args) == 2 else await server.challenge_auth("")
            if blob is MISSING:
                return AuthResult(success=False, handled=True)
            fields = dict(part.split("=", 1) for part in blob.decode().split("\x01") if "=" in part)
            user, bearer = fields.get("user", ""), fields.get("auth", "")
            ok = fake.valid_mail_token(user, bearer.removeprefix("Bearer "))
            self.xoauth2_logins.append((user, ok))
            if ok:
                return AuthResult(success=True, handled=False, auth_data=user)
            return AuthResult(success=False, handled=False, message="535 5.7.3 Authentication unsuccessful")

    import ssl

    from aiosmtpd.controller import Controller

    (tmp_path / "tls").mkdir()
    cert, key = peers.self_signed(tmp_path / "tls")
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(str(cert), str(key))
    handler = AppOnlyHandler([])
    controller = Controller(handler, hostname="127.0.0.1", port=peers.free_port(), tls_context=ctx,
                            require_starttls=True, authenticator=refuse_passwords, auth_required=True,
                            auth_require_tls=True, server_hostname="localhost")
    controller.start()
    settings.SENDING_TLS_CA_FILE = str(cert)
    settings.SENDING_ALLOW_PRIVATE_NETWORKS = True
    settings.MICROSOFT_SMTP_HOST, settings.MICROSOFT_SMTP_PORT = "127.0.0.1", controller.port
    settings.MICROSOFT_SMTP_SECURITY = "starttls"
    try:
        yield handler
    finally:
        controller.stop()


def test_campaign_sends_through_a_bought_microsoft_mailbox_with_an_app_only_token(rich_api, rich, fake,
                                                                                   app_only_smtp):
    from campaigns.models import SentMessage
    from tests.campaigns.conftest import ALWAYS, run_tick
    from tests.campaigns.helpers import create, launch

    handler = app_only_smtp
    ws, owner, _ = rich
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        result = _purchase(rich_api, owner, emails_per_week=125)
        assert _run(result["operation_id"], traveller)[0] == "succeeded"
    mailbox = Mailbox.objects.get(workspace=ws)
    assert (mailbox.auth, mailbox.oauth_provider) == ("oauth2", "microsoft365")
    cid = create(rich_api, sending_window=ALWAYS).json()["result"]["campaign_id"]
    assert launch(rich_api, cid, owner).status_code == 200
    run_tick()
    assert len(handler.messages) == 2
    assert all(m["authenticated"] and m["tls"] and m["mail_from"] == mailbox.email for m in handler.messages)
    assert handler.xoauth2_logins and all(login == (mailbox.email, True) for login in handler.xoauth2_logins)
    assert SentMessage.objects.filter(state="sent").count() == 2
    # the token the peer accepted is the app-only Exchange Online token, not a Graph one
    assert any(g["scope"] == microsoft_fake.MAIL_SCOPE for g in fake.ms_tokens.values())
    run_tick()
    assert len(handler.messages) == 2  # nothing sent twice


def test_console_shows_bought_microsoft_mailboxes(rich_api, rich, fake):
    from django.test import Client

    ws, owner, _ = rich
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        result = _purchase(rich_api, owner, emails_per_week=125)
        assert _run(result["operation_id"], traveller)[0] == "succeeded"
        client = Client()
        client.force_login(owner)
        page = client.get("/console/mailboxes/").content.decode()
    assert "bought (Microsoft 365)" in page



def test_mailbox_token_source_is_the_app_only_exchange_token(rich_api, rich, fake):
    """What the transport and the IMAP poller ask for an XOAUTH2 login (`sending.oauth.access_token`)."""
    from sending import oauth

    ws, owner, _ = rich
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        result = _purchase(rich_api, owner, emails_per_week=125)
        assert _run(result["operation_id"], traveller)[0] == "succeeded"
    mailbox = Mailbox.objects.get(workspace=ws)
    token = oauth.access_token(mailbox)
    assert fake.valid_mail_token(mailbox.email, token)
    assert not fake.valid_mail_token("someone@else.example", token)
    assert oauth.access_token(mailbox) == token  # cached until shortly before it expires
    oauth.token_invalidate(mailbox)  # a server refused it: a new one is asked for
    assert oauth.access_token(mailbox) != token

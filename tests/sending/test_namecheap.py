"""The Namecheap adapter against recorded responses (written from Namecheap's public API documentation)."""

from datetime import timedelta
from pathlib import Path

import httpx
import pytest
import time_machine
from django.utils import timezone

from billing.services import account_get
from sending import tasks
from sending.models import Operation, SendingDomain
from sending.providers.base import OutcomeUnknown, ProviderError
from sending.providers.namecheap import NamecheapProvider
from tests.sending.conftest import approve

RECORDED = Path(__file__).parent / "recorded"
REGISTRANT = {"FirstName": "Ann", "LastName": "Lee", "Address1": "1 Main St", "City": "Austin",
              "StateProvince": "TX", "PostalCode": "78701", "Country": "US", "Phone": "+1.5125550100",
              "EmailAddress": "ann@example.com"}


@pytest.fixture(autouse=True)
def namecheap_settings(settings):
    settings.NAMECHEAP_BASE_URL = "https://api.sandbox.namecheap.com/xml.response"
    settings.NAMECHEAP_API_USER = "apiexample"
    settings.NAMECHEAP_API_KEY = "52b4c87ef7fd49cb96a915c0db68124"
    settings.NAMECHEAP_USERNAME = "apiexample"
    settings.NAMECHEAP_CLIENT_IP = "192.0.2.10"
    settings.NAMECHEAP_REGISTRANT = REGISTRANT


class Vendor:
    """A MockTransport answering each Command with a recorded file (or a scripted failure)."""

    def __init__(self, **overrides):
        self.requests: list[httpx.Request] = []
        self.overrides = overrides

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        command = request.url.params.get("Command") or dict(httpx.QueryParams(request.content.decode()))["Command"]
        action = self.overrides.get(command)
        if isinstance(action, list):
            action = action.pop(0) if len(action) > 1 else action[0]
        if action == "read_timeout":
            raise httpx.ReadTimeout("timed out", request=request)
        if action == "connect_error":
            raise httpx.ConnectError("refused", request=request)
        if action == "http_502":
            return httpx.Response(502, text="Bad Gateway")
        name = action or command.rsplit(".", 1)[1].lower()
        return httpx.Response(200, content=(RECORDED / f"{name}.xml").read_bytes(),
                              headers={"Content-Type": "text/xml"})

    def provider(self):
        return NamecheapProvider(transport=httpx.MockTransport(self))


def test_check_keeps_available_non_premium_names_and_sends_global_parameters():
    vendor = Vendor()
    names = ["getacme.com", "tryacme.com", "acmehq.com", "meetacme.com"]
    assert vendor.provider().domains_available(names) == ["acmehq.com", "meetacme.com"]
    [req] = vendor.requests
    assert str(req.url).startswith("https://api.sandbox.namecheap.com/xml.response?")
    p = req.url.params
    assert (p["ApiUser"], p["UserName"], p["ClientIp"], p["Command"]) == (
        "apiexample", "apiexample", "192.0.2.10", "namecheap.domains.check")
    assert p["DomainList"] == ",".join(names)


def test_create_sends_every_contact_role_and_returns_pending():
    vendor = Vendor()
    ext = vendor.provider().domain_register(name="acmehq.com", client_ref="op_x:acmehq.com")
    assert (ext.ref, ext.status) == ("acmehq.com", "pending")
    assert "1291740" in ext.detail
    p = vendor.requests[0].url.params
    assert p["DomainName"] == "acmehq.com" and p["Years"] == "1"
    for role in ("Registrant", "Tech", "Admin", "AuxBilling"):
        assert p[f"{role}EmailAddress"] == "ann@example.com"
        assert p[f"{role}Country"] == "US"


def test_api_error_is_permanent():
    with pytest.raises(ProviderError) as exc:
        Vendor(**{"namecheap.domains.create": "create_error"}).provider().domain_register(name="acmehq.com",
                                                                                          client_ref="r")
    assert exc.value.permanent and "2033409" in exc.value.message


@pytest.mark.parametrize("failure", ["read_timeout", "http_502"])
def test_lost_answer_to_create_is_unknown(failure):
    with pytest.raises(OutcomeUnknown):
        Vendor(**{"namecheap.domains.create": failure}).provider().domain_register(name="acmehq.com", client_ref="r")


def test_connect_error_is_transient_and_reads_are_never_unknown():
    with pytest.raises(ProviderError) as exc:
        Vendor(**{"namecheap.domains.create": "connect_error"}).provider().domain_register(name="a.com", client_ref="r")
    assert not exc.value.permanent
    with pytest.raises(ProviderError) as read:
        Vendor(**{"namecheap.domains.check": "read_timeout"}).provider().domains_available(["a.com"])
    assert not read.value.permanent


def test_missing_registrant_fields_fail_permanently(settings):
    settings.NAMECHEAP_REGISTRANT = {"FirstName": "Ann"}
    with pytest.raises(ProviderError) as exc:
        Vendor().provider().domain_register(name="acmehq.com", client_ref="r")
    assert exc.value.permanent and "LastName" in exc.value.message


def test_lookup_and_status():
    provider = Vendor().provider()
    assert provider.domain_lookup(name="acmehq.com", client_ref="r").ref == "acmehq.com"
    assert provider.domain_lookup(name="other.com", client_ref="r") is None
    assert provider.domain_status(ref="acmehq.com").status == "active"


def test_unconfigured_is_transient(settings):
    settings.NAMECHEAP_API_KEY = ""
    with pytest.raises(ProviderError) as exc:
        Vendor().provider().domains_available(["a.com"])
    assert not exc.value.permanent


class RecordedNamecheap(NamecheapProvider):
    vendor: Vendor = None

    def __init__(self):
        super().__init__(transport=httpx.MockTransport(self.vendor))


def test_purchase_through_namecheap_registers_domain_and_refunds_mailboxes(rich_api, rich, settings):
    """End to end through the state machine: the create answer is lost once, the domain is looked up (not bought
    twice), it becomes active, and the mailboxes Namecheap cannot host are refunded."""
    RecordedNamecheap.vendor = Vendor(**{"namecheap.domains.create": ["read_timeout", "create"]})
    settings.SENDING_PROVIDER = "tests.sending.test_namecheap.RecordedNamecheap"
    ws, owner, _ = rich
    body = {"emails_per_week": 250, "brand_hint": "Acme"}  # 2 mailboxes, 1 domain: 1500 + 1500
    before = account_get(workspace=ws).available_micros
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        token = rich_api.post("/v1/setup_sending", body).json()["result"]["confirmation_token"]
        assert rich_api.post("/v1/setup_sending", body).json()["result"]["quote"]["ready_estimate"] == "24 to 48 hours"
        approve(token, owner)
        r = rich_api.post("/v1/setup_sending", {**body, "confirmation_token": token}, headers={"Idempotency-Key": "nc"})
        assert r.status_code == 200, r.content
        assert r.json()["result"]["domains"] == ["acmehq.com"]
        op_id = r.json()["result"]["operation_id"]
        for _ in range(12):
            status = tasks.operation_advance(op_id)
            if status in Operation.FINAL:
                break
            traveller.shift(timedelta(minutes=6))
    assert status == "partially_succeeded"
    commands = [q.url.params["Command"] for q in RecordedNamecheap.vendor.requests]
    assert commands.count("namecheap.domains.create") == 1
    assert "namecheap.domains.getList" in commands
    assert SendingDomain.objects.get(name="acmehq.com").status == "active"
    assert account_get(workspace=ws).available_micros == before - 1500 * 10**6  # the two mailboxes refunded


def test_get_hosts_reads_the_documented_answer():
    vendor = Vendor()
    records = vendor.provider().dns_hosts_get(name="domain.com")
    assert [(r.host, r.type, r.address, r.ttl) for r in records] == [
        ("@", "A", "1.2.3.4", 1800), ("www", "A", "122.23.3.7", 1800)]
    p = vendor.requests[0].url.params
    assert (p["Command"], p["SLD"], p["TLD"]) == ("namecheap.domains.dns.getHosts", "domain", "com")


def test_set_hosts_posts_every_record_as_a_form():
    from urllib.parse import parse_qs

    from sending.providers.base import DnsRecord

    vendor = Vendor()
    vendor.provider().dns_hosts_set(name="domain51.com", records=[
        DnsRecord(host="@", type="TXT", address="v=spf1 include:_spf.google.com ~all"),
        DnsRecord(host="@", type="MX", address="smtp.google.com", mx_pref=1, ttl=300)])
    [req] = vendor.requests
    assert req.method == "POST"
    form = {k: v[0] for k, v in parse_qs(req.content.decode()).items()}
    assert form["Command"] == "namecheap.domains.dns.setHosts" and form["ApiKey"]
    assert (form["SLD"], form["TLD"], form["EmailType"]) == ("domain51", "com", "MX")
    assert (form["HostName1"], form["RecordType1"], form["Address1"]) == ("@", "TXT", "v=spf1 include:_spf.google.com ~all")
    assert (form["RecordType2"], form["Address2"], form["MXPref2"], form["TTL2"]) == ("MX", "smtp.google.com", "1", "300")
    assert "MXPref1" not in form

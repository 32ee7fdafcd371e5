"""The verifier engine against real peers: dnslib DNS and scripted aiosmtpd MX servers on loopback."""

import threading

import pytest

from leads.verification import engine
from leads.verification.engine import DictMemory, address_allowed, verify
from tests.verification.peers import Script, banner, self_signed_context, tarpit


def run(address, memory=None):
    return verify(address, memory=memory or DictMemory())


def test_valid_mailbox_full_dialogue(net):
    script = net.simple("acme.com", users=["jane@acme.com"])
    res = run("Jane@Acme.com")
    assert (res.status, res.reason, res.mx_host) == ("valid", "accepted", "mx1.acme.com")
    assert res.email == "Jane@Acme.com" and res.key == "jane@acme.com"
    assert not (res.is_catch_all_domain or res.is_disposable or res.is_role_account or res.is_free_provider)
    assert script.helo == ["probe.service.test"]
    assert script.mail_from == ["verify@service.test"]
    # a random address first (catch-all detection), then the address itself
    assert len(script.rcpts) == 2 and script.rcpts[0].startswith("nx") and script.rcpts[1] == "Jane@acme.com"
    assert script.connections == 1 and script.quits == 1


def test_user_unknown_is_invalid(net):
    net.simple("acme.com", users=["jane@acme.com"])
    res = run("john@acme.com")
    assert (res.status, res.reason, res.smtp_code) == ("invalid", "user_unknown", 550)
    assert "5.1.1" in res.smtp_message


@pytest.mark.parametrize("address", ["", "not-an-email", "a@b@c.com", "jane@", "@acme.com", "jane@acme..com",
                                     "x" * 300 + "@acme.com"])
def test_malformed_is_invalid_without_any_lookup(net, address):
    res = run(address)
    assert (res.status, res.reason) == ("invalid", "invalid_syntax")
    assert net.zone.queries == 0


def test_disposable_domain_is_invalid_without_smtp(net):
    res = run("someone@mailinator.com")
    assert (res.status, res.reason, res.is_disposable) == ("invalid", "disposable", True)
    assert net.zone.queries == 0
    assert run("x@sub.mailinator.com").is_disposable  # parents of a listed domain count too


def test_nxdomain_is_invalid(net):
    res = run("jane@nowhere-at-all.com")
    assert (res.status, res.reason, res.mx_host) == ("invalid", "no_domain", None)


def test_null_mx_is_invalid(net):
    net.zone.mx("nomail.com", (0, "."))
    net.zone.a("nomail.com", "127.0.0.9")  # an A record does not matter once a null MX says no mail
    res = run("jane@nomail.com")
    assert (res.status, res.reason) == ("invalid", "null_mx")


def test_no_mx_falls_back_to_the_domain_address(net):
    ip, script = net.server(users=["jane@implicit.com"])
    net.zone.a("implicit.com", ip)
    res = run("jane@implicit.com")
    assert (res.status, res.reason, res.mx_host) == ("valid", "accepted", "implicit.com")
    assert script.connections == 1


def test_neither_mx_nor_address_is_invalid(net):
    net.zone.txt("textonly.com", "v=spf1 -all")
    res = run("jane@textonly.com")
    assert (res.status, res.reason) == ("invalid", "no_mail_host")


def test_mx_hosts_that_do_not_exist_are_invalid(net):
    net.zone.mx("dangling.com", (10, "mx.gone.dangling-nx.com"))
    res = run("jane@dangling.com")
    assert (res.status, res.reason) == ("invalid", "no_mail_host")


def test_dns_failure_is_unknown(net):
    net.zone.servfail.add("broken.com")
    res = run("jane@broken.com")
    assert (res.status, res.reason) == ("unknown", "dns_error")


def test_catch_all_unknown_then_valid_with_evidence_and_remembered(net):
    script = net.simple("catchall.com", catch_all=True)
    memory = DictMemory()
    res = run("jane@catchall.com", memory)
    assert (res.status, res.reason, res.is_catch_all_domain) == ("catch_all_unknown", "catch_all", True)
    assert memory.domains == {"catchall.com": True}
    memory.evidence.add("bob@catchall.com")
    res = run("Bob@catchall.com", memory)
    assert (res.status, res.reason, res.is_catch_all_domain) == ("catch_all_valid", "delivery_evidence", True)
    # the second probe skipped the random address: the domain was remembered
    assert len(script.rcpts) == 3 and not script.rcpts[2].startswith("nx")


def test_remembered_non_catch_all_skips_the_random_probe(net):
    script = net.simple("acme.com", users=["jane@acme.com"])
    memory = DictMemory()
    assert run("jane@acme.com", memory).status == "valid"
    assert memory.domains == {"acme.com": False}
    assert run("jane@acme.com", memory).status == "valid"
    assert len(script.rcpts) == 3


@pytest.mark.parametrize("local", ["info", "sales", "no-reply", "Support+eu"])
def test_deliverable_role_account_is_risky(net, local):
    net.simple("acme.com", catch_all=False, rcpt=lambda a, s: "250 OK" if not a.startswith("nx") else "550 5.1.1 no")
    res = run(f"{local}@acme.com")
    assert (res.status, res.reason, res.is_role_account) == ("risky", "role_account", True)


def test_role_account_at_catch_all_without_evidence_stays_catch_all_unknown(net):
    net.simple("catchall.com", catch_all=True)
    res = run("info@catchall.com")
    assert (res.status, res.is_role_account) == ("catch_all_unknown", True)


@pytest.mark.parametrize("reply", [
    "452 4.2.2 The email account that you tried to reach is over quota",
    "552 5.2.2 Mailbox full",
    "552 Requested mail action aborted: mailbox full",
])
def test_full_mailbox_is_risky(net, reply):
    net.simple("acme.com", rcpt=lambda a, s: "550 5.1.1 unknown" if a.startswith("nx") else reply)
    res = run("jane@acme.com")
    assert (res.status, res.reason) == ("risky", "mailbox_full")


def test_free_provider_flag(net):
    net.zone.mx("gmail.com", (5, "gmail-smtp-in.l.google.com"))
    ip, _ = net.server(users=["jane.doe@gmail.com"])
    net.zone.a("gmail-smtp-in.l.google.com", ip)
    res = run("jane.doe@gmail.com")
    assert (res.status, res.is_free_provider) == ("valid", True)


@pytest.mark.parametrize("where,reply", [
    ("rcpt", "550 5.7.1 Service unavailable; Client host [127.0.0.1] blocked using zen.spamhaus.org"),
    ("rcpt", "554 5.7.1 <jane@acme.com>: Relay access denied"),
    ("rcpt", "550 Your IP has a poor reputation"),
    ("mail", "553 5.7.1 Sender address rejected: not owned by user"),
    ("mail", "550 5.7.26 Unauthenticated email is not accepted due to domain's DMARC policy"),
])
def test_policy_rejection_of_the_prober_is_unknown_blocked(net, where, reply):
    if where == "mail":
        script = net.simple("acme.com", users=["jane@acme.com"], mail_reply=reply)
    else:
        script = net.simple("acme.com", rcpt=lambda a, s: reply)
    res = run("jane@acme.com")
    assert (res.status, res.reason, res.mx_host) == ("unknown", "blocked", "mx1.acme.com")
    assert res.smtp_message.startswith(reply[:20])
    assert script.quits == 1  # a refused prober still says goodbye


def test_huge_input_is_rejected_before_parsing(net):
    res = run("a" * 5_000_000 + "@acme.com")
    assert (res.status, res.reason) == ("invalid", "invalid_syntax")


def test_blocking_banner_is_unknown_blocked(net):
    ip = net.ip()
    net.smtp.raw(ip, banner("554 mx.acme.com ESMTP not accepting mail from 127.0.0.1: listed at Spamhaus"))
    net.domain("acme.com", ip)
    assert (run("jane@acme.com").status, run("jane@acme.com").reason) == ("unknown", "blocked")


def test_greylisting_is_retried_once_and_then_accepted(net):
    def rcpt(address, script):
        if script.connections == 1:
            return "451 4.7.1 Greylisting in action, please come back later"
        return "250 OK" if address == "jane@grey.com" else "550 5.1.1 unknown user"
    script = net.simple("grey.com", rcpt=rcpt)
    slept = []
    res = verify("jane@grey.com", memory=DictMemory(), sleep=slept.append)
    assert (res.status, res.reason) == ("valid", "accepted")
    assert script.connections == 2 and slept == [0.0]


def test_greylisting_twice_is_unknown(net, settings):
    settings.VERIFIER_GREYLIST_RETRY_SECONDS = 7
    script = net.simple("grey.com", rcpt=lambda a, s: "450 4.2.0 <x>: Recipient address rejected: Greylisted")
    slept = []
    res = verify("jane@grey.com", memory=DictMemory(), sleep=slept.append)
    assert (res.status, res.reason) == ("unknown", "greylisted")
    assert script.connections == 2 and slept == [7.0]


def test_failover_to_next_mx_when_primary_refuses(net):
    dead_ip = net.ip()  # nothing listens there
    ip, script = net.server(users=["jane@acme.com"])
    net.domain("acme.com", dead_ip, ip)
    res = run("jane@acme.com")
    assert (res.status, res.mx_host) == ("valid", "mx2.acme.com")


def test_failover_after_banner_timeout(net, settings):
    settings.VERIFIER_TIMEOUT_SECONDS = 1.0
    slow = net.ip()
    net.smtp.raw(slow, tarpit)
    ip, script = net.server(users=["jane@acme.com"])
    net.domain("acme.com", slow, ip)
    res = run("jane@acme.com")
    assert (res.status, res.mx_host) == ("valid", "mx2.acme.com")
    assert net.smtp.counters[slow] == 1


def test_banner_that_never_comes_is_unknown_timeout(net, settings):
    settings.VERIFIER_TIMEOUT_SECONDS = 0.2
    slow = net.ip()
    net.smtp.raw(slow, tarpit)
    net.domain("acme.com", slow)
    res = run("jane@acme.com")
    assert (res.status, res.reason, res.mx_host) == ("unknown", "timeout", "mx1.acme.com")


def test_every_mx_unreachable_is_unknown(net):
    net.domain("acme.com", net.ip(), net.ip())
    res = run("jane@acme.com")
    assert (res.status, res.reason) == ("unknown", "unreachable")


def test_temporary_banner_fails_over(net):
    busy = net.ip()
    net.smtp.raw(busy, banner("421 4.3.2 Service not available, closing transmission channel"))
    ip, _ = net.server(users=["jane@acme.com"])
    net.domain("acme.com", busy, ip)
    assert run("jane@acme.com").mx_host == "mx2.acme.com"


def test_starttls_is_used_when_offered(net):
    ip, script = net.server(Script(users=["jane@tls.com"]), tls=self_signed_context())
    net.domain("tls.com", ip)
    res = run("jane@tls.com")
    assert (res.status, res.reason) == ("valid", "accepted")
    assert script.tls_sessions == 1
    assert script.helo == ["probe.service.test", "probe.service.test"]  # EHLO again after STARTTLS


def test_private_address_guard_blocks_before_connecting(net, settings):
    settings.VERIFIER_ALLOW_PRIVATE_NETWORKS = False
    script = net.simple("acme.com", users=["jane@acme.com"])
    res = run("jane@acme.com")
    assert (res.status, res.reason, res.mx_host) == ("unknown", "blocked_address", "mx1.acme.com")
    assert script.connections == 0
    settings.VERIFIER_ALLOW_PRIVATE_NETWORKS = True
    assert run("jane@acme.com").status == "valid"
    assert script.connections == 1


@pytest.mark.parametrize("ip,allowed", [
    ("127.0.0.1", False), ("10.1.2.3", False), ("172.16.0.1", False), ("192.168.1.1", False),
    ("169.254.169.254", False), ("100.64.0.1", False), ("0.0.0.0", False), ("224.0.0.1", False),
    ("::1", False), ("fe80::1", False), ("fc00::1", False), ("::ffff:10.0.0.1", False),
    ("64:ff9b::a00:1", False), ("8.8.8.8", True), ("2a00:1450:4001:80b::201a", True), ("garbage", False),
])
def test_address_allowed(ip, allowed):
    assert address_allowed(ip, allow_private=False) is allowed
    assert address_allowed(ip, allow_private=True) is True


def test_per_host_concurrency_limit(net, settings):
    settings.VERIFIER_MAX_CONNECTIONS_PER_HOST = 2
    active = {"now": 0, "max": 0}
    lock = threading.Lock()
    gate = threading.Event()

    def rcpt(address, script):
        return "250 OK"

    script = net.simple("busy.com", rcpt=rcpt)
    original = engine._probe

    def counting_probe(*args, **kwargs):
        with lock:
            active["now"] += 1
            active["max"] = max(active["max"], active["now"])
            if active["now"] >= 2:
                gate.set()
        gate.wait(2)
        try:
            return original(*args, **kwargs)
        finally:
            with lock:
                active["now"] -= 1

    engine._probe, saved = counting_probe, engine._probe
    try:
        results = []
        threads = [threading.Thread(target=lambda i=i: results.append(run(f"u{i}@busy.com"))) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
    finally:
        engine._probe = saved
    assert len(results) == 6 and {r.status for r in results} == {"catch_all_unknown"}
    assert active["max"] == 2
    assert script.connections == 6


def test_host_slot_reports_busy_when_full():
    with engine.host_slot("mx.full.test", 1, 0) as first:
        assert first is True
        with engine.host_slot("mx.full.test", 1, 0) as second:
            assert second is False
    with engine.host_slot("mx.full.test", 1, 0) as again:
        assert again is True


def test_total_budget_stops_failover(net, settings):
    settings.VERIFIER_TIMEOUT_SECONDS = 0.2
    settings.VERIFIER_TOTAL_TIMEOUT_SECONDS = 0.3
    slow1, slow2 = net.ip(), net.ip()
    net.smtp.raw(slow1, tarpit)
    net.smtp.raw(slow2, tarpit)
    ip, script = net.server(users=["jane@acme.com"])
    net.domain("acme.com", slow1, slow2, ip)
    res = run("jane@acme.com")
    assert (res.status, res.reason) == ("unknown", "timeout")
    assert script.connections == 0  # the budget ran out before the third MX


def test_no_greylist_retry_when_the_budget_cannot_cover_the_delay(net, settings):
    settings.VERIFIER_GREYLIST_RETRY_SECONDS = 100
    settings.VERIFIER_TOTAL_TIMEOUT_SECONDS = 10
    script = net.simple("grey.com", rcpt=lambda a, s: "451 4.7.1 Greylisted")
    slept = []
    res = verify("jane@grey.com", memory=DictMemory(), sleep=slept.append)
    assert (res.status, res.reason, slept, script.connections) == ("unknown", "greylisted", [], 1)


def test_ip_identity_is_sent_as_address_literal(net, settings):
    settings.VERIFIER_HELO_NAME = "127.0.0.1"
    settings.VERIFIER_MAIL_FROM = "verify@127.0.0.1"
    script = net.simple("acme.com", users=["jane@acme.com"])
    assert run("jane@acme.com").status == "valid"
    assert script.helo == ["[127.0.0.1]"] and script.mail_from == ["verify@[127.0.0.1]"]
    assert engine.smtp_domain("::1") == "[IPv6:::1]" and engine.smtp_domain("probe.example.com") == \
        "probe.example.com"


def test_full_host_is_skipped_for_the_next_mx_then_busy(net, settings):
    settings.VERIFIER_MAX_CONNECTIONS_PER_HOST = 1
    settings.VERIFIER_TIMEOUT_SECONDS = 1.0
    ip1, first = net.server(users=["jane@acme.com"])
    ip2, second = net.server(users=["jane@acme.com"])
    net.domain("acme.com", ip1, ip2)
    with engine.host_slot("mx1.acme.com", 1, 0):
        res = run("jane@acme.com")
        assert (res.status, res.mx_host, first.connections, second.connections) == (
            "valid", "mx2.acme.com", 0, 1)
        with engine.host_slot("mx2.acme.com", 1, 0):
            res = run("jane@acme.com")
    assert (res.status, res.reason) == ("unknown", "busy")


def _redis_or_skip():
    import redis

    url = "redis://127.0.0.1:6379/15"
    try:
        redis.Redis.from_url(url, socket_connect_timeout=0.5).ping()
    except Exception:  # noqa: BLE001
        pytest.skip("no local Redis")
    return url


def test_shared_host_slots_in_redis(settings):
    settings.REDIS_URL = _redis_or_skip()
    host = f"mx.shared-{engine.secrets.token_hex(4)}.test"
    with engine.host_slot(host, 2, 0) as a, engine.host_slot(host, 2, 0) as b:
        assert (a, b) == (True, True)
        engine._redis_clients.clear()  # another process: a new client, the same Redis state
        with engine.host_slot(host, 2, 0) as c:
            assert c is False
    with engine.host_slot(host, 2, 0) as d:
        assert d is True


def test_shared_slot_lease_of_a_crashed_holder_expires(settings):
    settings.REDIS_URL = _redis_or_skip()
    host = f"mx.crashed-{engine.secrets.token_hex(4)}.test"
    client = engine._redis(settings.REDIS_URL)
    client.zadd(f"verifier:mx-slots:{host}", {"dead-holder": 1.0})  # a lease that expired long ago
    with engine.host_slot(host, 1, 0) as acquired:
        assert acquired is True
    client.zadd(f"verifier:mx-slots:{host}", {"live-holder": engine.time.time() + 60})
    with engine.host_slot(host, 1, 0) as acquired:
        assert acquired is False
    client.delete(f"verifier:mx-slots:{host}")


def test_generic_5xx_to_rcpt_is_invalid_rejected(net):
    net.simple("acme.com", rcpt=lambda a, s: "550 Requested action not taken")
    res = run("jane@acme.com")
    assert (res.status, res.reason, res.smtp_code) == ("invalid", "rejected", 550)


def test_non_greylisting_4xx_twice_is_unknown_temporary_failure(net):
    script = net.simple("acme.com", rcpt=lambda a, s: "450 4.2.1 The user you are trying to contact is receiving "
                                                      "mail at a rate that prevents additional messages")
    res = run("jane@acme.com")
    assert (res.status, res.reason, script.connections) == ("unknown", "temporary_failure", 2)


def test_garbage_banner_is_protocol_error(net):
    ip = net.ip()
    net.smtp.raw(ip, banner("HELLO THERE, I AM NOT SMTP"))
    net.domain("acme.com", ip)
    assert (run("jane@acme.com").status, run("jane@acme.com").reason) == ("unknown", "protocol_error")


def test_failed_tls_handshake_is_retried_in_clear(net):
    """A server that offers STARTTLS, says 220, then speaks no TLS: the probe reconnects without STARTTLS."""
    seen = []

    async def broken_tls(reader, writer):
        writer.write(b"220 mx.broken-tls.test ESMTP\r\n")
        while True:
            line = (await reader.readline()).decode().strip()
            if not line:
                return
            seen.append(line.split(":")[0].split(" ")[0].upper())
            verb = seen[-1]
            if verb == "EHLO":
                writer.write(b"250-mx.broken-tls.test\r\n250 STARTTLS\r\n")
            elif verb == "STARTTLS":
                writer.write(b"220 2.0.0 Ready to start TLS\r\nthis is not a TLS server hello\r\n")
                await writer.drain()
                return
            elif verb == "MAIL":
                writer.write(b"250 OK\r\n")
            elif verb == "RCPT":
                ok = "<jane@" in line
                writer.write(b"250 OK\r\n" if ok else b"550 5.1.1 unknown\r\n")
            elif verb == "QUIT":
                writer.write(b"221 bye\r\n")
                await writer.drain()
                return
            await writer.drain()

    ip = net.ip()
    net.smtp.raw(ip, broken_tls)
    net.domain("acme.com", ip)
    res = run("jane@acme.com")
    assert (res.status, res.reason) == ("valid", "accepted")
    assert net.smtp.counters[ip] == 2
    assert seen == ["EHLO", "STARTTLS", "EHLO", "MAIL", "RCPT", "RCPT", "QUIT"]


def test_dns_failure_on_the_mx_host_is_unknown(net):
    net.zone.mx("acme.com", (10, "mx1.acme.com"))
    net.zone.servfail.add("mx1.acme.com")
    res = run("jane@acme.com")
    assert (res.status, res.reason) == ("unknown", "dns_error")


def test_ipv6_only_mx_host(net, settings):
    script = Script(users=["jane@v6.com"])
    net.smtp.smtp("::1", script)
    net.zone.mx("v6.com", (10, "mx.v6.com"))
    net.zone.a("mx.v6.com", "::1")
    res = run("jane@v6.com")
    assert (res.status, res.mx_host, script.connections) == ("valid", "mx.v6.com", 1)
    settings.VERIFIER_ALLOW_PRIVATE_NETWORKS = False
    assert run("jane@v6.com").reason == "blocked_address"
    assert script.connections == 1


# --- RFC 6761: syntax is syntax only (issue 14.1) ------------------------------------------------------------
def test_names_under_test_are_asked_to_dns_like_any_other(net):
    """`.test` is a special-use name, not a syntax error: the operator's resolver is asked and its answer decides."""
    net.simple("anything.test", users=["alice@anything.test"])
    res = run("alice@anything.test")
    assert (res.status, res.reason, res.mx_host) == ("valid", "accepted", "mx1.anything.test")
    assert net.zone.queries > 0
    missing = run("bob@nowhere.test")
    assert (missing.status, missing.reason) == ("invalid", "no_domain")  # DNS's NXDOMAIN, not invalid_syntax


@pytest.mark.parametrize("address", ["alice@host.invalid", "alice@box.localhost"])
def test_invalid_and_localhost_never_exist_without_a_lookup(net, address):
    res = run(address)
    assert (res.status, res.reason) == ("invalid", "no_domain")
    assert net.zone.queries == 0


def test_campaign_leads_and_the_verifier_share_one_syntax_rule():
    from campaigns.services import email_syntax_normalize

    samples = ["alice@anything.test", "Alice@Host.Invalid", "x@sub.example.local", "bob@acme.com", "a@b@c.com",
               "jane@acme..com", "no-at-sign", "ünïcode@bücher.de", "jane@", "user@[127.0.0.1]", " pad@acme.com ",
               "x" * 65 + "@acme.com", "dot.@acme.com"]
    for address in samples:
        verifier_ok = engine.parse_address(address) is not None
        campaign_ok = email_syntax_normalize(address) is not None
        assert verifier_ok == campaign_ok, address
    assert email_syntax_normalize("Alice@Anything.TEST") == "alice@anything.test"

"""Real protocol peers for the verifier: a dnslib DNS server with a scriptable zone and aiosmtpd SMTP servers
scripted per scenario, all on loopback (127.0.0.x). Used by the tests and by bench/verify.py."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import socket
import ssl
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from aiosmtpd.smtp import SMTP
from dnslib import AAAA, MX, QTYPE, RCODE, RR, TXT, A, DNSLabel
from dnslib.server import BaseResolver, DNSServer


# --- DNS ------------------------------------------------------------------------------------------------
class Zone(BaseResolver):
    """Answers from a dict; unknown names are NXDOMAIN; names in `servfail` answer SERVFAIL."""

    def __init__(self):
        self.records: dict[tuple[str, str], list] = {}
        self.servfail: set[str] = set()
        self.latency = 0.0
        self.queries = 0
        self.lock = threading.Lock()

    def clear(self):
        with self.lock:
            self.records.clear()
            self.servfail.clear()
            self.queries = 0

    def _add(self, name, rtype, rdata):
        with self.lock:
            self.records.setdefault((name.lower().rstrip("."), rtype), []).append(rdata)

    def mx(self, domain, *hosts):
        """hosts: (preference, exchange) pairs; exchange "." is a null MX."""
        for pref, host in hosts:
            self._add(domain, "MX", MX(host if host.endswith(".") else host + ".", pref))

    def a(self, name, *ips):
        for ip in ips:
            self._add(name, "AAAA" if ":" in ip else "A", AAAA(ip) if ":" in ip else A(ip))

    def txt(self, name, *texts):
        for t in texts:
            self._add(name, "TXT", TXT([t[i:i + 255].encode() for i in range(0, len(t), 255)]))

    def resolve(self, request, handler):
        if self.latency:
            time.sleep(self.latency)
        self.queries += 1
        reply = request.reply()
        qname = str(request.q.qname).lower().rstrip(".")
        qtype = QTYPE[request.q.qtype]
        if qname in self.servfail:
            reply.header.rcode = RCODE.SERVFAIL
            return reply
        with self.lock:
            rdatas = list(self.records.get((qname, qtype), ()))
            exists = any(name == qname for name, _ in self.records)
        if not exists:
            reply.header.rcode = RCODE.NXDOMAIN
            return reply
        for rdata in rdatas:
            reply.add_answer(RR(DNSLabel(qname + "."), QTYPE.reverse[qtype], rdata=rdata, ttl=300))
        return reply


class _QuietLogger:
    def __getattr__(self, name):
        return lambda *args, **kwargs: None


class DnsPeer:
    def __init__(self):
        self.zone = Zone()
        self.server = DNSServer(self.zone, address="127.0.0.1", port=0, logger=_QuietLogger())
        self.port = self.server.server.server_address[1]
        self.server.start_thread()

    @property
    def nameserver(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stop(self):
        self.server.stop()


# --- SMTP -----------------------------------------------------------------------------------------------
class Script:
    """What one scripted SMTP server answers, and what it saw.

    `rcpt`: a function (address, script) -> reply line, default: `users` are accepted, others get
    `unknown_reply`. `catch_all=True` accepts everything. `mail_reply`: a reply to MAIL FROM other than 250.
    `latency`: seconds added before every reply (benchmarks)."""

    def __init__(self, *, users=(), catch_all=False, unknown_reply="550 5.1.1 <{addr}>: Recipient address "
                 "rejected: User unknown in virtual mailbox table", rcpt: Callable | None = None,
                 mail_reply: str | None = None, latency: float = 0.0):
        self.users = {u.lower() for u in users}
        self.catch_all = catch_all
        self.unknown_reply = unknown_reply
        self.rcpt_fn = rcpt
        self.mail_reply = mail_reply
        self.latency = latency
        self.connections = 0
        self.helo: list[str] = []
        self.mail_from: list[str] = []
        self.rcpts: list[str] = []
        self.tls_sessions = 0
        self.quits = 0

    def rcpt_reply(self, address: str) -> str:
        if self.rcpt_fn is not None:
            return self.rcpt_fn(address, self)
        if self.catch_all or address.lower() in self.users:
            return "250 2.1.5 OK"
        return self.unknown_reply.format(addr=address)

    # aiosmtpd handler hooks
    async def handle_EHLO(self, server, session, envelope, hostname, responses):
        await self._wait()
        self.helo.append(hostname)
        session.host_name = hostname
        return responses

    async def handle_MAIL(self, server, session, envelope, address, mail_options):
        await self._wait()
        if session.ssl:
            self.tls_sessions += 1
        self.mail_from.append(address)
        if self.mail_reply:
            return self.mail_reply
        envelope.mail_from = address
        return "250 2.1.0 OK"

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        await self._wait()
        self.rcpts.append(address)
        reply = self.rcpt_reply(address)
        if reply.startswith("2"):
            envelope.rcpt_tos.append(address)
        return reply

    async def handle_QUIT(self, server, session, envelope):
        self.quits += 1
        return "221 Bye"

    async def handle_DATA(self, server, session, envelope):
        return "554 5.6.0 this peer accepts no data"

    async def _wait(self):
        if self.latency:
            await asyncio.sleep(self.latency)


class _CountingSMTP(SMTP):
    def connection_made(self, transport):
        self.event_handler.connections += 1
        super().connection_made(transport)


class SmtpPeers:
    """One event loop thread hosting any number of scripted servers, all on the same port on 127.0.0.x."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.servers: list = []
        self.port = free_port()
        self.counters: dict[str, int] = {}

    def _run(self, coro):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(10)

    def smtp(self, ip: str, script: Script, tls: ssl.SSLContext | None = None, banner_latency: float = 0.0):
        async def start():
            def factory():
                proto = _CountingSMTP(script, hostname=f"mx-{ip}", ident="scripted ESMTP", tls_context=tls)
                return proto
            return await self.loop.create_server(factory, host=ip, port=self.port, reuse_address=True)
        self.servers.append(self._run(start()))
        return script

    def raw(self, ip: str, handler: Callable):
        """A raw TCP server: `handler(reader, writer)` is an async function (for banners that never come)."""
        counter_key = ip
        self.counters[counter_key] = 0

        async def wrapped(reader, writer):
            self.counters[counter_key] += 1
            try:
                await handler(reader, writer)
            finally:
                writer.close()

        async def start():
            return await asyncio.start_server(wrapped, host=ip, port=self.port, reuse_address=True)
        self.servers.append(self._run(start()))

    def close_servers(self):
        async def stop():
            for s in self.servers:
                s.close()
                await s.wait_closed()
        if self.servers:
            self._run(stop())
        self.servers = []

    def stop(self):
        self.close_servers()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def tarpit(reader, writer):
    """Accept, then never send a banner (until the client gives up)."""
    await reader.read()


def banner(line: str):
    async def _h(reader, writer):
        writer.write(line.encode() + b"\r\n")
        await writer.drain()
        await reader.read(100)
    return _h


def self_signed_context(hostname: str = "mx.test") -> ssl.SSLContext:
    """A server-side SSLContext with a certificate generated on the spot (cryptography)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hostname)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(hostname),
                                                        x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .sign(key, hashes.SHA256()))
    tmp = Path(tempfile.mkdtemp())
    (tmp / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (tmp / "key.pem").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                    serialization.NoEncryption()))
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(tmp / "cert.pem", tmp / "key.pem")
    return ctx

import pytest

from leads.verification import dnslayer
from tests.verification.peers import DnsPeer, Script, SmtpPeers


@pytest.fixture(scope="session")
def dns_peer():
    peer = DnsPeer()
    yield peer
    peer.stop()


@pytest.fixture(scope="session")
def smtp_peers():
    peers = SmtpPeers()
    yield peers
    peers.stop()


class Net:
    """A scenario: scripted MX servers on 127.0.0.x and the DNS records that point at them."""

    def __init__(self, dns: DnsPeer, smtp: SmtpPeers):
        self.dns = dns
        self.zone = dns.zone
        self.smtp = smtp
        self._next = 2

    def ip(self) -> str:
        ip = f"127.0.0.{self._next}"
        self._next += 1
        return ip

    def server(self, script: Script | None = None, *, tls=None, **kwargs) -> tuple[str, Script]:
        ip = self.ip()
        script = script or Script(**kwargs)
        self.smtp.smtp(ip, script, tls=tls)
        return ip, script

    def domain(self, domain: str, *ips: str) -> list[str]:
        """MX records for `domain`, one host per ip, preferences 10, 20, ... in the given order."""
        hosts = []
        for i, ip in enumerate(ips):
            host = f"mx{i + 1}.{domain}"
            self.zone.mx(domain, ((i + 1) * 10, host))
            self.zone.a(host, ip)
            hosts.append(host)
        return hosts

    def simple(self, domain: str, **kwargs) -> Script:
        ip, script = self.server(**kwargs)
        self.domain(domain, ip)
        return script


@pytest.fixture
def net(dns_peer, smtp_peers, settings):
    settings.VERIFIER_NAMESERVERS = [dns_peer.nameserver]
    settings.VERIFIER_SMTP_PORT = smtp_peers.port
    settings.VERIFIER_ALLOW_PRIVATE_NETWORKS = True
    settings.VERIFIER_GREYLIST_RETRY_SECONDS = 0
    settings.VERIFIER_TIMEOUT_SECONDS = 3
    settings.VERIFIER_HELO_NAME = "probe.service.test"
    settings.VERIFIER_MAIL_FROM = "verify@service.test"
    dns_peer.zone.clear()
    dnslayer.reset()
    yield Net(dns_peer, smtp_peers)
    smtp_peers.close_servers()
    dns_peer.zone.clear()
    dnslayer.reset()

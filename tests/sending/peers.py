"""Real protocol peers for bring-your-own mailbox tests: aiosmtpd (STARTTLS + AUTH) and Debian's Dovecot (IMAP)."""

from __future__ import annotations

import datetime as dt
import ipaddress
import shutil
import socket
import subprocess
import time
from pathlib import Path

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID

SMTP_PASSWORDS = {"ann@byo.test": {"s3cret", "smtp-only"}}
IMAP_PASSWORD = "s3cret"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def self_signed(dirpath: Path) -> tuple[Path, Path]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(days=1))
            .not_valid_after(now + dt.timedelta(days=2))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                        x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = dirpath / "cert.pem", dirpath / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                           serialization.NoEncryption()))
    return cert_path, key_path


class RecordingHandler:
    def __init__(self):
        self.messages: list[dict] = []

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address.startswith("reject550"):
            return "550 5.1.1 User unknown"
        if address.startswith("defer451"):
            return "451 4.7.1 Try again later"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        self.messages.append({"mail_from": envelope.mail_from, "rcpt_tos": list(envelope.rcpt_tos),
                              "data": envelope.content, "tls": session.ssl is not None,
                              "authenticated": session.authenticated})
        return "250 Message accepted"


def authenticator(server, session, envelope, mechanism, auth_data):
    login = auth_data.login.decode()
    ok = auth_data.password.decode() in SMTP_PASSWORDS.get(login, set())
    return AuthResult(success=ok, handled=False)


def start_smtp(cert: Path, key: Path):
    import ssl

    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(str(cert), str(key))
    handler = RecordingHandler()
    controller = Controller(handler, hostname="127.0.0.1", port=free_port(), tls_context=ctx, require_starttls=True,
                            authenticator=authenticator, auth_required=True, auth_require_tls=True,
                            server_hostname="localhost")
    controller.start()
    return controller, handler


def start_dovecot(workdir: Path, cert: Path, key: Path):
    """Start Dovecot in the foreground as a child process; returns (process, imap_port, imaps_port) or None."""
    binary = shutil.which("dovecot") or ("/usr/sbin/dovecot" if Path("/usr/sbin/dovecot").exists() else None)
    if binary is None:
        return None
    for sub in ("run", "state", "home"):
        (workdir / sub).mkdir(parents=True, exist_ok=True)
    (workdir / "home").chmod(0o777)
    (workdir / "passwd").write_text(f"ann@byo.test:{{PLAIN}}{IMAP_PASSWORD}\n")
    imap_port, imaps_port = free_port(), free_port()
    conf = workdir / "dovecot.conf"
    conf.write_text(f"""
base_dir = {workdir}/run
state_dir = {workdir}/state
log_path = {workdir}/dovecot.log
protocols = imap
listen = 127.0.0.1
ssl = yes
ssl_cert = <{cert}
ssl_key = <{key}
disable_plaintext_auth = yes
auth_mechanisms = plain login
auth_failure_delay = 0
passdb {{
  driver = passwd-file
  args = {workdir}/passwd
}}
userdb {{
  driver = static
  args = uid=65534 gid=65534 home={workdir}/home/%u
}}
mail_location = maildir:~/Maildir
service imap-login {{
  inet_listener imap {{
    port = {imap_port}
  }}
  inet_listener imaps {{
    port = {imaps_port}
    ssl = yes
  }}
}}
""")
    proc = subprocess.Popen([binary, "-F", "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # wait for the listener (readiness, not a timing assumption)
        try:
            socket.create_connection(("127.0.0.1", imap_port), timeout=0.5).close()
            return proc, imap_port, imaps_port
        except OSError:
            if proc.poll() is not None:
                return None
            time.sleep(0.05)
    proc.terminate()
    return None

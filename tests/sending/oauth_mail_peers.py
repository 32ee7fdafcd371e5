"""Mail peers that accept OAuth only: aiosmtpd with an `AUTH XOAUTH2` authenticator that validates the bearer
token by RFC 7662 introspection against the local authorization server (PLAIN and LOGIN are advertised and
always refused), and Debian's Dovecot with `passdb oauth2` introspecting tokens against the same server (its
only mechanisms are XOAUTH2 and OAUTHBEARER: a password login is refused)."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import MISSING, AuthResult

from tests.sending.peers import RecordingHandler, free_port


class XOAuth2Handler(RecordingHandler):
    def __init__(self, introspect_urls: list[str]):
        super().__init__()
        self.introspect_urls = introspect_urls
        self.xoauth2_logins: list[tuple[str, bool]] = []  # (user, accepted)

    async def auth_XOAUTH2(self, server, args):
        if len(args) == 2:
            blob = base64.b64decode(args[1])
        else:
            blob = await server.challenge_auth("")
            if blob is MISSING:
                return AuthResult(success=False, handled=True)
        fields = dict(part.split("=", 1) for part in blob.decode().split("\x01") if "=" in part)
        user, bearer = fields.get("user", ""), fields.get("auth", "")
        token = bearer[7:] if bearer.startswith("Bearer ") else ""
        ok = False
        for url in self.introspect_urls:  # the authorization servers this peer trusts
            resp = await asyncio.to_thread(httpx.post, url, data={"token": token}, timeout=10)
            info = resp.json() if resp.status_code == 200 else {}
            ok = ok or (bool(info.get("active")) and info.get("email") == user)
        self.xoauth2_logins.append((user, ok))
        if ok:
            return AuthResult(success=True, handled=False, auth_data=user)
        # Google's / Microsoft's shape: a 334 challenge with base64 JSON, the client answers empty, then 535
        error = json.dumps({"status": "401", "schemes": "bearer", "scope": "https://mail.google.com/"})
        await server.challenge_auth(error)
        return AuthResult(success=False, handled=False, message="535 5.7.8 Username and Password not accepted")


def refuse_passwords(server, session, envelope, mechanism, auth_data):
    return AuthResult(success=False, handled=False)


def start_smtp_xoauth2(introspect_urls: list[str], cert: Path, key: Path):
    import ssl

    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(str(cert), str(key))
    handler = XOAuth2Handler(introspect_urls)
    controller = Controller(handler, hostname="127.0.0.1", port=free_port(), tls_context=ctx, require_starttls=True,
                            authenticator=refuse_passwords, auth_required=True, auth_require_tls=True,
                            server_hostname="localhost")
    controller.start()
    return controller, handler


DOVECOT_CONFIG = """
base_dir = {root}/run
state_dir = {root}/state
log_path = {root}/dovecot.log
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = xoauth2 oauthbearer
auth_failure_delay = 0
login_trusted_networks = 127.0.0.0/8
default_internal_user = {internal_user}
default_internal_group = {internal_group}
default_login_user = {login_user}
first_valid_uid = 0
mail_location = maildir:{root}/mail/%u
{passdbs}
userdb {{
  driver = static
  args = uid={mail_user} gid={mail_group} home={root}/home/%u
}}
service imap-login {{
  inet_listener imap {{
    address = 127.0.0.1
    port = {port}
  }}
  inet_listener imaps {{
    port = 0
  }}
}}
service pop3-login {{
  inet_listener pop3 {{
    port = 0
  }}
}}
service submission-login {{
  inet_listener submission {{
    port = 0
  }}
}}
"""

OAUTH2_EXT = """
introspection_mode = post
introspection_url = {introspect_url}
username_attribute = email
active_attribute = active
active_value = true
force_introspection = yes
"""


@dataclass
class OAuthDovecot:
    """Dovecot 2.3 with `passdb oauth2` (token introspection, RFC 7662 POST), unprivileged like
    tests/replies/dovecot.py, on a free loopback port; plain IMAP on loopback (the service's poller only allows
    security `none` to a loopback server)."""
    root: Path
    introspect_urls: list[str]
    host: str = "127.0.0.1"
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen | None = None

    def start(self) -> OAuthDovecot:
        binary = shutil.which("dovecot") or "/usr/sbin/dovecot"
        if os.geteuid() == 0:
            internal, login, mail_user, mail_group = "dovecot", "dovenull", "dovecot", "dovecot"
        else:
            import pwd

            internal = login = mail_user = pwd.getpwuid(os.geteuid()).pw_name
            mail_group = str(os.getegid())
        for sub in ("run", "state", "mail", "home"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            for sub in ("mail", "home"):
                shutil.chown(self.root / sub, "dovecot", "dovecot")
        passdbs = []
        for n, url in enumerate(self.introspect_urls):  # one passdb per authorization server, tried in order
            (self.root / f"oauth2-{n}.conf.ext").write_text(OAUTH2_EXT.format(introspect_url=url))
            passdbs.append(f"passdb {{\n  driver = oauth2\n  mechanisms = xoauth2 oauthbearer\n"
                           f"  args = {self.root}/oauth2-{n}.conf.ext\n}}")
        (self.root / "dovecot.conf").write_text(DOVECOT_CONFIG.format(
            passdbs="\n".join(passdbs), root=self.root, port=self.port, internal_user=internal,
            internal_group=internal if internal != "dovecot" else "dovecot", login_user=login,
            mail_user=mail_user, mail_group=mail_group))
        self.proc = subprocess.Popen([binary, "-F", "-c", str(self.root / "dovecot.conf")],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 20
        while True:  # wait for the listener (an event, bounded), not a fixed sleep
            try:
                with socket.create_connection((self.host, self.port), timeout=1) as s:
                    if s.recv(100).startswith(b"* OK"):
                        return self
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                log = (self.root / "dovecot.log").read_text() if (self.root / "dovecot.log").exists() else ""
                raise RuntimeError(f"dovecot did not start: {self.proc.stderr.read()!r} {log}")
            time.sleep(0.05)

    def append(self, user: str, token: str, raw: bytes) -> None:
        """Deliver a message into `user`'s INBOX over IMAP, signed in with XOAUTH2."""
        import imaplib

        conn = imaplib.IMAP4(self.host, self.port)
        answers = iter([f"user={user}\x01auth=Bearer {token}\x01\x01".encode()])
        conn.authenticate("XOAUTH2", lambda challenge: next(answers, b""))
        conn.append("INBOX", None, None, raw)
        conn.logout()

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

"""A private, unprivileged Dovecot IMAP server for the tests: config, passwd-file users and Maildirs live in a tmp
dir; it listens on a free loopback port and is stopped after the session. Debian's `dovecot-imapd` package."""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

DOVECOT = shutil.which("dovecot") or "/usr/sbin/dovecot"

CONFIG = """
base_dir = {root}/run
state_dir = {root}/state
log_path = {root}/dovecot.log
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
auth_failure_delay = 0
login_trusted_networks = 127.0.0.0/8
default_internal_user = {internal_user}
default_internal_group = {internal_group}
default_login_user = {login_user}
first_valid_uid = 0
mail_location = maildir:{root}/mail/%u
passdb {{
  driver = passwd-file
  args = scheme=PLAIN username_format=%u {root}/passwd
}}
userdb {{
  driver = passwd-file
  args = username_format=%u {root}/passwd
  default_fields = uid={mail_user} gid={mail_group} home={root}/home/%u
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


@dataclass
class Dovecot:
    host: str
    port: int
    root: Path
    password: str = "s3cret-pw"
    users: int = 40
    proc: subprocess.Popen | None = None

    def user(self, n: int) -> str:
        return f"user{n}@byo-mail.test"

    def start(self) -> Dovecot:
        if os.geteuid() == 0:  # Dovecot never runs mail processes as root: use its own system users
            internal, login = "dovecot", "dovenull"
            mail_user = mail_group = "dovecot"
        else:
            me = pwd.getpwuid(os.geteuid()).pw_name
            internal = login = mail_user = me
            mail_group = str(os.getegid())
        for sub in ("run", "state", "mail", "home"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            for sub in ("mail", "home"):
                shutil.chown(self.root / sub, "dovecot", "dovecot")
        (self.root / "passwd").write_text(
            "".join(f"{self.user(n)}:{{PLAIN}}{self.password}::::::\n" for n in range(self.users)))
        (self.root / "dovecot.conf").write_text(CONFIG.format(
            root=self.root, port=self.port, internal_user=internal, internal_group=internal if internal != "dovecot"
            else "dovecot", login_user=login, mail_user=mail_user, mail_group=mail_group))
        self.proc = subprocess.Popen([DOVECOT, "-F", "-c", str(self.root / "dovecot.conf")],
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

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

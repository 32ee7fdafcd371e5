"""`manage.py smtp_inbound`: the sandbox inbound SMTP listener (HOST:SANDBOX_SMTP_PORT) for replies.

`manage.py serve` starts it in sandbox mode; SIGINT/SIGTERM stop it. `SANDBOX_SMTP_PORT=0` turns it off.
"""

import logging
import signal
import threading

from django.conf import settings
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Listen for replies to sandbox mailboxes over SMTP (aiosmtpd) and store them."

    def add_arguments(self, parser):
        parser.add_argument("--host", default=None)
        parser.add_argument("--port", type=int, default=None)

    def handle(self, *args, **opts):
        from replies.smtp import make_controller

        port = settings.SANDBOX_SMTP_PORT if opts["port"] is None else opts["port"]
        if not port:
            self.stdout.write("[smtp_inbound] SANDBOX_SMTP_PORT=0: inbound SMTP is off")
            return
        if opts["verbosity"] < 2:  # aiosmtpd logs every SMTP command at INFO
            logging.getLogger("mail.log").setLevel(logging.WARNING)
        stop = threading.Event()
        signal.signal(signal.SIGTERM, lambda *a: stop.set())
        signal.signal(signal.SIGINT, lambda *a: stop.set())
        controller = make_controller(host=opts["host"] or settings.HOST, port=port)
        controller.start()
        self.stdout.write(f"[smtp_inbound] accepting replies for sandbox mailboxes on "
                          f"{controller.hostname}:{controller.port}")
        self.stdout.flush()
        try:
            while not stop.wait(1.0):
                pass
        finally:
            controller.stop()
            self.stdout.write("[smtp_inbound] stopped")

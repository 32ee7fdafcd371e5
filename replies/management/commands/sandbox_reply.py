"""`manage.py sandbox_reply LEAD_EMAIL "text"`: answer the newest campaign message sent to LEAD_EMAIL, as that
lead, over SMTP to the sandbox inbound listener (HOST:SANDBOX_SMTP_PORT, started by `serve`).

The reply is threaded like a person's mail client would thread it: `In-Reply-To` and `References` carry the sent
message's Message-ID, the subject is "Re: …", and it goes to the mailbox that sent the message. It is step 8 of
the README tour.
"""

import smtplib
from email.message import EmailMessage
from email.utils import make_msgid

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError


class Command(BaseCommand):
    help = "Send a reply from a lead to the newest campaign message it received, into the sandbox SMTP listener."

    def add_arguments(self, parser):
        parser.add_argument("lead_email", help="the lead who replies (the address the campaign wrote to)")
        parser.add_argument("text", help="the reply's body")
        parser.add_argument("--campaign", default=None, help="only messages of this campaign id")
        parser.add_argument("--host", default=None, help="listener host (default HOST)")
        parser.add_argument("--port", type=int, default=None, help="listener port (default SANDBOX_SMTP_PORT)")

    def handle(self, *args, **opts):
        from campaigns.models import SentMessage

        sent = SentMessage.objects.filter(to_email__iexact=opts["lead_email"].strip(), state=SentMessage.State.SENT,
                                          mailbox__isnull=False).select_related("mailbox")
        if opts["campaign"]:
            sent = sent.filter(campaign_id=opts["campaign"])
        message = sent.order_by("-sent_at").first()
        if message is None:
            raise CommandError(f"no campaign message has been sent to {opts['lead_email']} yet "
                               f"(GET /v1/campaigns/:id says when the next one goes out)")
        port = settings.SANDBOX_SMTP_PORT if opts["port"] is None else opts["port"]
        if not port:
            raise CommandError("SANDBOX_SMTP_PORT=0: the sandbox inbound listener is off")
        host = opts["host"] or settings.HOST
        reply = EmailMessage()
        reply["From"] = message.to_email
        reply["To"] = message.mailbox.email
        subject = message.subject or ""
        reply["Subject"] = subject if subject.lower().startswith("re:") else f"Re: {subject}"
        reply["Message-ID"] = make_msgid(domain=message.to_email.rsplit("@", 1)[-1])
        reply["In-Reply-To"] = f"<{message.message_id}>"
        reply["References"] = f"<{message.message_id}>"
        reply.set_content(opts["text"])
        try:
            with smtplib.SMTP(host, port, timeout=30) as client:
                client.send_message(reply)
        except (OSError, smtplib.SMTPException) as exc:
            raise CommandError(f"could not deliver to the sandbox listener at {host}:{port}: {exc} "
                               f"(is `manage.py serve` running?)") from exc
        self.stdout.write(f"replied as {message.to_email} to {message.mailbox.email} "
                          f"(In-Reply-To: <{message.message_id}>) via {host}:{port}")

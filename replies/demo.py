"""Demo: no data of its own (replies come from people); prints how to send a reply to the demo mailbox."""

from django.conf import settings


def seed(workspace, stdout=None):
    from sending.models import Mailbox, Provider

    mailbox = Mailbox.objects.filter(workspace=workspace, provider=Provider.SANDBOX).order_by("created_at").first()
    if stdout is None or mailbox is None or not settings.SANDBOX or not settings.SANDBOX_SMTP_PORT:
        return
    stdout.write(f"  replies: mail to {mailbox.email} over SMTP at {settings.HOST}:{settings.SANDBOX_SMTP_PORT} "
                 "is a reply (threaded by In-Reply-To to a sent step); read them with POST /v1/get_replies")

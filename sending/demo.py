"""Demo data: one active sandbox mailbox so a demo campaign can be launched without buying capacity first
(buying capacity is step 5 of the README tour; billing.demo grants the credits for it). It is free: no monthly upkeep. Idempotent."""

from django.utils import timezone

from sending.models import Mailbox, Provider, SendingDomain

DEMO_DOMAIN = "demo-mail.example"
DEMO_EMAIL = f"alex@{DEMO_DOMAIN}"


def seed(workspace, stdout=None):
    # demo capacity is free: nobody bought it, so it never renews (and an older seed's renewal date is cleared)
    Mailbox.objects.filter(email=DEMO_EMAIL, provider=Provider.SANDBOX).exclude(renews_at=None).update(renews_at=None,
                                                                                                       renewals=0)
    if Mailbox.objects.filter(workspace=workspace).exists() or Mailbox.objects.filter(email=DEMO_EMAIL).exists():
        return
    now = timezone.now()
    domain, _ = SendingDomain.objects.get_or_create(
        name=DEMO_DOMAIN, defaults={"workspace": workspace, "provider": Provider.SANDBOX,
                                    "status": SendingDomain.Status.ACTIVE, "activated_at": now})
    if domain.workspace_id != workspace.pk:
        return
    Mailbox.objects.create(workspace=workspace, domain=domain, email=DEMO_EMAIL, first_name="Alex", last_name="Demo",
                           provider=Provider.SANDBOX, status=Mailbox.Status.ACTIVE, activated_at=now,
                           renews_at=None, renewals=0)
    if stdout is not None:
        stdout.write(f"  sending: demo sandbox mailbox {DEMO_EMAIL} (mail goes to the Maildir sink)")

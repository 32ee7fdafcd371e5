"""The built-in sandbox provider (SANDBOX=1): nothing is bought and nothing leaves the machine.

Domains and mailboxes are "provisioned" locally: every call succeeds at once and the operation state machine
makes each state last SANDBOX_PROVISION_SECONDS. The resulting mailboxes have provider `sandbox`: they send
into the Maildir sink (`MAIL_SINK_DIR`) and receive on the sandbox inbound SMTP port (`SANDBOX_SMTP_PORT`).
A domain is available when no workspace on this instance uses it yet.
"""

from __future__ import annotations

from django.conf import settings

from sending.providers.base import ACTIVE, External, SendingProvider


class SandboxProvider(SendingProvider):
    name = "sandbox"

    @property
    def ready_estimate(self) -> str:  # queued, running, waiting_external each last the provision time
        seconds = 3 * float(settings.SANDBOX_PROVISION_SECONDS)
        return f"about {seconds:g} seconds (sandbox)"

    def domains_available(self, names):
        from sending.models import SendingDomain

        taken = set(SendingDomain.objects.filter(name__in=names).values_list("name", flat=True))
        return [n for n in names if n not in taken]

    def domain_register(self, *, name, client_ref):
        return External(ref=f"sandbox:{name}", status=ACTIVE)

    def domain_lookup(self, *, name, client_ref):
        return External(ref=f"sandbox:{name}", status=ACTIVE)

    def domain_status(self, *, ref):
        return External(ref=ref, status=ACTIVE)

    def mailbox_create(self, *, domain_ref, email, first_name, last_name, client_ref):
        return External(ref=f"sandbox:{email}", status=ACTIVE)

    def mailbox_lookup(self, *, email, client_ref):
        return External(ref=f"sandbox:{email}", status=ACTIVE)

    def mailbox_status(self, *, ref):
        return External(ref=ref, status=ACTIVE)

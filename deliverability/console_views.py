"""The console's Deliverability page: each sending domain and mailbox with its state, reasons, bounce and
complaint rates over 24 hours and 7 days, the last DNS and blocklist check, and the history of changes. Owners and
admins resume a paused domain or mailbox here (recorded with their address); nobody else can."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from accounts.console_views import console_context, console_page
from core import errors
from deliverability import selectors, services


@console_page
def overview(request, membership):
    ws = membership.workspace
    domains = [{"row": d, **selectors.domain_render(d), "rates": selectors.domain_rates(domain_name=d.name,
                                                                                       workspace=ws)}
               for d in selectors.domains_list(workspace=ws)]
    mailboxes = [{"row": m, "rates": selectors.mailbox_rates(mailbox=m)} for m in selectors.mailboxes(workspace=ws)]
    return render(request, "deliverability/overview.html", {
        **console_context(request), "domains": domains, "mailboxes": mailboxes,
        "history": selectors.history(workspace=ws), "can_manage": membership.can_approve,
        "reason_words": REASON_WORDS,
    })


REASON_WORDS = {
    "bounce_rate": "Too many hard bounces: clean the list (verify it) before sending more.",
    "complaint_rate": "Recipients marked mail as spam: check targeting, consent and the unsubscribe path.",
    "dns_spf": "SPF does not authorize the sending path: fix the domain's SPF record.",
    "dns_dkim": "The DKIM record does not carry the signing key: publish the record shown in the docs.",
    "dns_dmarc": "No valid DMARC record: publish v=DMARC1 with a policy.",
    "dns_mx": "No MX records: replies and bounces cannot come back.",
    "blocklisted": "The domain is on a DNS blocklist: request removal from the list's operator.",
    "postmaster": ("Gmail Postmaster Tools reports spam complaints (treat it like complaint_rate) or says a "
                   "bulk-sender requirement needs work (named under the domain's state: fix it as for the dns_ "
                   "reasons)."),
}


def _who(request) -> str:
    return getattr(request.user, "email", "") or str(request.user)


@console_page(approver=True)
@require_POST
def mailbox_resume(request, membership, mailbox_id):
    try:
        mailbox = services.mailbox_resume(workspace=membership.workspace, mailbox_id=mailbox_id, actor=_who(request))
    except errors.NotFound as exc:
        raise Http404 from exc
    if mailbox.health_state == "paused":
        messages.error(request, f"{mailbox.email} is paused again by its domain: resume the domain.")
    else:
        messages.success(request, f"{mailbox.email} resumed: it sends again, and its windows start afresh.")
    return redirect("deliverability_console:overview")


@console_page(approver=True)
@require_POST
def domain_resume(request, membership, domain_id):
    try:
        domain = services.domain_resume(workspace=membership.workspace, domain_id=domain_id, actor=_who(request))
    except errors.NotFound as exc:
        raise Http404 from exc
    messages.success(request, f"{domain.name} resumed ({domain.health_state}): its windows start afresh.")
    return redirect("deliverability_console:overview")

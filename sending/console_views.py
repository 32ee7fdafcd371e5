"""Console pages for sending capacity: the mailbox list, bring-your-own registration, renew and remove.

Objects of another workspace are 404. Adding, renewing and removing are for owners and admins.
"""

from __future__ import annotations

from django.contrib import messages
from django.db import transaction
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from accounts.console_views import console_context, console_page
from core.money import format_credits
from sending import byo, selectors, services
from sending.forms import ByoMailboxForm
from sending.models import Mailbox, Operation


@console_page
def mailbox_list(request, membership):
    ws = membership.workspace
    mailboxes = list(selectors.mailboxes_list(workspace=ws).select_related("domain"))
    operations = list(Operation.objects.filter(workspace=ws).order_by("-created_at")[:10])
    return render(request, "sending/mailboxes.html", {
        **console_context(request), "mailboxes": mailboxes, "operations": operations,
        "active_count": sum(1 for m in mailboxes if m.status == Mailbox.Status.ACTIVE),
        "upkeep": format_credits(services.UPKEEP_PER_MAILBOX), "can_manage": membership.can_approve,
    })


@console_page(approver=True)
@require_http_methods(["GET", "POST"])
def mailbox_add(request, membership):
    form = ByoMailboxForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        cfg = byo.ByoSettings(**form.cleaned_data)
        try:
            mailbox = byo.mailbox_byo_register(workspace=membership.workspace, cfg=cfg)
        except byo.ConnectionTestFailed as exc:
            form.add_error(None, f"Connection test failed at {exc.step}: {exc.message}")
        except ValueError as exc:
            form.add_error("email", str(exc))
        else:
            messages.success(request, f"{mailbox.email} passed the connection test and is active.")
            return redirect("sending_console:mailboxes")
    return render(request, "sending/mailbox_add.html", {**console_context(request), "form": form}, status=400 if form.errors else 200)


def _mailbox(membership, mailbox_id) -> Mailbox:
    try:
        return selectors.mailbox_get(workspace=membership.workspace, mailbox_id=mailbox_id)
    except Exception as exc:  # noqa: BLE001 - not_found
        raise Http404 from exc


@console_page(approver=True)
@require_POST
def mailbox_renew(request, membership, mailbox_id):
    mailbox = _mailbox(membership, mailbox_id)
    status = services.mailbox_renew(mailbox_id=mailbox.id)
    if status == Mailbox.Status.ACTIVE:
        messages.success(request, f"{mailbox.email} is active.")
    else:
        messages.error(request, f"{mailbox.email} is still {status}: top up credits first.")
    return redirect("sending_console:mailboxes")


@console_page(approver=True)
@require_POST
def mailbox_test(request, membership, mailbox_id):
    mailbox = _mailbox(membership, mailbox_id)
    if mailbox.provider != "byo":
        raise Http404
    try:
        byo.mailbox_byo_retest(mailbox=mailbox)
    except byo.ConnectionTestFailed as exc:
        messages.error(request, f"{mailbox.email}: connection test failed at {exc.step}: {exc.message}")
    else:
        messages.success(request, f"{mailbox.email}: SMTP and IMAP connection test passed.")
    return redirect("sending_console:mailboxes")


@console_page(approver=True)
@require_POST
def mailbox_remove(request, membership, mailbox_id):
    mailbox = _mailbox(membership, mailbox_id)
    with transaction.atomic():
        byo.mailbox_remove(mailbox=Mailbox.objects.select_for_update().get(pk=mailbox.pk))
    messages.success(request, f"{mailbox.email} removed; it sends nothing and renews no more.")
    return redirect("sending_console:mailboxes")

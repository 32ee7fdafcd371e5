"""Console pages for sending capacity: the mailbox list, bring-your-own registration, renew and remove.

Objects of another workspace are 404. Adding, renewing and removing are for owners and admins.
"""

from __future__ import annotations

from django.contrib import messages
from django.db import transaction
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils import timezone
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
    today = timezone.now().date().isoformat()
    for m in mailboxes:  # still on the warm-up ramp: the day it reaches full volume
        full = services.full_volume_on(m) if m.status == Mailbox.Status.ACTIVE else None
        m.full_volume_on = full if full and full > today else None
    operations = list(Operation.objects.filter(workspace=ws).order_by("-created_at")[:10])
    from sending.oauth import providers_enabled

    return render(request, "sending/mailboxes.html", {
        **console_context(request), "mailboxes": mailboxes, "operations": operations,
        "oauth_providers": providers_enabled(),
        "needs_reconnect": [m for m in mailboxes if m.status == Mailbox.Status.NEEDS_RECONNECT],
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


# --- Connect Google / Connect Microsoft (OAuth 2.0, sending.oauth) ------------------------------------------------

OAUTH_SESSION_KEY = "mailbox_oauth_flows"
OAUTH_FLOW_TTL_SECONDS = 900


def _redirect_uri() -> str:
    from django.conf import settings
    from django.urls import reverse

    return settings.BASE_URL + reverse("sending_console:mailbox_oauth_callback")


def _start_flow(request, membership, provider_name: str, mailbox: Mailbox | None = None):
    import time

    from sending import oauth

    try:
        provider = oauth.provider_get(provider_name)
    except oauth.OAuthError as exc:
        raise Http404 from exc
    flow = oauth.authorization_start(provider=provider, redirect_uri=_redirect_uri(),
                                     login_hint=mailbox.email if mailbox else "")
    flows = {k: v for k, v in request.session.get(OAUTH_SESSION_KEY, {}).items()
             if v.get("started", 0) > time.time() - OAUTH_FLOW_TTL_SECONDS}
    flows[flow.state] = {"provider": provider.name, "verifier": flow.verifier, "nonce": flow.nonce,
                         "redirect_uri": flow.redirect_uri, "workspace": str(membership.workspace_id),
                         "mailbox": mailbox.pk if mailbox else None, "started": time.time()}
    request.session[OAUTH_SESSION_KEY] = dict(list(flows.items())[-5:])
    return redirect(flow.url)


@console_page(approver=True)
@require_POST
def mailbox_oauth_start(request, membership, provider):
    return _start_flow(request, membership, provider)


@console_page(approver=True)
@require_POST
def mailbox_reconnect(request, membership, mailbox_id):
    mailbox = _mailbox(membership, mailbox_id)
    if mailbox.auth != Mailbox.Auth.OAUTH2 or mailbox.status == Mailbox.Status.REMOVED:
        raise Http404
    return _start_flow(request, membership, mailbox.oauth_provider, mailbox)


@console_page(approver=True)
def mailbox_oauth_callback(request, membership):
    """The provider redirects here with `code` and `state` (or `error`). The state must be one this session
    started (single use, 15 minutes); anything else stores nothing."""
    import time

    from sending import oauth

    flows = request.session.get(OAUTH_SESSION_KEY, {})
    state = request.GET.get("state", "")
    flow = flows.pop(state, None) if state else None
    request.session[OAUTH_SESSION_KEY] = flows
    if (flow is None or flow.get("started", 0) < time.time() - OAUTH_FLOW_TTL_SECONDS
            or flow.get("workspace") != str(membership.workspace_id)):
        messages.error(request, "That sign-in link is not valid for this session (unknown or expired state). "
                                "Nothing was connected; please start again.")
        return redirect("sending_console:mailboxes")
    if request.GET.get("error"):
        messages.error(request, f"The provider did not grant access ({request.GET['error'][:60]}). Nothing was "
                                "connected.")
        return redirect("sending_console:mailboxes")
    try:
        provider = oauth.provider_get(flow["provider"])
        grant = oauth.authorization_finish(provider=provider, code=request.GET.get("code", ""), flow=flow)
        mailbox = oauth.mailbox_oauth_connect(workspace=membership.workspace, provider=provider, grant=grant,
                                              expect_mailbox_id=flow.get("mailbox"))
    except oauth.OAuthError as exc:
        messages.error(request, str(exc))
        return redirect("sending_console:mailboxes")
    verb = "reconnected" if flow.get("mailbox") else "connected"
    try:
        byo.oauth_connection_test(mailbox)
    except byo.ConnectionTestFailed as exc:
        messages.error(request, f"{mailbox.email} is {verb} with {provider.label}, but its connection test failed "
                                f"at {exc.step}: {exc.message}")
        return redirect("sending_console:mailboxes")
    messages.success(request, f"{mailbox.email} is {verb} with {provider.label}, passed the SMTP and IMAP "
                              "connection test (XOAUTH2) and is active.")
    return redirect("sending_console:mailboxes")

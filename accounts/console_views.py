"""The console's shared helpers (console_page, the current workspace, secrets shown once, the nav's context) and
accounts' own pages: API key revocation and answer policy, members, sign-in links. Other apps' pages live in their
own console_views; the pages that bring several apps together (overview, the API keys page, approvals) in the
console app, which also holds the URL map (console.urls, namespace `console`).

Every page works on the *current* workspace (session key `console_workspace_id`, switchable when the user
belongs to several). Objects of a workspace the user is not a member of are 404, never 403, so nothing
reveals that they exist. Views only parse, call services, and render.
"""

from __future__ import annotations

from functools import wraps

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.core.mail import send_mail
from django.db import transaction
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from accounts import console_auth, services
from accounts.forms import InviteForm, RoleForm
from accounts.models import ApiKey, ConfirmationToken, Invitation, Membership, Workspace
from core import errors

SESSION_WORKSPACE = "console_workspace_id"


# --- current workspace ------------------------------------------------------------------------------
def current_membership(request) -> Membership:
    memberships = list(Membership.objects.filter(user=request.user).select_related("workspace").order_by("created_at"))
    if not memberships:
        console_auth.ensure_workspace(user=request.user)
        memberships = list(Membership.objects.filter(user=request.user).select_related("workspace"))
    wanted = request.session.get(SESSION_WORKSPACE)
    chosen = next((m for m in memberships if str(m.workspace_id) == wanted), memberships[0])
    request._console_memberships = memberships
    return chosen


def console_page(view=None, *, approver=False):
    """Signed-in pages; passes the current membership. `approver=True`: owners/admins only (others 404)."""

    def deco(fn):
        @login_required
        @wraps(fn)
        def wrapper(request, *args, **kwargs):
            membership = current_membership(request)
            if approver and not membership.can_approve:
                raise Http404
            request.membership = membership
            return fn(request, membership, *args, **kwargs)

        return wrapper

    return deco(view) if view else deco


def console_context(request):
    """Template context for console pages (nav, workspace switcher)."""
    membership = getattr(request, "membership", None)
    if membership is None:
        return {}
    waiting = ConfirmationToken.objects.filter(
        workspace=membership.workspace, status=ConfirmationToken.Status.PENDING, expires_at__gt=timezone.now()
    ).count()
    return {"membership": membership, "workspace": membership.workspace, "approvals_waiting": waiting,
            "memberships": getattr(request, "_console_memberships", [membership])}


@login_required
@require_POST
def workspace_switch(request):
    wanted = _uuid_or_none(request.POST.get("workspace", ""))
    if not Membership.objects.filter(user=request.user, workspace_id__in=wanted).exists():
        raise Http404
    request.session[SESSION_WORKSPACE] = str(wanted[0])
    nxt = request.POST.get("next") or reverse("console:overview")
    return redirect(nxt if nxt.startswith("/console/") else reverse("console:overview"))


def _uuid_or_none(value):
    import uuid

    try:
        return [uuid.UUID(value)]
    except (ValueError, TypeError):
        return []


# --- secrets shown once, after a POST/redirect/GET ------------------------------------------------------
def show_once_put(request, name: str, value: dict) -> None:
    """Keep a just-created secret (an API key, a webhook signing secret) for the one GET the POST redirects to:
    a reload of that page repeats the GET, never the POST, so nothing is created twice. Server-side session."""
    request.session[f"show_once:{name}"] = value


def show_once_pop(request, name: str) -> dict | None:
    """The secret kept by `show_once_put`, removed as it is read: it is shown once."""
    return request.session.pop(f"show_once:{name}", None)


# --- API keys ---------------------------------------------------------------------------------------
@console_page(approver=True)
@require_POST
def key_revoke(request, membership, key_id):
    key = ApiKey.objects.filter(workspace=membership.workspace, pk=key_id).first()
    if key is None:
        raise Http404
    services.key_revoke(key=key)
    messages.success(request, f"Key “{key.name}” ({key.display}) revoked. Calls with it now get 401.")
    return redirect("console:keys")


@console_page(approver=True)
@require_POST
def key_answers(request, membership, key_id):
    """The owner's policy: how many replies a day this key or OAuth connection may send without approval."""
    key = ApiKey.objects.filter(workspace=membership.workspace, pk=key_id).first()
    if key is None:
        raise Http404
    raw = request.POST.get("answers_per_day", "").strip()
    try:
        if raw and not (raw.isascii() and raw.isdigit()):
            raise errors.InvalidRequest("Enter a whole number, or leave it empty to require an approval for every answer.")
        services.key_answers_per_day_set(key=key, answers_per_day=int(raw) if raw else None)
    except errors.DomainError as exc:
        messages.error(request, exc.message)
    else:
        name = getattr(getattr(key, "oauth_grant", None), "client_name", None) or key.name
        messages.success(request, f"“{name}” may now send {raw} replies a day without approval." if raw else
                         f"Every reply “{name}” sends now needs an approval.")
    return redirect("console:keys")


# --- members ----------------------------------------------------------------------------------------
@console_page
@require_http_methods(["GET", "POST"])
def members(request, membership):
    ws = membership.workspace
    form = InviteForm()
    if request.method == "POST":
        if not membership.can_approve:
            raise Http404
        form = InviteForm(request.POST)
        if form.is_valid():
            email = form.cleaned_data["email"].strip().lower()
            role = form.cleaned_data["role"]
            if role == Membership.Role.OWNER and membership.role != Membership.Role.OWNER:
                form.add_error("role", "Only owners can invite owners.")
            elif Membership.objects.filter(workspace=ws, user__email__iexact=email).exists():
                form.add_error("email", "Already a member.")
            else:
                Invitation.objects.filter(workspace=ws, email__iexact=email, accepted_at__isnull=True,
                                          revoked_at__isnull=True).update(revoked_at=timezone.now())
                Invitation.objects.create(workspace=ws, email=email, role=role, invited_by=request.user)
                _send_invitation(ws, email, role, request.user)
                messages.success(request, f"Invited {email} as {role}. They join when they sign in with that address.")
                return redirect("console:members")
    return render(request, "console/members.html", {
        "form": form, "role_form": RoleForm(),
        "members": Membership.objects.filter(workspace=ws).select_related("user").order_by("created_at"),
        "invitations": Invitation.objects.filter(workspace=ws, accepted_at__isnull=True, revoked_at__isnull=True),
        "roles": Membership.Role.choices,
    })


def _send_invitation(ws, email, role, inviter):
    body = (
        f"{inviter.email} invited you to the workspace “{ws.name}” as {role}.\n\n"
        f"Sign in (or sign up) with this address to join: {settings.BASE_URL}{reverse('account_login')}\n\n"
        "No password is needed: we email you a one-time code.\n"
    )
    from accounts.console_auth import header_safe

    send_mail(header_safe(f"You're invited to {ws.name}"), body, settings.DEFAULT_FROM_EMAIL, [email])


def _owners(ws) -> int:
    return Membership.objects.filter(workspace=ws, role=Membership.Role.OWNER).count()


def _lock_members(ws, membership, member_id):
    """Lock the workspace row, then re-read the acting member and lock the target (None, None when either is
    gone). Every change that can lower the owner count takes the workspace lock first, so two owners demoting
    or removing each other cannot both count two owners before either commits (write skew under READ
    COMMITTED, which left a workspace with no owner); the acting member's role is read after that lock too."""
    Workspace.objects.select_for_update(no_key=True).filter(pk=ws.pk).first()  # inserts referencing it go on
    actor = Membership.objects.filter(pk=membership.pk).first()
    target = Membership.objects.select_for_update().filter(workspace=ws, pk=member_id).select_related("user").first()
    return actor, target


@console_page(approver=True)
@require_POST
def member_role(request, membership, member_id):
    ws = membership.workspace
    form = RoleForm(request.POST)
    with transaction.atomic():
        actor, target = _lock_members(ws, membership, member_id)
        if target is None or actor is None or not actor.can_approve or not form.is_valid():
            raise Http404
        role = form.cleaned_data["role"]
        if Membership.Role.OWNER in (role, target.role) and actor.role != Membership.Role.OWNER:
            messages.error(request, "Only owners can grant or change the owner role.")
        elif target.role == Membership.Role.OWNER and role != Membership.Role.OWNER and _owners(ws) <= 1:
            messages.error(request, "A workspace needs at least one owner.")
        else:
            target.role = role
            target.save(update_fields=["role"])
            messages.success(request, f"{target.user.email} is now {role}.")
    return redirect("console:members")


@console_page(approver=True)
@require_POST
def member_remove(request, membership, member_id):
    ws = membership.workspace
    with transaction.atomic():
        actor, target = _lock_members(ws, membership, member_id)
        if target is None or actor is None or not actor.can_approve:
            raise Http404
        if target.role == Membership.Role.OWNER and actor.role != Membership.Role.OWNER:
            messages.error(request, "Only owners can remove an owner.")
        elif target.role == Membership.Role.OWNER and _owners(ws) <= 1:
            messages.error(request, "A workspace needs at least one owner.")
        else:
            target.delete()
            messages.success(request, f"Removed {target.user.email}.")
    return redirect("console:members")


@console_page(approver=True)
@require_POST
def invitation_revoke(request, membership, invitation_id):
    updated = Invitation.objects.filter(workspace=membership.workspace, pk=invitation_id, accepted_at__isnull=True,
                                        revoked_at__isnull=True).update(revoked_at=timezone.now())
    if not updated:
        raise Http404
    messages.success(request, "Invitation revoked.")
    return redirect("console:members")


# --- sign-in link (emailed beside the code) ---------------------------------------------------------
@never_cache
@require_http_methods(["GET", "POST"])
def signin_link(request, token):
    """GET shows a confirmation button and changes nothing (mail scanners follow links); POST signs in."""
    if request.method == "GET":
        link = console_auth.signin_link_peek(token=token)
    else:
        link = console_auth.signin_link_consume(token=token)
    if link is None:
        messages.error(request, "That sign-in link is no longer valid: links work once and expire after a few "
                                "minutes. Enter your address to get a new code and link.")
        return redirect("account_login")
    if request.method == "GET":
        return render(request, "account/signin_link.html", {"link": link})
    login(request, link.user, backend="allauth.account.auth_backends.AuthenticationBackend")
    return redirect(settings.LOGIN_REDIRECT_URL)


def no_passwords(request):
    """There are no passwords in the product: allauth's password pages answer 404."""
    raise Http404

"""The console: overview, API keys, approvals, ledger, top-ups, members, sign-in links.

Every page works on the *current* workspace (session key `console_workspace_id`, switchable when the user
belongs to several). Objects of a workspace the user is not a member of are 404, never 403, so nothing
reveals that they exist. Views only parse, call services, and render.
"""

from __future__ import annotations

import csv
from functools import wraps

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.core.mail import send_mail
from django.core.paginator import Paginator
from django.db import transaction
from django.db.models import Q
from django.http import Http404, HttpResponseRedirect, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from accounts import console_auth, selectors, services
from accounts.forms import InviteForm, KeyCreateForm, RoleForm, TopupForm
from accounts.models import ApiKey, ConfirmationToken, Invitation, Membership, Workspace
from core import errors
from core.money import format_credits, parse_credits

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


# --- overview ---------------------------------------------------------------------------------------
@console_page
def overview(request, membership):
    from billing import selectors as billing_selectors
    from billing.models import RequestRecord

    ws = membership.workspace
    usage = billing_selectors.usage_get(workspace=ws)
    rows = usage["last_30_days"]
    top = max([parse_credits(r["credits_charged"]) for r in rows] or [0])
    chart = [
        {**r, "pct": (parse_credits(r["credits_charged"]) * 100 // top) if top else 0} for r in rows
    ]
    chart.sort(key=lambda r: -parse_credits(r["credits_charged"]))
    daily = _daily_chart(ws)
    by_key = billing_selectors.usage_by_key(workspace=ws)
    top_key = max([parse_credits(r["credits_charged"]) for r in by_key] or [0])
    by_key = [{**r, "pct": (parse_credits(r["credits_charged"]) * 100 // top_key) if top_key else 0} for r in by_key]
    recent = RequestRecord.objects.filter(workspace=ws).order_by("-created_at")[:15]
    pending = _pending_tokens(ws, limit=10)
    return render(request, "console/overview.html", {
        "usage": usage, "chart": chart, "recent": [
            {"r": r, "charged": format_credits(r.credits_charged_micros)} for r in recent
        ],
        "pending": pending, "daily": daily, "by_key": by_key,
    })


def _daily_chart(ws, days: int = 30) -> dict:
    """Credits charged per UTC day over the last `days` days, as bars for a server-rendered SVG."""
    from datetime import timedelta

    from billing import selectors as billing_selectors

    start = billing_selectors.usage_days_start(days)
    by_day = {r["day"]: int(r["charged"] or 0)
              for r in billing_selectors.usage_daily(workspace=ws, days=days, by="day")}
    top = max(by_day.values(), default=0)
    bars = []
    for i in range(days):
        day = start + timedelta(days=i)
        micros = by_day.get(day, 0)
        height = round(micros * 90 / top, 1) if top else 0
        bars.append({"x": i * 10 + 1, "y": round(100 - height, 1), "h": height, "day": day,
                     "credits": format_credits(micros)})
    return {"bars": bars, "total": format_credits(sum(by_day.values())), "max": format_credits(top)}


# --- secrets shown once, after a POST/redirect/GET ------------------------------------------------------
def show_once_put(request, name: str, value: dict) -> None:
    """Keep a just-created secret (an API key, a webhook signing secret) for the one GET the POST redirects to:
    a reload of that page repeats the GET, never the POST, so nothing is created twice. Server-side session."""
    request.session[f"show_once:{name}"] = value


def show_once_pop(request, name: str) -> dict | None:
    """The secret kept by `show_once_put`, removed as it is read: it is shown once."""
    return request.session.pop(f"show_once:{name}", None)


# --- API keys ---------------------------------------------------------------------------------------
@never_cache
@console_page
@require_http_methods(["GET", "POST"])
def keys(request, membership):
    ws = membership.workspace
    form = KeyCreateForm()
    if request.method == "POST":
        if not membership.can_approve:
            raise Http404
        form = KeyCreateForm(request.POST)
        if form.is_valid():
            key, plaintext = services.key_create(workspace=ws, name=form.cleaned_data["name"],
                                                 scopes=form.cleaned_data["scopes"], created_by=request.user)
            show_once_put(request, "api_key", {"key_id": str(key.pk), "plaintext": plaintext})
            return redirect("console:keys")
    created = None
    pending = show_once_pop(request, "api_key")
    if pending:
        key = ApiKey.objects.filter(workspace=ws, pk=pending["key_id"]).first()
        if key is not None:
            created = {"key": key, "plaintext": pending["plaintext"]}  # shown once, on this page only
    listing = ApiKey.objects.filter(workspace=ws, oauth_grant__isnull=True).order_by("revoked_at", "-created_at")
    from accounts.oauth import grants_for

    response = render(request, "console/keys.html", {"form": form, "created": created, "keys": listing,
                                                     "connections": grants_for(workspace=ws),
                                                     "budgets": _budget_rows(ws),
                                                     "open_limits": request.GET.get("limits", "")})
    return response


def _budget_rows(ws) -> list[dict]:
    """Every active key and connection with its limits (credit strings, "" for none) and this period's spend."""
    from billing import selectors as billing_selectors
    from billing.models import KeyBudget

    budgets = {b.pk: b for b in KeyBudget.objects.filter(api_key__workspace=ws)}
    rows = []
    for key in ApiKey.objects.filter(workspace=ws, revoked_at__isnull=True).select_related("oauth_grant").order_by(
            "created_at"):
        budget = budgets.get(key.pk)
        view = billing_selectors.key_budget_view(api_key=key, budget=budget)

        def fmt(value):
            return "" if value is None else format_credits(value)

        rows.append({"key": key, "name": billing_selectors.key_display_name(key), "view": view,
                     "daily": fmt(budget.daily_limit_micros) if budget else "",
                     "monthly": fmt(budget.monthly_limit_micros) if budget else ""})
    return rows


def _limit_field(value: str):
    value = (value or "").strip()
    if value == "" or value.lower() == "none":
        return None
    return parse_credits(value)


@console_page(approver=True)
@require_POST
def key_limits(request, membership, key_id):
    """The limit form of one key or connection (owners and admins): daily and monthly credits, empty = none."""
    from billing import services as billing

    key = ApiKey.objects.filter(workspace=membership.workspace, pk=key_id, revoked_at__isnull=True).first()
    if key is None:
        raise Http404
    try:
        daily, monthly = _limit_field(request.POST.get("daily")), _limit_field(request.POST.get("monthly"))
        billing.key_limits_set(api_key=key, daily=daily, monthly=monthly)
    except (ValueError, errors.DomainError):
        messages.error(request, "A limit is a credit amount such as 25 or 0.5 (at most 6 decimals), or empty for none.")
        return redirect(f"{reverse('console:keys')}?limits={key.pk}#limits-{key.pk}")
    messages.success(request, f"Spend limits of “{key.name}” saved.")
    return redirect(f"{reverse('console:keys')}#limits-{key.pk}")


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


# --- approvals --------------------------------------------------------------------------------------
def _pending_tokens(ws, limit=100):
    tokens = list(ConfirmationToken.objects.filter(
        workspace=ws, status=ConfirmationToken.Status.PENDING, expires_at__gt=timezone.now()
    ).order_by("-created_at")[:limit])
    for t in tokens:
        t.headline = describe_token(t)["headline"]
    return tokens


@console_page
def approvals(request, membership):
    ws = membership.workspace
    history = ConfirmationToken.objects.filter(workspace=ws).exclude(
        Q(status=ConfirmationToken.Status.PENDING) & Q(expires_at__gt=timezone.now())
    ).select_related("decided_by").order_by("-created_at")
    page = Paginator(history, 25).get_page(request.GET.get("page"))
    return render(request, "console/approvals.html", {"pending": _pending_tokens(ws), "page": page})


@console_page
@require_http_methods(["GET", "POST"])
def approval_detail(request, membership, token_id):
    token = selectors.token_get_for_user(user=request.user, token_id=token_id)
    if token is None:
        raise Http404
    token_membership = selectors.membership_get(user=request.user, workspace=token.workspace)
    can_decide = token_membership is not None and token_membership.can_approve
    error = None
    if request.method == "POST":
        if not can_decide:
            raise Http404
        decision = request.POST.get("decision")
        try:
            if decision == "approve":
                services.token_approve(token=token, user=request.user)
                messages.success(request, "Approved. The agent can now repeat its call with this token.")
            elif decision == "deny":
                services.token_deny(token=token, user=request.user)
                messages.success(request, "Denied. The agent's call with this token gets confirmation_denied.")
            else:
                raise errors.InvalidRequest("Choose Approve or Deny.")
            return redirect("console:approval", token_id=token.pk)
        except errors.DomainError as exc:
            error = exc.message
        token.refresh_from_db()
    return render(request, "console/approval.html", {
        "token": token, "can_decide": can_decide, "error": error, "what": describe_token(token),
    })


def describe_token(token: ConfirmationToken) -> dict:
    """What approving will do, in the words of the verb that issued the token: its summary's `action`
    as the headline, every other summary entry as a row, and the exact bound parameters."""
    summary = dict(token.summary or {})
    headline = None
    for key in ("action", "Action", "headline"):
        if key in summary:
            headline = str(summary.pop(key))
            break
    if headline is None and token.verb == "launch_campaign":
        from campaigns.services import launch_consequence

        headline = f"Launch a campaign: {launch_consequence()}"
    if headline is None:
        headline = DEFAULT_HEADLINES.get(token.verb, f"Run {token.verb}")
    # a verb may show a conversation above what it will send (send_reply: the thread, then the draft)
    thread = summary.pop("thread", None)
    draft = summary.pop("draft", None)
    rows = [(k.replace("_", " ").capitalize() if k.islower() else k, v) for k, v in summary.items()]
    # The sandbox banner only when the launch's headline says its mail goes to the sink: a campaign on a
    # connected mailbox that sends for real says so in its headline, and the page must not contradict it.
    sink_only = token.verb == "launch_campaign" and headline.endswith("the email goes to the sandbox sink on this machine")
    return {"headline": headline, "rows": rows, "params": token.params or {}, "sink_only": sink_only,
            "thread": thread if isinstance(thread, list) else None, "draft": draft}


DEFAULT_HEADLINES = {
    "setup_sending": "Buy sending capacity (setup_sending)",
}


# --- ledger -----------------------------------------------------------------------------------------
def _ledger_qs(ws, kind):
    from billing.models import LedgerEntry

    qs = LedgerEntry.objects.filter(account_id=ws.pk).select_related("created_by").order_by("-id")
    if kind in LedgerEntry.Kind.values:
        qs = qs.filter(kind=kind)
    return qs


@console_page
def ledger(request, membership):
    from billing.models import LedgerEntry

    kind = request.GET.get("kind", "")
    page = Paginator(_ledger_qs(membership.workspace, kind), 50).get_page(request.GET.get("page"))
    rows = [{"e": e, "amount": format_credits(e.amount_micros), "after": format_credits(e.balance_after_micros)}
            for e in page.object_list]
    return render(request, "console/ledger.html", {
        "page": page, "rows": rows, "kind": kind, "kinds": LedgerEntry.Kind.values,
    })


def _cell(text: str) -> str:
    """Free text that a spreadsheet would run as a formula is prefixed with a quote (CSV injection)."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


class _Echo:
    def write(self, value):
        return value


@console_page
def ledger_csv(request, membership):
    kind = request.GET.get("kind", "")
    qs = _ledger_qs(membership.workspace, kind)
    writer = csv.writer(_Echo())

    def rows():
        yield writer.writerow(["id", "created_at", "kind", "amount_credits", "balance_after_credits", "verb",
                               "request_id", "memo", "external_ref", "created_by", "key_id", "key_name"])
        batch = []
        for e in qs.iterator(chunk_size=2000):
            batch.append(e)
            if len(batch) == 2000:
                yield from _ledger_rows(batch)
                batch = []
        yield from _ledger_rows(batch)

    def _ledger_rows(batch):
        from billing.models import RequestRecord

        keys = {rid: (str(kid), name) for rid, kid, name in RequestRecord.objects.filter(
            workspace=membership.workspace, pk__in={e.request_id for e in batch if e.request_id},
            api_key__isnull=False).values_list("id", "api_key_id", "api_key__name")}
        for e in batch:
            key_id, key_name = keys.get(e.request_id, ("", ""))
            yield writer.writerow([e.pk, e.created_at.isoformat(), e.kind, format_credits(e.amount_micros),
                                   format_credits(e.balance_after_micros), e.verb, e.request_id, _cell(e.memo),
                                   _cell(e.external_ref or ""), e.created_by.email if e.created_by else "",
                                   key_id, _cell(key_name)])

    name = f"ledger-{membership.workspace.pk}{'-' + kind if kind else ''}.csv"
    response = StreamingHttpResponse(rows(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


# --- top-ups ----------------------------------------------------------------------------------------
@console_page
@require_http_methods(["GET", "POST"])
def topups(request, membership):
    from billing import topups as svc
    from billing.models import CheckoutSession

    ws = membership.workspace
    form = TopupForm()
    if request.method == "POST":
        if not membership.can_approve:
            raise Http404
        form = TopupForm(request.POST)
        mode = request.POST.get("mode")
        if form.is_valid():
            amount = form.cleaned_data["amount"]
            try:
                if mode == "sandbox":
                    svc.sandbox_topup(workspace=ws, credits_whole=amount, user=request.user)
                    messages.success(request, f"Added {amount:,} sandbox test credits.")
                    return redirect("console:topups")
                if mode == "stripe":
                    base = settings.BASE_URL
                    session = svc.checkout_create(
                        workspace=ws, credits_whole=amount, user=request.user,
                        success_url=f"{base}{reverse('console:topups')}?checkout=success",
                        cancel_url=f"{base}{reverse('console:topups')}?checkout=cancelled",
                    )
                    return HttpResponseRedirect(session.url)
                raise errors.InvalidRequest("Choose how to pay.")
            except errors.DomainError as exc:
                form.add_error(None, exc.message)
    account_available = _available(ws)
    return render(request, "console/topups.html", {
        "form": form, "packs": svc.packs(), "stripe": svc.stripe_enabled(), "available": account_available,
        "sessions": [
            {"s": s, "credits": format_credits(s.credits_micros), "usd": f"{s.amount_cents / 100:,.2f}"}
            for s in CheckoutSession.objects.filter(workspace=ws).order_by("-created_at")[:10]
        ],
        "min": settings.TOPUP_MIN_CREDITS, "max": settings.TOPUP_MAX_CREDITS,
        "sandbox_max": settings.SANDBOX_TOPUP_MAX_CREDITS, "checkout": request.GET.get("checkout"),
    })


def _available(ws) -> str:
    from billing.models import CreditAccount

    account = CreditAccount.objects.get(pk=ws.pk)
    return format_credits(account.available_micros)


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

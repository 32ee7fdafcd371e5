"""Console pages that bring several apps together: the overview (usage, recent calls, approvals waiting), the API
keys page (keys, OAuth connections and their spend limits) and the approvals, described in the words of the verb
that issued each (a campaign launch names what it will send). Each app's own pages live in its console_views; the
shared helpers (console_page, the current workspace) are accounts'.
"""

from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import Q
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from accounts import selectors, services
from accounts.console_views import console_page, show_once_pop, show_once_put
from accounts.forms import KeyCreateForm
from accounts.models import ApiKey, ConfirmationToken
from accounts.oauth import grants_for
from billing import selectors as billing_selectors
from billing.console_views import _budget_rows, _daily_chart
from billing.models import RequestRecord
from campaigns.services import launch_consequence
from core import errors
from core.money import format_credits, parse_credits


# --- overview ---------------------------------------------------------------------------------------
@console_page
def overview(request, membership):
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
    response = render(request, "console/keys.html", {"form": form, "created": created, "keys": listing,
                                                     "connections": grants_for(workspace=ws),
                                                     "budgets": _budget_rows(ws),
                                                     "open_limits": request.GET.get("limits", "")})
    return response


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

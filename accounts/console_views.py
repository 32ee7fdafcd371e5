"""Minimal console: the overview and the approval page (the full console is its own feature)."""

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from accounts import selectors, services
from accounts.models import ConfirmationToken
from core import errors


@login_required
def overview(request):
    from billing.models import CreditAccount

    workspaces = list(selectors.workspaces_for_user(user=request.user))
    accounts = {a.workspace_id: a for a in CreditAccount.objects.filter(workspace__in=workspaces)}
    pending = ConfirmationToken.objects.filter(
        workspace__in=workspaces, status=ConfirmationToken.Status.PENDING
    ).order_by("-created_at")[:50]
    return render(request, "console/overview.html", {
        "workspaces": [(w, accounts.get(w.pk)) for w in workspaces], "pending": pending,
    })


@login_required
@require_http_methods(["GET", "POST"])
def approval_detail(request, token_id):
    token = selectors.token_get_for_user(user=request.user, token_id=token_id)
    if token is None:
        raise Http404
    membership = selectors.membership_get(user=request.user, workspace=token.workspace)
    can_decide = membership is not None and membership.can_approve
    error = None
    if request.method == "POST":
        if not can_decide:
            raise Http404
        decision = request.POST.get("decision")
        try:
            if decision == "approve":
                services.token_approve(token=token, user=request.user)
            elif decision == "deny":
                services.token_deny(token=token, user=request.user)
            return redirect("console:approval", token_id=token.pk)
        except errors.DomainError as exc:
            error = exc.message
        token.refresh_from_db()
    return render(request, "console/approval.html", {"token": token, "can_decide": can_decide, "error": error})

"""Console page for the suppression list: everyone who must never be contacted again, and manual additions.

The list is permanent (SPEC 1): there is deliberately no removal path, here or anywhere else. Members see the
list; owners and admins add addresses.
"""

from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from accounts.console_views import console_context, console_page
from campaigns import services
from campaigns.models import Suppression

MAX_BULK = 1000


def _parse_addresses(text: str) -> tuple[list[str], list[str]]:
    good, bad = [], []
    for raw in text.replace(",", "\n").replace(";", "\n").splitlines():
        candidate = raw.strip()
        if not candidate:
            continue
        address = services.email_syntax_normalize(candidate)  # the same rule as campaign creation
        if address is None:
            bad.append(candidate)
        else:
            good.append(address)
    return list(dict.fromkeys(good)), bad


@console_page
@require_http_methods(["GET", "POST"])
def suppression_list(request, membership):
    workspace = membership.workspace
    errors: list[str] = []
    if request.method == "POST":
        if not membership.can_approve:
            return render(request, "campaigns/suppressions.html", {**console_context(request), "forbidden": True},
                          status=404)
        good, bad = _parse_addresses(request.POST.get("addresses", ""))
        if bad:
            errors.append("Not an email address: " + ", ".join(bad[:20]) + (" …" if len(bad) > 20 else ""))
        if len(good) > MAX_BULK:
            errors.append(f"At most {MAX_BULK} addresses at a time.")
        if not good and not bad:
            errors.append("Enter at least one address.")
        if not errors:
            source = f"console:{request.user.email}"
            added = 0
            for address in good:
                before = Suppression.objects.filter(workspace=workspace, email=address).exists()
                services.suppression_add(workspace=workspace, email=address, reason="manual", source=source)
                added += 0 if before else 1
            messages.success(request, f"{added} address{'es' if added != 1 else ''} suppressed"
                                      f"{f' ({len(good) - added} already were)' if added != len(good) else ''}.")
            return redirect("campaigns_console:suppressions")
    query = request.GET.get("q", "").strip().lower()
    reason = request.GET.get("reason", "")
    rows = Suppression.objects.filter(workspace=workspace).order_by("-created_at", "-id")
    if query:
        rows = rows.filter(email__contains=query)
    if reason in Suppression.Reason.values:
        rows = rows.filter(reason=reason)
    page = Paginator(rows, 50).get_page(request.GET.get("page"))
    return render(request, "campaigns/suppressions.html", {
        **console_context(request), "page": page, "q": query, "reason": reason,
        "reasons": Suppression.Reason.values, "can_manage": membership.can_approve, "errors": errors,
        "addresses": request.POST.get("addresses", "") if errors else "",
    }, status=400 if errors else 200)

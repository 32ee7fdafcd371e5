"""Billing's console pages: the ledger (and its CSV export), top-ups, each key's spend limits, and the usage
charts the overview draws. The shared helpers (console_page, the current workspace) are accounts'.
"""

from __future__ import annotations

import csv
from datetime import timedelta

from django.conf import settings
from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpResponseRedirect, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from accounts.console_views import console_page
from accounts.models import ApiKey
from billing import selectors as billing_selectors
from billing import services as billing
from billing import topups as svc
from billing.forms import TopupForm
from billing.models import CheckoutSession, CreditAccount, KeyBudget, LedgerEntry, RequestRecord
from core import errors
from core.money import format_credits, parse_credits


# --- usage ------------------------------------------------------------------------------------------
def _daily_chart(ws, days: int = 30) -> dict:
    """Credits charged per UTC day over the last `days` days, as bars for a server-rendered SVG."""
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


# --- key spend limits -------------------------------------------------------------------------------
def _budget_rows(ws) -> list[dict]:
    """Every active key and connection with its limits (credit strings, "" for none) and this period's spend."""
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


# --- ledger -----------------------------------------------------------------------------------------
def _ledger_qs(ws, kind):
    qs = LedgerEntry.objects.filter(account_id=ws.pk).select_related("created_by").order_by("-id")
    if kind in LedgerEntry.Kind.values:
        qs = qs.filter(kind=kind)
    return qs


@console_page
def ledger(request, membership):
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
    account = CreditAccount.objects.get(pk=ws.pk)
    return format_credits(account.available_micros)

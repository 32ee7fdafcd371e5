"""Operator admin for money: read-only ledger, requests, holds, checkout sessions, key budgets; on the workspace
page (accounts' admin, extended here) the balance columns and the credit-grant action."""

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.template.response import TemplateResponse

from accounts.admin import WorkspaceAdmin
from accounts.models import Workspace
from billing.models import CheckoutSession, CreditAccount, Hold, KeyBudget, LedgerEntry, RequestRecord
from billing.services import credits_grant
from core.admin import ReadOnlyAdmin
from core.money import InvalidCreditString, format_credits, parse_credits


class CreditGrantForm(forms.Form):
    amount = forms.CharField(help_text="Credits, e.g. 1500 or 0.5 (at most 6 decimals).")
    memo = forms.CharField(max_length=500, help_text="Why; shown in the workspace's ledger.")

    def clean_amount(self):
        try:
            micros = parse_credits(self.cleaned_data["amount"])
        except InvalidCreditString as exc:
            raise forms.ValidationError(str(exc)) from exc
        if micros <= 0:
            raise forms.ValidationError("Must be positive.")
        return micros


@admin.action(description="Grant credits (with a memo)")
def grant_credits(modeladmin, request, queryset):
    if "apply" in request.POST:
        form = CreditGrantForm(request.POST)
        if form.is_valid():
            for ws in queryset:
                credits_grant(workspace=ws, amount=form.cleaned_data["amount"], memo=form.cleaned_data["memo"],
                              created_by=request.user)
            modeladmin.message_user(
                request, f"Granted {format_credits(form.cleaned_data['amount'])} credits to {queryset.count()} workspace(s).",
                messages.SUCCESS,
            )
            return None
    else:
        form = CreditGrantForm()
    return TemplateResponse(request, "admin/grant_credits.html", {
        **modeladmin.admin_site.each_context(request), "title": "Grant credits", "form": form,
        "workspaces": queryset, "action_checkbox_name": ACTION_CHECKBOX_NAME, "opts": modeladmin.model._meta,
    })


admin.site.unregister(Workspace)


@admin.register(Workspace)
class WorkspaceCreditAdmin(WorkspaceAdmin):
    list_display = (*WorkspaceAdmin.list_display, "balance", "available")
    readonly_fields = (*WorkspaceAdmin.readonly_fields, "balance", "available")
    actions = [grant_credits]

    @admin.display(description="Balance (credits)")
    def balance(self, obj):
        acct = getattr(obj, "credit_account", None)
        return format_credits(acct.balance_micros) if acct else "—"

    @admin.display(description="Available (credits)")
    def available(self, obj):
        acct = getattr(obj, "credit_account", None)
        return format_credits(acct.available_micros) if acct else "—"


@admin.register(LedgerEntry)
class LedgerEntryAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "account", "kind", "credits", "balance_after", "verb", "request_id", "memo", "created_by")
    list_filter = ("kind",)
    search_fields = ("account__workspace__name", "request_id", "external_ref", "memo")
    date_hierarchy = "created_at"

    @admin.display(description="Credits")
    def credits(self, obj):
        return format_credits(obj.amount_micros)

    @admin.display(description="Balance after")
    def balance_after(self, obj):
        return format_credits(obj.balance_after_micros)


@admin.register(CreditAccount)
class CreditAccountAdmin(ReadOnlyAdmin):
    list_display = ("workspace", "balance", "reserved", "updated_at")
    search_fields = ("workspace__name",)

    @admin.display(description="Balance")
    def balance(self, obj):
        return format_credits(obj.balance_micros)

    @admin.display(description="Reserved")
    def reserved(self, obj):
        return format_credits(obj.reserved_micros)


@admin.register(RequestRecord)
class RequestRecordAdmin(ReadOnlyAdmin):
    list_display = ("id", "workspace", "verb", "channel", "status", "http_status", "charged", "created_at", "completed_at")
    list_filter = ("status", "verb", "channel")
    search_fields = ("id", "workspace__name")
    date_hierarchy = "created_at"

    @admin.display(description="Charged")
    def charged(self, obj):
        return format_credits(obj.credits_charged_micros)


@admin.register(Hold)
class HoldAdmin(ReadOnlyAdmin):
    list_display = ("id", "account", "request_id", "amount_micros", "captured_micros", "status", "created_at", "expires_at")
    list_filter = ("status",)


@admin.register(CheckoutSession)
class CheckoutSessionAdmin(ReadOnlyAdmin):
    list_display = ("id", "workspace", "credits_micros", "amount_cents", "status", "created_at", "paid_event_id", "paid_at")
    list_filter = ("status",)


@admin.register(KeyBudget)
class KeyBudgetAdmin(ReadOnlyAdmin):
    """Read-only: limits are set by owners and admins in the console (or manage.py key_limits), so the counters
    only ever move inside the money statements."""

    list_display = ("api_key", "daily_limit", "day", "day_spent", "monthly_limit", "month", "month_spent")
    search_fields = ("api_key__name", "api_key__workspace__name")

    @admin.display(description="Daily limit")
    def daily_limit(self, obj):
        return "—" if obj.daily_limit_micros is None else format_credits(obj.daily_limit_micros)

    @admin.display(description="Monthly limit")
    def monthly_limit(self, obj):
        return "—" if obj.monthly_limit_micros is None else format_credits(obj.monthly_limit_micros)

    @admin.display(description="Spent + held (day)")
    def day_spent(self, obj):
        return format_credits(obj.day_micros)

    @admin.display(description="Spent + held (month)")
    def month_spent(self, obj):
        return format_credits(obj.month_micros)

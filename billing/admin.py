"""Operator admin for money: read-only ledger, requests, holds, checkout sessions, key budgets."""

from django.contrib import admin

from billing.models import CheckoutSession, CreditAccount, Hold, KeyBudget, LedgerEntry, RequestRecord
from core.admin import ReadOnlyAdmin
from core.money import format_credits


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

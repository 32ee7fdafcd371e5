"""Operator admin: workspaces (with a credit-grant action), members, keys (never secrets), tokens."""

from allauth.account.decorators import secure_admin_login
from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.template.response import TemplateResponse

from accounts.models import ApiKey, ConfirmationToken, Invitation, Membership, User, Workspace
from core.admin import ReadOnlyAdmin
from core.money import InvalidCreditString, format_credits, parse_credits

# The admin has no password form: signed-out visitors go to the console's emailed-code sign-in.
admin.site.login = secure_admin_login(admin.site.login)



@admin.register(User)
class UserAdmin(admin.ModelAdmin):
    list_display = ("email", "is_active", "is_staff", "date_joined", "last_login")
    search_fields = ("email",)
    list_filter = ("is_active", "is_staff")
    # No password field anywhere: sign-in is by emailed code or link.
    fields = ("email", "first_name", "last_name", "is_active", "is_staff", "is_superuser", "groups",
              "date_joined", "last_login")
    readonly_fields = ("date_joined", "last_login")
    filter_horizontal = ("groups",)


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ("user",)


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
    from billing.services import credits_grant

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


@admin.register(Workspace)
class WorkspaceAdmin(admin.ModelAdmin):
    list_display = ("name", "id", "created_at", "balance", "available")
    search_fields = ("name", "id", "memberships__user__email")
    readonly_fields = ("id", "created_at", "balance", "available")
    inlines = [MembershipInline]
    actions = [grant_credits]

    @admin.display(description="Balance (credits)")
    def balance(self, obj):
        acct = getattr(obj, "credit_account", None)
        return format_credits(acct.balance_micros) if acct else "—"

    @admin.display(description="Available (credits)")
    def available(self, obj):
        acct = getattr(obj, "credit_account", None)
        return format_credits(acct.available_micros) if acct else "—"


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    """Keys show their prefix and last 4 only; the stored hash is never displayed."""

    list_display = ("name", "display", "workspace", "scopes", "created_at", "last_used_at", "revoked_at")
    list_filter = ("revoked_at",)
    search_fields = ("name", "prefix", "workspace__name")
    fields = ("workspace", "name", "display", "scopes", "created_by", "created_at", "last_used_at", "revoked_at")
    readonly_fields = ("workspace", "display", "scopes", "created_by", "created_at", "last_used_at")
    actions = ["revoke"]

    def has_add_permission(self, request):
        return False  # keys are created in the console or with manage.py create_workspace (shown once)

    @admin.action(description="Revoke selected keys")
    def revoke(self, request, queryset):
        from accounts.services import key_revoke

        for key in queryset:
            key_revoke(key=key)
        self.message_user(request, f"Revoked {queryset.count()} key(s).")


@admin.register(ConfirmationToken)
class ConfirmationTokenAdmin(ReadOnlyAdmin):
    list_display = ("verb", "workspace", "status", "created_at", "expires_at", "decided_by", "decided_at", "used_at")
    list_filter = ("status", "verb")
    search_fields = ("workspace__name", "token_hint", "issued_request_id", "used_request_id")
    exclude = ("token_hash", "params_hash")


@admin.register(Invitation)
class InvitationAdmin(admin.ModelAdmin):
    list_display = ("email", "workspace", "role", "invited_by", "created_at", "accepted_at", "revoked_at")
    search_fields = ("email", "workspace__name")
    readonly_fields = ("accepted_at",)

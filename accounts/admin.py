"""Operator admin: workspaces, members, keys (never secrets), tokens. Billing extends the workspace page."""

from allauth.account.decorators import secure_admin_login
from django.contrib import admin

from accounts.models import ApiKey, ConfirmationToken, Invitation, Membership, User, Workspace
from core.admin import ReadOnlyAdmin

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


@admin.register(Workspace)
class WorkspaceAdmin(admin.ModelAdmin):
    """Workspaces and their members; billing's admin adds the balance columns and the credit-grant action."""

    list_display = ("name", "id", "created_at")
    search_fields = ("name", "id", "memberships__user__email")
    readonly_fields = ("id", "created_at")
    inlines = [MembershipInline]


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

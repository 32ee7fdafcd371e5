from django.contrib import admin


class ReadOnlyAdmin(admin.ModelAdmin):
    """Operators read these records in the admin; nothing is added, changed or deleted there (ledgers,
    request records, inbound mail: history is append-only)."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

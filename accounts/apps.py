from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"
    default_auto_field = "django.db.models.BigAutoField"
    # allauth's account app is also "Accounts": two ACCOUNTS sections in the Django admin.
    verbose_name = "Workspaces, members and keys"

    def ready(self):
        from accounts import console_auth  # noqa: F401  (connects the console's signal receivers)

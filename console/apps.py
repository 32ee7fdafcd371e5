from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    """The console's URL map, the pages that bring several apps together, and the demo-data command."""

    name = "console"
    default_auto_field = "django.db.models.BigAutoField"

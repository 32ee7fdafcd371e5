from django.apps import AppConfig


class DeliverabilityConfig(AppConfig):
    name = "deliverability"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from deliverability import receivers  # noqa: F401 - connects the health signal

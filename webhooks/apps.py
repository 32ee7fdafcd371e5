from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "webhooks"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        # receivers: connects the domain signals that become events; tasks: registers the delivery task that
        # webhooks.services sends by name
        from webhooks import receivers, tasks  # noqa: F401

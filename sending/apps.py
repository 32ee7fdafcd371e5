from django.apps import AppConfig


class SendingConfig(AppConfig):
    name = "sending"
    default_auto_field = "django.db.models.BigAutoField"

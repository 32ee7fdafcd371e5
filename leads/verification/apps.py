from django.apps import AppConfig


class VerificationConfig(AppConfig):
    name = "leads.verification"
    label = "verification"
    default_auto_field = "django.db.models.BigAutoField"

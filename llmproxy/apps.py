from django.apps import AppConfig


class LlmproxyConfig(AppConfig):
    name = "llmproxy"
    default_auto_field = "django.db.models.BigAutoField"

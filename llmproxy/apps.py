from django.apps import AppConfig


class LlmproxyConfig(AppConfig):
    name = "llmproxy"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from llmproxy import checks  # noqa: F401 - registers the deployment checks (`manage.py check --deploy`)

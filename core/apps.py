from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "core"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        # Each app declares its verbs in <app>/verbs.py; importing them fills the registry that the
        # REST routes and the MCP tools are generated from.
        from django.utils.module_loading import autodiscover_modules

        autodiscover_modules("verbs")

        from core import checks  # noqa: F401 - registers the deployment checks (`manage.py check --deploy`)

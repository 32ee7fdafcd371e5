from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "core"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        # Each app declares its verbs in <app>/verbs.py; importing them fills the registry that the
        # REST routes and the MCP tools are generated from.
        from django.utils.module_loading import autodiscover_modules

        autodiscover_modules("verbs")

        # checks registers the deployment checks (`manage.py check --deploy`)
        from core import checks, logfilters  # noqa: F401

        logfilters.install()  # no OAuth code or state in the web server's access log

from django.apps import AppConfig


class SendingConfig(AppConfig):
    name = "sending"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from sending import (
            checks,  # noqa: F401 - registers the deployment checks (`manage.py check --deploy`)
            tasks,  # noqa: F401 - registers the Celery tasks the services enqueue by name
        )

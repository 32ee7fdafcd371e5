from django.apps import AppConfig


class RepliesConfig(AppConfig):
    name = "replies"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from replies import tasks  # noqa: F401 - registers the Celery tasks the services enqueue by name

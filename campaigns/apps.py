from django.apps import AppConfig


class CampaignsConfig(AppConfig):
    name = "campaigns"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from campaigns import (
            receivers,  # noqa: F401 - subscribes to sending.signals
            tasks,  # noqa: F401 - registers the Celery tasks the scheduler enqueues by name
        )

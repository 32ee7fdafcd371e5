from django.apps import AppConfig


class RepliesConfig(AppConfig):
    name = "replies"
    default_auto_field = "django.db.models.BigAutoField"

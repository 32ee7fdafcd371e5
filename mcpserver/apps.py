from django.apps import AppConfig


class McpserverConfig(AppConfig):
    name = "mcpserver"
    default_auto_field = "django.db.models.BigAutoField"

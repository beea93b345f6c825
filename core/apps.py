from django.apps import AppConfig


class CoreConfig(AppConfig):
    """What the canary and the gateway share: service tokens, model-id checks."""

    name = "core"
    default_auto_field = "django.db.models.BigAutoField"

from django.apps import AppConfig


class RoutingConfig(AppConfig):
    """Reliable routing gateway (filled by the issue "Reliable routing gateway")."""

    name = "routing"
    default_auto_field = "django.db.models.BigAutoField"

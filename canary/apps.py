from django.apps import AppConfig


class CanaryConfig(AppConfig):
    """Canary and route quarantine: probes, verdicts, suspension policy, exclusions."""

    name = "canary"
    default_auto_field = "django.db.models.BigAutoField"

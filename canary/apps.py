from django.apps import AppConfig
from django.db.models.signals import post_migrate


class CanaryConfig(AppConfig):
    """Canary and route quarantine: probes, verdicts, suspension policy, exclusions."""

    name = "canary"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Imported here, not at the top: the auth models it uses exist only once the app
        # registry is ready (the one import Django requires inside ready()).
        from canary.groups import groups_after_migrate

        # After each migrate, keep the staff groups (viewer, operator, reviewer) in step.
        post_migrate.connect(groups_after_migrate, sender=self, dispatch_uid="canary.ensure_groups")

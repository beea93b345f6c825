from django.apps import AppConfig


class CanaryConfig(AppConfig):
    """Canary and route quarantine: probes, verdicts, suspension policy, exclusions."""

    name = "canary"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # After each migrate, keep the staff groups (viewer, operator, reviewer) in step.
        from django.db.models.signals import post_migrate

        from canary.management.commands.ensure_groups import groups_after_migrate

        post_migrate.connect(groups_after_migrate, sender=self, dispatch_uid="canary.ensure_groups")

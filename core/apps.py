from django.apps import AppConfig
from django.core.signals import request_finished


class CoreConfig(AppConfig):
    """What the canary and the gateway share: service tokens, model-id checks."""

    name = "core"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Imported here: the module reads the models, which need the app registry.
        from core.last_use import last_use_after_response

        request_finished.connect(last_use_after_response, dispatch_uid="core.last_use")

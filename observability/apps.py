from django.apps import AppConfig


class ObservabilityConfig(AppConfig):
    """Metrics at ``/metrics``, traces (when configured), the reliability and breaker pages."""

    name = "observability"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from observability import tracing, worker

        tracing.configure_from_env()
        worker.connect_signals()

from django.apps import AppConfig


class ObservabilityConfig(AppConfig):
    """Metrics at ``/metrics``, traces (when configured), the reliability and breaker pages."""

    name = "observability"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from observability import multiprocess, tracing, worker

        # The gunicorn config and the worker empty it at start; a process started any
        # other way must still find it (prometheus-client writes there on first use).
        multiprocess.multiproc_dir_ensure()
        tracing.configure_from_env()
        worker.connect_signals()

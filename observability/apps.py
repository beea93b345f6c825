from django.apps import AppConfig


class ObservabilityConfig(AppConfig):
    """Metrics at ``/metrics``, traces (when configured), the reliability and breaker pages."""

    name = "observability"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from canary.signals import round_finalised
        from observability import canary, gateway, multiprocess, tracing, worker
        from routing.services.wiring import sink_wrapper_register

        # The gunicorn config and the worker empty it at start; a process started any
        # other way must still find it (prometheus-client writes there on first use).
        multiprocess.multiproc_dir_ensure()
        tracing.configure_from_env()
        worker.connect_signals()
        # Observability sits above the canary and routing: they announce a finalised
        # round and build the gateway's sink; the trace and metrics hook in here.
        round_finalised.connect(canary.round_finished_receiver, dispatch_uid="observability.round_trace")
        sink_wrapper_register(gateway.sink_wrap)

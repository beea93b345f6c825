"""Observability: Prometheus metrics, optional OpenTelemetry traces, and the on-call pages
(reliability and circuit breakers) built from the gateway's and the canary's own rows."""

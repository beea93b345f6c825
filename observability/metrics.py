"""Metric definitions (prometheus-client), one module so every name lives in one place.

Names follow the Prometheus conventions (base units, ``_total`` for counters, ``_seconds``)
and the OpenTelemetry GenAI semantic conventions where a name exists there
(``gen_ai.client.token.usage`` -> ``gen_ai_client_token_usage``,
``gen_ai.client.operation.duration`` -> ``gen_ai_client_operation_duration_seconds``,
``gen_ai.server.time_to_first_token`` -> ``gen_ai_server_time_to_first_token_seconds``).

Labels are bounded sets: contracts (``name@version``), routes (the ``Route`` table),
failure classes, attempt statuses, validation check kinds, fallback reasons (a failure
class or ``hedge``). Never an operation id or any other per-request value.

In multiprocess mode (``PROMETHEUS_MULTIPROC_DIR`` set before this module is imported,
see ``observability.multiprocess``) each process writes its samples to its own files and
a scrape sums them, so several gunicorn and Celery processes report one total.
"""

from __future__ import annotations

from prometheus_client import Counter, Histogram

# Latency buckets (s) for chat completions: sub-second to the longest deadlines (60 s).
_LATENCY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0, 120.0)
_TTFT_BUCKETS = (0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0)
# Token counts: the OpenTelemetry GenAI conventions' advisory buckets (powers of 4).
_TOKEN_BUCKETS = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304)

GATEWAY_REQUESTS = Counter(
    "reverie_gateway_requests_total",
    "Gateway requests by contract, outcome (accepted, failed, unknown) and final route",
    ["contract", "outcome", "final_route"],
)
GATEWAY_ERRORS = Counter(
    "reverie_gateway_request_errors_total",
    "Gateway requests that were not accepted, by contract and error code",
    ["contract", "error_code"],
)
GATEWAY_ATTEMPTS = Counter(
    "reverie_gateway_attempts_total",
    "Upstream attempts by route, status (accepted, failed, rejected, cancelled) and failure class",
    ["route", "status", "failure_class"],
)
GATEWAY_FALLBACKS = Counter(
    "reverie_gateway_fallbacks_total",
    "Attempts on another route after a failure (reason: the failure class) or as a hedge",
    ["contract", "reason"],
)
GATEWAY_RETRIES = Counter(
    "reverie_gateway_same_route_retries_total",
    "Same-route retries after an early connect failure",
    ["route"],
)
GATEWAY_VALIDATION_REJECTIONS = Counter(
    "reverie_gateway_validation_rejections_total",
    "Answers rejected by validation before acceptance, by route and check kind",
    ["route", "check"],
)
GATEWAY_DEADLINE_EXHAUSTIONS = Counter(
    "reverie_gateway_deadline_exhaustions_total",
    "Requests that failed because the deadline left no time for another attempt",
    ["contract"],
)
GATEWAY_AMBIGUOUS = Counter(
    "reverie_gateway_ambiguous_outcomes_total",
    "Attempts whose outcome is ambiguous (the request may have run upstream)",
    ["contract", "route"],
)
GATEWAY_COST = Counter(
    "reverie_gateway_cost_usd_total",
    "Upstream cost in USD (reported by the upstream, else estimated from list prices)",
    ["contract", "route"],
)
GATEWAY_TOKENS = Counter(
    "reverie_gateway_tokens_total",
    "Tokens by route and type (input, output)",
    ["route", "gen_ai_token_type"],
)
TOKEN_USAGE = Histogram(
    "gen_ai_client_token_usage",
    "Tokens per attempt (OpenTelemetry GenAI gen_ai.client.token.usage)",
    ["gen_ai_operation_name", "gen_ai_token_type", "route"],
    buckets=_TOKEN_BUCKETS,
)
OPERATION_DURATION = Histogram(
    "gen_ai_client_operation_duration_seconds",
    "Gateway request duration by final route and outcome (OpenTelemetry GenAI gen_ai.client.operation.duration)",
    ["gen_ai_operation_name", "final_route", "outcome"],
    buckets=_LATENCY_BUCKETS,
)
TIME_TO_FIRST_TOKEN = Histogram(
    "gen_ai_server_time_to_first_token_seconds",
    "Time to first token of answered attempts by route (OpenTelemetry GenAI gen_ai.server.time_to_first_token)",
    ["gen_ai_operation_name", "route"],
    buckets=_TTFT_BUCKETS,
)

CELERY_TASKS = Counter(
    "reverie_celery_tasks_total",
    "Celery tasks finished by task name and state (success, failure, retry)",
    ["task", "state"],
)

"""Settings. Every deploy-time value comes from the environment through django-environ.

Names read by outside acceptance scenarios are fixed: DATABASE_URL, REDIS_URL,
OPENROUTER_BASE_URL (with the /api/v1 path), OPENROUTER_API_KEY, CANARY_MODEL.
A bad value (a boolean that is not a boolean, a number that is not a number) raises at
start-up rather than silently becoming a default.
"""

from __future__ import annotations

import secrets
import sys
import warnings
from pathlib import Path

import django_stubs_ext
import environ

from core.db_limits import FINALISER_LIMITS, ROLE_LIMITS, SessionLimits, libpq_options, process_role
from core.identifiers import validate_model_id
from openrouter.egress import ProxyRule
from reverie_ops.broker import broker_transport
from reverie_ops.database import database_config
from reverie_ops.env import StrictEnv, above_zero, checked, not_negative, port, positive, redis_url
from reverie_ops.schedule import (
    canary_beat_schedule,
    observability_beat_schedule,
    routing_beat_schedule,
)
from reverie_ops.secret_key import help_invocation, secret_key_problem

# Lets admin and model classes be subscripted for typing (ModelAdmin[Endpoint]) at run time.
django_stubs_ext.monkeypatch()

BASE_DIR = Path(__file__).resolve().parent.parent

env = StrictEnv()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

DEBUG = env.bool("DJANGO_DEBUG", default=False)
SECRET_KEY = env.str("DJANGO_SECRET_KEY", default="")
if DEBUG and not SECRET_KEY:
    # The only fallback secret, and only with DEBUG on (the demo, a developer's shell).
    SECRET_KEY = "insecure-development-key-not-for-production"  # noqa: S105
elif not DEBUG:
    # Outside DEBUG a weak secret is refused at start-up: the rule of Django's deployment
    # check (security.W009: at least 50 characters, 5 distinct, no "django-insecure-"
    # prefix) plus the example's placeholder.
    _secret_problem = secret_key_problem(SECRET_KEY)
    if _secret_problem and help_invocation(sys.argv):
        # `manage.py <cmd> --help` signs nothing: a throwaway key, never stored, so an
        # operator reads the help before a secret exists. Serving still needs the real one.
        SECRET_KEY = secrets.token_urlsafe(50)
    elif _secret_problem:
        raise environ.ImproperlyConfigured(
            f"DJANGO_SECRET_KEY {_secret_problem} (DJANGO_DEBUG is off); generate one with: "
            "python -c 'import secrets; print(secrets.token_urlsafe(50))'"
        )
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["127.0.0.1", "localhost"])

# --- HTTPS behind a TLS-terminating proxy ------------------------------------------
# Production serves HTTPS through a proxy that sets X-Forwarded-Proto (and strips it from
# clients, or trusting it would be unsafe). DJANGO_HTTPS sets the defaults of every
# setting below (on unless DEBUG); DJANGO_HTTPS=false serves plain HTTP (tests, a local
# run). Each setting can still be set on its own. Django docs, "Deployment checklist".
HTTPS = env.bool("DJANGO_HTTPS", default=not DEBUG)
_proxy_header = env.list("DJANGO_SECURE_PROXY_SSL_HEADER", default=["HTTP_X_FORWARDED_PROTO", "https"] if HTTPS else [])
if _proxy_header and len(_proxy_header) != 2:
    raise environ.ImproperlyConfigured(
        f"DJANGO_SECURE_PROXY_SSL_HEADER must be 'HEADER,value' (e.g. HTTP_X_FORWARDED_PROTO,https), not {_proxy_header!r}"
    )
SECURE_PROXY_SSL_HEADER = (_proxy_header[0], _proxy_header[1]) if _proxy_header else None
SECURE_SSL_REDIRECT = env.bool("DJANGO_SECURE_SSL_REDIRECT", default=HTTPS)
# Paths (regular expressions, no leading slash) answered over plain HTTP too. By default
# the two that callers inside the deployment fetch from web:8000 directly, never through
# the TLS proxy: compose's health check (/api/v1/health) and Prometheus's scrape (/metrics);
# redirected, the web service would never turn healthy and every scrape would fail.
SECURE_REDIRECT_EXEMPT = env.list("DJANGO_SECURE_REDIRECT_EXEMPT", default=[r"^api/v1/health$", r"^metrics$"])
SESSION_COOKIE_SECURE = env.bool("DJANGO_SESSION_COOKIE_SECURE", default=HTTPS)
CSRF_COOKIE_SECURE = env.bool("DJANGO_CSRF_COOKIE_SECURE", default=HTTPS)
CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])
# One year, the value HSTS preload lists ask for; browsers ignore HSTS over plain HTTP.
SECURE_HSTS_SECONDS = env.int("DJANGO_SECURE_HSTS_SECONDS", default=31_536_000 if HTTPS else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", default=HTTPS)
SECURE_HSTS_PRELOAD = env.bool("DJANGO_SECURE_HSTS_PRELOAD", default=HTTPS)

INSTALLED_APPS = [
    "reverie_ops.apps.OpsAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_celery_beat",
    "core",
    "canary",
    "routing",
    "observability",
    "reverie_ops.apps.ReverieOpsConfig",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # An unknown path or a refused Host under /v1/ and /api/v1/ is JSON, DEBUG or not.
    "reverie_ops.api_errors.ApiPathErrorsMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # A database outage on /api/ and /v1/ is a JSON 503 with Retry-After, not HTML 500.
    "reverie_ops.middleware.DatabaseUnavailableMiddleware",
]
# The gateway's paths (/v1/) pass only these, in MIDDLEWARE's order: its callers are
# programs with a bearer token, to which no session, cookie, CSRF token, message, static
# file or frame rule applies (reverie_ops.handlers).
GATEWAY_MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "reverie_ops.api_errors.ApiPathErrorsMiddleware",
    "django.middleware.common.CommonMiddleware",
    "reverie_ops.middleware.DatabaseUnavailableMiddleware",
]

ROOT_URLCONF = "reverie_ops.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]
WSGI_APPLICATION = "reverie_ops.wsgi.application"

# SQLite is only the embedded default of the demo; production and tests use PostgreSQL.
DATABASES = {
    # A malformed URL or an engine other than PostgreSQL/SQLite is refused here, by name.
    "default": database_config(env, default=f"sqlite:///{BASE_DIR / 'reverie_ops.sqlite3'}"),
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Probes save results from worker threads; wait for the write lock instead of failing.
    DATABASES["default"].setdefault("OPTIONS", {})["timeout"] = 30
elif DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql" and env.bool("DATABASE_POOL", default=True):
    # A Celery worker runs dozens of probe tasks on threads and gunicorn serves on
    # threads: a per-process pool of connections (psycopg_pool, built into Django 5.1+)
    # instead of a new PostgreSQL backend for every task or request. Tasks hand their
    # connection back while they wait on providers, so a small pool serves many threads.
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": int(not_negative("DATABASE_POOL_MIN_SIZE", env.int("DATABASE_POOL_MIN_SIZE", default=2))),
        "max_size": positive("DATABASE_POOL_MAX_SIZE", env.int("DATABASE_POOL_MAX_SIZE", default=16)),
        "timeout": above_zero("DATABASE_POOL_TIMEOUT_S", env.float("DATABASE_POOL_TIMEOUT_S", default=30.0)),
    }
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # libpq's connect_timeout (whole seconds, at least 2): a PostgreSQL host that drops
    # packets fails a connection attempt in this long instead of the kernel's minutes.
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault("connect_timeout", env.int("DATABASE_CONNECT_TIMEOUT_S", default=5))
# Lock, statement and idle-in-transaction timeouts of every session, by the process's
# role (core/db_limits.py): DATABASE_ROLE (web, worker, command; by default from the
# command line: a Celery process is a worker, a manage.py command other than runserver
# a command, anything else web), each limit overridable (s; 0 turns it off).
DATABASE_ROLE = env.str("DATABASE_ROLE", default=process_role(sys.argv))
if DATABASE_ROLE not in ROLE_LIMITS:
    raise environ.ImproperlyConfigured(f"DATABASE_ROLE must be one of {', '.join(ROLE_LIMITS)}, not {DATABASE_ROLE!r}")
DATABASE_LIMITS = SessionLimits(
    statement_s=not_negative("DATABASE_STATEMENT_TIMEOUT_S", env.float("DATABASE_STATEMENT_TIMEOUT_S", default=ROLE_LIMITS[DATABASE_ROLE].statement_s)),
    lock_s=not_negative("DATABASE_LOCK_TIMEOUT_S", env.float("DATABASE_LOCK_TIMEOUT_S", default=ROLE_LIMITS[DATABASE_ROLE].lock_s)),
    idle_in_transaction_s=not_negative(
        "DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_S",
        env.float("DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_S", default=ROLE_LIMITS[DATABASE_ROLE].idle_in_transaction_s),
    ),
)
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    _options = DATABASES["default"].setdefault("OPTIONS", {})
    _options["options"] = libpq_options(DATABASE_LIMITS, _options.get("options", ""))
# A round's finaliser (one transaction): it waits this long (s) for the round's row lock
# held by another finaliser, then leaves the round to it (or, when that one is stuck,
# to the next trigger once PostgreSQL ended its session); its statements' limit (s).
CANARY_FINALISER_LIMITS = SessionLimits(
    statement_s=not_negative("CANARY_FINALISER_STATEMENT_TIMEOUT_S", env.float("CANARY_FINALISER_STATEMENT_TIMEOUT_S", default=FINALISER_LIMITS.statement_s)),
    lock_s=not_negative("CANARY_FINALISER_LOCK_TIMEOUT_S", env.float("CANARY_FINALISER_LOCK_TIMEOUT_S", default=FINALISER_LIMITS.lock_s)),
    idle_in_transaction_s=DATABASE_LIMITS.idle_in_transaction_s,
)
# Retry-After (s) of the 503 the API and the gateway answer while the database is down
# (reverie_ops.middleware); the web process keeps DATABASE_POOL_TIMEOUT_S short so that
# answer comes within about a second (docker-compose.yml).
DATABASE_UNAVAILABLE_RETRY_AFTER_S = env.int("DATABASE_UNAVAILABLE_RETRY_AFTER_S", default=5)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
# One time format on every admin page (reverie_ops/formats/en/formats.py).
FORMAT_MODULE_PATH = ["reverie_ops.formats"]
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
# Serve app static files (the vendored chart library) without collectstatic in the demo
# and tests; production runs collectstatic (docker-compose web command).
WHITENOISE_USE_FINDERS = True
warnings.filterwarnings("ignore", message="No directory at")

REDIS_URL = checked("REDIS_URL", redis_url, env.str("REDIS_URL", default="redis://127.0.0.1:6379/0"))
CELERY_BROKER_URL = checked("CELERY_BROKER_URL", redis_url, env.str("CELERY_BROKER_URL", default=REDIS_URL))
CELERY_RESULT_BACKEND = None
# kombu's Redis transport, made to survive a broker restart (reverie_ops/broker.py).
CELERY_BROKER_TRANSPORT = broker_transport(CELERY_BROKER_URL)
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TIMEZONE = "UTC"
# django-celery-beat's DatabaseScheduler, refusing an unmigrated database in one line.
CELERY_BEAT_SCHEDULER = "reverie_ops.beat:CheckedDatabaseScheduler"

# --- OpenRouter ---------------------------------------------------------------------
OPENROUTER_BASE_URL = env.str("OPENROUTER_BASE_URL", default="https://openrouter.ai/api/v1")
OPENROUTER_API_KEY = env.str("OPENROUTER_API_KEY", default="")
OPENROUTER_REFERER = env.str("OPENROUTER_REFERER", default="https://github.com/reverie-ops")
OPENROUTER_TITLE = env.str("OPENROUTER_TITLE", default="Reverie Ops canary")
# Connections the canary's client keeps per process. A worker runs (threads x 4) probes at
# once; a smaller pool would queue probes inside our own client and inflate their TTFT.
OPENROUTER_MAX_CONNECTIONS = positive("OPENROUTER_MAX_CONNECTIONS", env.int("OPENROUTER_MAX_CONNECTIONS", default=512))
# ... spread over this many httpx clients (each pool's bookkeeping grows with its size:
# httpcore scans requests x connections whenever one starts or ends). 300 streams from 80
# threads on one event loop (2026-12-03): wait before sending p95 170-390 ms with 8, 43 ms
# with 32, and seconds with one pool.
# Since the probes' streams moved to aiohttp (openrouter/aiochat.py: one connector pool of
# OPENROUTER_MAX_CONNECTIONS), the shards serve the sync httpx clients only.
OPENROUTER_POOL_SHARDS = positive("OPENROUTER_POOL_SHARDS", env.int("OPENROUTER_POOL_SHARDS", default=32))
# Size caps on what an upstream sends the gateway (bytes; decoded bytes, what is held in
# memory): past either the reply is an ``invalid_response`` and the next route is tried.
# The canary's own cap per reply is CANARY_MAX_RESPONSE_BYTES; lines share the line cap.
OPENROUTER_MAX_REPLY_BYTES = positive("OPENROUTER_MAX_REPLY_BYTES", env.int("OPENROUTER_MAX_REPLY_BYTES", default=16 * 1024 * 1024))
OPENROUTER_MAX_LINE_BYTES = positive("OPENROUTER_MAX_LINE_BYTES", env.int("OPENROUTER_MAX_LINE_BYTES", default=1024 * 1024))
# Egress: discovery, the probes and the gateway reach OpenRouter (and every route) through
# the proxy the standard environment names (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY; NO_PROXY
# for hosts reached directly: docs/egress.md). False ignores those variables.
OPENROUTER_PROXY_FROM_ENV = env.bool("OPENROUTER_PROXY_FROM_ENV", default=True)
if OPENROUTER_PROXY_FROM_ENV:
    # A proxy URL the wire cannot use stops the process here, not at the first request.
    checked("proxy environment", lambda _: ProxyRule.from_environment(), None)

# --- Canary -------------------------------------------------------------------------
# Canonical (lower-case) ids, as every other entry point stores them; a malformed id
# stops the process here with the reason rather than at the first round.
CANARY_MODEL = checked("CANARY_MODEL", validate_model_id, env.str("CANARY_MODEL", default="meta-llama/llama-3.3-70b-instruct"))
CANARY_MODELS = [checked("CANARY_MODELS", validate_model_id, m) for m in env.list("CANARY_MODELS", default=[CANARY_MODEL])]
CANARY_LANGUAGES = env.list(
    "CANARY_LANGUAGES",
    default=["en", "pt", "es", "fr", "de", "it", "nl", "pl", "ru", "uk", "tr", "ja", "ko", "zh", "id", "vi", "ar"],
)
# Time to first token limit (s): past it the TTFT probe fails.
CANARY_TTFT_LIMIT_S = above_zero("CANARY_TTFT_LIMIT_S", env.float("CANARY_TTFT_LIMIT_S", default=10.0))
# Whole-call limit once the first token arrived (s).
CANARY_TOTAL_TIMEOUT_S = above_zero("CANARY_TOTAL_TIMEOUT_S", env.float("CANARY_TOTAL_TIMEOUT_S", default=45.0))
if CANARY_TOTAL_TIMEOUT_S < CANARY_TTFT_LIMIT_S:
    # A reply cut before its first token may arrive would make every slow host a timeout.
    raise environ.ImproperlyConfigured(
        f"CANARY_TOTAL_TIMEOUT_S ({CANARY_TOTAL_TIMEOUT_S:g} s) must be at least CANARY_TTFT_LIMIT_S ({CANARY_TTFT_LIMIT_S:g} s)"
    )
# Probe budget: small, but enough that a reasoning model is not judged on a starved budget.
CANARY_MAX_TOKENS = positive("CANARY_MAX_TOKENS", env.int("CANARY_MAX_TOKENS", default=600))
# Concurrent probe requests in one round (all endpoints, all probes).
CANARY_CONCURRENCY = positive("CANARY_CONCURRENCY", env.int("CANARY_CONCURRENCY", default=48))
CANARY_MAX_RESPONSE_BYTES = positive("CANARY_MAX_RESPONSE_BYTES", env.int("CANARY_MAX_RESPONSE_BYTES", default=1024 * 1024))
# Fleet attribution: share of endpoints failing the same check on the same prompt above
# which the defect is attributed to the model or the prompt, not to the endpoints.
CANARY_FLEET_FAIL_SHARE = env.float("CANARY_FLEET_FAIL_SHARE", default=0.5)
CANARY_FLEET_MIN_ENDPOINTS = env.int("CANARY_FLEET_MIN_ENDPOINTS", default=3)
# Per-check baselines (docs/baselines.md): a failure stands only when improbable under
# the model's healthy failure rate (binomial tail <= alpha over the endpoint's last
# ENDPOINT_WINDOW samples); until MIN_VOLUME samples every failure counts.
CANARY_BASELINE_ALPHA = env.float("CANARY_BASELINE_ALPHA", default=0.001)
CANARY_BASELINE_ENDPOINT_WINDOW = env.int("CANARY_BASELINE_ENDPOINT_WINDOW", default=10)
CANARY_BASELINE_MIN_VOLUME = env.int("CANARY_BASELINE_MIN_VOLUME", default=30)
CANARY_BASELINE_HISTORY_ROUNDS = env.int("CANARY_BASELINE_HISTORY_ROUNDS", default=48)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="WARNING")},
}

# --- Route quarantine ---------------------------------------------------------------
# Suspension policy numbers (issue "Route quarantine"); all are settings.
CANARY_FAIL_ROUNDS_TO_SUSPEND = env.int("CANARY_FAIL_ROUNDS_TO_SUSPEND", default=2)
CANARY_CLEAN_ROUNDS_TO_RESTORE = env.int("CANARY_CLEAN_ROUNDS_TO_RESTORE", default=2)
CANARY_SUSPENSION_DAYS = env.list("CANARY_SUSPENSION_DAYS", cast=float, default=[1, 3, 7])
CANARY_DECAY_DAYS = env.float("CANARY_DECAY_DAYS", default=14)
CANARY_FLOOR = env.int("CANARY_FLOOR", default=2)
# Apprise URLs (https://github.com/caronc/apprise/wiki) for admin notifications.
NOTIFY_APPRISE_URLS = env.list("NOTIFY_APPRISE_URLS", default=[])
NOTIFY_MAX_RETRIES = env.int("NOTIFY_MAX_RETRIES", default=5)
# The ignore-list API: clients may cache an answer this long (s).
ROUTING_IGNORE_MAX_AGE_S = env.int("ROUTING_IGNORE_MAX_AGE_S", default=30)
# Per-process cache of the merged list (s); a change reaches every process within it.
ROUTING_IGNORE_CACHE_S = not_negative("ROUTING_IGNORE_CACHE_S", env.float("ROUTING_IGNORE_CACHE_S", default=2.0))
# ... for at most this many models per process (the least recently read is dropped).
ROUTING_IGNORE_CACHE_MODELS = positive("ROUTING_IGNORE_CACHE_MODELS", env.int("ROUTING_IGNORE_CACHE_MODELS", default=2048))

# --- Scheduled rounds (issue "Scheduled, distributed canary rounds") ------------------
# A round's time budget (s): after it, the finalizer judges whatever reported and marks
# the probes that never did as transport errors.
CANARY_ROUND_BUDGET_S = above_zero("CANARY_ROUND_BUDGET_S", env.float("CANARY_ROUND_BUDGET_S", default=180.0))
# Daily spend cap per model (USD over the last 24 h); 0 disables it.
CANARY_DAILY_SPEND_CAP_USD = env.float("CANARY_DAILY_SPEND_CAP_USD", default=5.0)
# Probe requests per provider, across all workers (canary/ratelimit.py): a sustained rate
# per second, and a burst an idle provider admits at once (a slot's four probes per
# endpoint of up to ten models served by one provider start together).
CANARY_PROVIDER_RPS = positive("CANARY_PROVIDER_RPS", env.int("CANARY_PROVIDER_RPS", default=20))
CANARY_PROVIDER_BURST = positive("CANARY_PROVIDER_BURST", env.int("CANARY_PROVIDER_BURST", default=40))
CANARY_RATE_LIMIT_REDIS = env.bool("CANARY_RATE_LIMIT_REDIS", default=False)
# The Redis key prefix of the providers' shared rate (for a Redis database shared with
# another deployment or test run).
CANARY_RATE_LIMIT_PREFIX = env.str("CANARY_RATE_LIMIT_PREFIX", default="canary:gcra")
# Endpoints per endpoint_probes_task (their probes run concurrently in one task). Fewer,
# larger tasks cost less CPU per probe (one endpoint per task: 8.9 ms, five: 6.2 ms in
# bench/round_scale.py; on a slower spell of 2026-12-02, five: 6.6-7.4 ms, ten: 5.9 ms,
# fifteen, a whole model of the bench per task: 5.1-5.8 ms); more, smaller tasks spread
# one model's round over more workers. Ten keeps a typical model (10 to 25 endpoints) on
# two or three tasks.
CANARY_ENDPOINTS_PER_TASK = positive("CANARY_ENDPOINTS_PER_TASK", env.int("CANARY_ENDPOINTS_PER_TASK", default=10))
# --- Live evidence (docs/live-evidence.md) ---------------------------------------------
# The gateway's verdicts in a sliding window (s) per endpoint; the suspect rule's
# declared false-alarm rate per (endpoint, check, window) and its minimum volume; the
# confirmation rounds a suspect earns (the second after CANARY_CONFIRM_GAP_S s if the
# first failed), at most CANARY_CONFIRM_MAX per suspicion.
CANARY_LIVE_WINDOW_S = positive("CANARY_LIVE_WINDOW_S", env.int("CANARY_LIVE_WINDOW_S", default=600))
CANARY_LIVE_ALPHA = env.float("CANARY_LIVE_ALPHA", default=1e-6)
CANARY_LIVE_MIN_VOLUME = positive("CANARY_LIVE_MIN_VOLUME", env.int("CANARY_LIVE_MIN_VOLUME", default=20))
CANARY_LIVE_CONSECUTIVE = env.int("CANARY_LIVE_CONSECUTIVE", default=5)
CANARY_LIVE_PREFIX = env.str("CANARY_LIVE_PREFIX", default="live")
CANARY_CONFIRM_GAP_S = positive("CANARY_CONFIRM_GAP_S", env.int("CANARY_CONFIRM_GAP_S", default=300))
CANARY_CONFIRM_MAX = positive("CANARY_CONFIRM_MAX", env.int("CANARY_CONFIRM_MAX", default=3))
CELERY_BROKER_TRANSPORT_OPTIONS = {
    # An unacknowledged probe of a dead worker is redelivered after this long (s). It
    # must leave the redelivered probes time to run inside the round's budget:
    # visibility timeout + restore interval + a probe task's run (typically under a
    # minute) < CANARY_ROUND_BUDGET_S (180 s). With 300 s a killed worker's probes came
    # back after the round had been finalised and were lost. A task still running past
    # it on a live worker is delivered a second time; the copy runs only the probes that
    # have not reported and results are unique per probe, so it costs requests, not data.
    "visibility_timeout": positive("CELERY_VISIBILITY_TIMEOUT_S", env.int("CELERY_VISIBILITY_TIMEOUT_S", default=60)),
    # How often (s) and every how many checks workers look for such messages (kombu).
    # kombu's throttle of 10 made the scan run every ~100 s: a killed worker's probes came
    # back at +169 s of a 180 s budget. Every check (10 s) costs one sorted-set range read.
    "unacked_restore_interval": positive("CELERY_UNACKED_RESTORE_INTERVAL_S", env.int("CELERY_UNACKED_RESTORE_INTERVAL_S", default=10)),
    "unacked_restore_throttle": positive("CELERY_UNACKED_RESTORE_THROTTLE", env.int("CELERY_UNACKED_RESTORE_THROTTLE", default=1)),
    # A prefix on every key the broker writes (kombu's ``global_keyprefix``: queues,
    # bindings, the unacknowledged set), for a Redis database shared with another
    # deployment or test run: each sees, restores and drains only its own messages.
    "global_keyprefix": env.str("CELERY_BROKER_KEY_PREFIX", default=""),
}
CELERY_TASK_ROUTES = {"canary.tasks.*": {"queue": "canary"}}
CELERY_TASK_DEFAULT_QUEUE = "canary"
CELERY_BEAT_SCHEDULE = {**canary_beat_schedule(CANARY_MODELS), **observability_beat_schedule(), **routing_beat_schedule()}

# --- Reliable routing gateway (issue "Reliable routing gateway") ----------------------
# The Celery worker's metrics listener (observability/worker.py): a port (0: none) and
# the address, loopback unless set (0.0.0.0 inside a compose network, for Prometheus in
# another container); every request needs a service token, as /metrics does.
OBSERVABILITY_WORKER_METRICS_PORT = port("OBSERVABILITY_WORKER_METRICS_PORT", env.int("OBSERVABILITY_WORKER_METRICS_PORT", default=0))
OBSERVABILITY_WORKER_METRICS_ADDR = env.str("OBSERVABILITY_WORKER_METRICS_ADDR", default="127.0.0.1")
ROUTING_REDIS_URL = checked("ROUTING_REDIS_URL", redis_url, env.str("ROUTING_REDIS_URL", default=REDIS_URL))
# Overrides of routing.breaker.BreakerConfig fields (a dict; tests set it).
ROUTING_BREAKER: dict[str, object] = {}
ROUTING_BREAKER_PREFIX = env.str("ROUTING_BREAKER_PREFIX", default="routing:breaker")
# Prompts and outputs in request/attempt events: "hash" (SHA-256) or "redact".
ROUTING_EVENT_CONTENT = env.str("ROUTING_EVENT_CONTENT", default="hash")
ROUTING_EVENTS_ASYNC = env.bool("ROUTING_EVENTS_ASYNC", default=True)
# Build the judges and the language detector when a server process starts, before it
# accepts work (routing/warm.py); off only to measure a cold start (bench/warm_start.py).
WARM_START = env.bool("REVERIE_WARM_START", default=True)
ROUTING_CACHE_S = not_negative("ROUTING_CACHE_S", env.float("ROUTING_CACHE_S", default=5.0))
# Idempotency keys (routing/README.md, "Idempotency"): a settled key is kept this long (s)
# after its last update, then pruned (Stripe keeps 24 h); a claimed key older than the
# lease (s; at least the longest contract deadline + 60 s) is taken for a dead process's
# and marked unknown.
ROUTING_IDEMPOTENCY_KEEP_S = positive("ROUTING_IDEMPOTENCY_KEEP_S", env.int("ROUTING_IDEMPOTENCY_KEEP_S", default=86400))
ROUTING_CLAIM_LEASE_S = positive("ROUTING_CLAIM_LEASE_S", env.int("ROUTING_CLAIM_LEASE_S", default=300))
ROUTING_CONNECT_TIMEOUT_S = above_zero("ROUTING_CONNECT_TIMEOUT_S", env.float("ROUTING_CONNECT_TIMEOUT_S", default=3.0))
# A server process opens its first connection to OpenRouter before it accepts work
# (routing/README.md, "Warm from the first request"), giving up after this long (s; 0: never).
ROUTING_PRECONNECT_TIMEOUT_S = not_negative("ROUTING_PRECONNECT_TIMEOUT_S", env.float("ROUTING_PRECONNECT_TIMEOUT_S", default=2.0))
ROUTING_MAX_CONNECTIONS = positive("ROUTING_MAX_CONNECTIONS", env.int("ROUTING_MAX_CONNECTIONS", default=256))
# Share of the canary's structured-output verdicts a route must pass to count as honouring
# the structured-output mode it advertises.
ROUTING_MIN_STRUCTURED_HONOURED = env.float("ROUTING_MIN_STRUCTURED_HONOURED", default=0.9)

"""The process's gateway, built once from settings: ``gateway_get``, ``gateway_warm``,
``upstream_warm``, ``gateway_flush``, ``gateway_reset``, the breaker store
(``breaker_store``) and the event sink wrappers that apps above routing register
(``sink_wrapper_register``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

import redis
from django.conf import settings
from django.db import connections
from redis.backoff import NoBackoff
from redis.retry import Retry

from canary.live.store import demoted_get, scorecard_get, scorecard_reset
from openrouter import egress
from routing.breaker import BreakerConfig, BreakerStore
from routing.contracts import ContractError
from routing.events import BackgroundEventSink, BatchListener, DbEventSink
from routing.gateway.commit import judge_evidence
from routing.gateway.door import Gateway
from routing.gateway.live_feed import ScorecardFeed
from routing.gateway.result import EventSink
from routing.gateway.upstream import Upstream
from routing.models import ContractVersion
from routing.selection import RouteProfile
from routing.services.contracts import contract_get, contracts_cache_clear, contracts_with_output
from routing.services.routes import ignored_get, route_profiles, routes_cache_clear

log = logging.getLogger(__name__)

_gateway: Gateway | None = None
_gateway_events: EventSink | None = None
_gateway_lock = threading.Lock()

SinkWrapper = Callable[[EventSink, Callable[[], list[RouteProfile]]], EventSink]
# Wrappers of the gateway's event sink registered by apps above routing (observability
# adds metrics and traces in its ``ready()``), so routing never imports them.
_sink_wrappers: list[SinkWrapper] = []


def sink_wrapper_register(wrapper: SinkWrapper) -> None:
    """Wrap the event sink of every gateway built from now on: ``wrapper(sink, routes)``
    returns the sink to use (``routes()`` gives the current route profiles)."""
    if wrapper not in _sink_wrappers:
        _sink_wrappers.append(wrapper)


def breaker_store(config: BreakerConfig | None = None) -> BreakerStore:
    """A breaker store on ``ROUTING_REDIS_URL`` under the key
    prefix ``ROUTING_BREAKER_PREFIX`` with ``ROUTING_BREAKER`` overrides."""
    url = settings.ROUTING_REDIS_URL
    overrides: dict[str, Any] = {"local_cache_s": 1.0, **settings.ROUTING_BREAKER}
    prefix = settings.ROUTING_BREAKER_PREFIX
    # Short timeouts and no client retries: the breaker is on every request's path and
    # fails open when Redis is away (breaker.py).
    client = redis.Redis.from_url(url, socket_connect_timeout=0.25, socket_timeout=0.25, retry=Retry(NoBackoff(), 0))
    return BreakerStore(client, config or BreakerConfig(**overrides), prefix=prefix)


def gateway_get() -> Gateway:
    """The process's gateway (built on first use from settings): one HTTP client, one
    Redis pool, one event writer."""
    global _gateway, _gateway_events
    with _gateway_lock:
        if _gateway is None:
            upstream = Upstream(
                default_base_url=settings.OPENROUTER_BASE_URL,
                api_key=settings.OPENROUTER_API_KEY,
                connect_timeout_s=settings.ROUTING_CONNECT_TIMEOUT_S,
                max_connections=settings.ROUTING_MAX_CONNECTIONS,
                max_reply_bytes=settings.OPENROUTER_MAX_REPLY_BYTES,
                max_line_bytes=settings.OPENROUTER_MAX_LINE_BYTES,
                headers={"HTTP-Referer": settings.OPENROUTER_REFERER, "X-OpenRouter-Title": "Reverie Ops gateway"},
                proxy_rule=egress.rule(settings.OPENROUTER_PROXY_FROM_ENV),
            )
            # After the answer went out, in the event writer: the evidence-only checks, then
            # the live scorecard hears every attempt's verdicts (docs/live-evidence.md).
            listeners: list[BatchListener] = [judge_evidence, ScorecardFeed(route_profiles, scorecard_get().record_many)]
            events = (BackgroundEventSink(listeners=listeners) if settings.ROUTING_EVENTS_ASYNC
                      else DbEventSink(listeners=listeners))
            sink: EventSink = events
            for wrap in _sink_wrappers:
                sink = wrap(sink, route_profiles)
            _gateway_events = events
            _gateway = Gateway(
                routes=route_profiles,
                upstream=upstream,
                breakers=breaker_store(),
                ignored=ignored_get,
                sink=sink,
                min_structured_honoured=settings.ROUTING_MIN_STRUCTURED_HONOURED,
                demoted=demoted_get,
                output_contracts=contracts_with_output,
            )
        return _gateway


def gateway_warm() -> None:
    """Build the process's gateway and fill what its first request would otherwise read
    on its own path: the upstream's watchdog thread, a Redis connection and the breakers'
    scripts, the live scorecard's Redis connection, the enabled routes,
    the canary's ignore list of each routed model, the contracts already in use (parsed,
    validators compiled), the database pool (its ``min_size`` connections). Called before a server process
    accepts work (``routing.warm``), never before a fork. Raises what the database
    or Redis raise (the caller logs it and starts cold)."""
    gateway = gateway_get()
    gateway.upstream.warm()
    if gateway.breakers is not None:
        gateway.breakers.warm()
    for model_id in sorted({r.model_id for r in route_profiles()}):
        ignored_get(model_id)
        # The live scorecard's own Redis client: its connection (and redis-py's package
        # metadata read, once per connection) would otherwise be the first request's.
        demoted_get(model_id)
    # Contracts already in use are parsed now (their validators compiled); one never used
    # stays for its first request, which marks it in use.
    for name, version in ContractVersion.objects.filter(first_used_at__isnull=False).values_list("name", "version"):
        try:
            contract_get(name, version)
        except ContractError:
            continue  # its own requests answer 500 naming the problem
    # This thread's connection back to the pool, for the request threads.
    connections.close_all()


def upstream_warm() -> None:
    """Open the gateway's first connection to OpenRouter (``Upstream.preconnect``: TCP,
    the proxy's tunnel, TLS) when an enabled route uses the default base URL, within
    ``ROUTING_PRECONNECT_TIMEOUT_S`` (0: never), so the first request finds it in the pool.
    Logs what happened at INFO, a failure at WARNING: an OpenRouter unreachable at start
    never stops a server from starting. Called after ``gateway_warm``, never before a fork.
    Raises what the database raises for the routes (the caller logs it)."""
    done = gateway_get().upstream.preconnect(route_profiles(), settings.ROUTING_PRECONNECT_TIMEOUT_S)
    if done is not None:
        log.log(logging.INFO if done.kept else logging.WARNING, "warm: upstream %s", done.describe())
    connections.close_all()


def gateway_flush(timeout_s: float = 5.0) -> None:
    """Wait (at most ``timeout_s``) until the process's gateway wrote its events."""
    events = _gateway_events
    if isinstance(events, BackgroundEventSink):
        events.flush(timeout_s)


def gateway_reset() -> None:
    """Drop the process's gateway (tests change settings between cases)."""
    global _gateway, _gateway_events
    with _gateway_lock:
        if _gateway is not None:
            _gateway.upstream.close()
            if isinstance(_gateway_events, BackgroundEventSink):
                _gateway_events.close()
        _gateway = None
        _gateway_events = None
    routes_cache_clear()
    scorecard_reset()
    contracts_cache_clear()

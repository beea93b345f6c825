"""Routes as the gateway reads them: ``route_profiles`` (cached ``ROUTING_CACHE_S`` seconds per
process), the canary's ignore list per model (``ignored_get``) and the measurements a route
ranks on (``route_measurements_refresh``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from canary.selectors import endpoint_quantizations, ignored_targets, structured_honour_rate
from routing.failures import FailureClass
from routing.models import AttemptEvent, Route
from routing.selection import RouteProfile
from routing.terms import AttemptStatus

log = logging.getLogger(__name__)


def route_profile(row: Route, quantization: str | None = None) -> RouteProfile:
    """A ``Route`` row as the pure ``RouteProfile`` the gateway reads; ``quantization``:
    its pinned endpoint's, from the canary's listing (None: unknown)."""
    return RouteProfile(
        name=row.name,
        model_id=row.model_id,
        provider_tag=row.provider_tag or None,
        base_url=row.base_url or None,
        api_key=_api_key(row.api_key_setting),
        modalities=frozenset(row.modalities or ["text"]),
        context_length=row.context_length,
        tools=row.tools,
        output_modes=frozenset(row.output_modes or []),
        model_class=row.model_class,
        price_prompt_usd=None if row.price_prompt_usd is None else float(row.price_prompt_usd),
        price_completion_usd=None if row.price_completion_usd is None else float(row.price_completion_usd),
        region=row.region,
        health=row.health,
        latency_ms=row.latency_ms,
        structured_honoured=row.structured_honoured,
        quantization=quantization,
    )


def _load_routes() -> list[RouteProfile]:
    rows = list(Route.objects.filter(enabled=True))
    # The client's provider.quantizations are checked against these (routing.provider_prefs).
    levels = endpoint_quantizations({r.model_id for r in rows if r.provider_tag})
    return [route_profile(r, levels.get((r.model_id, r.provider_tag.lower()))) for r in rows]


def _api_key(setting_name: str) -> str:
    # A route names the setting that holds its key (the admin never stores the key): a
    # name no setting defines is a route without a key, which its provider answers 401.
    return str(getattr(settings, setting_name, "")) if setting_name else ""


class _Cached:
    """A value recomputed at most every ``ttl_s()`` seconds (thread-safe). The TTL is
    read when the value is loaded, not on every hit (a Django setting costs a lookup).

    One thread reloads an expired value; the others keep the previous one meanwhile
    instead of queueing behind the query (a request thread must not wait on it). After
    ``clear`` there is no previous value: callers wait for the reload."""

    def __init__(self, ttl_s: Callable[[], float], load: Callable[[], Any]) -> None:
        self.ttl_s = ttl_s
        self.load = load
        self._value: Any = None
        self._has_value = False
        self._until = 0.0
        self._lock = threading.Lock()

    def get(self) -> Any:
        now = time.monotonic()
        if now < self._until:
            return self._value
        if not self._lock.acquire(blocking=not self._has_value):
            return self._value  # another thread is reloading it
        try:
            if time.monotonic() >= self._until:
                self._value = self.load()
                self._has_value = True
                self._until = time.monotonic() + self.ttl_s()
            return self._value
        finally:
            self._lock.release()

    def clear(self) -> None:
        self._has_value = False
        self._until = 0.0

    def previous(self, default: Any) -> Any:
        """The value before the reload in progress (``default`` if there is none): what a
        loader falls back on when its source fails."""
        return self._value if self._has_value else default


def _cache_ttl_s() -> float:
    return float(settings.ROUTING_CACHE_S)


_routes_cache = _Cached(_cache_ttl_s, _load_routes)


def route_profiles() -> list[RouteProfile]:
    """Enabled routes as profiles, cached ``ROUTING_CACHE_S`` seconds per process (a
    route edited in the admin reaches every process within that time;
    ``routes_cache_clear`` drops this process's copy at once)."""
    return list(_routes_cache.get())


def routes_cache_clear() -> None:
    _routes_cache.clear()


def ignored_get(model_id: str) -> frozenset[str]:
    """The canary's merged ignore list for ``model_id`` (lower-cased tags and slugs),
    from the canary's one per-process cache (``canary.selectors.ignored_targets``). A
    failing lookup never blocks routing: the canary keeps its previous list, and with none
    the gateway routes without one."""
    try:
        return ignored_targets(model_id)
    except Exception as exc:  # noqa: BLE001 - the ops state must never block a chat
        log.error("ignore list of %s unavailable, routing without it: %s", model_id, exc)
        return frozenset()


def route_measurements_refresh(*, window: timedelta = timedelta(hours=1)) -> int:
    """Recompute each route's health (accepted share of its attempts), median latency (ms)
    from recent attempt events, and its structured-output honour rate from the canary's
    structured verdicts on the pinned endpoint ("advertised versus honoured", issue
    point 2). Returns the number of routes updated."""
    since = timezone.now() - window
    updated = 0
    for route in Route.objects.all():
        attempts = list(
            AttemptEvent.objects.filter(route=route.name, started_at__gte=since)
            .exclude(status=AttemptStatus.CANCELLED).exclude(failure_class=FailureClass.INCOMPATIBLE).values_list("status", "latency_ms")
        )
        if attempts:
            route.health = sum(1 for s, _ in attempts if s == AttemptStatus.ACCEPTED) / len(attempts)
            latencies = sorted(ms for s, ms in attempts if s == AttemptStatus.ACCEPTED)
            route.latency_ms = latencies[len(latencies) // 2] if latencies else None
        if route.provider_tag:
            honoured = structured_honour_rate(route.model_id, route.provider_tag, timezone.now() - timedelta(days=7))
            if honoured is not None:
                route.structured_honoured = honoured
        route.measured_at = timezone.now()
        route.save(update_fields=["health", "latency_ms", "structured_honoured", "measured_at"])
        updated += 1
    routes_cache_clear()
    return updated

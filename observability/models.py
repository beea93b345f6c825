"""Rollups behind the reliability page, and the proxy models its admin pages hang on.

``RequestHour`` and ``AttemptHour`` hold one row per closed hour and group (contract and
final route; contract, route and role), summed from ``RequestEvent``/``AttemptEvent`` by
``observability.reliability.rollup_refresh``. The page reads at most 7 days x the groups
of rollup rows plus the raw events of the hour still open, whatever the event count.
"""

from __future__ import annotations

from django.db import models

from routing.models import RequestEvent, Route

# Upper edges (ms) of the latency buckets stored per rollup row; one more bucket above.
LATENCY_EDGES_MS = (250, 500, 1000, 2000, 4000, 8000, 15000, 30000, 60000)


class RequestHour(models.Model):
    """Requests of one contract that ended on one final route ("" = none) in one hour."""

    hour = models.DateTimeField()
    contract = models.CharField(max_length=120)
    final_route = models.CharField(max_length=100, blank=True)
    requests = models.PositiveIntegerField(default=0)
    accepted = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    unknown = models.PositiveIntegerField(default=0)
    with_fallback = models.PositiveIntegerField(default=0)
    deadline_exhausted = models.PositiveIntegerField(default=0)
    attempts_accepted = models.PositiveIntegerField(default=0, help_text="attempts of the accepted requests")
    cost_usd = models.DecimalField(max_digits=18, decimal_places=8, default=0)
    cost_accepted_usd = models.DecimalField(max_digits=18, decimal_places=8, default=0)
    latency_ms_accepted = models.FloatField(default=0, help_text="sum over accepted requests")
    latency_buckets = models.JSONField(default=list,
                                       help_text="accepted requests per latency bucket (LATENCY_EDGES_MS, then above)")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["hour", "contract", "final_route"], name="request_hour_unique")]
        indexes = [models.Index(fields=["hour"])]

    def __str__(self) -> str:
        return f"{self.hour:%Y-%m-%d %H}h {self.contract} via {self.final_route or '(none)'}"


class AttemptHour(models.Model):
    """Attempts of one contract on one route in one hour, as primary (on the route of the
    request's first attempt, its same-route retry included) or fallback (on another
    route, hedges included)."""

    hour = models.DateTimeField()
    contract = models.CharField(max_length=120)
    route = models.CharField(max_length=100)
    role = models.CharField(max_length=10)
    attempts = models.PositiveIntegerField(default=0)
    accepted = models.PositiveIntegerField(default=0)
    rejected = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    cancelled = models.PositiveIntegerField(default=0)
    ambiguous = models.PositiveIntegerField(default=0)
    latency_ms_accepted = models.FloatField(default=0)
    cost_usd = models.DecimalField(max_digits=18, decimal_places=8, default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["hour", "contract", "route", "role"], name="attempt_hour_unique")]
        indexes = [models.Index(fields=["hour"])]

    def __str__(self) -> str:
        return f"{self.hour:%Y-%m-%d %H}h {self.contract} {self.route} ({self.role})"


class RollupState(models.Model):
    """How far the rollups go: every hour before ``rolled_until`` is summed (one row)."""

    name = models.CharField(max_length=40, unique=True)
    rolled_until = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.name} rolled up until {self.rolled_until:%Y-%m-%d %H:%M}"


class Reliability(RequestEvent):
    """The reliability page in the admin (a proxy: no table of its own)."""

    class Meta:
        proxy = True
        verbose_name = "reliability"
        verbose_name_plural = "reliability"


class BreakerBoard(Route):
    """The circuit breakers page in the admin (a proxy: no table of its own)."""

    class Meta:
        proxy = True
        verbose_name = "circuit breaker"
        verbose_name_plural = "circuit breakers"

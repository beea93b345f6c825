"""The collectors a web scrape answers with: recorded samples, breakers, canary rows."""

from __future__ import annotations

from prometheus_client import CollectorRegistry

from observability.breakers import BreakerCollector
from observability.canary import CanaryCollector
from observability.multiprocess import scrape_registry
from routing.models import Route
from routing.services import breaker_store


def _route_names() -> list[str]:
    return list(Route.objects.order_by("name").values_list("name", flat=True))


_breakers = BreakerCollector(breaker_store, _route_names)
_canary = CanaryCollector()


def web_registry() -> CollectorRegistry:
    """One scrape's registry for the web app (``observability.views``)."""
    return scrape_registry([_breakers, _canary])

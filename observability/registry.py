"""What a web scrape answers with: recorded samples, breakers, canary rows, live evidence."""

from __future__ import annotations

from prometheus_client import generate_latest

from canary.live.store import scorecard_get
from observability.breakers import BreakerCollector
from observability.canary import CanaryCollector
from observability.exposition import render
from observability.live import LiveCollector
from observability.multiprocess import scrape_registry
from routing.models import Route
from routing.services.wiring import breaker_store


def _route_names() -> list[str]:
    return list(Route.objects.order_by("name").values_list("name", flat=True))


_breakers = BreakerCollector(breaker_store, _route_names)
_canary = CanaryCollector()
_live = LiveCollector(scorecard_get)


def web_exposition() -> bytes:
    """One scrape of the web app in the text format: every process's recorded samples,
    then the breaker and canary families read now (``observability.views``)."""
    recorded = generate_latest(scrape_registry())
    return recorded + render([*_breakers.collect(), *_canary.collect(), *_live.collect()])

"""Chaos tests reuse the routing helpers: a gateway over real HTTP, breaker stores on
the real Redis under a prefix of their own."""

from tests.celery.conftest import broker_clean, start_worker  # noqa: E402, F401 - fixtures
from tests.chaos.private_redis import private_redis  # noqa: F401 - fixture
from tests.routing.conftest import breakers, gateway_for, redis_client  # noqa: F401 - fixtures

"""Routing test helpers: fleets for the simulator, routes pinned to its endpoints, a
gateway over real HTTP, breaker stores on the real Redis under a unique prefix."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
import redis
from django.conf import settings

from core.tokens import service_token_issue
from routing.breaker import BreakerConfig, BreakerStore
from routing.gateway.door import Gateway
from routing.gateway.result import GatewayResult
from routing.gateway.upstream import Upstream
from routing.models import Route
from routing.selection import RouteProfile
from routing.services.contracts import contract_version_create
from routing.services.wiring import gateway_reset

MODEL = "acme/chat-1"
PARAMS = ["max_tokens", "temperature", "stream", "response_format", "structured_outputs", "tools", "tool_choice"]


def endpoint(name: str, faults: dict | None = None, **extra: Any) -> dict:
    """A fleet endpoint whose provider is ``name`` and tag ``<name>/fp8``."""
    return {
        "provider": name.capitalize(),
        "tag": f"{name}/fp8",
        "quantization": "fp8",
        "supported_parameters": PARAMS,
        "pricing": {"prompt": "0.0000001", "completion": "0.0000002"},
        "faults": faults or {},
        **extra,
    }


def fleet(*endpoints: dict, seed: int = 7) -> dict:
    return {"seed": seed, "models": [{"id": MODEL, "context_length": 131072, "endpoints": list(endpoints)}]}


def route(name: str, **kw: Any) -> RouteProfile:
    """A route pinned to the simulator endpoint ``<name>/fp8``."""
    defaults: dict[str, Any] = {
        "model_id": MODEL, "provider_tag": f"{name}/fp8", "context_length": 131072,
        "output_modes": frozenset({"json_object", "json_schema"}), "tools": True,
        "price_prompt_usd": 1e-7, "price_completion_usd": 2e-7,
    }
    defaults.update(kw)
    return RouteProfile(name=name, **defaults)


def sim_stats(sim: Any) -> dict[str, int]:
    """Upstream requests per endpoint tag, counted by the simulator."""
    root = sim.base_url.removesuffix("/api/v1")
    return dict(httpx.get(f"{root}/_sim/stats", timeout=5).json()["requests"])


def sim_reset_stats(sim: Any) -> None:
    root = sim.base_url.removesuffix("/api/v1")
    httpx.post(f"{root}/_sim/reset_stats", timeout=5)


class ListSink:
    """Collects results (the gateway's event sink) for assertions."""

    def __init__(self) -> None:
        self.results: list[GatewayResult] = []

    def emit(self, result: GatewayResult) -> None:
        self.results.append(result)


class WallClock:
    """Epoch seconds with a settable offset: breaker expiries without waiting."""

    def __init__(self) -> None:
        import time

        self._time = time.time
        self.offset = 0.0

    def __call__(self) -> float:
        return self._time() + self.offset


@pytest.fixture
def redis_client() -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(settings.REDIS_URL)
    yield client
    client.close()


@pytest.fixture
def breakers(redis_client: redis.Redis) -> Iterator[Callable[..., BreakerStore]]:
    """Factory: a breaker store under a prefix unique to this test; keys removed after."""
    prefixes: list[str] = []

    def make(config: BreakerConfig | None = None, prefix: str | None = None) -> BreakerStore:
        prefix = prefix or f"test:breaker:{uuid.uuid4().hex}"
        prefixes.append(prefix)
        return BreakerStore(redis_client, config or BreakerConfig(), prefix=prefix)

    yield make
    for prefix in prefixes:
        keys = list(redis_client.scan_iter(f"{prefix}:*"))
        if keys:
            redis_client.delete(*keys)


@pytest.fixture
def gateway_for() -> Iterator[Callable[..., Gateway]]:
    """Factory: a gateway over real HTTP to ``sim`` with the given routes."""
    made: list[Gateway] = []

    def make(sim: Any, routes: list[RouteProfile], **kw: Any) -> Gateway:
        upstream = Upstream(default_base_url=sim.base_url, api_key="sk-or-v1-test")
        gw = Gateway(routes=lambda: routes, upstream=upstream, **kw)
        made.append(gw)
        return gw

    yield make
    for gw in made:
        gw.upstream.close()


def user(text: str = "Say hello to the traveller.", **body: Any) -> dict:
    return {"messages": [{"role": "user", "content": text}], "max_tokens": 60, **body}


def api_world(settings: Any, start_sim: Any, use_sim: Any, *, prices: dict[str, str], contract: dict) -> Iterator[Any]:
    """Routes pinned to ``<name>/fp8`` with the given prompt prices (USD per token), the
    contract stored, a service token; events written synchronously, a private breaker
    prefix (its Redis keys deleted after). Yields an env with ``auth`` (test-client headers
    for ``contract@1``) and ``sim(fleet)``; use it as the body of a fixture."""
    prefix = f"test:breaker:{uuid.uuid4().hex}"
    settings.ROUTING_EVENTS_ASYNC = False
    settings.ROUTING_BREAKER_PREFIX = prefix
    settings.ROUTING_BREAKER = {"consecutive": 1, "open_s": 30}
    gateway_reset()
    for name, price in prices.items():
        Route.objects.create(name=name, model_id=MODEL, provider_tag=f"{name}/fp8", modalities=["text"],
                             context_length=131072, price_prompt_usd=price, price_completion_usd="0.0000002")
    contract_version_create(dict(contract))
    _, token = service_token_issue(f"backend-{uuid.uuid4().hex[:6]}")

    class Env:
        auth = {"HTTP_AUTHORIZATION": f"Bearer {token}", "HTTP_X_ROUTING_CONTRACT": f"{contract['name']}@1"}

        def sim(self, world: dict) -> Any:
            return use_sim(start_sim(world))

    yield Env()
    gateway_reset()
    client = redis.Redis.from_url(settings.REDIS_URL)
    keys = list(client.scan_iter(f"{prefix}:*"))
    if keys:
        client.delete(*keys)
